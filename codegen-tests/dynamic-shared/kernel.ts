// Construct: more than 48 KB of shared memory (a 56 KB double buffer and a 100-float array), which CUDA only
// allows as dynamic shared memory: the arrays become views into one extern buffer, aligned as accesses need.
import { blockIdx, f32, kernel, load4, shared, store4, syncThreads, threadIdx, type ReadonlyFloat32Array } from "tskernel";

// Each block reverses 7168 floats through shared memory and adds a per-block bias kept in a small array.
export const reverseTiles = kernel({ block: [256] }, (out: Float32Array, input: ReadonlyFloat32Array, bias: f32) => {
  const stages = shared.f32(2, 7168);
  const small = shared.f32(100);
  const base = blockIdx.x * 7168;
  for (let i = threadIdx.x * 4; i < 7168; i += 1024) {
    const [a, b, c, d] = load4(input, base + i);
    store4(stages[0], i, a, b, c, d);
  }
  if (threadIdx.x < 100) {
    small[threadIdx.x] = bias * f32(threadIdx.x);
  }
  syncThreads();
  for (let i = threadIdx.x; i < 7168; i += 256) {
    stages[1][i] = stages[0][7167 - i] + small[i % 100];
  }
  syncThreads();
  for (let i = threadIdx.x * 4; i < 7168; i += 1024) {
    const [a, b, c, d] = load4(stages[1], i);
    store4(out, base + i, a, b, c, d);
  }
});
