/**
 * Tensor maps for `copyTile` (the tensor memory accelerator, docs/language.md "Barriers in shared memory and
 * roles"): `createTensorMap(device, source, shape)` returns a read-only u32 buffer of 32 words that a kernel
 * takes as a `ReadonlyUint32Array` parameter and names in `copyTile` and `storeTile`. On CUDA it holds the driver's encoding
 * (cuTensorMapEncodeTiled) in device memory, where `cp.async.bulk.tensor` reads it; on the CPU, the shape under
 * a tag, which the emulation reads (and checks against the buffer it copies from). WebGPU has no such copy.
 * A map made with `roundToTf32` has the copy round each f32 to TF32 on its way into shared memory (the driver's
 * TFLOAT32 type): the tensor cores then read A rounded to nearest instead of truncated, at no cost.
 */

import type { CudaDevice } from "./cuda/cuda-device.ts";
import type { Device, DeviceBuffer } from "./device.ts";

/**
 * A row-major rows × cols tensor, copied in boxes of boxRows × boxCols (boxCols elements ≤ 128 bytes: the
 * swizzle's row, so 32 f32, 64 bf16/f16 or 128 e4m3/e5m2); the element type is the source buffer's.
 */
export interface TensorMapShape {
  readonly rows: number;
  readonly cols: number;
  readonly boxRows: number;
  readonly boxCols: number;
  /**
   * f32 sources only: `copyTile` through this map rounds each element to TF32 (10 mantissa bits; to nearest, ties
   * to even; past the largest TF32, infinity; a NaN stays a NaN), as the tensor memory accelerator does for a map of
   * the driver's TFLOAT32 type (measured on the H100: bench/README.md, "TF32 rounded by the copy"). `storeTile`
   * does not take such a map.
   */
  readonly roundToTf32?: boolean;
}

/** The tag of the CPU's tensor maps ("TSKM"), which the emulation checks before it trusts the words after it. */
export const cpuTensorMapTag = 0x4d4b5354;

/** The element types a tensor map describes: cuTensorMapEncodeTiled's data type (CUtensorMapDataType) and bytes. */
export const tensorMapTypes: Readonly<Record<string, { readonly code: number; readonly bytes: number }>> = {
  f32: { code: 7, bytes: 4 },
  f16: { code: 6, bytes: 2 },
  bf16: { code: 9, bytes: 2 },
  // The 8-bit floats move as bytes (CU_TENSOR_MAP_DATA_TYPE_UINT8): the copy does not look at the values.
  e4m3: { code: 0, bytes: 1 },
  e5m2: { code: 0, bytes: 1 },
};

/** CU_TENSOR_MAP_DATA_TYPE_TFLOAT32: f32 in memory, rounded to TF32 by the copy into shared memory. */
const tf32MapType = { code: 11, bytes: 4 } as const;

export function createTensorMap(device: Device, source: DeviceBuffer, shape: TensorMapShape): DeviceBuffer {
  const { rows, cols, boxRows, boxCols, roundToTf32 = false } = shape;
  const whole = (x: number) => Number.isInteger(x) && x > 0;
  const type = tensorMapTypes[source.elementType];
  if (!type) throw new Error(`tskernel: createTensorMap: the source must be a buffer of f32, bf16, f16, e4m3 or e5m2, found ${source.elementType}`);
  if (roundToTf32 && source.elementType !== "f32") throw new Error(`tskernel: createTensorMap: roundToTf32 rounds f32 elements, but the source is a buffer of ${source.elementType}`);
  const perRow = 128 / type.bytes;
  if (![rows, cols, boxRows, boxCols].every(whole)) throw new Error(`tskernel: createTensorMap: rows, cols, boxRows and boxCols must be positive integers, found ${rows}, ${cols}, ${boxRows}, ${boxCols}`);
  if (boxCols > perRow || boxRows > 256) throw new Error(`tskernel: createTensorMap: a box is at most 256 rows of ${perRow} ${source.elementType} (one 128-byte swizzle row), found ${boxRows} × ${boxCols}`);
  if ((cols * type.bytes) % 16 !== 0) throw new Error(`tskernel: createTensorMap: rows of ${cols} ${source.elementType} are not a multiple of 16 bytes, which the tensor memory accelerator needs`);
  if (source.length < rows * cols) throw new Error(`tskernel: createTensorMap: the source must hold at least ${rows} × ${cols} elements, found ${source.length}`);
  switch (device.backend) {
    case "cpu":
      // Word 6: 1 where the copy rounds to TF32 (the emulation's copyTile reads it).
      return device.createBuffer(Uint32Array.from({ length: 32 }, (_, i) => [cpuTensorMapTag, rows, cols, boxRows, boxCols, type.bytes, roundToTf32 ? 1 : 0][i] ?? 0));
    case "cuda":
      return device.createBuffer((device as CudaDevice).encodeTensorMap(source, shape, roundToTf32 ? tf32MapType : type));
    default:
      throw new Error(`tskernel: createTensorMap: the ${device.backend} backend has no tensor memory accelerator (copyTile is for CUDA and the CPU)`);
  }
}
