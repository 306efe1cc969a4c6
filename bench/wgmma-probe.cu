// A hand-written TF32 GEMM on the H100's warpgroup tensor-core instruction (wgmma.mma_async, sm_90a), to learn
// what tile, stage count and feeding reach 70 % of torch.mm TF32 before the language grows warpgroup builtins
// (issue 13). It computes C = alpha*A*B (+ beta*C) for row-major A (M x K), B (K x N), C (M x N), the
// project's matmul convention, with the launch signature of the matmul rungs so bench/wgmma-probe.py can load it
// like bench/torch-matmul.py loads ours. TF32 wgmma takes its shared-memory operands K-major only, and B is
// N-contiguous, so the kernel computes C^T = B^T A^T: B^T is wgmma's A operand, read from a padded shared tile
// into registers (4-byte loads, conflict-free, rounded with cvt.rna.tf32.f32 on the way), and A^T is wgmma's
// B operand, read by the tensor cores through a matrix descriptor from a K-major, 128-byte-swizzled tile that
// cp.async fills. Two warpgroups of 64 rows (our n) each multiply against all BM of our m (wgmma's N). A tile's
// operand from the descriptor is truncated to TF32 by the hardware unless ROUNDA rounds it in shared memory first.
// Two kernels: `wgmma_probe` (every thread copies with cp.async, one __syncthreads per k-tile) and
// `wgmma_probe_ws` (warp-specialized: a producer warpgroup, TMA for A, mbarriers per stage; see below).
// Only multiples of the tile are handled (4096 and 8192 cubes); this is a measurement, not a rung.
// bench/results/2026-11-23-wgmma-probe-h100.json has what each build measured.
//
//   nvcc -arch=sm_90a -cubin -O3 -DBM=256 -DBK=32 -DSTAGES=4 -DWAITN=1 -DROUNDA=0 -DSS=0 bench/wgmma-probe.cu \
//     -o probe_BM256_BK32_S4_W1_R0_SS0.cubin          (wgmma-probe.py reads the settings from the name)
//   nvcc -arch=sm_90a -cubin -O3 -DBM=256 -DWS_STAGES=4 bench/wgmma-probe.cu -o probe_BM256_BK32_S4_WS1.cubin
#include <cstdint>

#ifndef BM
#define BM 256  // our m per block: wgmma's N (128 or 256)
#endif
#ifndef STAGES
#define STAGES 4
#endif
#ifndef WAITN
#define WAITN 1  // wgmma groups left in flight at the end of a k-tile (0 or 1)
#endif
#ifndef ROUNDA
#define ROUNDA 0  // 1: round the A tile to TF32 (cvt.rna) in shared memory before the tensor cores read it
#endif
#define BN 128  // our n per block: two warpgroups of wgmma's M = 64
#ifndef BK
#define BK 32  // k per stage: 32 floats are one 128-byte swizzle row; 64 stores two such column blocks
#endif
#define KSTEPS (BK / 8)
#define THREADS 256
#define BSTRIDE (BN + 8)  // floats per k-row of the B tile: rows t and t+1 land 8 banks apart
#define A_TILE_BYTES (BM * BK * 4)
#define B_TILE_BYTES (BK * BSTRIDE * 4)
#define STAGE_BYTES (A_TILE_BYTES + B_TILE_BYTES)
#define PREFETCH (STAGES - 1 - WAITN)  // a stage is refilled only once its wgmma group is known complete
static_assert(STAGE_BYTES % 1024 == 0, "each stage's A tile must stay 1024-byte aligned for the 128B swizzle");
static_assert(PREFETCH >= 1, "too few stages");

__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
__device__ __forceinline__ uint32_t tf32(float x) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
}
// The matrix descriptor of a K-major operand in 128-byte swizzle: start address >> 4, leading offset unused (1),
// stride offset 1024 bytes (8 rows of 128 bytes, one swizzle atom), swizzle mode 1 (128B) in bits 62-63.
__device__ __forceinline__ uint64_t desc128(uint32_t addr) {
  return (uint64_t)((addr & 0x3FFFF) >> 4) | ((uint64_t)1 << 16) | ((uint64_t)(1024 >> 4) << 32) | ((uint64_t)1 << 62);
}

// wgmma m64n128k8, TF32, both operands from shared memory through descriptors (timing experiments).
__device__ __forceinline__ void wgmma_m64n128k8_ss(float (&d)[64], uint64_t descA, uint64_t descB, int scaleD) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 "
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
      "}, %64, %65, p, 1, 1;\n}\n"
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

// wgmma m64n256k8, TF32, both operands from shared memory through descriptors (timing experiments).
__device__ __forceinline__ void wgmma_m64n256k8_ss(float (&d)[128], uint64_t descA, uint64_t descB, int scaleD) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 "
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63,"
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79,"
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95,"
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111,"
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
      "}, %128, %129, p, 1, 1;\n}\n"
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


// wgmma m64n128k8, TF32 A from registers (a[4]), B from shared memory through a descriptor.
__device__ __forceinline__ void wgmma_m64n128k8_rs(float (&d)[64], const uint32_t (&a)[4], uint64_t desc, int scaleD) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 "
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
      "}, {%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(scaleD));
}

// wgmma m64n256k8, TF32 A from registers (a[4]), B from shared memory through a descriptor.
__device__ __forceinline__ void wgmma_m64n256k8_rs(float (&d)[128], const uint32_t (&a)[4], uint64_t desc, int scaleD) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 "
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63,"
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79,"
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95,"
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111,"
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
      "}, {%128, %129, %130, %131}, %132, p, 1, 1;\n}\n"
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
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(scaleD));
}


#if BM == 256
#define WGMMA wgmma_m64n256k8_rs
#define WGMMA_SS wgmma_m64n256k8_ss
#else
#define WGMMA wgmma_m64n128k8_rs
#define WGMMA_SS wgmma_m64n128k8_ss
#endif
#ifndef SS
#define SS 0  // 1: both operands through descriptors (wrong product: a timing experiment on what the register operand costs)
#endif

// wgmma.wait_group that keeps the register operands of the group still in flight alive until it returns: the
// tensor cores read them asynchronously, and without this use ptxas may give their registers to the next loads.
template <int N>
__device__ __forceinline__ void wgmma_wait_keep4(const uint32_t (&a)[4][4]) {
  asm volatile("wgmma.wait_group.sync.aligned %16;\n" ::"r"(a[0][0]), "r"(a[0][1]), "r"(a[0][2]), "r"(a[0][3]), "r"(a[1][0]),
               "r"(a[1][1]), "r"(a[1][2]), "r"(a[1][3]), "r"(a[2][0]), "r"(a[2][1]), "r"(a[2][2]), "r"(a[2][3]), "r"(a[3][0]),
               "r"(a[3][1]), "r"(a[3][2]), "r"(a[3][3]), "n"(N)
               : "memory");
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    wgmma_probe(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B, float beta,
                float* __restrict__ C) {
  extern __shared__ unsigned char smem_raw[];
  const uint32_t raw = (uint32_t)__cvta_generic_to_shared(smem_raw);
  const uint32_t base = (raw + 1023) & ~1023u;
  unsigned char* basep = smem_raw + (base - raw);
  const int tid = threadIdx.x, wg = tid / 128, warp = (tid / 32) % 4, lane = tid % 32, g = lane / 4, t = lane % 4;
  // Tiles in groups of 8 along m, so that consecutive blocks share B columns and A rows in L2.
  const int tilesM = M / BM, tilesN = N / BN, group = 8;
  const int linear = blockIdx.x, perGroup = group * tilesN, first = (linear / perGroup) * group;
  const int size = min(tilesM - first, group), inGroup = linear % perGroup;
  const int m0 = (first + inGroup % size) * BM, n0 = (inGroup / size) * BN;
  const float* Ag = A + (size_t)m0 * K;
  const float* Bg = B + n0;
  const int KT = K / BK;

  auto load = [&](int kt, int s) {
    const uint32_t as = base + s * STAGE_BYTES, bs = as + A_TILE_BYTES;
    const int k0 = kt * BK;
#pragma unroll
    for (int i = 0; i < BM * BK / 4 / THREADS; i++) {
      const int c = tid + i * THREADS, r = c / (BK / 4), ch = c % (BK / 4), q = ch >> 3, ch8 = ch & 7;
      cp_async16(as + q * BM * 128 + r * 128 + ((ch8 ^ (r & 7)) << 4), Ag + (size_t)r * K + k0 + ch * 4);
    }
#pragma unroll
    for (int i = 0; i < BK * BN / 4 / THREADS; i++) {
      const int c = tid + i * THREADS, r = c / (BN / 4), ch = c % (BN / 4);
      cp_async16(bs + (r * BSTRIDE + ch * 4) * 4, Bg + (size_t)(k0 + r) * N + ch * 4);
    }
  };

  float acc[BM / 2];
#pragma unroll
  for (int i = 0; i < BM / 2; i++) acc[i] = 0.0f;

#pragma unroll
  for (int s = 0; s < PREFETCH; s++) {
    if (s < KT) load(s, s);
    cp_async_commit();
  }
  const int col = wg * 64 + warp * 16 + g;
  // (BK = 64 keeps both halves of the register set alive.)
  auto wait_keep = [&](const uint32_t(&prev)[KSTEPS][4]) {
    wgmma_wait_keep4<WAITN>(*reinterpret_cast<const uint32_t(*)[4][4]>(&prev[0]));
    if (KSTEPS == 8) wgmma_wait_keep4<WAITN>(*reinterpret_cast<const uint32_t(*)[4][4]>(&prev[KSTEPS - 4]));
  };
  // One k-tile: wait for its stage, publish it to the async proxy and the block, refill the stage whose wgmma group
  // is known complete, load the register operand (rounded to TF32), issue 4 wgmma k8 steps as one group, and wait
  // until at most WAITN groups are in flight (keeping the previous group's registers alive while one is).
  auto step = [&](int kt, uint32_t(&a)[KSTEPS][4], const uint32_t(&prev)[KSTEPS][4]) {
    const int s = kt % STAGES;
    cp_async_wait<PREFETCH - 1>();
#if ROUNDA
    {
      const uint32_t as = base + s * STAGE_BYTES;
#pragma unroll
      for (int i = 0; i < BM * BK / 4 / THREADS; i++) {
        const int c = tid + i * THREADS, r = c / (BK / 4), ch = c % (BK / 4), q = ch >> 3, ch8 = ch & 7;
        const uint32_t p = as + q * BM * 128 + r * 128 + ((ch8 ^ (r & 7)) << 4);
        float x0, x1, x2, x3;
        asm volatile("ld.shared.v4.f32 {%0,%1,%2,%3}, [%4];\n" : "=f"(x0), "=f"(x1), "=f"(x2), "=f"(x3) : "r"(p));
        asm volatile("st.shared.v4.b32 [%0], {%1,%2,%3,%4};\n" ::"r"(p), "r"(tf32(x0)), "r"(tf32(x1)), "r"(tf32(x2)), "r"(tf32(x3)));
      }
    }
#endif
    fence_proxy_async();
    __syncthreads();
    {
      const int nk = kt + PREFETCH;
      if (nk < KT) load(nk, nk % STAGES);
      cp_async_commit();
    }
    const float* Bs = (const float*)(basep + s * STAGE_BYTES + A_TILE_BYTES);
#pragma unroll
    for (int j = 0; j < KSTEPS; j++) {
      a[j][0] = tf32(Bs[(8 * j + t) * BSTRIDE + col]);
      a[j][1] = tf32(Bs[(8 * j + t) * BSTRIDE + col + 8]);
      a[j][2] = tf32(Bs[(8 * j + t + 4) * BSTRIDE + col]);
      a[j][3] = tf32(Bs[(8 * j + t + 4) * BSTRIDE + col + 8]);
    }
    wgmma_fence();
#pragma unroll
    for (int j = 0; j < KSTEPS; j++) {
      const uint32_t at = base + s * STAGE_BYTES + (j >> 2) * BM * 128 + (j & 3) * 32;
#if SS
      WGMMA_SS(acc, desc128(at + wg * 64 * 128), desc128(at), 1);
#else
      WGMMA(acc, a[j], desc128(at), 1);
#endif
    }
    wgmma_commit();
#if WAITN == 0
    wgmma_wait<0>();
#else
    wait_keep(prev);
#endif
  };
  uint32_t a0[KSTEPS][4], a1[KSTEPS][4];
#pragma unroll
  for (int j = 0; j < KSTEPS; j++)
#pragma unroll
    for (int i = 0; i < 4; i++) a1[j][i] = 0;
  // K is a multiple of 2 * BK here: the two register sets alternate.
  for (int kt = 0; kt < KT; kt += 2) {
    step(kt, a0, a1);
    step(kt + 1, a1, a0);
  }
  wgmma_wait<0>();
  // acc[4j + r] holds D[row][col] with row = our n, col = our m (D = C^T).
  const int n = n0 + col;
#pragma unroll
  for (int j = 0; j < BM / 8; j++) {
    const int m = m0 + 8 * j + 2 * t;
    float* c0 = C + (size_t)m * N + n;
    float* c1 = c0 + N;
    if (beta != 0.0f) {
      c0[0] = alpha * acc[4 * j] + beta * c0[0];
      c1[0] = alpha * acc[4 * j + 1] + beta * c1[0];
      c0[8] = alpha * acc[4 * j + 2] + beta * c0[8];
      c1[8] = alpha * acc[4 * j + 3] + beta * c1[8];
    } else {
      c0[0] = alpha * acc[4 * j];
      c1[0] = alpha * acc[4 * j + 1];
      c0[8] = alpha * acc[4 * j + 2];
      c1[8] = alpha * acc[4 * j + 3];
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// The warp-specialized build: a producer warpgroup fills the stages (the A tile by TMA into the 128-byte
// swizzle, one thread; the B tile by cp.async from all 128 of its threads) and signals a "full" mbarrier per
// stage; the two consumer warpgroups wait on it, multiply, and release the stage through an "empty" mbarrier
// once their wgmma group on it is complete. No block-wide barrier in the main loop: the warpgroups drift.
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
__device__ __forceinline__ void cp_async_mbar_arrive(uint32_t bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ uint32_t cluster_rank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
// An arrival on the barrier at the same offset in block `rank` of the cluster (this block's own included).
__device__ __forceinline__ void mbar_arrive_cluster(uint32_t bar, uint32_t rank) {
  asm volatile(
      "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(bar),
      "r"(rank)
      : "memory");
}
// The box into the same offset of every block in `mask`, each block's barrier at `bar`'s offset counting its bytes.
__device__ __forceinline__ void tma_load_2d_multicast(uint32_t dst, const TensorMap* map, int x, int y, uint32_t bar, uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(dst),
      "l"(map), "r"(x), "r"(y), "r"(bar), "h"(mask)
      : "memory");
}
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const TensorMap* map, int x, int y, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
      "l"(map), "r"(x), "r"(y), "r"(bar)
      : "memory");
}

#ifndef WS_STAGES
#define WS_STAGES 4
#endif
#ifndef WS_GMAP
#define WS_GMAP 0  // 1: the kernel takes A's tensor map as a pointer to global memory (a buffer) instead of a parameter
#endif
#ifndef WS_CPA
#define WS_CPA 0  // 1: the producer's 128 threads copy the A tile too, by cp.async into the swizzle (no TMA)
#endif
#ifndef WS_NREG
#define WS_NREG 1  // 0: no setmaxnreg (every warpgroup keeps the launch bound's registers)
#endif
#ifndef WS_PREG
#define WS_PREG 40  // the producer's registers after setmaxnreg.dec: 128·WS_PREG + 256·WS_CREG ≤ 65536, or
                    // setmaxnreg.inc waits for registers that never free (a hang, measured with 56 and 232)
#endif
#ifndef WS_CREG
#define WS_CREG 232  // the consumers' registers after setmaxnreg.inc
#endif
#ifndef WS_SS
#define WS_SS 0  // 1: both wgmma operands from shared memory (a wrong product: timing the register operand's cost)
#endif
#ifndef WS_CLUSTER
#define WS_CLUSTER 1  // 2: clusters of two blocks along n sharing A's tile: each copies half of it (128 rows) by
                      // TMA multicast into both blocks' stage, and a stage is refilled once both blocks' consumers
                      // released it (A's map then has boxes of BM / 2 rows)
#endif
#if WS_CLUSTER == 2
#define WS_CLUSTER_DIMS __cluster_dims__(2, 1, 1)
#else
#define WS_CLUSTER_DIMS
#endif
#define WS_STR2(x) #x
#define WS_STR(x) WS_STR2(x)
#if BK == 32
extern "C" __global__ void __launch_bounds__(384, 1) WS_CLUSTER_DIMS
    wgmma_probe_ws(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B, float beta,
#if WS_GMAP
                   float* __restrict__ C, const TensorMap* __restrict__ gmA) {
  // The tensor map in global memory (written by the host before the launch), not a kernel parameter.
  const TensorMap& tmA = *gmA;
#else
                   float* __restrict__ C, const __grid_constant__ TensorMap tmA) {
#endif
  extern __shared__ unsigned char smem_raw[];
  const uint32_t raw = (uint32_t)__cvta_generic_to_shared(smem_raw);
  const uint32_t base = (raw + 1023) & ~1023u;
  unsigned char* basep = smem_raw + (base - raw);
  const uint32_t bars = base + WS_STAGES * STAGE_BYTES;  // full[s] at bars + 8s, empty[s] at bars + 8(S + s)
  const int tid = threadIdx.x, wg = tid / 128, warp = (tid / 32) % 4, lane = tid % 32, g = lane / 4, t = lane % 4;
  // With clusters the pair (cluster) walks the tiles: rank r takes column tile 2·(pair's column) + r of the same rows.
  const int rank = WS_CLUSTER == 2 ? (int)cluster_rank() : 0;
  const int tilesM = M / BM, tilesN = N / BN / WS_CLUSTER, group = 8;
  const int linear = blockIdx.x / WS_CLUSTER, perGroup = group * tilesN, first = (linear / perGroup) * group;
  const int size = min(tilesM - first, group), inGroup = linear % perGroup;
  const int m0 = (first + inGroup % size) * BM, n0 = ((inGroup / size) * WS_CLUSTER + rank) * BN;
  const int KT = K / BK;
  if (tid == 0) {
    for (int s = 0; s < WS_STAGES; s++) {
      mbar_init(bars + 8 * s, WS_CPA ? 128 : 129);
      mbar_init(bars + 8 * (WS_STAGES + s), 8 * WS_CLUSTER);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
#if WS_CLUSTER == 2
  cluster_sync();  // no block copies into or arrives on the other's barriers before they are initialized
#else
  __syncthreads();
#endif
  if (wg == 0) {
#if WS_NREG
    asm volatile("setmaxnreg.dec.sync.aligned.u32 " WS_STR(WS_PREG) ";\n");
#endif
    const float* Bg = B + n0;
    const float* Ag = A + (size_t)m0 * K;
    for (int kt = 0; kt < KT; kt++) {
      const int s = kt % WS_STAGES;
      if (kt >= WS_STAGES) mbar_wait(bars + 8 * (WS_STAGES + s), ((kt / WS_STAGES) + 1) & 1);
      const uint32_t as = base + s * STAGE_BYTES, bs = as + A_TILE_BYTES, full = bars + 8 * s;
#if WS_CPA
#pragma unroll
      for (int i = 0; i < BM * BK / 4 / 128; i++) {
        const int c = tid + i * 128, r = c / 8, ch = c % 8;
        cp_async16(as + r * 128 + ((ch ^ (r & 7)) << 4), Ag + (size_t)r * K + kt * BK + ch * 4);
      }
#else
      if (tid == 0) {
        mbar_expect_tx(full, A_TILE_BYTES);
#if WS_CLUSTER == 2
        tma_load_2d_multicast(as + rank * (A_TILE_BYTES / 2), &tmA, kt * BK, m0 + rank * (BM / 2), full, 0x3);
#else
        tma_load_2d(as, &tmA, kt * BK, m0, full);
#endif
      }
#endif
#pragma unroll
      for (int i = 0; i < BK * BN / 4 / 128; i++) {
        const int c = tid + i * 128, r = c / (BN / 4), ch = c % (BN / 4);
        cp_async16(bs + (r * BSTRIDE + ch * 4) * 4, Bg + (size_t)(kt * BK + r) * N + ch * 4);
      }
      cp_async_mbar_arrive(full);
    }
    cp_async_wait<0>();
#if WS_CLUSTER == 2
    cluster_sync();  // the other block's consumers may still arrive on this block's barriers
#endif
    return;
  }
#if WS_NREG
  asm volatile("setmaxnreg.inc.sync.aligned.u32 " WS_STR(WS_CREG) ";\n");
#endif
  const int col = (wg - 1) * 64 + warp * 16 + g;
  float acc[BM / 2];
#pragma unroll
  for (int i = 0; i < BM / 2; i++) acc[i] = 0.0f;
  auto step = [&](int kt, uint32_t(&a)[4][4], const uint32_t(&prev)[4][4]) {
    const int s = kt % WS_STAGES;
    mbar_wait(bars + 8 * s, (kt / WS_STAGES) & 1);
#if WS_CPA
    fence_proxy_async();  // the stage's A was written through the generic proxy (cp.async); wgmma reads it through the async one
#endif
#if WS_SS
    // Timing only (a wrong product): both operands through descriptors, A's from the consumer's 64 rows of the
    // A tile, to see what the register operand (and its loads and roundings) costs the warp-specialized kernel.
    wgmma_fence();
#pragma unroll
    for (int j = 0; j < 4; j++) WGMMA_SS(acc, desc128(base + s * STAGE_BYTES + (wg - 1) * 64 * 128 + j * 32), desc128(base + s * STAGE_BYTES + j * 32), 1);
#else
    const float* Bs = (const float*)(basep + s * STAGE_BYTES + A_TILE_BYTES);
#pragma unroll
    for (int j = 0; j < 4; j++) {
      a[j][0] = tf32(Bs[(8 * j + t) * BSTRIDE + col]);
      a[j][1] = tf32(Bs[(8 * j + t) * BSTRIDE + col + 8]);
      a[j][2] = tf32(Bs[(8 * j + t + 4) * BSTRIDE + col]);
      a[j][3] = tf32(Bs[(8 * j + t + 4) * BSTRIDE + col + 8]);
    }
    wgmma_fence();
#pragma unroll
    for (int j = 0; j < 4; j++) WGMMA(acc, a[j], desc128(base + s * STAGE_BYTES + j * 32), 1);
#endif
    wgmma_commit();
    wgmma_wait_keep4<1>(prev);
    // The group before this one is complete: its stage may be refilled.
#if WS_CLUSTER == 2
    // Lane r of each warp arrives on block r's barrier: the two arrivals leave at once.
    if (kt > 0 && lane < 2) mbar_arrive_cluster(bars + 8 * (WS_STAGES + (kt - 1) % WS_STAGES), lane);
#else
    if (kt > 0 && lane == 0) mbar_arrive(bars + 8 * (WS_STAGES + (kt - 1) % WS_STAGES));
#endif
  };
  uint32_t a0[4][4], a1[4][4];
#pragma unroll
  for (int j = 0; j < 4; j++)
#pragma unroll
    for (int i = 0; i < 4; i++) a1[j][i] = 0;
  for (int kt = 0; kt < KT; kt += 2) {
    step(kt, a0, a1);
    step(kt + 1, a1, a0);
  }
  wgmma_wait<0>();
  const int n = n0 + col;
#pragma unroll
  for (int j = 0; j < BM / 8; j++) {
    const int m = m0 + 8 * j + 2 * t;
    float* c0 = C + (size_t)m * N + n;
    float* c1 = c0 + N;
    c0[0] = alpha * acc[4 * j];
    c1[0] = alpha * acc[4 * j + 1];
    c0[8] = alpha * acc[4 * j + 2];
    c1[8] = alpha * acc[4 * j + 3];
  }
#if WS_CLUSTER == 2
  cluster_sync();
#endif
}
#endif
