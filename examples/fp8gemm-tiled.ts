// Portable fp8 GEMM for any shape: C = alpha·A·B + beta·C with A (M×K, row-major e4m3), B given as Bᵀ (N×K,
// row-major e4m3: K-major, the layout torch._scaled_mm takes for its second operand) and C (M×N, row-major bf16),
// alpha the product of the per-tensor scales. The shared-memory tiling of hgemm-tiled.ts (a TILE×TILE block, one
// element of C a thread, bounds guards for sizes that are not multiples of the tile): each thread loads one e4m3
// element of A's tile and one of Bᵀ's, widened to f32 as they enter shared memory (Bᵀ's rows read along k, which
// is contiguous, and stored transposed so the inner loop reads consecutive columns). It is scaledMatmul()'s rung
// where the tensor-core one (fp8gemm-wgmma-ws.ts) does not apply: GPUs other than sm_90, N not a multiple of 8 or
// K of 16, and the CPU. The order: each element adds its K products in ascending k, one f32 rounding per addition
// (a product of two e4m3 values has at most 8 significant bits and is exact in f32), then alpha·sum, plus
// beta·C when beta ≠ 0, rounded to bf16 once: what the wgmma rung's CPU emulation computes (CUDA may contract the
// epilogue's alpha·sum + beta·C into one fma, which rounds once less).
// Grid: (ceil(N / TILE), ceil(M / TILE)). WGSL has no 8-bit floats (TSK3120), so the kernel is for CUDA and the CPU.
import {
  bf16,
  blockIdx,
  f32,
  kernel,
  shared,
  syncThreads,
  threadIdx,
  type BFloat16Array,
  type Const,
  type i32,
  type ReadonlyFloat8E4M3Array,
} from "tskernel";

export const fp8gemmTiled = kernel(
  { block: ["TILE", "TILE"], specializations: [{ TILE: 16 }], targets: ["cuda", "js"] },
  (M: i32, N: i32, K: i32, alpha: f32, A: ReadonlyFloat8E4M3Array, Bt: ReadonlyFloat8E4M3Array, beta: f32, C: BFloat16Array, TILE: Const<i32> = 16) => {
    const As = shared.f32(TILE, TILE);
    // Bᵀ's tile kept as B (k rows, n columns); one column of padding so the transposing store spreads over the banks.
    const Bs = shared.f32(TILE, TILE + 1);
    const row = blockIdx.y * TILE + threadIdx.y;
    const col = blockIdx.x * TILE + threadIdx.x;
    // The Bᵀ row (a column of C) this thread loads: the tile's columns along y, so that x walks k contiguously.
    const loadCol = blockIdx.x * TILE + threadIdx.y;
    let acc: f32 = 0;
    for (let k0 = 0; k0 < K; k0 += TILE) {
      As[threadIdx.y][threadIdx.x] = row < M && k0 + threadIdx.x < K ? A[row * K + k0 + threadIdx.x] : 0;
      Bs[threadIdx.x][threadIdx.y] = loadCol < N && k0 + threadIdx.x < K ? Bt[loadCol * K + k0 + threadIdx.x] : 0;
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
