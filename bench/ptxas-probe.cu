// Probes for what ptxas (CUDA 13, sm_90) does to correct PTX, reduced from the differential fuzzer's CUDA leg
// (tests/fuzz/README.md). Each case computes on the GPU and on the host from the same inputs and prints both;
// "BAD" marks a difference. Run on the GPU machine:
//   nvcc -arch=sm_90 -o /tmp/probe bench/ptxas-probe.cu && /tmp/probe && cuobjdump -sass /tmp/probe
// Measured on the H100 (2026-11-23): case 0 is BAD (ptxas folds `fabsf(x) >= 0.0f` to true for a NaN x; the
// PTX has abs.f32 and setp.ge.f32), case 1 is fine (the sign bit cleared by hand, as the backend now prints).
// Cases 2-4 are the shapes of the six programs that still fail (a negation inside nested min/max); not yet run.
#include <cmath>
#include <cstdio>
#include <cstring>

__device__ __host__ inline int imin(int a, int b) { return a < b ? a : b; }
__device__ __host__ inline int imax(int a, int b) { return a > b ? a : b; }

// The cases, written once for both sides; on the device `min`/`max` are CUDA's, as the backend prints them.
#define CASES(MIN, MAX, FABS, CLEAR_SIGN)                                                                                   \
  r[0] = (int)(FABS(f) >= 0.0f);                                                                                \
  r[1] = (int)(CLEAR_SIGN(f) >= 0.0f);                                        \
  /* seed 2 #635: min(min(~(((tid - s) | 1) / -(((tid + bid) & 1) + 1)), -s), s) */                             \
  r[2] = MIN(MIN(~((int)((unsigned)a - (unsigned)s | 1u) / (int)(0u - ((unsigned)(b & 1) + 1u))), (int)(0u - (unsigned)s)), s); \
  /* seed 2 #421: min(min(0 - x, y & 3), 7 - bd) */                                                             \
  r[3] = MIN(MIN((int)(0u - (unsigned)a), b & 3), (int)(7u - (unsigned)c));                                     \
  /* seed 4 #422: max(max(x | y * -7, -y), z) */                                                                \
  r[4] = MAX(MAX(a | (int)((unsigned)b * 4294967289u), (int)(0u - (unsigned)b)), c);

__device__ inline float device_clear_sign(float x) { return __int_as_float(__float_as_int(x) & 0x7fffffff); }

__global__ void probe(int* out, const int* in, const float* fin) {
  const int t = threadIdx.x;
  const int a = in[t * 4], b = in[t * 4 + 1], c = in[t * 4 + 2], s = in[t * 4 + 3];
  const float f = fin[t];
  int* r = out + t * 8;
  CASES(min, max, fabsf, device_clear_sign)
}

static float host_fabs(float x) { return std::fabs(x); }
static float host_clear_sign(float x) { unsigned i; memcpy(&i, &x, 4); i &= 0x7fffffffu; memcpy(&x, &i, 4); return x; }

int main() {
  const int n = 4;
  int in[n * 4] = {1, 1, 32, 5, 167669962, 2, 32, 5, -3, 9, -100, 9, 7, 0, 4, 2};
  float fin[n] = {NAN, -2.0f, 0.0f, INFINITY};
  int *din, *dout; float* dfin; int got[n * 8];
  cudaMalloc(&din, sizeof in); cudaMalloc(&dfin, sizeof fin); cudaMalloc(&dout, sizeof got);
  cudaMemcpy(din, in, sizeof in, cudaMemcpyHostToDevice);
  cudaMemcpy(dfin, fin, sizeof fin, cudaMemcpyHostToDevice);
  probe<<<1, n>>>(dout, din, dfin);
  cudaMemcpy(got, dout, sizeof got, cudaMemcpyDeviceToHost);
  for (int t = 0; t < n; t++) {
    const int a = in[t * 4], b = in[t * 4 + 1], c = in[t * 4 + 2], s = in[t * 4 + 3];
    const float f = fin[t];
    int r[8];
    CASES(imin, imax, host_fabs, host_clear_sign)
    for (int i = 0; i < 5; i++) printf("thread %d case %d: gpu %d host %d%s\n", t, i, got[t * 8 + i], r[i], got[t * 8 + i] == r[i] ? "" : "  BAD");
  }
  return 0;
}
