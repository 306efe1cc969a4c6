/**
 * The backends the differential tests run on. Every example runs on each listed backend against the same
 * float64 reference; the WebGPU and CUDA backends join this list as they land.
 */

import { createDevice, type BackendName, type Device } from "../runtime/index.ts";

export const testedBackends: readonly BackendName[] = ["cpu"];

export async function deviceFor(backend: BackendName): Promise<Device> {
  return createDevice({ backend });
}
