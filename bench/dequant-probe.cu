// Probe (issue 20): why the int8 -> bf16 dequantization with per-row scales stopped at 82-89 % of copy. Three
// access patterns for the same work, timed with CUDA events (median of 50 after 5 warm-up launches) beside a
// copy kernel that moves the same bytes: A, the layout of dequantizeRows (a 16-byte load of sixteen int8, whose
// 32 bytes of bf16 go out as two 16-byte stores, each covering half of every 32-byte sector a warp touches);
// B, dequantizeRowsWhole's (8-byte loads of eight int8, one 16-byte store: whole sectors); C, A's loads with
// shuffles so that each store covers 512 contiguous bytes a warp. Build and run on the GPU machine:
// `nvcc -O3 -arch=sm_90 -std=c++17 -o dqp bench/dequant-probe.cu && ./dqp`. H100 80GB HBM3, 2026-11-27
// (bench/results/2026-11-27-dequant-probe-h100.txt, two runs; D, streaming cache hints on B, in the second):
// a 1 GiB cudaMemcpy 2995 GB/s, the copy kernel of the same 201 MB 2735-2757, A 2000, B 2640-2690, C 2660-2690,
// D 2650-2690. At this size a whole-sector dequantization runs at 97-98 % of a copy of its bytes.
#include <cstdio>
#include <cstdint>
#include <cuda_bf16.h>
#define CK(x) do{cudaError_t e=(x); if(e){printf("%s:%d %s\n",__FILE__,__LINE__,cudaGetErrorString(e)); return 1;}}while(0)

__global__ void copy16(const uint4* __restrict__ in, uint4* __restrict__ out, long n) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) out[i] = in[i];
}
__device__ __forceinline__ uint32_t pack2(float a, float b) {
  __nv_bfloat162 h = __floats2bfloat162_rn(a, b); return *reinterpret_cast<uint32_t*>(&h);
}
// A: current pattern: 16 int8 per thread, two 16-byte stores (each covering half of each sector a warp touches).
template <int ITEMS>
__global__ void dqA(uint4* __restrict__ out, const uint4* __restrict__ q, const __nv_bfloat16* __restrict__ scale, int rows, int cols) {
  long perRow = cols / 16, vectors = rows * perRow;
  for (long first = blockIdx.x * (long)blockDim.x * ITEMS + threadIdx.x; first < vectors; first += (long)gridDim.x * blockDim.x * ITEMS) {
    uint4 v[ITEMS]; float s[ITEMS];
#pragma unroll
    for (int k = 0; k < ITEMS; k++) { long i = first + k * blockDim.x; if (i < vectors) { v[k] = q[i]; s[k] = __bfloat162float(scale[i / perRow]); } }
#pragma unroll
    for (int k = 0; k < ITEMS; k++) { long i = first + k * blockDim.x; if (i < vectors) {
      const int8_t* b = reinterpret_cast<const int8_t*>(&v[k]);
      uint4 o0, o1;
      o0.x = pack2(b[0]*s[k], b[1]*s[k]); o0.y = pack2(b[2]*s[k], b[3]*s[k]); o0.z = pack2(b[4]*s[k], b[5]*s[k]); o0.w = pack2(b[6]*s[k], b[7]*s[k]);
      o1.x = pack2(b[8]*s[k], b[9]*s[k]); o1.y = pack2(b[10]*s[k], b[11]*s[k]); o1.z = pack2(b[12]*s[k], b[13]*s[k]); o1.w = pack2(b[14]*s[k], b[15]*s[k]);
      out[2*i] = o0; out[2*i+1] = o1; } }
  }
}
// B: 8 int8 per vector (8-byte loads), one 16-byte store: every warp access contiguous.
template <int ITEMS>
__global__ void dqB(uint4* __restrict__ out, const uint2* __restrict__ q, const __nv_bfloat16* __restrict__ scale, int rows, int cols) {
  long perRow = cols / 8, vectors = rows * perRow;
  for (long first = blockIdx.x * (long)blockDim.x * ITEMS + threadIdx.x; first < vectors; first += (long)gridDim.x * blockDim.x * ITEMS) {
    uint2 v[ITEMS]; float s[ITEMS];
#pragma unroll
    for (int k = 0; k < ITEMS; k++) { long i = first + k * blockDim.x; if (i < vectors) { v[k] = q[i]; s[k] = __bfloat162float(scale[i / perRow]); } }
#pragma unroll
    for (int k = 0; k < ITEMS; k++) { long i = first + k * blockDim.x; if (i < vectors) {
      const int8_t* b = reinterpret_cast<const int8_t*>(&v[k]);
      uint4 o0;
      o0.x = pack2(b[0]*s[k], b[1]*s[k]); o0.y = pack2(b[2]*s[k], b[3]*s[k]); o0.z = pack2(b[4]*s[k], b[5]*s[k]); o0.w = pack2(b[6]*s[k], b[7]*s[k]);
      out[i] = o0; } }
  }
}
// D: B with cache hints: loads and stores marked streaming (ld.global.cs / st.global.cs, evict first).
template <int ITEMS>
__global__ void dqD(uint4* __restrict__ out, const uint2* __restrict__ q, const __nv_bfloat16* __restrict__ scale, int rows, int cols) {
  long perRow = cols / 8, vectors = rows * perRow;
  for (long first = blockIdx.x * (long)blockDim.x * ITEMS + threadIdx.x; first < vectors; first += (long)gridDim.x * blockDim.x * ITEMS) {
    uint2 v[ITEMS]; float s[ITEMS];
#pragma unroll
    for (int k = 0; k < ITEMS; k++) { long i = first + k * blockDim.x; if (i < vectors) { v[k] = __ldcs(q + i); s[k] = __bfloat162float(scale[i / perRow]); } }
#pragma unroll
    for (int k = 0; k < ITEMS; k++) { long i = first + k * blockDim.x; if (i < vectors) {
      const int8_t* b = reinterpret_cast<const int8_t*>(&v[k]);
      uint4 o0;
      o0.x = pack2(b[0]*s[k], b[1]*s[k]); o0.y = pack2(b[2]*s[k], b[3]*s[k]); o0.z = pack2(b[4]*s[k], b[5]*s[k]); o0.w = pack2(b[6]*s[k], b[7]*s[k]);
      __stcs(out + i, o0); } }
  }
}
// C: 16-byte loads, halves exchanged by shuffles so that each of the two stores covers 512 contiguous bytes a warp.
template <int ITEMS>
__global__ void dqC(uint4* __restrict__ out, const uint4* __restrict__ q, const __nv_bfloat16* __restrict__ scale, int rows, int cols) {
  long perRow = cols / 16, vectors = rows * perRow;  // vectors a multiple of 32 assumed
  int lane = threadIdx.x & 31;
  for (long first = blockIdx.x * (long)blockDim.x * ITEMS + threadIdx.x; first < vectors; first += (long)gridDim.x * blockDim.x * ITEMS) {
    uint4 v[ITEMS]; float s[ITEMS];
#pragma unroll
    for (int k = 0; k < ITEMS; k++) { long i = first + k * blockDim.x; if (i < vectors) { v[k] = q[i]; s[k] = __bfloat162float(scale[i / perRow]); } }
#pragma unroll
    for (int k = 0; k < ITEMS; k++) { long i = first + k * blockDim.x; long warpFirst = i - lane;
#pragma unroll
      for (int h = 0; h < 2; h++) {
        // store h, lane t: elements 8*(32h+t) .. of the warp's 512; from lane (32h+t)>>1, half t&1.
        int src = (32 * h + lane) >> 1; bool hi = lane & 1;
        float sc = __shfl_sync(~0u, s[k], src);
        // Which half a lane wants depends on the destination, so every word of the source is shuffled.
        uint32_t a0 = __shfl_sync(~0u, v[k].x, src), a1 = __shfl_sync(~0u, v[k].y, src);
        uint32_t b0 = __shfl_sync(~0u, v[k].z, src), b1 = __shfl_sync(~0u, v[k].w, src);
        uint32_t w0 = hi ? b0 : a0, w1 = hi ? b1 : a1;
        const int8_t* b = reinterpret_cast<const int8_t*>(&w0); const int8_t* c = reinterpret_cast<const int8_t*>(&w1);
        uint4 o; o.x = pack2(b[0]*sc, b[1]*sc); o.y = pack2(b[2]*sc, b[3]*sc); o.z = pack2(c[0]*sc, c[1]*sc); o.w = pack2(c[2]*sc, c[3]*sc);
        if (i < vectors) out[2 * warpFirst + 32 * h + lane] = o;
      }
    }
  }
}

int main() {
  int shapes[2][2] = {{8192, 8192}, {65536, 1024}};
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  {
    long big = 1L << 30; void *a, *b; CK(cudaMalloc(&a, big)); CK(cudaMalloc(&b, big)); cudaMemset(a, 1, big);
    for (int w = 0; w < 3; w++) cudaMemcpyAsync(b, a, big, cudaMemcpyDeviceToDevice);
    float ts[20];
    for (int r = 0; r < 20; r++) { cudaEventRecord(e0); cudaMemcpyAsync(b, a, big, cudaMemcpyDeviceToDevice); cudaEventRecord(e1); cudaEventSynchronize(e1); cudaEventElapsedTime(&ts[r], e0, e1); }
    for (int x = 0; x < 20; x++) for (int y = x + 1; y < 20; y++) if (ts[y] < ts[x]) { float t = ts[x]; ts[x] = ts[y]; ts[y] = t; }
    printf("cudaMemcpy 1 GiB device to device: %.1f GB/s (read + write)\n", 2.0 * big / (ts[10] * 1e6));
    cudaFree(a); cudaFree(b);
  }
  for (auto& sh : shapes) {
    int rows = sh[0], cols = sh[1]; long n = (long)rows * cols;
    int8_t* q; __nv_bfloat16 *scale, *out; void *cin, *cout;
    CK(cudaMalloc(&q, n)); CK(cudaMalloc(&scale, rows * 2)); CK(cudaMalloc(&out, n * 2));
    CK(cudaMalloc(&cin, n * 3 / 2)); CK(cudaMalloc(&cout, n * 3 / 2));
    cudaMemset(q, 0x37, n); cudaMemset(scale, 0x3c, rows * 2); cudaMemset(cin, 1, n * 3 / 2);
    auto time = [&](const char* name, double bytes, auto launch) {
      for (int w = 0; w < 5; w++) launch();
      int runs = 50; float ts[50];
      for (int r = 0; r < runs; r++) { cudaEventRecord(e0); launch(); cudaEventRecord(e1); cudaEventSynchronize(e1); float ms; cudaEventElapsedTime(&ms, e0, e1); ts[r] = ms; }
      // median
      for (int a = 0; a < runs; a++) for (int b = a + 1; b < runs; b++) if (ts[b] < ts[a]) { float t = ts[a]; ts[a] = ts[b]; ts[b] = t; }
      float med = ts[runs / 2];
      printf("%dx%d %-28s %8.1f us  %7.1f GB/s\n", rows, cols, name, med * 1e3, bytes / (med * 1e6));
      return bytes / (med * 1e6);
    };
    double bytes = 3.0 * n + 2.0 * rows;
    long cv = n * 3 / 2 / 16;
    for (int round = 0; round < 3; round++) {
      time("copy16 (same bytes)", 3.0 * n, [&] { copy16<<<(int)std::min<long>((cv + 255) / 256, 65535L * 8), 256>>>((const uint4*)cin, (uint4*)cout, cv); });
      time("A 16B ld, 2x16B st ITEMS2", bytes, [&] { long v = n / 16; dqA<2><<<(int)((v + 511) / 512), 256>>>((uint4*)out, (const uint4*)q, scale, rows, cols); });
      time("B 8B ld, 16B st ITEMS2", bytes, [&] { long v = n / 8; dqB<2><<<(int)((v + 511) / 512), 256>>>((uint4*)out, (const uint2*)q, scale, rows, cols); });
      time("B 8B ld, 16B st ITEMS4", bytes, [&] { long v = n / 8; dqB<4><<<(int)((v + 1023) / 1024), 256>>>((uint4*)out, (const uint2*)q, scale, rows, cols); });
      time("B 8B ld, 16B st ITEMS1", bytes, [&] { long v = n / 8; dqB<1><<<(int)((v + 255) / 256), 256>>>((uint4*)out, (const uint2*)q, scale, rows, cols); });
      time("C 16B ld, shfl, ITEMS2", bytes, [&] { long v = n / 16; dqC<2><<<(int)((v + 511) / 512), 256>>>((uint4*)out, (const uint4*)q, scale, rows, cols); });
      time("D B + streaming hints ITEMS2", bytes, [&] { long v = n / 8; dqD<2><<<(int)((v + 511) / 512), 256>>>((uint4*)out, (const uint2*)q, scale, rows, cols); });
      time("D B + streaming hints ITEMS4", bytes, [&] { long v = n / 8; dqD<4><<<(int)((v + 1023) / 1024), 256>>>((uint4*)out, (const uint2*)q, scale, rows, cols); });
      time("B 8B ld ITEMS2 grid 132*16", bytes, [&] { dqB<2><<<sms * 8, 256>>>((uint4*)out, (const uint2*)q, scale, rows, cols); });
    }
    // correctness of B and C against A
    static uint16_t ha[1 << 20], hb[1 << 20];
    dqA<2><<<(int)((n / 16 + 511) / 512), 256>>>((uint4*)out, (const uint4*)q, scale, rows, cols); cudaMemcpy(ha, out, 1 << 21, cudaMemcpyDeviceToHost);
    cudaMemset(out, 0xff, n * 2);
    dqC<2><<<(int)((n / 16 + 511) / 512), 256>>>((uint4*)out, (const uint4*)q, scale, rows, cols); cudaMemcpy(hb, out, 1 << 21, cudaMemcpyDeviceToHost);
    int diff = 0; for (int i = 0; i < (1 << 20); i++) diff += ha[i] != hb[i]; printf("C vs A differing: %d\n", diff);
    cudaFree(q); cudaFree(scale); cudaFree(out); cudaFree(cin); cudaFree(cout);
  }
  return 0;
}
