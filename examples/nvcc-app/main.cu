// A plain nvcc program that uses a kernel written in TypeScript.
//
// `make` has tskernel compile ../../examples/matmul-tiled.ts to CUDA C: matmul-tiled.cu (device code only)
// and matmul-tiled.cuh (the kernel's declaration and a host launch function). nvcc compiles that .cu and
// this file as two translation units and links them; this file only includes the header and calls
//
//   launch_matmulTiled_TILE_16(grid, stream, C, A, B, m, n, k)
//
// It multiplies random matrices whose sizes are not multiples of the 16×16 tile, so the edge handling of
// the kernel is exercised, and checks the product against a double-precision reference on the host.
//
// Usage: nvcc-app [m n k]   (default 300 257 129; A is m×k, B is k×n, C is m×n, all row-major)
// Exit status: 0 PASS, 1 FAIL (wrong result or CUDA error), 2 no usable GPU, 3 bad arguments.

#include <cmath>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include <cuda_runtime.h>

#include "matmul-tiled.cuh"

namespace {

constexpr int kTile = 16;  // the block the generated kernel is specialized for (TILE = 16)
constexpr int kPass = 0, kFail = 1, kNoGpu = 2, kUsage = 3;

// Reports a failed CUDA call; true when it failed.
bool failed(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return false;
  std::fprintf(stderr, "CUDA error in %s: %s (%s)\n", what, cudaGetErrorString(err), cudaGetErrorName(err));
  return true;
}

// A device allocation freed when it goes out of scope, so every early return cleans up.
struct DeviceBuffer {
  float* ptr = nullptr;
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (ptr != nullptr) cudaFree(ptr);
  }
};

bool parseSize(const char* text, int* out) {
  errno = 0;
  char* end = nullptr;
  long value = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value < 1 || value > INT_MAX) return false;
  *out = static_cast<int>(value);
  return true;
}

// The kernel indexes with 32-bit ints (row * k + col and so on), so every matrix must have < 2^31 elements.
bool fitsInt(long long rows, long long cols) { return rows * cols <= INT_MAX; }

}  // namespace

int main(int argc, char** argv) {
  int m = 300, n = 257, k = 129;
  if (argc != 1 && argc != 4) {
    std::fprintf(stderr, "usage: %s [m n k]   (A is m×k, B is k×n; default 300 257 129)\n", argv[0]);
    return kUsage;
  }
  if (argc == 4 && (!parseSize(argv[1], &m) || !parseSize(argv[2], &n) || !parseSize(argv[3], &k))) {
    std::fprintf(stderr, "error: m, n and k must be positive integers, got '%s' '%s' '%s'\n", argv[1], argv[2], argv[3]);
    return kUsage;
  }
  if (!fitsInt(m, k) || !fitsInt(k, n) || !fitsInt(m, n)) {
    std::fprintf(stderr, "error: %d×%d×%d is too large: the kernel indexes each matrix with a 32-bit int\n", m, n, k);
    return kUsage;
  }

  // No GPU (or no driver) is an answer, not a crash: say so and exit with a status of its own.
  int deviceCount = 0;
  cudaError_t err = cudaGetDeviceCount(&deviceCount);
  if (err != cudaSuccess || deviceCount == 0) {
    std::fprintf(stderr, "no usable CUDA GPU: %s\n",
                 err != cudaSuccess ? cudaGetErrorString(err) : "the driver reports no devices");
    std::fprintf(stderr, "(this program was built fine; it needs an NVIDIA GPU and driver to run)\n");
    return kNoGpu;
  }
  int device = 0;
  cudaDeviceProp prop{};
  if (failed(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties")) return kFail;
  std::printf("device %d: %s (compute capability %d.%d)\n", device, prop.name, prop.major, prop.minor);

  // The kernel lives in the other translation unit; asking for its attributes also tells whether this
  // binary holds code the device can load (SASS for its architecture, or PTX it can JIT).
  cudaFuncAttributes attr{};
  err = cudaFuncGetAttributes(&attr, matmulTiled_TILE_16);
  if (err == cudaErrorNoKernelImageForDevice || err == cudaErrorInvalidDeviceFunction) {
    std::fprintf(stderr, "no usable CUDA GPU: this binary has no code for compute capability %d.%d (%s); "
                         "rebuild with e.g. `make ARCH=sm_%d%d`\n",
                 prop.major, prop.minor, cudaGetErrorString(err), prop.major, prop.minor);
    return kNoGpu;
  }
  if (failed(err, "cudaFuncGetAttributes(matmulTiled_TILE_16)")) return kFail;
  std::printf("kernel matmulTiled_TILE_16: %d registers, %zu bytes static shared memory, binary sm_%d, PTX %d\n",
              attr.numRegs, attr.sharedSizeBytes, attr.binaryVersion, attr.ptxVersion);

  const size_t sizeA = static_cast<size_t>(m) * k;
  const size_t sizeB = static_cast<size_t>(k) * n;
  const size_t sizeC = static_cast<size_t>(m) * n;
  // C gets a guard zone behind it: a kernel that forgot its bounds checks would write up to one tile row
  // (plus one tile) past the end, and the guard must still hold its poison afterwards.
  const size_t guard = static_cast<size_t>(kTile) * n + kTile;

  std::vector<float> hA(sizeA), hB(sizeB), hC(sizeC + guard);
  std::mt19937 rng(20240607u);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (float& x : hA) x = uniform(rng);
  for (float& x : hB) x = uniform(rng);

  DeviceBuffer dA, dB, dC;
  if (failed(cudaMalloc(&dA.ptr, sizeA * sizeof(float)), "cudaMalloc(A)")) return kFail;
  if (failed(cudaMalloc(&dB.ptr, sizeB * sizeof(float)), "cudaMalloc(B)")) return kFail;
  if (failed(cudaMalloc(&dC.ptr, (sizeC + guard) * sizeof(float)), "cudaMalloc(C)")) return kFail;
  if (failed(cudaMemcpy(dA.ptr, hA.data(), sizeA * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy(A)")) return kFail;
  if (failed(cudaMemcpy(dB.ptr, hB.data(), sizeB * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy(B)")) return kFail;
  // All bits set is a NaN: any element of C the kernel fails to write stays NaN and fails the check.
  if (failed(cudaMemset(dC.ptr, 0xFF, (sizeC + guard) * sizeof(float)), "cudaMemset(C)")) return kFail;

  // One block per 16×16 tile of C, rounded up so the partial tiles at the right and bottom edges are covered.
  const dim3 grid((n + kTile - 1) / kTile, (m + kTile - 1) / kTile);
  std::printf("C(%d×%d) = A(%d×%d) × B(%d×%d); grid %u×%u of 16×16 blocks\n", m, n, m, k, k, n, grid.x, grid.y);
  if (failed(launch_matmulTiled_TILE_16(grid, /*stream=*/0, dC.ptr, dA.ptr, dB.ptr, m, n, k), "launch_matmulTiled_TILE_16")) return kFail;
  if (failed(cudaGetLastError(), "cudaGetLastError after launch")) return kFail;
  if (failed(cudaDeviceSynchronize(), "cudaDeviceSynchronize (kernel execution)")) return kFail;
  if (failed(cudaMemcpy(hC.data(), dC.ptr, (sizeC + guard) * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy(C)")) return kFail;

  // Reference in double precision (i-p-j order, so B is read row by row).
  std::vector<double> ref(sizeC, 0.0);
  for (int i = 0; i < m; i++) {
    double* refRow = &ref[static_cast<size_t>(i) * n];
    for (int p = 0; p < k; p++) {
      const double a = hA[static_cast<size_t>(i) * k + p];
      const float* bRow = &hB[static_cast<size_t>(p) * n];
      for (int j = 0; j < n; j++) refRow[j] += a * static_cast<double>(bRow[j]);
    }
  }

  size_t nonFinite = 0;
  double diff2 = 0.0, ref2 = 0.0, maxAbs = 0.0;
  size_t worst = 0;
  for (size_t idx = 0; idx < sizeC; idx++) {
    const double c = hC[idx];
    if (!std::isfinite(c)) {
      if (nonFinite < 5) std::fprintf(stderr, "C[%zu][%zu] = %g (never written or not finite)\n", idx / n, idx % n, c);
      nonFinite++;
      continue;
    }
    const double d = c - ref[idx];
    diff2 += d * d;
    ref2 += ref[idx] * ref[idx];
    if (std::fabs(d) > maxAbs) {
      maxAbs = std::fabs(d);
      worst = idx;
    }
  }
  size_t guardTouched = 0;
  const unsigned char* guardBytes = reinterpret_cast<const unsigned char*>(hC.data() + sizeC);
  for (size_t b = 0; b < guard * sizeof(float); b++) guardTouched += guardBytes[b] != 0xFF;

  // Normwise relative error in the Frobenius norm. Summing k products in float rounds at most ~k times,
  // each by at most 2^-24 relative, so k·2^-23 leaves a factor of two over that worst case.
  const double relErr = ref2 > 0.0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  const double tolerance = k * std::ldexp(1.0, -23);
  std::printf("normwise relative error ||C - C_ref||_F / ||C_ref||_F = %.3e (tolerance k*2^-23 = %.3e)\n", relErr, tolerance);
  std::printf("max abs error %.3e at C[%zu][%zu]; %zu non-finite element(s) in C; %zu guard byte(s) overwritten\n",
              maxAbs, worst / n, worst % n, nonFinite, guardTouched);

  const bool pass = nonFinite == 0 && guardTouched == 0 && relErr <= tolerance;
  std::printf("%s\n", pass ? "PASS" : "FAIL");
  return pass ? kPass : kFail;
}
