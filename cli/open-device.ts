/**
 * Opening the device a runtime command (demo, bench, tune) runs on. A backend that cannot start here
 * (BackendUnavailable: no GPU or driver, a native part not installed, checked mode off the CPU) is its message
 * and exit status 1, not a stack trace; the device's name goes to stderr so that every report says where it
 * ran. The runtime is imported on first use, so that `check` and `build` never load it.
 */

import type { Device, DeviceOptions } from "../runtime/index.ts";
import type { Io } from "./io.ts";

/** The device, or undefined after printing why the backend is unavailable (the caller exits with 1). */
export async function openDevice(options: DeviceOptions, io: Io): Promise<Device | undefined> {
  const { createDevice, BackendUnavailable } = await import("../runtime/index.ts");
  let device: Device;
  try {
    device = await createDevice(options);
  } catch (error) {
    if (error instanceof BackendUnavailable) {
      io.stderr(`${error.message}\n`);
      return undefined;
    }
    throw error;
  }
  io.stderr(`device: ${device.name}\n`);
  return device;
}
