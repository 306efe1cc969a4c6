// 16-bit GEMM for any shape: C = alpha·A·B + beta·C with A (M×K), B (K×N) and C (M×N) row-major, in bf16 or
// f16, accumulated in f32. The shared-memory tiling of sgemm.ts's third kernel (a TILE×TILE block, one element
// of C a thread, bounds guards for sizes that are not multiples of the tile), with the operands widened to f32
// as they enter shared memory and the result rounded to 16 bits once. It is matmul()'s 16-bit rung where the
// tensor-core rung does not apply: shapes its tiles do not divide, GPUs other than sm_90, and the CPU. Each
// element adds its k products in ascending order, one f32 rounding per addition (a product of two 16-bit
// values is exact in f32), so it computes what the tensor-core rung's CPU emulation does.
// Grid: (ceil(N / TILE), ceil(M / TILE)).
import {
  bf16,
  blockIdx,
  f16,
  f32,
  kernel,
  shared,
  syncThreads,
  threadIdx,
  type BFloat16Array,
  type Const,
  type Float16Array,
  type i32,
  type ReadonlyBFloat16Array,
  type ReadonlyFloat16Array,
} from "tskernel";

export const hgemmTiledBf16 = kernel(
  { block: ["TILE", "TILE"], specializations: [{ TILE: 16 }], targets: ["cuda", "js"] },
  (M: i32, N: i32, K: i32, alpha: f32, A: ReadonlyBFloat16Array, B: ReadonlyBFloat16Array, beta: f32, C: BFloat16Array, TILE: Const<i32> = 16) => {
    const As = shared.f32(TILE, TILE);
    const Bs = shared.f32(TILE, TILE);
    const row = blockIdx.y * TILE + threadIdx.y;
    const col = blockIdx.x * TILE + threadIdx.x;
    let acc: f32 = 0;
    for (let k0 = 0; k0 < K; k0 += TILE) {
      As[threadIdx.y][threadIdx.x] = row < M && k0 + threadIdx.x < K ? f32(A[row * K + k0 + threadIdx.x]) : 0;
      Bs[threadIdx.y][threadIdx.x] = k0 + threadIdx.y < K && col < N ? f32(B[(k0 + threadIdx.y) * N + col]) : 0;
      syncThreads();
      for (let kk = 0; kk < TILE; kk++) {
        acc += As[threadIdx.y][kk] * Bs[kk][threadIdx.x];
      }
      syncThreads();
    }
    // With beta = 0 the old C is not read at all, as in BLAS (it may hold anything, NaN included).
    if (row < M && col < N) {
      C[row * N + col] = beta === 0 ? bf16(alpha * acc) : bf16(alpha * acc + beta * f32(C[row * N + col]));
    }
  },
);

// The same kernel in f16 (a kernel's buffer types are part of its signature).
export const hgemmTiledF16 = kernel(
  { block: ["TILE", "TILE"], specializations: [{ TILE: 16 }], targets: ["cuda", "js"] },
  (M: i32, N: i32, K: i32, alpha: f32, A: ReadonlyFloat16Array, B: ReadonlyFloat16Array, beta: f32, C: Float16Array, TILE: Const<i32> = 16) => {
    const As = shared.f32(TILE, TILE);
    const Bs = shared.f32(TILE, TILE);
    const row = blockIdx.y * TILE + threadIdx.y;
    const col = blockIdx.x * TILE + threadIdx.x;
    let acc: f32 = 0;
    for (let k0 = 0; k0 < K; k0 += TILE) {
      As[threadIdx.y][threadIdx.x] = row < M && k0 + threadIdx.x < K ? f32(A[row * K + k0 + threadIdx.x]) : 0;
      Bs[threadIdx.y][threadIdx.x] = k0 + threadIdx.y < K && col < N ? f32(B[(k0 + threadIdx.y) * N + col]) : 0;
      syncThreads();
      for (let kk = 0; kk < TILE; kk++) {
        acc += As[threadIdx.y][kk] * Bs[kk][threadIdx.x];
      }
      syncThreads();
    }
    if (row < M && col < N) {
      C[row * N + col] = beta === 0 ? f16(alpha * acc) : f16(alpha * acc + beta * f32(C[row * N + col]));
    }
  },
);
