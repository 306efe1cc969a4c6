/**
 * Tensor maps for `copyTile` (the tensor memory accelerator, docs/language.md "Barriers in shared memory and
 * roles"): `createTensorMap(device, source, shape)` returns a read-only u32 buffer of 32 words that a kernel
 * takes as a `ReadonlyUint32Array` parameter and names in `copyTile`. On CUDA it holds the driver's encoding
 * (cuTensorMapEncodeTiled) in device memory, where `cp.async.bulk.tensor` reads it; on the CPU, the shape under
 * a tag, which the emulation reads (and checks against the buffer it copies from). WebGPU has no such copy.
 */

import type { CudaDevice } from "./cuda/cuda-device.ts";
import type { Device, DeviceBuffer } from "./device.ts";

/** A row-major rows × cols tensor of f32, copied in boxes of boxRows × boxCols (boxCols · 4 ≤ 128 bytes: the swizzle's row). */
export interface TensorMapShape {
  readonly rows: number;
  readonly cols: number;
  readonly boxRows: number;
  readonly boxCols: number;
}

/** The tag of the CPU's tensor maps ("TSKM"), which the emulation checks before it trusts the words after it. */
export const cpuTensorMapTag = 0x4d4b5354;

export function createTensorMap(device: Device, source: DeviceBuffer, shape: TensorMapShape): DeviceBuffer {
  const { rows, cols, boxRows, boxCols } = shape;
  const whole = (x: number) => Number.isInteger(x) && x > 0;
  if (![rows, cols, boxRows, boxCols].every(whole)) throw new Error(`tskernel: createTensorMap: rows, cols, boxRows and boxCols must be positive integers, found ${rows}, ${cols}, ${boxRows}, ${boxCols}`);
  if (boxCols > 32 || boxRows > 256) throw new Error(`tskernel: createTensorMap: a box is at most 256 rows of 32 f32 (one 128-byte swizzle row), found ${boxRows} × ${boxCols}`);
  if ((cols * 4) % 16 !== 0) throw new Error(`tskernel: createTensorMap: rows of ${cols} f32 are not a multiple of 16 bytes, which the tensor memory accelerator needs`);
  if (source.elementType !== "f32" || source.length < rows * cols) throw new Error(`tskernel: createTensorMap: the source must be an f32 buffer of at least ${rows} × ${cols} elements, found ${source.elementType} × ${source.length}`);
  switch (device.backend) {
    case "cpu":
      return device.createBuffer(Uint32Array.from({ length: 32 }, (_, i) => [cpuTensorMapTag, rows, cols, boxRows, boxCols][i] ?? 0));
    case "cuda":
      return device.createBuffer((device as CudaDevice).encodeTensorMap(source, shape));
    default:
      throw new Error(`tskernel: createTensorMap: the ${device.backend} backend has no tensor memory accelerator (copyTile is for CUDA and the CPU)`);
  }
}
