/**
 * The CUDA backend on a machine without a driver (CI and developers' machines): the bindings load lazily,
 * asking for CUDA is a clear BackendUnavailable that names the missing library, and `auto` moves on.
 * The backend itself runs on the GPU machine (bench/gpu.sh; results in bench/results/).
 */

import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { BackendUnavailable, createDevice, autoSkipped } from "../index.ts";

const hasDriver = ["/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/usr/lib64/libcuda.so.1", "/usr/local/nvidia/lib64/libcuda.so.1"].some((f) => fs.existsSync(f));

describe.skipIf(hasDriver)(`CUDA without a driver${hasDriver ? " (skipped: this machine has libcuda)" : ""}`, () => {
  it("reports the backend unavailable, naming libcuda.so.1", async () => {
    const error = await createDevice({ backend: "cuda" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BackendUnavailable);
    expect((error as BackendUnavailable).backend).toBe("cuda");
    expect((error as BackendUnavailable).message).toMatch(/^tskernel: the cuda backend is unavailable: the CUDA driver \(libcuda\.so\.1\) was not found/);
  });

  it("auto passes over CUDA with the reason and picks another backend", async () => {
    const device = await createDevice({ backend: "auto" });
    expect(device.backend).not.toBe("cuda");
    expect(autoSkipped.find((s) => s.backend === "cuda")?.reason).toMatch(/libcuda\.so\.1/);
  });
});
