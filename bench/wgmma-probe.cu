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
// The address of the same shared-memory offset in block `rank` of the cluster.
__device__ __forceinline__ uint32_t map_cluster(uint32_t addr, uint32_t rank) {
  uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(addr), "r"(rank));
  return r;
}
__device__ __forceinline__ void st_cluster_v4(uint32_t addr, uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  asm volatile("st.shared::cluster.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(a), "r"(b), "r"(c), "r"(d) : "memory");
}
// An asynchronous store into another block's shared memory whose 16 bytes complete that block's barrier `bar`
// (both addresses already mapped into the cluster's window).
__device__ __forceinline__ void st_async_v4(uint32_t addr, uint32_t a, uint32_t b, uint32_t c, uint32_t d, uint32_t bar) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%0], {%1, %2, %3, %4}, [%5];\n" ::"r"(addr), "r"(a), "r"(b), "r"(c), "r"(d), "r"(bar)
               : "memory");
}
__device__ __forceinline__ void st_shared_v4(uint32_t addr, uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(a), "r"(b), "r"(c), "r"(d) : "memory");
}
// An arrival on the barrier at the same offset in block `rank` that releases this thread's writes at cluster scope.
__device__ __forceinline__ void mbar_arrive_cluster_release(uint32_t bar, uint32_t rank) {
  asm volatile(
      "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote];\n}\n" ::"r"(bar),
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
#ifndef WS_PERSIST
#define WS_PERSIST 0  // 1: a persistent grid (a block or cluster a multiprocessor walks the tiles), so the producer
                      // fills the next tile's stages while the consumers store the last one's C
#endif
#ifndef WS_BTMA
#define WS_BTMA 0  // 1: B's 32x128 k-tile by TMA too (one thread, four 32x32 boxes in the 128-byte swizzle) instead of
                   // the producer's 128 threads of cp.async into a padded tile; the consumers' rows map to B's columns
                   // so that the fragment loads from the swizzle are conflict-free (see b_column below)
#endif
#ifndef WS_RNDA
#define WS_RNDA 0  // 1 (with WS_CLUSTER=2 and WS_BTMA=1): A rounded to TF32 on its way in: each block's producer threads
                   // load their block's half of A's k-tile (128 rows) from global memory into registers two k-tiles
                   // ahead, round it (cvt.rna), and store it into the swizzle of both blocks' stage: st.shared into
                   // their own (then one arrival a warp) and st.async into the other block's, whose bytes complete
                   // that block's full barrier (no release fence on the way); the consumers fence the async proxy
                   // after the wait. No multicast. 2: the same without the st.async (the other block's half of A is
                   // left stale: a wrong product, timing what the stores into the other block cost). 3: the half
                   // comes by TMA (one thread, WS_SD k-tiles ahead) into staging slots of shared memory instead of
                   // by the threads' global loads; the threads read it there, round it, and store it as in 1.
#endif
#ifndef WS_SKIP
#define WS_SKIP 0  // timing only, wrong products: with WS_RNDA, 1 leaves out the st.async into the other block, 2 the
                   // stores into this block's own stage; without WS_RNDA, 4 adds the consumers' proxy fence after each wait
#endif
#ifndef WS_ONCE
#define WS_ONCE 0  // 1 (with WS_CLUSTER=2, WS_BTMA=1): A rounded once into a scratch copy Ar inside the launch, which A's
                   // tensor map describes: before its TMA of a half k-tile, a block takes the half's flag (atomicCAS
                   // 0 -> 1) WS_LA k-tiles ahead and, if it got it, its producer threads round that half k-tile from
                   // A into Ar and publish it (flag 2, release); every block waits for flag 2 (acquire) before the
                   // copy. The first blocks to reach a row of tiles round it; the rest of the grid reuses it.
#endif
#ifndef WS_COUNT
#define WS_COUNT 0  // with WS_ONCE=2: a count a row half of its rounded k-tiles, read once a tile, so that tiles whose
                    // row half is wholly rounded skip the per-k-tile flags
#endif
#ifndef WS_CLAIM
#define WS_CLAIM 32  // with WS_ONCE=2: the most half k-tiles a block claims from a batch of 32 in one round
#endif
#ifndef WS_BATCHREL
#define WS_BATCHREL 0  // with WS_ONCE=2: one proxy fence and barrier a round of claims, then every claim released
#endif
#ifndef WS_GROUP
#define WS_GROUP 8  // the warp-specialized build's tile rows a group: units walk a group's rows, then the next pair
#endif
#ifndef WS_PACE
#define WS_PACE 0  // with WS_ONCE=2: the rounders start a unit's rows only once the copies reached the unit before
#endif
#ifndef WS_LA
#define WS_LA 4
#endif
#ifndef WS_FENCE
#define WS_FENCE 1  // with WS_RNDA, where the generic-to-async proxy fence goes: 1 the consumers after each wait, 2 the
                    // producer threads after their stores (before their arrival), 0 none (timing only)
#endif
#ifndef WS_SD
#define WS_SD 4  // WS_RNDA=3: staging slots of 16 KB for this block's half of A's k-tiles
#endif
#ifndef WS_PF
#define WS_PF 0  // with WS_RNDA: thread 0 prefetches this block's half of A's k-tile WS_PF ahead into L2 (0: none)
#endif
#if WS_RNDA && !(WS_CLUSTER == 2 && WS_BTMA)
#error "WS_RNDA needs WS_CLUSTER=2 and WS_BTMA=1"
#endif
#if WS_BTMA
#define WS_B_TILE_BYTES (BK * BN * 4)
#else
#define WS_B_TILE_BYTES B_TILE_BYTES
#endif
#define WS_STAGE_BYTES (A_TILE_BYTES + WS_B_TILE_BYTES)
static_assert(WS_STAGE_BYTES % 1024 == 0, "each stage's A tile must stay 1024-byte aligned for the 128B swizzle");
#if BK == 32
// Which of the block's 128 columns of B (our n) the consumer row `row` (0-63 of warpgroup c's wgmma M) holds.
// Without WS_BTMA: row i of consumer c is column 64c + i. With it, B's k-tile lies in four 32-column boxes in the
// 128-byte swizzle (16-byte chunk q of k-row r at chunk q ^ (r % 8)); lane (g, t) of a warp reads rows g and g + 8 at
// k-rows t and t + 4, so the eight g of a warp must cover all eight chunks after the XOR with t: row g of warp w
// is column 4w + g % 4 + 16(g / 4) (chunks w and w + 4) of box 2c, row g + 8 the same column of box 2c + 1, one box
// (1024 floats) further, so both rows' loads share one address register.
__device__ __forceinline__ int b_column(int c, int warp, int r16) {
#if WS_BTMA
  const int g = r16 & 7, hi = r16 >> 3;
  return c * 64 + hi * 32 + 4 * warp + (g & 3) + 16 * (g >> 2);
#else
  return c * 64 + warp * 16 + r16;
#endif
}
extern "C" __global__ void __launch_bounds__(384, 1) WS_CLUSTER_DIMS
    wgmma_probe_ws(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B, float beta,
#if WS_GMAP
                   float* __restrict__ C, const TensorMap* __restrict__ gmA) {
  // The tensor map in global memory (written by the host before the launch), not a kernel parameter.
  const TensorMap& tmA = *gmA;
#elif WS_ONCE
                   float* __restrict__ C, const __grid_constant__ TensorMap tmA, const __grid_constant__ TensorMap tmB, float* __restrict__ Ar,
                   int* __restrict__ flags) {
#elif WS_BTMA
                   float* __restrict__ C, const __grid_constant__ TensorMap tmA, const __grid_constant__ TensorMap tmB) {
#else
                   float* __restrict__ C, const __grid_constant__ TensorMap tmA) {
#endif
  extern __shared__ unsigned char smem_raw[];
  const uint32_t raw = (uint32_t)__cvta_generic_to_shared(smem_raw);
  const uint32_t base = (raw + 1023) & ~1023u;
  unsigned char* basep = smem_raw + (base - raw);
#if WS_RNDA == 3
  const uint32_t staging = base + WS_STAGES * WS_STAGE_BYTES;  // WS_SD slots of 16 KB
  const uint32_t bars = staging + WS_SD * (A_TILE_BYTES / 2);  // then staged[i] at bars + 8(2S + i), freed[i] after them
#else
  const uint32_t bars = base + WS_STAGES * WS_STAGE_BYTES;  // full[s] at bars + 8s, empty[s] at bars + 8(S + s)
#endif
  const int tid = threadIdx.x, wg = tid / 128, warp = (tid / 32) % 4, lane = tid % 32, g = lane / 4, t = lane % 4;
  // With clusters the pair (cluster) walks the tiles: rank r takes column tile 2·(pair's column) + r of the same rows.
  const int rank = WS_CLUSTER == 2 ? (int)cluster_rank() : 0;
  const int tilesM = M / BM, tilesN = N / BN / WS_CLUSTER, group = WS_GROUP;
  const int units = tilesM * tilesN;  // tiles (pairs of tiles with clusters)
#if WS_PERSIST
  const int first_unit = blockIdx.x / WS_CLUSTER, unit_step = gridDim.x / WS_CLUSTER;
#else
  const int first_unit = blockIdx.x / WS_CLUSTER, unit_step = units;
#endif
  // Unit u's tile: groups of 8 tile rows walked column by column, so that the blocks running together share rows of A
  // and columns of B in L2.
  auto tile_of = [&](int u, int& m0, int& n0) {
    const int perGroup = group * tilesN, first = (u / perGroup) * group;
    const int size = min(tilesM - first, group), inGroup = u % perGroup;
    m0 = (first + inGroup % size) * BM;
    n0 = ((inGroup / size) * WS_CLUSTER + rank) * BN;
  };
  const int KT = K / BK;
  if (tid == 0) {
    for (int s = 0; s < WS_STAGES; s++) {
      // With WS_RNDA: thread 0's expect_tx arrival and this block's 4 producer warps.
      mbar_init(bars + 8 * s, WS_RNDA ? 5 : (WS_CPA || WS_BTMA) ? (WS_BTMA ? 1 : 128) : 129);
      mbar_init(bars + 8 * (WS_STAGES + s), 8 * WS_CLUSTER);
    }
#if WS_RNDA == 3
    for (int i = 0; i < WS_SD; i++) {
      mbar_init(bars + 8 * (2 * WS_STAGES + i), 1);          // staged: thread 0's expect_tx, and the copy's bytes
      mbar_init(bars + 8 * (2 * WS_STAGES + WS_SD + i), 4);  // freed: the producer's 4 warps have read the slot
    }
#endif
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
#if WS_RNDA
    {
      // Thread t copies 16-byte pieces t % 8 of rows t / 8 + 16i (i < 8) of this block's 128 rows of A's k-tile.
      const int pr = tid / 8, pc = tid % 8;
      const int myUnits = first_unit < units ? (units - 1 - first_unit) / unit_step + 1 : 0;
      const int total = myUnits * KT;
      // A walk over this block's k-tiles: the unit, its k-tile, and the unit's tile, computed (with divisions) once
      // a tile, not once a k-tile: one producer thread's divisions a k-tile cost more than a k-tile's time.
      struct Cursor {
        int u, kt, m0, n0;
      };
      auto advance = [&](Cursor& c) {
        if (++c.kt == KT) {
          c.kt = 0;
          c.u += unit_step;
          if (c.u < units) tile_of(c.u, c.m0, c.n0);
        }
      };
      Cursor first{first_unit, 0, 0, 0};
      if (first_unit < units) tile_of(first_unit, first.m0, first.n0);
      Cursor ld = first, fl = first;
      auto source = [&](const Cursor& c) { return A + (size_t)(c.m0 + rank * (BM / 2) + pr) * K + c.kt * BK + pc * 4; };
#if WS_RNDA == 3
      Cursor st = first;
      auto stage_in = [&](int it) {
        // Thread 0: this block's half of A's k-tile `it` (cursor st) into staging slot it % SD, by TMA (not multicast).
        const int slot = it % WS_SD;
        const uint32_t staged = bars + 8 * (2 * WS_STAGES + slot);
        mbar_expect_tx(staged, A_TILE_BYTES / 2);
        tma_load_2d(staging + slot * (A_TILE_BYTES / 2), &tmA, st.kt * BK, st.m0 + rank * (BM / 2), staged);
        advance(st);
      };
      if (tid == 0)
        for (int i = 0; i < WS_SD && i < total; i++) stage_in(i);
#endif
      auto load = [&](int it, float4(&into)[8]) {
#if WS_RNDA == 3
        const int slot = it % WS_SD;
        mbar_wait(bars + 8 * (2 * WS_STAGES + slot), (it / WS_SD) & 1);
#pragma unroll
        for (int i = 0; i < 8; i++) {
          const int r = pr + 16 * i;
          const uint32_t at = staging + slot * (A_TILE_BYTES / 2) + r * 128 + ((pc ^ (r & 7)) << 4);
          asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];\n" : "=f"(into[i].x), "=f"(into[i].y), "=f"(into[i].z), "=f"(into[i].w) : "r"(at) : "memory");
        }
        __syncwarp();
        if ((tid & 31) == 0) mbar_arrive(bars + 8 * (2 * WS_STAGES + WS_SD + slot));
        if (tid == 0 && it + WS_SD < total) {
          // The slot is refilled once all four warps have read it.
          mbar_wait(bars + 8 * (2 * WS_STAGES + WS_SD + slot), (it / WS_SD) & 1);
          stage_in(it + WS_SD);
        }
        return;
#endif
        const float* src = source(ld);
        advance(ld);
#pragma unroll
        for (int i = 0; i < 8; i++) into[i] = __ldg(reinterpret_cast<const float4*>(src + (size_t)16 * i * K));
      };
      const uint32_t peer = rank ^ 1;
      auto fill = [&](int it, const float4(&from)[8]) {
        const int s = it % WS_STAGES;
        if (it >= WS_STAGES) mbar_wait(bars + 8 * (WS_STAGES + s), ((it / WS_STAGES) + 1) & 1);
        const uint32_t as = base + s * WS_STAGE_BYTES, bs = as + A_TILE_BYTES, full = bars + 8 * s;
        if (tid == 0) {
          int m0, n0;
#if WS_PF
          // This block's half of A's k-tile it + WS_PF into L2 (the tensor memory accelerator, no registers), so
          // that the loads issued two k-tiles ahead find it there instead of in DRAM.
          if (it + WS_PF < total) {
            const int ahead = it + WS_PF;
            tile_of(first_unit + (ahead / KT) * unit_step, m0, n0);
            asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global [%0, {%1, %2}];\n" ::"l"(&tmA), "r"((ahead % KT) * BK), "r"(m0 + rank * (BM / 2)) : "memory");
          }
#endif
          // B's 16 KB by TMA and the other block's half of A (16 KB) by its st.async.
          // (WS_RNDA=2, timing only: no st.async, the other half of A stale.)
          mbar_expect_tx(full, WS_B_TILE_BYTES + ((WS_RNDA == 2 || (WS_SKIP & 1)) ? 0 : A_TILE_BYTES / 2));
#pragma unroll
          for (int b = 0; b < BN / 32; b++) tma_load_2d(bs + b * 4096, &tmB, fl.n0 + 32 * b, fl.kt * BK, full);
        }
        advance(fl);
        const uint32_t remoteFull = map_cluster(full, peer);
#pragma unroll
        for (int i = 0; i < 8; i++) {
          const int r = rank * (BM / 2) + pr + 16 * i;
          const uint32_t at = as + r * 128 + ((pc ^ (r & 7)) << 4);
          const uint32_t x = tf32(from[i].x), y = tf32(from[i].y), z = tf32(from[i].z), w = tf32(from[i].w);
          if (!(WS_SKIP & 2)) st_shared_v4(at, x, y, z, w);
          if (WS_RNDA != 2 && !(WS_SKIP & 1)) st_async_v4(map_cluster(at, peer), x, y, z, w, remoteFull);
        }
#if WS_FENCE == 2
        fence_proxy_async();
#endif
        __syncwarp();
        if ((tid & 31) == 0) mbar_arrive(full);
      };
#if WS_RNDA == 3
      // The staging slots keep the copies WS_SD k-tiles ahead: one register set suffices.
      for (int it = 0; it < total; it++) {
        float4 v[8];
        load(it, v);
        fill(it, v);
      }
#else
      // Three register sets: the loads of k-tile it + 2 are in flight while k-tile it is stored.
      float4 v0[8], v1[8], v2[8];
      if (total > 0) load(0, v0);
      if (total > 1) load(1, v1);
      for (int it = 0; it < total; it += 3) {
        if (it + 2 < total) load(it + 2, v2);
        fill(it, v0);
        if (it + 3 < total) load(it + 3, v0);
        if (it + 1 < total) fill(it + 1, v1);
        if (it + 4 < total) load(it + 4, v1);
        if (it + 2 < total) fill(it + 2, v2);
      }
#endif
    }
    cluster_sync();
    return;
#endif
#if WS_ONCE
    // The shared word through which thread 0 tells the warpgroup whether it took a half k-tile to round.
    volatile int* taken = reinterpret_cast<volatile int*>(basep + (bars - base) + 8 * 2 * WS_STAGES);
    // WS_PACE: the index of the unit whose copies thread 0 has begun (the rounders wait for index − 1).
    [[maybe_unused]] volatile int* copier_at = taken + 1;
    if (tid == 0) *copier_at = 0;
    asm volatile("bar.sync 1, 128;\n" ::: "memory");
    const int pr = tid / 8, pc = tid % 8;
    auto flag_of = [&](int m0, int t) { return flags + ((m0 + rank * (BM / 2)) / (BM / 2)) * KT + t; };
    // With WS_COUNT, after the M / 128 · KT flags: a count a row half of its rounded k-tiles.
    [[maybe_unused]] auto count_of = [&](int m0) { return flags + (M / (BM / 2)) * KT + (m0 + rank * (BM / 2)) / (BM / 2); };
    [[maybe_unused]] auto round_ahead = [&](int m0, int t) {
      int* flag = flag_of(m0, t);
      if (tid == 0) *taken = atomicCAS(flag, 0, 1) == 0;
      asm volatile("bar.sync 1, 128;\n" ::: "memory");
      const bool mine = *taken;
      asm volatile("bar.sync 1, 128;\n" ::: "memory");
      if (!mine) return;
      const size_t at = (size_t)(m0 + rank * (BM / 2) + pr) * K + t * BK + pc * 4;
      float4 v[8];
#pragma unroll
      for (int i = 0; i < 8; i++) v[i] = __ldg(reinterpret_cast<const float4*>(A + at + (size_t)16 * i * K));
#pragma unroll
      for (int i = 0; i < 8; i++) {
        uint4 r = make_uint4(tf32(v[i].x), tf32(v[i].y), tf32(v[i].z), tf32(v[i].w));
        *reinterpret_cast<uint4*>(Ar + at + (size_t)16 * i * K) = r;
      }
      // The stores are generic-proxy writes that other blocks' tensor memory accelerator reads.
      asm volatile("fence.proxy.async.global;\n" ::: "memory");
      asm volatile("bar.sync 1, 128;\n" ::: "memory");
      if (tid == 0) asm volatile("st.release.gpu.global.b32 [%0], %1;\n" ::"l"(flag), "r"(2) : "memory");
    };
#endif
#if WS_ONCE == 2
    if (warp >= 1) {
      // Warps 1-3 round ahead of the copies, 32 k-tiles at a time: warp 1's lanes read the 32 flags at once and
      // claim the unclaimed ones (atomicCAS), then the 96 threads round each claimed half k-tile and publish it.
      const int rt = tid - 32;
      int index = 0;  // this block's units in order: 0, 1, ...
      for (int u = first_unit; u < units; u += unit_step, index++) {
        int m0, n0;
        tile_of(u, m0, n0);
#if WS_PACE
        // Round a unit's rows only once the copies have reached the unit before it: the rounding of rows a later
        // wave needs is spread over the current unit instead of crowding the first wave.
        while (*copier_at < index - 1) __nanosleep(256);
#endif
        for (int t0 = 0; t0 < KT; t0 += 32) {
         for (bool more = true; more;) {
          if (warp == 1) {
            const int t = t0 + lane;
            int state = 2;
            if (t < KT) asm volatile("ld.relaxed.gpu.global.b32 %0, [%1];\n" : "=r"(state) : "l"(flag_of(m0, t)) : "memory");
            const unsigned zeros = __ballot_sync(0xffffffffu, state == 0);
            // At most WS_CLAIM of them a round, counted from a lane that differs by block, so that the blocks that
            // need a row at once share its rounding (one block taking a whole batch made the others wait for it).
            const int from = (blockIdx.x * 7) & 31;
            const unsigned rotated = (zeros >> from) | (from ? zeros << (32 - from) : 0u);
            const int place = (lane - from) & 31;
            const bool picked = (zeros >> lane & 1u) && __popc(rotated & ((1u << place) - 1u)) < WS_CLAIM;
            const int won = picked && atomicCAS(flag_of(m0, t), 0, 1) == 0;
            const unsigned claimed = __ballot_sync(0xffffffffu, won);
            const unsigned tried = __ballot_sync(0xffffffffu, picked);
            if (lane == 0) {
              taken[0] = (int)claimed;
              taken[2] = (zeros & ~tried) != 0u;  // zero flags left untried: another round
            }
          }
          asm volatile("bar.sync 2, 96;\n" ::: "memory");
          unsigned claimed = (unsigned)taken[0];
          more = taken[2] != 0;
          asm volatile("bar.sync 2, 96;\n" ::: "memory");
          [[maybe_unused]] const unsigned all_claimed = claimed;
          while (claimed) {
            const int t = t0 + __ffs(claimed) - 1;
            claimed &= claimed - 1;
            // 128 rows x 8 pieces of 16 bytes: piece c = rt + 96 i.
            float4 v[11];
#pragma unroll
            for (int i = 0; i < 11; i++) {
              const int c = rt + 96 * i;
              if (c < 1024) v[i] = __ldg(reinterpret_cast<const float4*>(A + (size_t)(m0 + rank * (BM / 2) + c / 8) * K + t * BK + (c % 8) * 4));
            }
#pragma unroll
            for (int i = 0; i < 11; i++) {
              const int c = rt + 96 * i;
              if (c < 1024)
                *reinterpret_cast<uint4*>(Ar + (size_t)(m0 + rank * (BM / 2) + c / 8) * K + t * BK + (c % 8) * 4) =
                    make_uint4(tf32(v[i].x), tf32(v[i].y), tf32(v[i].z), tf32(v[i].w));
            }
#if !WS_BATCHREL
            asm volatile("fence.proxy.async.global;\n" ::: "memory");
            asm volatile("bar.sync 2, 96;\n" ::: "memory");
            if (rt == 0) {
              asm volatile("st.release.gpu.global.b32 [%0], %1;\n" ::"l"(flag_of(m0, t)), "r"(2) : "memory");
#if WS_COUNT
              // And one more of the row half's k-tiles done: a copier that finds all KT done skips the flags.
              asm volatile("red.release.gpu.global.add.s32 [%0], 1;\n" ::"l"(count_of(m0)), "r"(1) : "memory");
#endif
            }
#endif
          }
#if WS_BATCHREL
          // One fence, one barrier and the releases for all of the round's half k-tiles: their stores overlap.
          if (all_claimed) {
            asm volatile("fence.proxy.async.global;\n" ::: "memory");
            asm volatile("bar.sync 2, 96;\n" ::: "memory");
            if (rt < 32 && (all_claimed >> rt & 1u)) {
              asm volatile("st.release.gpu.global.b32 [%0], %1;\n" ::"l"(flag_of(m0, t0 + rt)), "r"(2) : "memory");
#if WS_COUNT
              asm volatile("red.release.gpu.global.add.s32 [%0], 1;\n" ::"l"(count_of(m0)), "r"(1) : "memory");
#endif
            }
          }
#endif
         }
        }
      }
      cluster_sync();
      return;
    }
    int ready = -1;  // warp 0: the flag of the next k-tile, read ahead by thread 0
    int copier_index = 0;
    [[maybe_unused]] bool all_done = false;  // thread 0: this tile's row half was wholly rounded at its start
#endif
    int it = 0;  // k-tiles this block has filled, over all its tiles: stage it % S, round it / S
    for (int u = first_unit; u < units; u += unit_step) {
      int m0, n0;
      tile_of(u, m0, n0);
      const float* Bg = B + n0;
      const float* Ag = A + (size_t)m0 * K;
#if WS_ONCE == 1
      for (int t = 0; t < WS_LA && t < KT; t++) round_ahead(m0, t);
#endif
      for (int kt = 0; kt < KT; kt++, it++) {
#if WS_ONCE == 1
        if (kt + WS_LA < KT) round_ahead(m0, kt + WS_LA);
#endif
#if WS_ONCE == 2 && WS_PACE
        if (kt == 0 && tid == 0) *copier_at = copier_index++;
#endif
        const int s = it % WS_STAGES;
        if (it >= WS_STAGES) mbar_wait(bars + 8 * (WS_STAGES + s), ((it / WS_STAGES) + 1) & 1);
        const uint32_t as = base + s * WS_STAGE_BYTES, bs = as + A_TILE_BYTES, full = bars + 8 * s;
#if WS_CPA
#pragma unroll
        for (int i = 0; i < BM * BK / 4 / 128; i++) {
          const int c = tid + i * 128, r = c / 8, ch = c % 8;
          cp_async16(as + r * 128 + ((ch ^ (r & 7)) << 4), Ag + (size_t)r * K + kt * BK + ch * 4);
        }
#else
        if (tid == 0) {
#if WS_ONCE
#if WS_COUNT
          if (kt == 0) {
            // Once a tile: if every k-tile of this row half is rounded already, no flag needs a look.
            int done;
            asm volatile("ld.acquire.gpu.global.b32 %0, [%1];\n" : "=r"(done) : "l"(count_of(m0)) : "memory");
            all_done = done == KT;
            if (all_done) asm volatile("fence.proxy.async.global;\n" ::: "memory");
          }
          if (!all_done)
#endif
          {
            // This block's half k-tile is in Ar once its flag says 2 (whoever rounded it).
            const int* flag = flag_of(m0, kt);
            int state = -1;
#if WS_ONCE == 2
            state = ready;  // read (acquire) after the previous copy: usually already 2
#endif
            while (state != 2) asm volatile("ld.acquire.gpu.global.b32 %0, [%1];\n" : "=r"(state) : "l"(flag) : "memory");
            asm volatile("fence.proxy.async.global;\n" ::: "memory");
          }
#endif
          mbar_expect_tx(full, A_TILE_BYTES + (WS_BTMA ? WS_B_TILE_BYTES : 0));
#if WS_CLUSTER == 2
          tma_load_2d_multicast(as + rank * (A_TILE_BYTES / 2), &tmA, kt * BK, m0 + rank * (BM / 2), full, 0x3);
#else
          tma_load_2d(as, &tmA, kt * BK, m0, full);
#endif
#if WS_BTMA
#pragma unroll
          for (int b = 0; b < BN / 32; b++) tma_load_2d(bs + b * 4096, &tmB, n0 + 32 * b, kt * BK, full);
#endif
#if WS_ONCE == 2
          // The next k-tile's flag, read now so that its latency passes while this thread waits for a stage.
          ready = -1;
          if (kt + 1 < KT && !(WS_COUNT && all_done)) asm volatile("ld.acquire.gpu.global.b32 %0, [%1];\n" : "=r"(ready) : "l"(flag_of(m0, kt + 1)) : "memory");
#endif
        }
#if WS_ONCE == 2
        // The other lanes of warp 0 wait here, not suspended in the next stage's mbarrier wait while lane 0 spins
        // on a flag (run 31 hung without this).
        __syncwarp();
#endif
#endif
#if !WS_BTMA
#pragma unroll
        for (int i = 0; i < BK * BN / 4 / 128; i++) {
          const int c = tid + i * 128, r = c / (BN / 4), ch = c % (BN / 4);
          cp_async16(bs + (r * BSTRIDE + ch * 4) * 4, Bg + (size_t)(kt * BK + r) * N + ch * 4);
        }
        cp_async_mbar_arrive(full);
#endif
      }
    }
#if !WS_BTMA
    cp_async_wait<0>();
#endif
#if WS_CLUSTER == 2
    cluster_sync();  // the other block's consumers may still arrive on this block's barriers
#endif
    return;
  }
#if WS_NREG
  asm volatile("setmaxnreg.inc.sync.aligned.u32 " WS_STR(WS_CREG) ";\n");
#endif
  const int cons = wg - 1;
  const int col = b_column(cons, warp, g), col8 = b_column(cons, warp, g + 8);
  // The element offsets (floats) of B's k-row k at this thread's two columns, for the k-rows t + 4h of k8 step j.
#if WS_BTMA
  auto b_at = [&](int k, int n) { return (n >> 5) * 1024 + k * 32 + ((((n & 31) >> 2) ^ (k & 7)) << 2) + (n & 3); };
#else
  auto b_at = [&](int k, int n) { return k * BSTRIDE + n; };
#endif
  // k-row 8j + r lies 8j rows after k-row r (the swizzle's XOR repeats every 8 rows): four offsets serve all j.
#if WS_BTMA
  const int at0 = b_at(t, col), at2 = b_at(t + 4, col);
#define at1 (at0 + 1024)
#define at3 (at2 + 1024)
  constexpr int kStep8 = 8 * 32;
#else
  // One register: the other three are constant offsets from it.
  const int at0 = t * BSTRIDE + col;
  constexpr int at1d = 8, at2d = 4 * BSTRIDE, at3d = 4 * BSTRIDE + 8;
#define at1 (at0 + at1d)
#define at2 (at0 + at2d)
#define at3 (at0 + at3d)
  constexpr int kStep8 = 8 * BSTRIDE;
#endif
  auto release = [&](int it) {
    // The group of k-tile `it` is complete: its stage may be refilled.
#if WS_CLUSTER == 2
    // Lane r of each warp arrives on block r's barrier: the two arrivals leave at once.
    if (lane < 2) mbar_arrive_cluster(bars + 8 * (WS_STAGES + it % WS_STAGES), lane);
#else
    if (lane == 0) mbar_arrive(bars + 8 * (WS_STAGES + it % WS_STAGES));
#endif
  };
  float acc[BM / 2];
  auto step = [&](int it, bool first, uint32_t(&a)[4][4], const uint32_t(&prev)[4][4]) {
    const int s = it % WS_STAGES;
    mbar_wait(bars + 8 * s, (it / WS_STAGES) & 1);
#if (WS_RNDA && WS_FENCE == 1) || (WS_SKIP & 4)
    fence_proxy_async();  // A's k-tile was written by st.shared / st.async (generic proxy); wgmma reads it through the async one
#endif
#if WS_CPA
    fence_proxy_async();  // the stage's A was written through the generic proxy (cp.async); wgmma reads it through the async one
#endif
#if WS_SS
    // Timing only (a wrong product): both operands through descriptors, A's from the consumer's 64 rows of the
    // A tile, to see what the register operand (and its loads and roundings) costs the warp-specialized kernel.
    wgmma_fence();
#pragma unroll
    for (int j = 0; j < 4; j++) WGMMA_SS(acc, desc128(base + s * WS_STAGE_BYTES + cons * 64 * 128 + j * 32), desc128(base + s * WS_STAGE_BYTES + j * 32), 1);
#else
    const float* Bs = (const float*)(basep + s * WS_STAGE_BYTES + A_TILE_BYTES);
#pragma unroll
    for (int j = 0; j < 4; j++) {
      a[j][0] = tf32(Bs[at0 + j * kStep8]);
      a[j][1] = tf32(Bs[at1 + j * kStep8]);
      a[j][2] = tf32(Bs[at2 + j * kStep8]);
      a[j][3] = tf32(Bs[at3 + j * kStep8]);
    }
    wgmma_fence();
#pragma unroll
    for (int j = 0; j < 4; j++) WGMMA(acc, a[j], desc128(base + s * WS_STAGE_BYTES + j * 32), 1);
#endif
    wgmma_commit();
    wgmma_wait_keep4<1>(prev);
    if (!first) release(it - 1);
  };
  uint32_t a0[4][4], a1[4][4];
#pragma unroll
  for (int j = 0; j < 4; j++)
#pragma unroll
    for (int i = 0; i < 4; i++) a1[j][i] = 0;
  int it = 0;
  for (int u = first_unit; u < units; u += unit_step) {
    int m0, n0;
    tile_of(u, m0, n0);
#pragma unroll
    for (int i = 0; i < BM / 2; i++) acc[i] = 0.0f;
    for (int kt = 0; kt < KT; kt += 2, it += 2) {
      step(it, kt == 0, a0, a1);
      step(it + 1, false, a1, a0);
    }
    wgmma_wait<0>();
    release(it - 1);
    // acc[4j + r] holds D[row][m] with row = our n (columns col, col8), m = our m (D = C^T).
#pragma unroll
    for (int j = 0; j < BM / 8; j++) {
      const int m = m0 + 8 * j + 2 * t;
      float* c0 = C + (size_t)m * N + n0;
      float* c1 = c0 + N;
      c0[col] = alpha * acc[4 * j];
      c1[col] = alpha * acc[4 * j + 1];
      c0[col8] = alpha * acc[4 * j + 2];
      c1[col8] = alpha * acc[4 * j + 3];
    }
  }
#if WS_CLUSTER == 2
  cluster_sync();
#endif
}
#endif
