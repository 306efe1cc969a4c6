// Stream-k SGEMM: the multistage kernel of sgemm-multistage.ts (B through STAGES cp.async stages, A through
// registers into a transposed tile, the tiles visited in groups of SWIZZLE block rows) with the last, partial
// wave of tiles shared out along k. With T tiles and S blocks that run at once (streamBlocks: the GPU's
// multiprocessors times the blocks that fit on each), T − T mod S tiles go one to a block as usual, and the
// last T mod S tiles' k-steps are dealt out evenly to S more blocks, each a contiguous run of (tile, k-step)
// pairs that may end in one tile and go on in the next. So every multiprocessor is busy until the end instead
// of some idling through the last wave: at 4096³ 512 tiles of 128×256 make 3.88 waves of 132 blocks, a
// quarter of the time in the last one with 16 multiprocessors idle; here 396 tiles go whole and the other
// 116 tiles' 256 k-steps go 225 to a block.
// A block that computes only part of a tile's k adds its partial results into the tile's slot of `partials`
// (atomicAdd, laid out by thread so that a warp's adds are consecutive) and its k-steps into the tile's
// counter in `arrivals`; the block whose steps complete the count takes the sum (atomicExchange with 0, which
// leaves the slot zeroed), clears the counter and writes C. No block ever waits on another, and both buffers
// are left as they were found: all zeros. Each value is added before its count, with threadFence() between,
// and read after it, with threadFence() between.
// Targets: CUDA and the CPU backend (threadFence(): WebGPU has no device-scope fence, TSK3050).
// Buffers: `partials` holds streamBlocks·BM·BN floats, `arrivals` streamBlocks counters, both zero before the
// first launch (and after every launch that completes). Requirements: those of sgemmMultistage with KSPLIT = 1,
// AVEC = 1, GUARD = 0 (M, N multiples of BM, BN; K of BK); streamBlocks ≥ 1.
// Launch: grid (T − T mod streamBlocks + (T mod streamBlocks > 0 ? streamBlocks : 0), 1), block THREADS.
import {
  atomicAdd,
  atomicExchange,
  atomicStore,
  blockIdx,
  commitAsync,
  copyAsync4,
  kernel,
  load4,
  local,
  shared,
  store4,
  syncThreads,
  threadFence,
  threadIdx,
  waitAsync,
  type Const,
  type f32,
  type i32,
  type ReadonlyFloat32Array,
} from "tskernel";

export const sgemmStreamK = kernel(
  {
    block: ["THREADS"],
    targets: ["cuda", "js"],
    // 128×256 tiles, one block of 256 threads per multiprocessor, 4 stages: the fastest of the builds measured
    // on the H100 (128×256 with 3 stages or 32-deep steps, 256×128, 128×128 with two blocks per multiprocessor:
    // bench/README.md).
    specializations: [{}],
  },
  (
    M: i32,
    N: i32,
    K: i32,
    alpha: f32,
    A: ReadonlyFloat32Array,
    B: ReadonlyFloat32Array,
    beta: f32,
    C: Float32Array,
    partials: Float32Array,
    arrivals: Int32Array,
    streamBlocks: i32,
    BM: Const<i32> = 128,
    BN: Const<i32> = 256,
    BK: Const<i32> = 16,
    STAGES: Const<i32> = 4,
    WM: Const<i32> = 64,
    WN: Const<i32> = 64,
    WNITER: Const<i32> = 4,
    TM: Const<i32> = 8,
    TN: Const<i32> = 4,
    THREADS: Const<i32> = 256,
    SWIZZLE: Const<i32> = 8,
  ) => {
    const AsT = shared.f32(2, BK * (BM + 4));
    const Bs = shared.f32(STAGES, BK * BN);
    // 1 when this block's steps completed its tile's count: it writes the tile.
    const finisher = shared.i32(1);
    const acc = local.f32((WM * WN) / 32);
    const regM = local.f32((WM * WN) / (32 * TN * WNITER));
    const regN = local.f32(WNITER * TN);
    const nextA = local.f32((BM * BK) / THREADS);
    const ldAsT = BM + 4;
    const RESULTS = (WM * WN) / 32;
    const WMITER = (WM * WN) / (32 * TM * TN * WNITER);
    const WSUBM = WM / WMITER;
    const WSUBN = WN / WNITER;
    const warp = threadIdx.x / 32;
    const warpCol = warp % (BN / WN);
    const warpRow = warp / (BN / WN);
    const lane = threadIdx.x % 32;
    const threadColInWarp = lane % (WSUBN / TN);
    const threadRowInWarp = lane / (WSUBN / TN);
    const innerRowA = threadIdx.x / (BK / 4);
    const innerColA = threadIdx.x % (BK / 4);
    const rowStrideA = (THREADS * 4) / BK;
    const innerRowB = threadIdx.x / (BN / 4);
    const innerColB = threadIdx.x % (BN / 4);
    const rowStrideB = (THREADS * 4) / BN;
    // This block's run of (tile, k-step) pairs, numbered tile · steps + step: a whole tile, or its share of
    // the last tail tiles' steps.
    const tilesN = N / BN;
    const tilesM = M / BM;
    const tiles = tilesM * tilesN;
    const steps = K / BK;
    const tail = tiles % streamBlocks;
    const whole = tiles - tail;
    let begin = blockIdx.x * steps;
    let end = begin + steps;
    if (blockIdx.x >= whole) {
      const s = blockIdx.x - whole;
      begin = whole * steps + (s * tail * steps) / streamBlocks;
      end = whole * steps + ((s + 1) * tail * steps) / streamBlocks;
    }
    let work = begin;
    while (work < end) {
      const tile = work / steps;
      const first = work % steps;
      const stop = Math.min(steps, first + (end - work));
      const kBegin = first * BK;
      const kEnd = stop * BK;
      // Tiles in order walk SWIZZLE tile rows column by column (a partial group at the bottom).
      const groupTiles = Math.max(SWIZZLE, 1) * tilesN;
      const firstRow = (tile / groupTiles) * Math.max(SWIZZLE, 1);
      const groupRows = Math.min(tilesM - firstRow, Math.max(SWIZZLE, 1));
      const cRow = firstRow + (tile % groupTiles) % groupRows;
      const cCol = (tile % groupTiles) / groupRows;
      // Every thread is done with the shared tiles of the previous run before they are refilled.
      syncThreads();
      unrollInit: for (let i = 0; i < RESULTS; i++) {
        acc[i] = 0;
      }
      for (let s = 0; s < STAGES - 1; s++) {
        const k0 = kBegin + s * BK;
        if (k0 < kEnd) {
          unrollFirstB: for (let offset = 0; offset < BK; offset += rowStrideB) {
            copyAsync4(Bs[s], (innerRowB + offset) * BN + innerColB * 4, B, (k0 + innerRowB + offset) * N + cCol * BN + innerColB * 4);
          }
        }
        commitAsync();
      }
      unrollFirstA: for (let offset = 0; offset < BM; offset += rowStrideA) {
        const [a0, a1, a2, a3] = load4(A, (cRow * BM + innerRowA + offset) * K + kBegin + innerColA * 4);
        store4(nextA, (offset / rowStrideA) * 4, a0, a1, a2, a3);
      }
      unrollFirstStoreA: for (let offset = 0; offset < BM; offset += rowStrideA) {
        const base = (offset / rowStrideA) * 4;
        AsT[0][(innerColA * 4 + 0) * ldAsT + innerRowA + offset] = nextA[base];
        AsT[0][(innerColA * 4 + 1) * ldAsT + innerRowA + offset] = nextA[base + 1];
        AsT[0][(innerColA * 4 + 2) * ldAsT + innerRowA + offset] = nextA[base + 2];
        AsT[0][(innerColA * 4 + 3) * ldAsT + innerRowA + offset] = nextA[base + 3];
      }
      let stageA = 0;
      let readB = 0;
      let writeB = STAGES - 1;
      for (let k0 = kBegin; k0 < kEnd; k0 += BK) {
        // The next A tile's loads come first, ahead of the barrier, so that they are in flight through the
        // whole step: written after it, as in sgemmMultistage, ptxas placed them at the end of the step (this
        // kernel holds more registers), just before the stores that wait on them, and the 128×256 build ran
        // 6 % slower at 4096³ on the H100 (SASS and timings: bench/README.md).
        const nextA0 = k0 + BK;
        if (nextA0 < kEnd) {
          unrollNextA: for (let offset = 0; offset < BM; offset += rowStrideA) {
            const [a0, a1, a2, a3] = load4(A, (cRow * BM + innerRowA + offset) * K + nextA0 + innerColA * 4);
            store4(nextA, (offset / rowStrideA) * 4, a0, a1, a2, a3);
          }
        }
        // As in sgemmMultistage: this step's B tile has landed once at most STAGES − 2 groups are in flight.
        if (STAGES === 2) {
          waitAsync(0);
        } else if (STAGES === 3) {
          waitAsync(1);
        } else if (STAGES === 4) {
          waitAsync(2);
        } else {
          waitAsync(3);
        }
        syncThreads();
        const nextB = k0 + (STAGES - 1) * BK;
        if (nextB < kEnd) {
          unrollNextB: for (let offset = 0; offset < BK; offset += rowStrideB) {
            copyAsync4(Bs[writeB], (innerRowB + offset) * BN + innerColB * 4, B, (nextB + innerRowB + offset) * N + cCol * BN + innerColB * 4);
          }
        }
        commitAsync();
        unrollDot: for (let dot = 0; dot < BK; dot++) {
          unrollSubM: for (let wSubRow = 0; wSubRow < WMITER; wSubRow++) {
            unrollM: for (let i = 0; i < TM; i += 4) {
              const [m0, m1, m2, m3] = load4(AsT[stageA], dot * ldAsT + warpRow * WM + wSubRow * WSUBM + threadRowInWarp * TM + i);
              store4(regM, wSubRow * TM + i, m0, m1, m2, m3);
            }
          }
          unrollSubN: for (let wSubCol = 0; wSubCol < WNITER; wSubCol++) {
            unrollN: for (let i = 0; i < TN; i += 4) {
              const [n0, n1, n2, n3] = load4(Bs[readB], dot * BN + warpCol * WN + wSubCol * WSUBN + threadColInWarp * TN + i);
              store4(regN, wSubCol * TN + i, n0, n1, n2, n3);
            }
          }
          unrollOuterM: for (let m = 0; m < WMITER * TM; m++) {
            unrollOuterN: for (let n = 0; n < WNITER * TN; n++) {
              acc[m * (WNITER * TN) + n] += regM[m] * regN[n];
            }
          }
        }
        if (nextA0 < kEnd) {
          unrollStoreA: for (let offset = 0; offset < BM; offset += rowStrideA) {
            const base = (offset / rowStrideA) * 4;
            AsT[1 - stageA][(innerColA * 4 + 0) * ldAsT + innerRowA + offset] = nextA[base];
            AsT[1 - stageA][(innerColA * 4 + 1) * ldAsT + innerRowA + offset] = nextA[base + 1];
            AsT[1 - stageA][(innerColA * 4 + 2) * ldAsT + innerRowA + offset] = nextA[base + 2];
            AsT[1 - stageA][(innerColA * 4 + 3) * ldAsT + innerRowA + offset] = nextA[base + 3];
          }
        }
        stageA = 1 - stageA;
        readB = readB + 1 === STAGES ? 0 : readB + 1;
        writeB = writeB + 1 === STAGES ? 0 : writeB + 1;
      }
      waitAsync(0);
      const complete = first === 0 && stop === steps;
      if (!complete) {
        // Part of a tail tile: add it into the tile's slot, then count its steps; the block that completes
        // the count takes the sum and leaves the slot and the counter zeroed for the next launch.
        const slot = tile - whole;
        unrollPartialOut: for (let r = 0; r < RESULTS; r++) {
          atomicAdd(partials, (slot * RESULTS + r) * THREADS + threadIdx.x, acc[r]);
        }
        threadFence();
        syncThreads();
        if (threadIdx.x === 0) {
          const before = atomicAdd(arrivals, slot, stop - first);
          finisher[0] = before + (stop - first) === steps ? 1 : 0;
        }
        syncThreads();
        if (finisher[0] === 1) {
          threadFence();
          unrollPartialIn: for (let r = 0; r < RESULTS; r++) {
            acc[r] = atomicExchange(partials, (slot * RESULTS + r) * THREADS + threadIdx.x, 0);
          }
          if (threadIdx.x === 0) {
            atomicStore(arrivals, slot, 0);
          }
        }
      }
      if (complete || finisher[0] === 1) {
        unrollStoreSubM: for (let wSubRow = 0; wSubRow < WMITER; wSubRow++) {
          unrollStoreSubN: for (let wSubCol = 0; wSubCol < WNITER; wSubCol++) {
            unrollStoreM: for (let m = 0; m < TM; m++) {
              unrollStoreN: for (let n = 0; n < TN; n += 4) {
                const row = cRow * BM + warpRow * WM + wSubRow * WSUBM + threadRowInWarp * TM + m;
                const col = cCol * BN + warpCol * WN + wSubCol * WSUBN + threadColInWarp * TN + n;
                const r = (wSubRow * TM + m) * (WNITER * TN) + wSubCol * TN + n;
                // With beta = 0 C is not read at all, as in BLAS (it may hold anything, NaN included).
                if (beta === 0) {
                  store4(C, row * N + col, alpha * acc[r], alpha * acc[r + 1], alpha * acc[r + 2], alpha * acc[r + 3]);
                } else {
                  const [c0, c1, c2, c3] = load4(C, row * N + col);
                  store4(C, row * N + col, alpha * acc[r] + beta * c0, alpha * acc[r + 1] + beta * c1, alpha * acc[r + 2] + beta * c2, alpha * acc[r + 3] + beta * c3);
                }
              }
            }
          }
        }
      }
      work += stop - first;
    }
  },
);
