// The matrixMul sample of NVIDIA's cuda-samples (`MatrixMulCUDA<BLOCK_SIZE>`): C = A × B where A is
// hA×wA and B is wA×wB, walking the sub-matrices of A and B with the sample's aBegin/aEnd/aStep and
// bBegin/bStep indices. Demonstrates a C++ template parameter as a Const, several specializations built
// from one source (16 and 32, like the sample's two instantiations) and `unroll:` for `#pragma unroll`.
// Launch: block BLOCK_SIZE×BLOCK_SIZE, grid (wB/BLOCK_SIZE, hA/BLOCK_SIZE); all sizes multiples of BLOCK_SIZE.
import { blockIdx, kernel, shared, syncThreads, threadIdx, type Const, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";

export const matrixMulCuda = kernel(
  {
    block: ["BLOCK_SIZE", "BLOCK_SIZE"],
    specializations: [{ BLOCK_SIZE: 16 }, { BLOCK_SIZE: 32 }],
  },
  (C: Float32Array, A: ReadonlyFloat32Array, B: ReadonlyFloat32Array, wA: i32, wB: i32, BLOCK_SIZE: Const<i32> = 16) => {
    const As = shared.f32(BLOCK_SIZE, BLOCK_SIZE);
    const Bs = shared.f32(BLOCK_SIZE, BLOCK_SIZE);
    const bx = blockIdx.x;
    const by = blockIdx.y;
    const tx = threadIdx.x;
    const ty = threadIdx.y;

    // First, last and step of the sub-matrices of A this block walks along its row of blocks...
    const aBegin = wA * BLOCK_SIZE * by;
    const aEnd = aBegin + wA - 1;
    const aStep = BLOCK_SIZE;
    // ...and of B, down its column of blocks.
    const bBegin = BLOCK_SIZE * bx;
    const bStep = BLOCK_SIZE * wB;

    let Csub: f32 = 0;
    // The sample advances a and b together in one for header; the comma operator is not in the language.
    let b = bBegin;
    for (let a = aBegin; a <= aEnd; a += aStep) {
      As[ty][tx] = A[a + wA * ty + tx];
      Bs[ty][tx] = B[b + wB * ty + tx];
      syncThreads();
      unroll: for (let k = 0; k < BLOCK_SIZE; k++) {
        Csub += As[ty][k] * Bs[k][tx];
      }
      syncThreads();
      b += bStep;
    }

    const c = wB * BLOCK_SIZE * by + BLOCK_SIZE * bx;
    C[c + wB * ty + tx] = Csub;
  },
);
