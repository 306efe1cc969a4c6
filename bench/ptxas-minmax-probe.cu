// Looks for a way to print i32 Math.min/Math.max and negation that ptxas (CUDA 13.0, sm_90) compiles correctly.
// bench/ptxas-probe.cu showed the fault: nested min.s32/max.s32 with a negated operand are fused into one
// VIMNMX3 that takes the operand's register without its negation. The first version of this probe put every
// variant in one kernel, and NVVM merged them all into one computation; here each variant is its own kernel
// (a template instance), so each is compiled on its own, and runs on random inputs plus edge values. The
// GPU's results are compared with the host's; `cuobjdump -sass` of the binary shows which variants still form
// VIMNMX3. Run on the GPU machine:
//   nvcc -arch=sm_90 -o /tmp/minmax bench/ptxas-minmax-probe.cu && /tmp/minmax && cuobjdump -sass /tmp/minmax
#include <cstdio>
#include <cstdlib>

__host__ inline int hostMin(int a, int b) { return a < b ? a : b; }
__host__ inline int hostMax(int a, int b) { return a > b ? a : b; }
__host__ inline int hostNeg(int x) { return (int)(0u - (unsigned)x); }
// Division as the language defines it: INT_MIN / -1 wraps (in C++ it is undefined and traps on x86).
__host__ __device__ inline int wrapDiv(int x, int y) { return y == -1 ? (int)(0u - (unsigned)x) : x / y; }

// The shapes: nested min/max with a negated operand in each position, mixed nesting, and the fuzzer's three
// failing programs (seed 2 #635, seed 2 #421, seed 4 #422).
constexpr int SHAPES = 12;
#define SHAPE_LIST(MIN, MAX, NEG)                                                                              \
  r[0] = MIN(MIN(NEG(a), b), c);                                                                               \
  r[1] = MIN(MIN(a, NEG(b)), c);                                                                               \
  r[2] = MIN(c, MIN(a, NEG(b)));                                                                               \
  r[3] = MAX(MAX(NEG(a), b), c);                                                                               \
  r[4] = MAX(MAX(a, NEG(b)), c);                                                                               \
  r[5] = MAX(c, MAX(NEG(a), b));                                                                               \
  r[6] = MIN(MAX(NEG(a), b), c);                                                                               \
  r[7] = MIN(MIN(a, b), NEG(c));                                                                               \
  r[8] = MAX(MAX(a, b), NEG(c));                                                                               \
  r[9] = MIN(MIN(wrapDiv(~((int)((unsigned)a - (unsigned)s | 1u)), NEG((int)((unsigned)(b & 1) + 1u))), NEG(s)), s); \
  r[10] = MIN(MIN(NEG(a), b & 3), (int)(7u - (unsigned)c));                                                    \
  r[11] = MAX(MAX(a | (int)((unsigned)b * 4294967289u), NEG(b)), c);

// Variant V picks how min, max and negation are printed.
template <int V> __device__ int dmin(int a, int b);
template <int V> __device__ int dmax(int a, int b);
template <int V> __device__ int dneg(int x) { return (int)(0u - (unsigned)x); }

// 0: as printed today.
template <> __device__ int dmin<0>(int a, int b) { return min(a, b); }
template <> __device__ int dmax<0>(int a, int b) { return max(a, b); }
// 1: unsigned min/max on sign-flipped bits (three more LOP3 each unless the compiler folds them).
template <> __device__ int dmin<1>(int a, int b) { return (int)(umin((unsigned)a ^ 0x80000000u, (unsigned)b ^ 0x80000000u) ^ 0x80000000u); }
template <> __device__ int dmax<1>(int a, int b) { return (int)(umax((unsigned)a ^ 0x80000000u, (unsigned)b ^ 0x80000000u) ^ 0x80000000u); }
// 2: 64-bit min/max in inline PTX on sign-extended operands.
template <> __device__ int dmin<2>(int a, int b) { int r; asm("{.reg .s64 x, y, z; cvt.s64.s32 x, %1; cvt.s64.s32 y, %2; min.s64 z, x, y; cvt.u32.u64 %0, z;}" : "=r"(r) : "r"(a), "r"(b)); return r; }
template <> __device__ int dmax<2>(int a, int b) { int r; asm("{.reg .s64 x, y, z; cvt.s64.s32 x, %1; cvt.s64.s32 y, %2; max.s64 z, x, y; cvt.u32.u64 %0, z;}" : "=r"(r) : "r"(a), "r"(b)); return r; }
// 3: compare and select in inline PTX.
template <> __device__ int dmin<3>(int a, int b) { int r; asm("{.reg .pred p; setp.lt.s32 p, %1, %2; selp.b32 %0, %1, %2, p;}" : "=r"(r) : "r"(a), "r"(b)); return r; }
template <> __device__ int dmax<3>(int a, int b) { int r; asm("{.reg .pred p; setp.gt.s32 p, %1, %2; selp.b32 %0, %1, %2, p;}" : "=r"(r) : "r"(a), "r"(b)); return r; }
// 4: min/max as today; negation passed through an identity byte permute.
template <> __device__ int dmin<4>(int a, int b) { return min(a, b); }
template <> __device__ int dmax<4>(int a, int b) { return max(a, b); }
template <> __device__ int dneg<4>(int x) { return (int)__byte_perm(0u - (unsigned)x, 0u, 0x3210); }
// 5: min/max as today; negation subtracts from a zero ptxas cannot see (lane id shifted out).
template <> __device__ int dmin<5>(int a, int b) { return min(a, b); }
template <> __device__ int dmax<5>(int a, int b) { return max(a, b); }
template <> __device__ int dneg<5>(int x) { unsigned lane; asm("mov.u32 %0, %%laneid;" : "=r"(lane)); return (int)((lane >> 5) - (unsigned)x); }
// 6: min/max as today; negation as inline PTX neg.s32 marked volatile.
template <> __device__ int dmin<6>(int a, int b) { return min(a, b); }
template <> __device__ int dmax<6>(int a, int b) { return max(a, b); }
template <> __device__ int dneg<6>(int x) { int r; asm volatile("neg.s32 %0, %1;" : "=r"(r) : "r"(x)); return r; }
// 7: min/max with the operands passed through an identity byte permute (keeps negation folding legal but
// hides the nesting).
template <> __device__ int dmin<7>(int a, int b) { return (int)__byte_perm((unsigned)min(a, b), 0u, 0x3210); }
template <> __device__ int dmax<7>(int a, int b) { return (int)__byte_perm((unsigned)max(a, b), 0u, 0x3210); }
// 8: unsigned-bias form written in inline PTX so NVVM cannot fold it back to a signed min.
template <> __device__ int dmin<8>(int a, int b) { int r; asm("{.reg .u32 x, y, z; xor.b32 x, %1, 0x80000000; xor.b32 y, %2, 0x80000000; min.u32 z, x, y; xor.b32 %0, z, 0x80000000;}" : "=r"(r) : "r"(a), "r"(b)); return r; }
template <> __device__ int dmax<8>(int a, int b) { int r; asm("{.reg .u32 x, y, z; xor.b32 x, %1, 0x80000000; xor.b32 y, %2, 0x80000000; max.u32 z, x, y; xor.b32 %0, z, 0x80000000;}" : "=r"(r) : "r"(a), "r"(b)); return r; }

constexpr int VARIANTS = 9;
static const char* names[VARIANTS] = {
  "min/max, 0u - x (as printed today)", "unsigned min/max on sign-flipped bits", "asm min.s64/max.s64 on sign-extended",
  "asm setp + selp", "neg through __byte_perm identity", "neg from an opaque zero (laneid >> 5)",
  "asm volatile neg.s32", "min/max result through __byte_perm identity", "asm unsigned-bias min.u32/max.u32",
};

template <int V> __global__ void probe(int* out, const int* in, int n) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  const int a = in[t * 4], b = in[t * 4 + 1], c = in[t * 4 + 2], s = in[t * 4 + 3];
  int* r = out + t * SHAPES;
#define MIN_V(x, y) dmin<V>(x, y)
#define MAX_V(x, y) dmax<V>(x, y)
#define NEG_V(x) dneg<V>(x)
  SHAPE_LIST(MIN_V, MAX_V, NEG_V)
}

static unsigned rng = 20261123u;
static unsigned nextRandom() { rng ^= rng << 13; rng ^= rng >> 17; rng ^= rng << 5; return rng; }

template <int V> static int runVariant(int* dout, const int* din, const int* in, int n, int* got) {
  cudaMemset(dout, 0x5a, sizeof(int) * n * SHAPES);
  probe<V><<<(n + 255) / 256, 256>>>(dout, din, n);
  if (cudaDeviceSynchronize() != cudaSuccess) { printf("variant %d: launch failed\n", V); return -1; }
  cudaMemcpy(got, dout, sizeof(int) * n * SHAPES, cudaMemcpyDeviceToHost);
  int bad = 0, shown = 0;
  for (int t = 0; t < n; t++) {
    const int a = in[t * 4], b = in[t * 4 + 1], c = in[t * 4 + 2], s = in[t * 4 + 3];
    int r[SHAPES];
    SHAPE_LIST(hostMin, hostMax, hostNeg)
    for (int i = 0; i < SHAPES; i++)
      if (got[t * SHAPES + i] != r[i]) {
        bad++;
        if (shown++ < 4) printf("  variant %d shape %d (a=%d b=%d c=%d s=%d): gpu %d host %d\n", V, i, a, b, c, s, got[t * SHAPES + i], r[i]);
      }
  }
  printf("variant %d (%s): %s (%d wrong of %d)\n", V, names[V], bad ? "BAD" : "ok", bad, n * SHAPES);
  return bad;
}

int main() {
  const int n = 1 << 16;
  const int edges[] = {0, 1, -1, 2, -2, 3, 7, 2147483647, -2147483647, -2147483647 - 1, 12345, -12345};
  const int edgeCount = sizeof edges / sizeof edges[0];
  int* in = (int*)malloc(sizeof(int) * n * 4);
  int* got = (int*)malloc(sizeof(int) * n * SHAPES);
  for (int i = 0; i < n * 4; i++) {
    const unsigned pick = nextRandom();
    // A mix of edge values, small values (where nesting order matters most) and full-range values.
    in[i] = pick % 4 == 0 ? edges[nextRandom() % edgeCount] : pick % 4 == 1 ? (int)(nextRandom() % 41) - 20 : (int)nextRandom();
  }
  int *din, *dout;
  cudaMalloc(&din, sizeof(int) * n * 4);
  cudaMalloc(&dout, sizeof(int) * n * SHAPES);
  cudaMemcpy(din, in, sizeof(int) * n * 4, cudaMemcpyHostToDevice);
  runVariant<0>(dout, din, in, n, got);
  runVariant<1>(dout, din, in, n, got);
  runVariant<2>(dout, din, in, n, got);
  runVariant<3>(dout, din, in, n, got);
  runVariant<4>(dout, din, in, n, got);
  runVariant<5>(dout, din, in, n, got);
  runVariant<6>(dout, din, in, n, got);
  runVariant<7>(dout, din, in, n, got);
  runVariant<8>(dout, din, in, n, got);
  return 0;
}
