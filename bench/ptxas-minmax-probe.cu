// Looks for a way to print i32 Math.min/Math.max and negation that ptxas (CUDA 13.0, sm_90) compiles correctly.
// bench/ptxas-probe.cu showed the fault: nested min.s32/max.s32 with a negated operand are fused into one
// VIMNMX3 that takes the operand's register without its negation. Each variant below prints the three shapes
// of the fuzzer's failing programs one way; the GPU's results are compared with the host's. Run on the GPU
// machine:
//   nvcc -arch=sm_90 -o /tmp/minmax bench/ptxas-minmax-probe.cu && /tmp/minmax
#include <cstdio>

__device__ __host__ inline int imin(int a, int b) { return a < b ? a : b; }
__device__ __host__ inline int imax(int a, int b) { return a > b ? a : b; }

// The three shapes (seed 2 #635, seed 2 #421, seed 4 #422), with MIN, MAX and NEG supplied by a variant.
#define SHAPES(MIN, MAX, NEG)                                                                                  \
  r[0] = MIN(MIN(~((int)((unsigned)a - (unsigned)s | 1u) / NEG((int)((unsigned)(b & 1) + 1u))), NEG(s)), s);   \
  r[1] = MIN(MIN(NEG(a), b & 3), (int)(7u - (unsigned)c));                                                     \
  r[2] = MAX(MAX(a | (int)((unsigned)b * 4294967289u), NEG(b)), c);

#define NEG_SUB(x) ((int)(0u - (unsigned)(x)))
#define NEG_NOT(x) ((int)(~(unsigned)(x) + 1u))
#define NEG_MUL(x) ((int)((unsigned)(x) * 0xffffffffu))

// Variants of min/max on the device.
__device__ inline int min64(int a, int b) { return (int)min((long long)a, (long long)b); }
__device__ inline int max64(int a, int b) { return (int)max((long long)a, (long long)b); }
__device__ inline int minSel(int a, int b) { return a < b ? a : b; }
__device__ inline int maxSel(int a, int b) { return a > b ? a : b; }
__device__ inline int minAsm(int a, int b) { int r; asm("min.s32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); return r; }
__device__ inline int maxAsm(int a, int b) { int r; asm("max.s32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); return r; }
__device__ inline int negAsm(int x) { int r; asm("neg.s32 %0, %1;" : "=r"(r) : "r"(x)); return r; }
__device__ inline int negVolatileAsm(int x) { int r; asm volatile("sub.s32 %0, 0, %1;" : "=r"(r) : "r"(x)); return r; }
// min(a, b) = b + ((a - b) & ((a - b) >> 31)) is wrong on overflow; instead a select on the comparison, with the
// comparison's result forced through an integer.
__device__ inline int minCmp(int a, int b) { const int less = (int)(a < b); return less * a + (1 - less) * b; }
__device__ inline int maxCmp(int a, int b) { const int more = (int)(a > b); return more * a + (1 - more) * b; }

#define VARIANT(ID, MIN, MAX, NEG) \
  { int* r = out + (t * VARIANTS + ID) * 3; SHAPES(MIN, MAX, NEG) }

constexpr int VARIANTS = 9;
static const char* names[VARIANTS] = {
  "min/max, 0u - x (as printed today)", "min/max, ~x + 1u", "min/max, x * 0xffffffffu", "64-bit min/max, 0u - x",
  "select min/max, 0u - x", "asm min.s32/max.s32, 0u - x", "min/max, asm neg.s32", "min/max, asm volatile sub.s32",
  "compare-and-multiply min/max, 0u - x",
};

__global__ void probe(int* out, const int* in) {
  const int t = threadIdx.x;
  const int a = in[t * 4], b = in[t * 4 + 1], c = in[t * 4 + 2], s = in[t * 4 + 3];
  VARIANT(0, min, max, NEG_SUB)
  VARIANT(1, min, max, NEG_NOT)
  VARIANT(2, min, max, NEG_MUL)
  VARIANT(3, min64, max64, NEG_SUB)
  VARIANT(4, minSel, maxSel, NEG_SUB)
  VARIANT(5, minAsm, maxAsm, NEG_SUB)
  VARIANT(6, min, max, negAsm)
  VARIANT(7, min, max, negVolatileAsm)
  VARIANT(8, minCmp, maxCmp, NEG_SUB)
}

int main() {
  const int n = 8;
  int in[n * 4] = {1, 1, 32, 5, 167669962, 2, 32, 5, -3, 9, -100, 9, 7, 0, 4, 2,
                   -2147483647, -5, 2147483647, 3, 2147483647, -2147483647 - 1, -7, -1, 0, 3, 0, 0, 12345, -12345, 99, 100000};
  int *din, *dout;
  static int got[n * VARIANTS * 3];
  cudaMalloc(&din, sizeof in);
  cudaMalloc(&dout, sizeof got);
  cudaMemcpy(din, in, sizeof in, cudaMemcpyHostToDevice);
  probe<<<1, n>>>(dout, din);
  if (cudaDeviceSynchronize() != cudaSuccess) { printf("launch failed\n"); return 2; }
  cudaMemcpy(got, dout, sizeof got, cudaMemcpyDeviceToHost);
  int bad[VARIANTS] = {};
  for (int t = 0; t < n; t++) {
    const int a = in[t * 4], b = in[t * 4 + 1], c = in[t * 4 + 2], s = in[t * 4 + 3];
    int r[3];
    SHAPES(imin, imax, NEG_SUB)
    for (int v = 0; v < VARIANTS; v++)
      for (int i = 0; i < 3; i++)
        if (got[(t * VARIANTS + v) * 3 + i] != r[i]) {
          bad[v]++;
          printf("variant %d shape %d thread %d: gpu %d host %d\n", v, i, t, got[(t * VARIANTS + v) * 3 + i], r[i]);
        }
  }
  for (int v = 0; v < VARIANTS; v++) printf("variant %d (%s): %s\n", v, names[v], bad[v] ? "BAD" : "ok");
  return 0;
}
