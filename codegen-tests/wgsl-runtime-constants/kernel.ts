// Construct: expressions of literals that the constant folder leaves alone (Math functions, non-finite
// results) and that WGSL would evaluate when the shader is created, rejecting the shader on overflow
// ('abs(1673577648u) << 2u cannot be represented as u32', found by the differential fuzzer). They are
// computed at run time on every target: integers wrap, floats reach infinity. blockDim of a kernel without a
// fixed block is a pipeline constant in WGSL, evaluated the same way when the pipeline is created.
import { blockDim, kernel, threadIdx, u32 } from "tskernel";

export const runtimeConstants = kernel((outI: Int32Array, outU: Uint32Array, outF: Float32Array) => {
  const t = threadIdx.x;
  outU[t] = Math.abs(u32(1673577648)) << 2;
  outI[t] = Math.max(2147483647, 5) + 1;
  outI[t + 64] = blockDim.x * 2147483647;
  outF[t] = Math.exp(100.0);
  outF[t + 64] = Math.sqrt(-1.0) + Math.log(0.0) * 3.0e38 * 10.0;
  outF[t + 128] = Math.min(1.5, 2.5) * 3.0e38 * 3.0e38;
});
