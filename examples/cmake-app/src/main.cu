// The CUDA part of examples/cmake-app: launches two kernels written in TypeScript and checks their results.
//
// CMake has tskernel generate gemm.cu/gemm.cuh from kernels/gemm.ts and saxpy.cu/saxpy.cuh from
// kernels/saxpy.ts; this file sees the kernels only through the generated headers, whose launch functions
// (launch_gemm_TILE_16, launch_saxpy) launch with the kernel's fixed block and return the launch error.
// Inputs are random (a fresh seed per run, printed, and accepted back as the fourth argument); outputs are
// poisoned first, and guard zones behind them must come back untouched. The double-precision references
// and the comparison are plain C++ in reference.cpp.
//
// Usage: cmake-app [m n k [seed]]   (GEMM sizes, default 333 270 141: none a multiple of the 16×16 tile)
// Exit status: 0 PASS, 1 FAIL (wrong result or CUDA error), 2 no usable GPU, 3 bad arguments.

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include <cuda_runtime.h>

#include "gemm.cuh"
#include "reference.hpp"
#include "saxpy.cuh"

namespace {

constexpr int kTile = 16;         // gemm.ts is built with its default TILE = 16
constexpr int kSaxpyBlock = 256;  // saxpy.ts's block
constexpr int kSaxpyN = 1000003;  // not a multiple of the block: the last block has surplus threads
constexpr int kPass = 0, kFail = 1, kNoGpu = 2, kUsage = 3;

bool failed(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return false;
  std::fprintf(stderr, "CUDA error in %s: %s (%s)\n", what, cudaGetErrorString(err), cudaGetErrorName(err));
  return true;
}

// A device allocation of floats, freed on every way out.
struct DeviceFloats {
  float* ptr = nullptr;
  DeviceFloats() = default;
  DeviceFloats(const DeviceFloats&) = delete;
  DeviceFloats& operator=(const DeviceFloats&) = delete;
  ~DeviceFloats() {
    if (ptr != nullptr) cudaFree(ptr);
  }
  cudaError_t upload(const std::vector<float>& host) {
    cudaError_t err = cudaMalloc(&ptr, host.size() * sizeof(float));
    return err != cudaSuccess ? err : cudaMemcpy(ptr, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice);
  }
};

bool parseLong(const char* text, long long max, long long* out) {
  errno = 0;
  char* end = nullptr;
  long long value = std::strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value < 1 || value > max) return false;
  *out = value;
  return true;
}

// Prints one check's result; true when it passed.
bool report(const char* name, const reference::Comparison& c, std::size_t guardChanged, double tolerance) {
  const bool pass = c.nonFinite == 0 && c.overTolerance == 0 && guardChanged == 0;
  std::printf("%s: %zu elements, %zu non-finite, %zu over tolerance (|got - want| <= %.3e * magnitude; worst at [%zu], "
              "%.3f of what it allows), %zu guard byte(s) changed: %s\n",
              name, c.count, c.nonFinite, c.overTolerance, tolerance, c.worst, c.worstRatio, guardChanged, pass ? "ok" : "WRONG");
  return pass;
}

// C = A × B-shaped GEMM with alpha and beta; true when the result is right.
bool checkGemm(int m, int n, int k, std::mt19937& rng, bool* cudaFailed) {
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f), scale(0.5f, 2.0f);
  const std::size_t sizeD = static_cast<std::size_t>(m) * n;
  // A kernel without bounds checks would write up to a tile row and a tile past the end of D.
  const std::size_t guard = static_cast<std::size_t>(kTile) * n + kTile;
  std::vector<float> A(static_cast<std::size_t>(m) * k), B(static_cast<std::size_t>(k) * n), C(sizeD), D(sizeD + guard);
  for (float& x : A) x = uniform(rng);
  for (float& x : B) x = uniform(rng);
  for (float& x : C) x = uniform(rng);
  const float alpha = scale(rng) * (rng() % 2 ? 1.0f : -1.0f);
  const float beta = scale(rng) * (rng() % 2 ? 1.0f : -1.0f);

  DeviceFloats dA, dB, dC, dD;
  *cudaFailed = true;
  if (failed(dA.upload(A), "upload A") || failed(dB.upload(B), "upload B") || failed(dC.upload(C), "upload C")) return false;
  if (failed(cudaMalloc(&dD.ptr, D.size() * sizeof(float)), "cudaMalloc(D)")) return false;
  // All bits set is a NaN: an element of D that the kernel never writes stays NaN and fails the check.
  if (failed(cudaMemset(dD.ptr, 0xFF, D.size() * sizeof(float)), "cudaMemset(D)")) return false;

  const dim3 grid((n + kTile - 1) / kTile, (m + kTile - 1) / kTile);
  std::printf("gemm: D(%d×%d) = %.4f·A(%d×%d)·B(%d×%d) + %.4f·C; grid %u×%u of 16×16 blocks\n", m, n, alpha, m, k, k, n,
              beta, grid.x, grid.y);
  if (failed(launch_gemm_TILE_16(grid, /*stream=*/0, dD.ptr, dA.ptr, dB.ptr, dC.ptr, alpha, beta, m, n, k), "launch_gemm_TILE_16")) return false;
  if (failed(cudaDeviceSynchronize(), "cudaDeviceSynchronize (gemm)")) return false;
  if (failed(cudaMemcpy(D.data(), dD.ptr, D.size() * sizeof(float), cudaMemcpyDeviceToHost), "download D")) return false;
  *cudaFailed = false;

  // The kernel sums k products with fma (at most k roundings of u = 2^-24 relative to the sum of the terms'
  // magnitudes), then rounds beta·C and the final fma: (k + 2)·u, doubled for slack.
  const double tolerance = (k + 2) * std::ldexp(1.0, -23);
  const reference::Expected want = reference::gemm(m, n, k, alpha, A.data(), B.data(), beta, C.data());
  const reference::Comparison result = reference::compare(D.data(), want, tolerance);
  return report("gemm", result, reference::guardBytesChanged(D.data() + sizeD, guard * sizeof(float), 0xFF), tolerance);
}

// y = a·x + y in place; true when the result is right.
bool checkSaxpy(std::mt19937& rng, bool* cudaFailed) {
  const int n = kSaxpyN;
  const std::size_t guard = kSaxpyBlock;  // a kernel without its bounds check writes up to a block past the end
  constexpr unsigned char kGuardByte = 0xA5;
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f), half(0.5f, 1.0f);
  // |x| ≥ 0.5 and |a| ≥ 0.5, so that every y must change by far more than the tolerance: a y the kernel never
  // wrote (y is in place, so it cannot be poisoned) fails the check.
  std::vector<float> x(n), y(n + guard);
  for (float& v : x) v = half(rng) * (rng() % 2 ? 1.0f : -1.0f);
  for (int i = 0; i < n; i++) y[i] = uniform(rng);
  const float a = half(rng) * 2.0f * (rng() % 2 ? 1.0f : -1.0f);
  const reference::Expected want = reference::saxpy(n, a, x.data(), y.data());

  DeviceFloats dx, dy;
  *cudaFailed = true;
  if (failed(dx.upload(x), "upload x") || failed(dy.upload(y), "upload y")) return false;
  if (failed(cudaMemset(dy.ptr + n, kGuardByte, guard * sizeof(float)), "cudaMemset(y guard)")) return false;
  const dim3 grid((n + kSaxpyBlock - 1) / kSaxpyBlock);
  std::printf("saxpy: y = %.4f·x + y, n = %d; grid %u of %d threads\n", a, n, grid.x, kSaxpyBlock);
  if (failed(launch_saxpy(grid, /*stream=*/0, n, a, dx.ptr, dy.ptr), "launch_saxpy")) return false;
  if (failed(cudaDeviceSynchronize(), "cudaDeviceSynchronize (saxpy)")) return false;
  if (failed(cudaMemcpy(y.data(), dy.ptr, y.size() * sizeof(float), cudaMemcpyDeviceToHost), "download y")) return false;
  *cudaFailed = false;

  // One rounding (fma): u = 2^-24 relative to |a·x| + |y|, doubled for slack.
  const double tolerance = std::ldexp(1.0, -23);
  const reference::Comparison result = reference::compare(y.data(), want, tolerance);
  return report("saxpy", result, reference::guardBytesChanged(y.data() + n, guard * sizeof(float), kGuardByte), tolerance);
}

}  // namespace

int main(int argc, char** argv) {
  long long m = 333, n = 270, k = 141, seed = static_cast<long long>(std::random_device{}() & 0x7fffffff) + 1;
  if (argc != 1 && argc != 4 && argc != 5) {
    std::fprintf(stderr, "usage: %s [m n k [seed]]   (GEMM: A is m×k, B is k×n; default 333 270 141)\n", argv[0]);
    return kUsage;
  }
  if (argc >= 4 && (!parseLong(argv[1], INT_MAX, &m) || !parseLong(argv[2], INT_MAX, &n) || !parseLong(argv[3], INT_MAX, &k) ||
                    (argc == 5 && !parseLong(argv[4], UINT_MAX, &seed)))) {
    std::fprintf(stderr, "error: m, n, k and seed must be positive integers\n");
    return kUsage;
  }
  // The kernel indexes with 32-bit ints, so every matrix must have fewer than 2^31 elements.
  if (m * k > INT_MAX || k * n > INT_MAX || m * n > INT_MAX) {
    std::fprintf(stderr, "error: %lld×%lld×%lld is too large: the kernel indexes each matrix with a 32-bit int\n", m, n, k);
    return kUsage;
  }

  int deviceCount = 0;
  cudaError_t err = cudaGetDeviceCount(&deviceCount);
  if (err != cudaSuccess || deviceCount == 0) {
    std::fprintf(stderr, "no usable CUDA GPU: %s\n", err != cudaSuccess ? cudaGetErrorString(err) : "the driver reports no devices");
    std::fprintf(stderr, "(this program was built fine; it needs an NVIDIA GPU and driver to run)\n");
    return kNoGpu;
  }
  cudaDeviceProp prop{};
  if (failed(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties")) return kFail;
  std::printf("device 0: %s (compute capability %d.%d)\n", prop.name, prop.major, prop.minor);

  // Whether this binary holds code the device can run (SASS for its architecture, or PTX it can compile).
  cudaFuncAttributes attr{};
  err = cudaFuncGetAttributes(&attr, gemm_TILE_16);
  if (err == cudaErrorNoKernelImageForDevice || err == cudaErrorInvalidDeviceFunction) {
    std::fprintf(stderr, "no usable CUDA GPU: this binary has no code for compute capability %d.%d (%s); "
                         "configure with -DCMAKE_CUDA_ARCHITECTURES=%d%d and rebuild\n",
                 prop.major, prop.minor, cudaGetErrorString(err), prop.major, prop.minor);
    return kNoGpu;
  }
  if (failed(err, "cudaFuncGetAttributes(gemm_TILE_16)")) return kFail;
  std::printf("kernel gemm_TILE_16: %d registers, %zu bytes static shared memory, binary sm_%d\n", attr.numRegs,
              attr.sharedSizeBytes, attr.binaryVersion);

  std::printf("seed %lld (repeat with: %s %lld %lld %lld %lld)\n", seed, argv[0], m, n, k, seed);
  std::mt19937 rng(static_cast<unsigned>(seed));
  bool cudaFailed = false;
  const bool gemmOk = checkGemm(static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), rng, &cudaFailed);
  if (cudaFailed) return kFail;
  const bool saxpyOk = checkSaxpy(rng, &cudaFailed);
  if (cudaFailed) return kFail;
  const bool pass = gemmOk && saxpyOk;
  std::printf("%s\n", pass ? "PASS" : "FAIL");
  return pass ? kPass : kFail;
}
