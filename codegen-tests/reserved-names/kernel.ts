// Construct: names that are reserved or builtin in CUDA C++ or WGSL (float, int, select, fn, main, loop,
// unsigned, double, array, ptr, bitcast, override, local_id, workgroupBarrier, min, sqrtf, threadIdx-like
// names) used for parameters, locals, a helper and a kernel; the output must rename them.
import { blockIdx, kernel, threadIdx, type f32, type i32 } from "tskernel";

function select(float: f32, int: i32): f32 {
  const double = float * 2;
  return int > 0 ? double : float;
}

export const main = kernel({ block: [64] }, (array: Float32Array, ptr: Float32Array, int: i32, float: f32) => {
  const fn = threadIdx.x;
  const loop = blockIdx.x;
  const unsigned = fn + loop * 64;
  const bitcast = array[unsigned];
  const override = select(bitcast, int);
  const local_id = override + float;
  let workgroupBarrier: f32 = local_id;
  const min = Math.min(workgroupBarrier, 1);
  const sqrtf = Math.sqrt(Math.abs(min));
  workgroupBarrier += sqrtf;
  const main_1 = workgroupBarrier;
  const group_id = main_1 * 2;
  const num_groups = group_id;
  const main_params = num_groups;
  ptr[unsigned] = main_params;
});
