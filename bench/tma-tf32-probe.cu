// What the tensor memory accelerator does to f32 values when the tensor map's type is FLOAT32 (7), TFLOAT32 (11) or
// TFLOAT32_FTZ (12): copy a 16x32 tile of crafted bit patterns global -> shared by cp.async.bulk.tensor, back to
// global by plain stores, and compare with round-to-nearest-even, ties-away and truncation. On the device:
//   nvcc -arch=sm_90a -o tma-tf32 bench/tma-tf32-probe.cu -lcuda && ./tma-tf32
// (results/2026-11-27-tma-tf32-rounding-h100.txt: TFLOAT32 rounds to nearest even; tests/tensor-map-tf32.test.ts
// holds the CPU's copy to those patterns.)
#include <cuda.h>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <vector>
#include <random>
#define CK(x) do { CUresult r = (x); if (r != CUDA_SUCCESS) { const char* s; cuGetErrorString(r, &s); printf("%s: %s\n", #x, s); return 1; } } while (0)
__global__ void copyTile(const __grid_constant__ CUtensorMap map, uint32_t* out) {
  __shared__ alignas(128) uint32_t tile[16 * 32];
  __shared__ alignas(8) uint64_t bar;
  uint32_t b = (uint32_t)__cvta_generic_to_shared(&bar), t = (uint32_t)__cvta_generic_to_shared(tile);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared.b64 [%0], 1;" :: "r"(b));
    asm volatile("fence.mbarrier_init.release.cluster;");
    asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;" :: "r"(b), "r"(16 * 32 * 4));
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                 :: "r"(t), "l"(&map), "r"(0), "r"(0), "r"(b) : "memory");
  }
  __syncthreads();
  asm volatile("{ .reg .pred p; W: mbarrier.try_wait.parity.shared.b64 p, [%0], 0; @!p bra W; }" :: "r"(b));
  for (int i = threadIdx.x; i < 16 * 32; i += blockDim.x) out[i] = tile[i];
}
static uint32_t rne(uint32_t x) { if ((x & 0x7f800000u) == 0x7f800000u) return x; uint32_t l = x & 0x1fffu, h = x & ~0x1fffu; if (l > 0x1000u || (l == 0x1000u && (h & 0x2000u))) h += 0x2000u; return h; }
static uint32_t rna(uint32_t x) { if ((x & 0x7f800000u) == 0x7f800000u) return x; return (x + 0x1000u) & ~0x1fffu; }
static uint32_t trunc_(uint32_t x) { return x & ~0x1fffu; }
int main() {
  CK(cuInit(0)); CUdevice dev; CK(cuDeviceGet(&dev, 0)); CUcontext ctx; CK(cuDevicePrimaryCtxRetain(&ctx, dev)); CK(cuCtxSetCurrent(ctx));
  std::vector<uint32_t> in(512);
  std::mt19937 g(7);
  const uint32_t crafted[] = {0x3f800000, 0x3f801000, 0x3f803000, 0x3f800fff, 0x3f801001, 0xbf801000, 0xbf803000, 0x7f7fffff,
    0x7f7ff000, 0x7f7fefff, 0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001, 0x7fbfffff, 0x00000001, 0x00001000, 0x00003000,
    0x007fffff, 0x00400000, 0x80000001, 0x807ff000, 0x00000000, 0x80000000, 0x33801000, 0x4b7ff000, 0x3fffffff, 0x3ffff000};
  size_t nc = sizeof(crafted) / 4;
  for (size_t i = 0; i < 512; i++) in[i] = i < nc ? crafted[i] : (uint32_t)g();
  CUdeviceptr din, dout; CK(cuMemAlloc(&din, 2048)); CK(cuMemAlloc(&dout, 2048));
  CK(cuMemcpyHtoD(din, in.data(), 2048));
  for (int type : {7, 11, 12}) {
    CUtensorMap map; cuuint64_t dims[2] = {32, 16}, strides[1] = {128}; cuuint32_t box[2] = {32, 16}, es[2] = {1, 1};
    CK(cuTensorMapEncodeTiled(&map, (CUtensorMapDataType)type, 2, (void*)din, dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                              CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
    CK(cuMemsetD8(dout, 0xAB, 2048));
    copyTile<<<1, 128>>>(map, (uint32_t*)dout);
    CK(cuCtxSynchronize());
    std::vector<uint32_t> out(512); CK(cuMemcpyDtoH(out.data(), dout, 2048));
    int same = 0, isRne = 0, isRna = 0, isTrunc = 0;
    for (int i = 0; i < 512; i++) { same += out[i] == in[i]; isRne += out[i] == rne(in[i]); isRna += out[i] == rna(in[i]); isTrunc += out[i] == trunc_(in[i]); }
    printf("type %d: of 512, unchanged %d, = round-nearest-even %d, = round-ties-away %d, = truncated %d\n", type, same, isRne, isRna, isTrunc);
    for (size_t i = 0; i < nc; i++) printf("  %08x -> %08x  (rne %08x rna %08x trunc %08x)\n", in[i], out[i], rne(in[i]), rna(in[i]), trunc_(in[i]));
    int shown = 0;
    for (int i = nc; i < 512 && shown < 8; i++) if (out[i] != rne(in[i]) && out[i] != rna(in[i])) { printf("  odd %08x -> %08x\n", in[i], out[i]); shown++; }
  }
  return 0;
}
