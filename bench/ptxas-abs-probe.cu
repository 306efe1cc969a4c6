// Looks for a way to print i32 Math.abs that keeps the language's wrapping (Math.abs(-2147483648) is
// -2147483648) through ptxas (CUDA 13.0, sm_90). The differential fuzzer (seed 4 program 386) found
// `Math.abs(x) % d` wrong for x = -2147483648 on the H100 although nvcc's PTX is `abs.s32` then `rem.s32`,
// which compute the wrapped value: ptxas takes abs's result as never negative. Each variant is its own kernel
// (a template instance); results are compared with the host's. Run on the GPU machine:
//   nvcc -arch=sm_90 -o /tmp/abs bench/ptxas-abs-probe.cu && /tmp/abs && cuobjdump -sass /tmp/abs
#include <cstdio>

__host__ __device__ inline int wrapAbs(int x) { return x < 0 ? (int)(0u - (unsigned)x) : x; }

constexpr int SHAPES = 6;
#define SHAPE_LIST(ABS)                                                                                      \
  r[0] = ABS(x) % d;                                                                                         \
  r[1] = ABS(x) / d;                                                                                         \
  r[2] = ABS(x) >= 0 ? 1 : 0;                                                                                \
  r[3] = ABS(x) < 0 ? 1 : 0;                                                                                 \
  r[4] = ABS(x) >> 31;                                                                                       \
  r[5] = (int)((unsigned)(x % 2) + (unsigned)(ABS(x) % d)) < 0 ? 1 : 0;

template <int V> __device__ int dabs(int x);
// 0: C++ abs, as printed before.
template <> __device__ int dabs<0>(int x) { return abs(x); }
// 1: compare and negate on unsigned bits in C++ (NVVM turns it back into abs.s32).
template <> __device__ int dabs<1>(int x) { return x < 0 ? (int)(0u - (unsigned)x) : x; }
// 2: inline PTX compare, negate and select.
template <> __device__ int dabs<2>(int x) { int r; asm("{.reg .pred p; .reg .s32 n; setp.lt.s32 p, %1, 0; sub.s32 n, 0, %1; selp.b32 %0, n, %1, p;}" : "=r"(r) : "r"(x)); return r; }
// 3: inline PTX max(x, -x) by compare and select.
template <> __device__ int dabs<3>(int x) { int r; asm("{.reg .pred p; .reg .s32 n; sub.s32 n, 0, %1; setp.gt.s32 p, %1, n; selp.b32 %0, %1, n, p;}" : "=r"(r) : "r"(x)); return r; }
// 4: sign mask, (x ^ m) - m.
template <> __device__ int dabs<4>(int x) { const unsigned m = (unsigned)(x >> 31); return (int)(((unsigned)x ^ m) - m); }
// 5: abs through an identity byte permute.
template <> __device__ int dabs<5>(int x) { return (int)__byte_perm((unsigned)abs(x), 0u, 0x3210); }
// 6: inline PTX abs.s32 (ptxas sees the same instruction).
template <> __device__ int dabs<6>(int x) { int r; asm("abs.s32 %0, %1;" : "=r"(r) : "r"(x)); return r; }

constexpr int VARIANTS = 7;
static const char* names[VARIANTS] = {"C++ abs", "x < 0 ? 0u - x : x", "asm setp + sub + selp", "asm max(x, -x) by select",
                                      "(x ^ m) - m", "abs through __byte_perm", "asm abs.s32"};

template <int V> __global__ void probe(int* out, const int* in, int n) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  const int x = in[t * 2];
  const int d = (in[t * 2 + 1] & 255) + 1;
  int* r = out + t * SHAPES;
#define ABS_V(v) dabs<V>(v)
  SHAPE_LIST(ABS_V)
}

static unsigned rng = 20261123u;
static unsigned nextRandom() { rng ^= rng << 13; rng ^= rng >> 17; rng ^= rng << 5; return rng; }

template <int V> static void runVariant(int* dout, const int* din, const int* in, int n, int* got) {
  cudaMemset(dout, 0x5a, sizeof(int) * n * SHAPES);
  probe<V><<<(n + 255) / 256, 256>>>(dout, din, n);
  if (cudaDeviceSynchronize() != cudaSuccess) { printf("variant %d: launch failed\n", V); return; }
  cudaMemcpy(got, dout, sizeof(int) * n * SHAPES, cudaMemcpyDeviceToHost);
  int bad = 0, shown = 0;
  for (int t = 0; t < n; t++) {
    const int x = in[t * 2];
    const int d = (in[t * 2 + 1] & 255) + 1;
    int r[SHAPES];
    SHAPE_LIST(wrapAbs)
    for (int i = 0; i < SHAPES; i++)
      if (got[t * SHAPES + i] != r[i]) {
        bad++;
        if (shown++ < 4) printf("  variant %d shape %d (x=%d d=%d): gpu %d host %d\n", V, i, x, d, got[t * SHAPES + i], r[i]);
      }
  }
  printf("variant %d (%s): %s (%d wrong of %d)\n", V, names[V], bad ? "BAD" : "ok", bad, n * SHAPES);
}

int main() {
  const int n = 1 << 14;
  const int edges[] = {0, 1, -1, 2147483647, -2147483647, -2147483647 - 1};
  static int in[n * 2], got[n * SHAPES];
  for (int i = 0; i < n * 2; i++) in[i] = nextRandom() % 3 == 0 ? edges[nextRandom() % 6] : (int)nextRandom();
  int *din, *dout;
  cudaMalloc(&din, sizeof in);
  cudaMalloc(&dout, sizeof got);
  cudaMemcpy(din, in, sizeof in, cudaMemcpyHostToDevice);
  runVariant<0>(dout, din, in, n, got);
  runVariant<1>(dout, din, in, n, got);
  runVariant<2>(dout, din, in, n, got);
  runVariant<3>(dout, din, in, n, got);
  runVariant<4>(dout, din, in, n, got);
  runVariant<5>(dout, din, in, n, got);
  runVariant<6>(dout, din, in, n, got);
  return 0;
}
