// A checked build (compile-options.json: { "checked": true }): every kind of access and operation that a
// checked build checks at run time, and what it leaves alone (constant indices into shared arrays).
import { atomicAdd, blockIdx, f32, kernel, load4, local, shared, store4, subgroupAdd, syncThreads, threadIdx, type i32, type u32 as U32, type vec3f } from "tskernel";

interface Body {
  pos: vec3f;
  mass: f32;
}

export const accesses = kernel({ block: [64] }, (out: Float32Array, x: Float32Array, counts: Uint32Array, bodies: Body[], n: i32, k: i32, s: U32) => {
  const tile = shared.f32(64);
  const grid = shared.f32(8, 8);
  const t = threadIdx.x;
  const i = blockIdx.x * 64 + t;
  tile[t] = i < n ? x[i] : 0;
  grid[t / 8][t % 8] = x[i + 1];
  syncThreads();
  let v = tile[63 - t] + grid[t % 8][t / 8] + tile[3];
  v += bodies[i].mass;
  const q = i / k;
  const r = (i % k) << s;
  const old = atomicAdd(counts, q, 1);
  const sum = subgroupAdd(v);
  out[i] = sum + f32(r) + f32(old);
});

export const vectors = kernel({ block: [32] }, (out: Float32Array, x: Float32Array) => {
  const i = (blockIdx.x * 32 + threadIdx.x) * 4;
  const [a, b, c, d] = load4(x, i);
  store4(out, i, d, c, b, a);
});

// Indices that nothing bounds keep their checks (passes/index-ranges.ts): a run-time column of a shared array,
// a private array's masked index that can pass its end; t % 4 into the same private array needs none.
export const runtimeIndices = kernel({ block: [32] }, (out: Float32Array, j: i32) => {
  const grid = shared.f32(4, 8);
  const regs = local.f32(4);
  const t = threadIdx.x;
  grid[t / 8][j] = f32(t);
  regs[j & 7] = f32(j);
  syncThreads();
  out[blockIdx.x * 32 + t] = grid[j & 3][t % 8] + regs[t % 4];
});
