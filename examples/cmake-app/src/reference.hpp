// The host side of the check, in plain C++ (compiled by the host compiler, not nvcc): double-precision
// references for the two kernels and the comparison of a float result with them. Each reference element
// comes with its magnitude (the same sum with every term made non-negative), since the rounding error of
// a float sum is bounded relative to that, not to the result, which may cancel to near zero.
#pragma once

#include <cstddef>
#include <vector>

namespace reference {

// A reference result: want[i] is the exact-as-double value, magnitude[i] the sum of the terms' magnitudes.
struct Expected {
  std::vector<double> want;
  std::vector<double> magnitude;
};

// D = alpha·A·B + beta·C; A is m×k, B is k×n, C is m×n, row-major.
Expected gemm(int m, int n, int k, float alpha, const float* A, const float* B, float beta, const float* C);

// y = a·x + y for n elements (y is the input y).
Expected saxpy(int n, float a, const float* x, const float* y);

struct Comparison {
  std::size_t count = 0;          // elements compared
  std::size_t nonFinite = 0;      // NaN or infinite results (an element never written is still the NaN poison)
  std::size_t overTolerance = 0;  // finite results further from want than tolerance·magnitude
  double worstRatio = 0;          // the largest |got − want| / (tolerance·magnitude)
  std::size_t worst = 0;          // where it is
};

// Compares got[i] with want[i] componentwise: |got − want| ≤ tolerance·magnitude.
Comparison compare(const float* got, const Expected& expected, double tolerance);

// How many bytes of a guard zone no longer hold the pattern they were filled with.
std::size_t guardBytesChanged(const void* guard, std::size_t bytes, unsigned char pattern);

}  // namespace reference
