// The GPU check of the m16n8k16 fragments as the compiler loads them (issue 22 §1): runs the golden CUDA of
// codegen-tests/mma16-loads (two warps, each D = A·B + C with A and B loaded by loadFragment from global memory,
// mode 0, or by loadMatrix from shared tiles, ldmatrix: row-major 1, A transposed 2, A and B transposed 3) on random
// bf16 and f16 inputs, and compares D with a float64 sum of the same values against the bound ir/matrix.ts states
// for one mma: |D − (C + A·B)| ≤ 16·2^-24·(|C| + Σ|products|). A wrong layout, packing or ldmatrix form gives errors
// of the size of the values, far over it. Also reports how many outputs equal the CPU's in-order emulation
// (informative). One line per type and mode, then PASS or FAIL; exits 1 on a failure.
//   nvcc -O2 -arch=sm_90 -o /tmp/mma16-loads-check bench/mma16-loads-check.cu && /tmp/mma16-loads-check [SEED]
#include "../codegen-tests/mma16-loads/expected.cuh"
#include "../codegen-tests/mma16-loads/expected.cu"
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <vector>

#define CHECK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); exit(2); } } while (0)

static unsigned state = 1;
static unsigned nextRandom() { state ^= state << 13; state ^= state >> 17; state ^= state << 5; return state; }
static double uniform(double scale) { return ((nextRandom() >> 8) * (1.0 / 16777216.0) * 2.0 - 1.0) * scale; }

// A value rounded to the type (to nearest even), as 16 bits and as the float it stands for.
static unsigned short toBits(bool bf16, float x, float* value) {
  if (bf16) {
    unsigned bits;
    memcpy(&bits, &x, 4);
    const unsigned short h = (unsigned short)((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
    const unsigned back = (unsigned)h << 16;
    memcpy(value, &back, 4);
    return h;
  }
  const __half h = __float2half_rn(x);
  *value = __half2float(h);
  unsigned short bits;
  memcpy(&bits, &h, 2);
  return bits;
}

int main(int argc, char** argv) {
  state = argc > 1 ? (unsigned)strtoul(argv[1], nullptr, 10) : 20261127u;
  if (state == 0) state = 1;
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  printf("device %s (sm_%d%d), seed %u; bound per mma |D - (C + A*B)| <= 16 * 2^-24 * (|C| + sum |products|)\n", prop.name, prop.major, prop.minor, state);
  const char* modes[4] = { "loadFragment (global)", "loadMatrix row-major (x4, x2.trans)", "loadMatrix A transposed (x4.trans)", "loadMatrix A, B transposed (x2)" };
  unsigned short *dA, *dB;
  float *dC, *dD;
  CHECK(cudaMalloc(&dA, 512 * 2));
  CHECK(cudaMalloc(&dB, 256 * 2));
  CHECK(cudaMalloc(&dC, 256 * 4));
  CHECK(cudaMalloc(&dD, 256 * 4));
  bool ok = true;
  for (int type = 0; type < 2; type++) {
    const bool bf16 = type == 0;
    for (int mode = 0; mode < 4; mode++) {
      double worst = 0;
      int over = 0, same = 0, total = 0;
      for (int trial = 0; trial < 16; trial++) {
        std::vector<unsigned short> a(512), b(256);
        std::vector<float> av(512), bv(256), c(256), d(256);
        for (int i = 0; i < 512; i++) a[i] = toBits(bf16, (float)uniform(4), &av[i]);
        for (int i = 0; i < 256; i++) b[i] = toBits(bf16, (float)uniform(4), &bv[i]);
        for (int i = 0; i < 256; i++) c[i] = (float)uniform(10);
        CHECK(cudaMemcpy(dA, a.data(), 512 * 2, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(dB, b.data(), 256 * 2, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(dC, c.data(), 256 * 4, cudaMemcpyHostToDevice));
        CHECK(cudaMemset(dD, 0xff, 256 * 4));
        if (bf16) CHECK(launch_mma16LoadsBf16(dim3(1), 0, (const __nv_bfloat16*)dA, (const __nv_bfloat16*)dB, dC, dD, mode));
        else CHECK(launch_mma16LoadsF16(dim3(1), 0, (const __half*)dA, (const __half*)dB, dC, dD, mode));
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(d.data(), dD, 256 * 4, cudaMemcpyDeviceToHost));
        for (int w = 0; w < 2; w++) {
          for (int r = 0; r < 16; r++) {
            for (int col = 0; col < 8; col++) {
              const float c0 = c[w * 128 + r * 8 + col];
              double exact = c0, magnitude = fabs((double)c0);
              float ordered = c0;
              for (int k = 0; k < 16; k++) {
                const float p = av[w * 256 + r * 16 + k] * bv[w * 128 + k * 8 + col];  // exact in f32
                exact += p;
                magnitude += fabs((double)p);
                ordered = ordered + p;
              }
              const float got = d[w * 128 + r * 8 + col];
              const double ratio = std::isfinite(got) ? fabs(got - exact) / (16 * ldexp(1.0, -24) * magnitude) : INFINITY;
              worst = fmax(worst, ratio);
              over += ratio > 1;
              same += got == ordered;
              total++;
            }
          }
        }
      }
      const bool good = over == 0;
      ok &= good;
      printf("%-4s %-36s worst error/bound %.4f  over bound %d of %d  same as CPU emulation %d  %s\n", bf16 ? "bf16" : "f16", modes[mode], worst, over, total, same, good ? "ok" : "FAIL");
    }
  }
  printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
