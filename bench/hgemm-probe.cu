// A hand-written bf16/f16 GEMM on the H100's warpgroup tensor-core instruction (wgmma.mma_async m64nNk16, sm_90a),
// to learn what structure reaches 95 % of torch.mm bf16 before the language grows 16-bit matrix operands
// (issue 22). It computes C = alpha·A·B + beta·C in 16 bits with f32 accumulation, for row-major A (M×K), B (K×N)
// and C (M×N), the project's matmul convention. Unlike TF32, 16-bit wgmma reads either operand from shared memory
// in either major order (imm-trans-b), so no Cᵀ = Bᵀ·Aᵀ trick: A is K-major (its rows are K-contiguous) and B is
// N-major, both loaded by the tensor memory accelerator (TMA) into the 128-byte swizzle, 64 elements (128 bytes)
// a swizzle row. With BT=1 the kernel instead takes Bᵀ (N×K row-major) and reads B K-major too: the layout the
// TF32 probe already proved, kept as the fallback and to time what the transposed read costs.
//
// Structure (the one the TF32 probe and rung reached 78–83 % with, and what CUTLASS's warp-specialized kernels
// do): three warpgroups. Warpgroup 0, the producer, gives its registers away (setmaxnreg.dec) and one of its
// threads issues the TMA copies of each k-tile into STAGES stages of shared memory, each stage behind a "full"
// mbarrier (arrive.expect_tx: the phase completes when the bytes land) and an "empty" mbarrier (the consumers'
// eight warps release it). Warpgroups 1 and 2, the consumers, take the registers (setmaxnreg.inc) and each
// multiplies BM/2 rows of the block's BM×BN tile against all BN columns: per 64-wide k-tile, 4 k16 steps, one
// wgmma group, one group left in flight (wait_group 1) so the tensor cores never wait for the issue. The grid is
// persistent (PERSIST=1: one block a multiprocessor walks tiles t = blockIdx.x + i·gridDim.x) or one block a
// tile; tiles go in groups of GROUPM tile rows so that blocks running together share A rows and B columns in L2.
// The producer's stage ring runs on across tiles, so the next tile's stages fill while the consumers store.
// The epilogue stores f32 accumulators as 16-bit pairs straight from registers (4 bytes a thread).
// Only multiples of the tile are handled (M % BM, N % BN, K % 64 == 0); this is a measurement, not a rung.
//
// Measured (H100, 2026-11-26, bench/results/2026-11-26-hgemm-probe-h100-run*.json / -log.txt), % of torch.mm bf16
// at 4096³ / 8192³ / 4096×4096×1024 / 2048³: stores from registers (EPI=0) 90.5 / 93.1 / 70.4 / 81.5; through
// shared memory and TMA stores, 4 stages and half-width buffers (EPI=2) 98.9 / 98.8 / 97.3 / 97.8; full-width
// buffers and 3 stages (EPI=1) 98.7 / 101.4 / 97.2 / 95.8. Clusters of two with B multicast (CL=2) ran at 41–49 %
// in every form, correct but not understood (every cluster resident by cuOccupancyMaxActiveClusters).
//
//   nvcc -gencode=arch=compute_90a,code=sm_90a -cubin -O3 -DBM=128 -DBN=256 -DSTAGES=4 bench/hgemm-probe.cu \
//     -o hgemm_BM128_BN256_S4.cubin        (bench/hgemm-probe.py reads the settings from the name)
#include <cstdint>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#ifndef F16
#define F16 0  // 1: f16 inputs and output; 0: bf16
#endif
#if F16
#define ELEM "f16"
typedef __half elem_t;
typedef __half2 elem2_t;
__device__ __forceinline__ elem2_t pack2(float a, float b) { return __floats2half2_rn(a, b); }
__device__ __forceinline__ float2 unpack2(elem2_t v) { return __half22float2(v); }
#else
#define ELEM "bf16"
typedef __nv_bfloat16 elem_t;
typedef __nv_bfloat162 elem2_t;
__device__ __forceinline__ elem2_t pack2(float a, float b) { return __floats2bfloat162_rn(a, b); }
__device__ __forceinline__ float2 unpack2(elem2_t v) { return __bfloat1622float2(v); }
#endif
#ifndef BM
#define BM 128  // rows of C a block: two consumer warpgroups of BM/2 (64: one m64 instruction; 128: two)
#endif
#ifndef BN
#define BN 256  // columns of C a block: the wgmma's N (128 or 256)
#endif
#define BK 64  // k a stage: one 128-byte swizzle row of 16-bit elements
#ifndef STAGES
#define STAGES 4
#endif
#ifndef BT
#define BT 0  // 1: the kernel takes Bᵀ (N×K row-major) and reads B K-major
#endif
#ifndef SWAPLS
#define SWAPLS 0  // 1: N-major B's descriptor with its two byte offsets exchanged (which reading of the PTX is right)
#endif
#ifndef GROUPM
#define GROUPM 8  // tile rows a group (the tile order's L2 locality)
#endif
#ifndef PREG
#define PREG 40  // the producer's registers after setmaxnreg.dec: 128·PREG + 256·CREG ≤ 65536
#endif
#ifndef CREG
#define CREG 232  // the consumers' registers after setmaxnreg.inc
#endif
#ifndef CL
#define CL 1  // CTAs a cluster along M (1 or 2): with 2, the pair shares B's tile, each CTA loading half of it by TMA multicast
#endif
#ifndef EPI
#define EPI 0  // the epilogue: 0 stores from registers; 1 through shared memory (128-byte swizzle) and TMA stores, a
               // 32 KB buffer a consumer; 2 the same in two halves of 128 columns (16 KB a consumer, room for 4 stages)
#endif
#if EPI == 1
#define EPI_COLS BN
#elif EPI == 2
#define EPI_COLS (BN / 2)
#else
#define EPI_COLS 0
#endif
#define EPI_BYTES (2 * WG_M * EPI_COLS * 2)  // both consumers' buffers
#if BT
#define TRANSB_S "0"
#else
#define TRANSB_S "1"
#endif
#define WG_M (BM / 2)
#define MI (WG_M / 64)
#define A_BYTES (BM * BK * 2)
#define B_BYTES (BN * BK * 2)
#define STAGE_BYTES (A_BYTES + B_BYTES)
#define STR2(x) #x
#define STR(x) STR2(x)
static_assert(A_BYTES % 1024 == 0 && B_BYTES % 1024 == 0, "every tile must start on a 1024-byte boundary (the swizzle's atom)");
static_assert(BN == 128 || BN == 256, "BN is the wgmma's N: 128 or 256");
static_assert(BM == 128 || BM == 256, "BM is two warpgroups of 64 or 128 rows");

struct __align__(64) TensorMap {
  unsigned long long words[16];
};

__device__ __forceinline__ void mbar_init(uint32_t bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count));
}
__device__ __forceinline__ void mbar_wait(uint32_t bar, int parity) {
  asm volatile(
      "{\n.reg .pred done;\nwait_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra wait_%=;\n}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(uint32_t bar, int bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const TensorMap* map, int x, int y, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
      "l"(map), "r"(x), "r"(y), "r"(bar)
      : "memory");
}
// A cluster peer's copy of a shared address (the same offset in CTA `rank` of the cluster).
__device__ __forceinline__ uint32_t cluster_map(uint32_t addr, int rank) {
  uint32_t out;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(out) : "r"(addr), "r"(rank));
  return out;
}
__device__ __forceinline__ void mbar_arrive_cluster(uint32_t cluster_addr) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(cluster_addr) : "memory");
}
// The producer's wait for a stage that consumers of both CTAs release: acquire at cluster scope.
__device__ __forceinline__ void mbar_wait_cluster(uint32_t bar, int parity) {
  asm volatile(
      "{\n.reg .pred done;\nwait_%=:\n"
      "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra wait_%=;\n}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}
// A TMA load whose box lands at the same offset in every CTA of `mask`, each CTA's mbarrier at `bar` told the bytes.
__device__ __forceinline__ void tma_load_2d_multicast(uint32_t dst, const TensorMap* map, int x, int y, uint32_t bar, uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(dst),
      "l"(map), "r"(x), "r"(y), "r"(bar), "h"(mask)
      : "memory");
}
__device__ __forceinline__ void tma_store_2d(const TensorMap* map, int x, int y, uint32_t src) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n" ::"l"(map), "r"(x), "r"(y), "r"(src) : "memory");
}
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
// A barrier of one consumer warpgroup's 128 threads (named barrier 1 + the consumer's index; 0 is __syncthreads).
__device__ __forceinline__ void warpgroup_sync(int id) { asm volatile("bar.sync %0, 128;\n" ::"r"(id) : "memory"); }
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// A matrix descriptor in the 128-byte swizzle: start address >> 4 (bits 0-13), leading byte offset >> 4
// (16-29), stride byte offset >> 4 (32-45), swizzle mode 1 = 128 bytes (62-63).
__device__ __forceinline__ uint64_t desc128(uint32_t addr, uint32_t lbo, uint32_t sbo) {
  return (uint64_t)((addr & 0x3FFFF) >> 4) | ((uint64_t)(lbo >> 4) << 16) | ((uint64_t)(sbo >> 4) << 32) | ((uint64_t)1 << 62);
}
// K-major (A, and B with BT): rows of 128 bytes (64 k), 8-row atoms 1024 bytes apart; the leading offset is
// unused for a swizzled K-major operand (set to 1 as the PTX says). A k16 step is 32 bytes along the row.
__device__ __forceinline__ uint64_t desc_kmajor(uint32_t addr) { return desc128(addr, 16, 1024); }
// N-major B: the stage holds BN/64 TMA boxes of 64 n (one 128-byte row) × 64 k, each 8 KB; inside a box, k-row
// r sits at 128·r. The 8-k-row atoms are 1024 bytes apart, the 64-n blocks 8192 bytes apart. A k16 step is
// 16 rows, 2048 bytes.
__device__ __forceinline__ uint64_t desc_nmajor(uint32_t addr) {
#if SWAPLS
  return desc128(addr, 1024, BK * 128);
#else
  return desc128(addr, BK * 128, 1024);
#endif
}

// wgmma m64n128k16, A and B through descriptors; TRANSB says whether B is N-major (MN-major).
__device__ __forceinline__ void wgmma_m64n128k16(float (&d)[64], uint64_t descA, uint64_t descB, int scaleD) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32." ELEM "." ELEM " "
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
      "}, %64, %65, p, 1, 1, 0, " TRANSB_S ";\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(descA), "l"(descB), "r"(scaleD));
}

__device__ __forceinline__ void fence_acc128(float (&d)[64]) {
#pragma unroll
  for (int i = 0; i < 64; i++) asm volatile("" : "+f"(d[i])::"memory");
}

// wgmma m64n256k16, A and B through descriptors; TRANSB says whether B is N-major (MN-major).
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], uint64_t descA, uint64_t descB, int scaleD) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32." ELEM "." ELEM " "
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63,"
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79,"
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95,"
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111,"
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
      "}, %128, %129, p, 1, 1, 0, " TRANSB_S ";\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
        "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
        "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
        "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
        "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
        "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
        "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
        "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(descA), "l"(descB), "r"(scaleD));
}

__device__ __forceinline__ void fence_acc256(float (&d)[128]) {
#pragma unroll
  for (int i = 0; i < 128; i++) asm volatile("" : "+f"(d[i])::"memory");
}

#if BN == 256
#define WGMMA wgmma_m64n256k16
#define FENCE_ACC fence_acc256
#else
#define WGMMA wgmma_m64n128k16
#define FENCE_ACC fence_acc128
#endif

// Tile t's first row and column: groups of GROUPM tile rows, walked column by column.
__device__ __forceinline__ void tile_origin(int t, int tilesM, int tilesN, int& m0, int& n0) {
  const int perGroup = GROUPM * tilesN, first = (t / perGroup) * GROUPM;
  const int size = min(tilesM - first, GROUPM), inGroup = t % perGroup;
  m0 = (first + inGroup % size) * BM;
  n0 = (inGroup / size) * BN;
}

#if CL == 2
#define CLUSTER_DIMS __cluster_dims__(2, 1, 1)
#else
#define CLUSTER_DIMS
#endif

extern "C" __global__ void CLUSTER_DIMS __launch_bounds__(384, 1)
    hgemm_probe(int M, int N, int K, float alpha, const elem_t* __restrict__ A, const elem_t* __restrict__ B, float beta,
                elem_t* __restrict__ C, const __grid_constant__ TensorMap tmA, const __grid_constant__ TensorMap tmB,
                const __grid_constant__ TensorMap tmC) {
  extern __shared__ unsigned char smem_raw[];
  const uint32_t raw = (uint32_t)__cvta_generic_to_shared(smem_raw);
  const uint32_t base = (raw + 1023) & ~1023u;
  const uint32_t epi = base + STAGES * STAGE_BYTES;  // the epilogue buffers (EPI 1, 2)
  const uint32_t bars = epi + EPI_BYTES;  // full[s] at bars + 8s, empty[s] at bars + 8(STAGES + s)
  const int tid = threadIdx.x, wg = tid / 128, warp = (tid / 32) % 4, lane = tid % 32, g = lane / 4, t4 = lane % 4;
  // With clusters, a cluster takes tiles of CL·BM rows (tile_origin in units of the pair), each CTA its BM rows.
  int rank = 0;
#if CL == 2
  asm("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
#endif
  const int tilesM = M / (BM * CL), tilesN = N / BN, tiles = tilesM * tilesN, KT = K / BK;
  const int first = blockIdx.x / CL, step = gridDim.x / CL;
  if (tid == 0) {
    for (int s = 0; s < STAGES; s++) {
      mbar_init(bars + 8 * s, 1);
      mbar_init(bars + 8 * (STAGES + s), 8 * CL);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
#if CL == 2
  cluster_sync();  // the peer's barriers exist before any multicast or remote arrival reaches them
#else
  __syncthreads();
#endif
  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 " STR(PREG) ";\n");
    if (tid == 0) {
      int s = 0, phase = 0;  // the stage ring runs on across tiles
      for (int t = first; t < tiles; t += step) {
        int m0, n0;
        tile_origin(t, tilesM, tilesN, m0, n0);
        m0 = m0 * CL + rank * BM;
        for (int kt = 0; kt < KT; kt++) {
          // Wait until the consumers (of both CTAs, with clusters) released this stage's previous use.
#if CL == 2
          mbar_wait_cluster(bars + 8 * (STAGES + s), phase ^ 1);
#else
          mbar_wait(bars + 8 * (STAGES + s), phase ^ 1);
#endif
          const uint32_t as = base + s * STAGE_BYTES, bs = as + A_BYTES, full = bars + 8 * s;
          mbar_expect_tx(full, STAGE_BYTES);
          tma_load_2d(as, &tmA, kt * BK, m0, full);
#if BT
          tma_load_2d(bs, &tmB, kt * BK, n0, full);
#elif CL == 2
          // This CTA's half of B's boxes, into both CTAs.
#pragma unroll
          for (int i = rank * (BN / 128); i < (rank + 1) * (BN / 128); i++)
            tma_load_2d_multicast(bs + i * BK * 128, &tmB, n0 + 64 * i, kt * BK, full, 3);
#else
#pragma unroll
          for (int i = 0; i < BN / 64; i++) tma_load_2d(bs + i * BK * 128, &tmB, n0 + 64 * i, kt * BK, full);
#endif
          if (++s == STAGES) {
            s = 0;
            phase ^= 1;
          }
        }
      }
    }
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 " STR(CREG) ";\n");
    const int cw = wg - 1;
#if EPI != 0
    const int wtid = tid - 128 * wg;  // the thread's index in its consumer warpgroup
#endif
    float acc[MI][BN / 2];
    int s = 0, phase = 0;
    for (int t = first; t < tiles; t += step) {
      int m0, n0;
      tile_origin(t, tilesM, tilesN, m0, n0);
      m0 = m0 * CL + rank * BM;
      int prev = 0;
      for (int kt = 0; kt < KT; kt++) {
        mbar_wait(bars + 8 * s, phase);
        const uint32_t as = base + s * STAGE_BYTES, bs = as + A_BYTES;
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / 16; kk++) {
#if BT
          const uint64_t db = desc_kmajor(bs + kk * 32);
#else
          const uint64_t db = desc_nmajor(bs + kk * 2048);
#endif
#pragma unroll
          for (int mi = 0; mi < MI; mi++) WGMMA(acc[mi], desc_kmajor(as + (cw * WG_M + mi * 64) * 128 + kk * 32), db, (kt | kk) != 0);
        }
        wgmma_commit();
        wgmma_wait<1>();
#pragma unroll
        for (int mi = 0; mi < MI; mi++) FENCE_ACC(acc[mi]);
        // The group before this one is complete: its stage goes back to the producer (both producers, with clusters:
        // each wrote half of B into it).
        if (kt > 0 && lane == 0) {
#if CL == 2
          mbar_arrive_cluster(cluster_map(bars + 8 * (STAGES + prev), 0));
          mbar_arrive_cluster(cluster_map(bars + 8 * (STAGES + prev), 1));
#else
          mbar_arrive(bars + 8 * (STAGES + prev));
#endif
        }
        prev = s;
        if (++s == STAGES) {
          s = 0;
          phase ^= 1;
        }
      }
      wgmma_wait<0>();
#pragma unroll
      for (int mi = 0; mi < MI; mi++) FENCE_ACC(acc[mi]);
      if (lane == 0) {
#if CL == 2
        mbar_arrive_cluster(cluster_map(bars + 8 * (STAGES + prev), 0));
        mbar_arrive_cluster(cluster_map(bars + 8 * (STAGES + prev), 1));
#else
        mbar_arrive(bars + 8 * (STAGES + prev));
#endif
      }
      // Element 4j+e of an accumulator: row 16·warp + g (+8 for e ≥ 2), column 8j + 2·t4 (+1 for odd e).
#if EPI == 0
#pragma unroll
      for (int mi = 0; mi < MI; mi++) {
        const int row = m0 + cw * WG_M + mi * 64 + 16 * warp + g;
#pragma unroll
        for (int j = 0; j < BN / 8; j++) {
          const int col = n0 + 8 * j + 2 * t4;
          elem2_t* c0 = reinterpret_cast<elem2_t*>(C + (size_t)row * N + col);
          elem2_t* c1 = reinterpret_cast<elem2_t*>(C + (size_t)(row + 8) * N + col);
          float x0 = alpha * acc[mi][4 * j], x1 = alpha * acc[mi][4 * j + 1], x2 = alpha * acc[mi][4 * j + 2], x3 = alpha * acc[mi][4 * j + 3];
          if (beta != 0.0f) {
            const float2 y0 = unpack2(*c0), y1 = unpack2(*c1);
            x0 += beta * y0.x;
            x1 += beta * y0.y;
            x2 += beta * y1.x;
            x3 += beta * y1.y;
          }
          *c0 = pack2(x0, x1);
          *c1 = pack2(x2, x3);
        }
      }
#else
      // Through this consumer's buffer: EPI_COLS columns at a time, as boxes of 64 rows × 64 columns in the 128-byte
      // swizzle (the 16-byte piece j of row r at piece j ^ (r & 7): a warp's 8 rows × 4 words hit 32 banks), then
      // TMA stores from one thread. The buffer is rewritten only once the stores before have read it.
      const uint32_t mine = epi + cw * (WG_M * EPI_COLS * 2);
#pragma unroll
      for (int h = 0; h < BN / EPI_COLS; h++) {
        if (wtid == 0) asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
        warpgroup_sync(1 + cw);
#pragma unroll
        for (int mi = 0; mi < MI; mi++) {
#pragma unroll
          for (int jj = 0; jj < EPI_COLS / 8; jj++) {
            const int j = h * (EPI_COLS / 8) + jj;
            const int r = mi * 64 + 16 * warp + g;
            float x0 = alpha * acc[mi][4 * j], x1 = alpha * acc[mi][4 * j + 1], x2 = alpha * acc[mi][4 * j + 2], x3 = alpha * acc[mi][4 * j + 3];
            if (beta != 0.0f) {
              const int row = m0 + cw * WG_M + r, col = n0 + 8 * j + 2 * t4;
              const float2 y0 = unpack2(*reinterpret_cast<const elem2_t*>(C + (size_t)row * N + col));
              const float2 y1 = unpack2(*reinterpret_cast<const elem2_t*>(C + (size_t)(row + 8) * N + col));
              x0 += beta * y0.x;
              x1 += beta * y0.y;
              x2 += beta * y1.x;
              x3 += beta * y1.y;
            }
            const uint32_t box = mine + (jj / 8) * (WG_M * 128), piece = jj % 8;
            const elem2_t v0 = pack2(x0, x1), v1 = pack2(x2, x3);
            asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(box + r * 128 + ((piece ^ (r & 7)) << 4) + t4 * 4), "r"(*reinterpret_cast<const uint32_t*>(&v0)));
            asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(box + (r + 8) * 128 + ((piece ^ ((r + 8) & 7)) << 4) + t4 * 4), "r"(*reinterpret_cast<const uint32_t*>(&v1)));
          }
        }
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        warpgroup_sync(1 + cw);
        if (wtid == 0) {
#pragma unroll
          for (int b = 0; b < EPI_COLS / 64; b++) tma_store_2d(&tmC, n0 + h * EPI_COLS + 64 * b, m0 + cw * WG_M, mine + b * (WG_M * 128));
          asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
        }
      }
#endif
    }
#if EPI != 0
    if (wtid == 0) asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
#endif
  }
#if CL == 2
  // Neither CTA leaves while its peer may still arrive on its barriers or multicast into it.
  cluster_sync();
#endif
}
