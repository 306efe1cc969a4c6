// Checks: private arrays past the targets' limits (found by the fuzzer: Dawn rejected the shader, "array
// count must be less than 65536"): more than 64 KiB in one array for WebGPU (TSK3032), more than 512 KB per
// thread in all for CUDA and the CPU (TSK3031).
import { f32, kernel, local, threadIdx, type i32 } from "tskernel";

export const scratch = kernel({ block: [64] }, (out: Float32Array, x: f32, n: i32) => {
  const small = local.f32(20000);
  const large = local.f32(120000);
  for (let j = 0; j < n; j++) {
    small[j] = x * f32(j);
    large[j] = small[j];
  }
  out[threadIdx.x] = large[n - 1];
});
