// Double-precision references and the componentwise comparison (see reference.hpp).
#include "reference.hpp"

#include <algorithm>
#include <cmath>

namespace reference {

Expected gemm(int m, int n, int k, float alpha, const float* A, const float* B, float beta, const float* C) {
  const std::size_t size = static_cast<std::size_t>(m) * n;
  Expected out{std::vector<double>(size, 0.0), std::vector<double>(size, 0.0)};
  std::vector<double> product(n), absProduct(n);
  for (int i = 0; i < m; i++) {
    std::fill(product.begin(), product.end(), 0.0);
    std::fill(absProduct.begin(), absProduct.end(), 0.0);
    // i-p-j order, so that B is read row by row.
    for (int p = 0; p < k; p++) {
      const double a = A[static_cast<std::size_t>(i) * k + p];
      const float* bRow = B + static_cast<std::size_t>(p) * n;
      for (int j = 0; j < n; j++) {
        const double term = a * static_cast<double>(bRow[j]);
        product[j] += term;
        absProduct[j] += std::fabs(term);
      }
    }
    for (int j = 0; j < n; j++) {
      const std::size_t idx = static_cast<std::size_t>(i) * n + j;
      const double c = beta * static_cast<double>(C[idx]);
      out.want[idx] = alpha * product[j] + c;
      out.magnitude[idx] = std::fabs(static_cast<double>(alpha)) * absProduct[j] + std::fabs(c);
    }
  }
  return out;
}

Expected saxpy(int n, float a, const float* x, const float* y) {
  Expected out{std::vector<double>(n), std::vector<double>(n)};
  for (int i = 0; i < n; i++) {
    const double ax = static_cast<double>(a) * x[i];
    out.want[i] = ax + y[i];
    out.magnitude[i] = std::fabs(ax) + std::fabs(static_cast<double>(y[i]));
  }
  return out;
}

Comparison compare(const float* got, const Expected& expected, double tolerance) {
  Comparison result;
  result.count = expected.want.size();
  for (std::size_t i = 0; i < result.count; i++) {
    const double value = got[i];
    if (!std::isfinite(value)) {
      result.nonFinite++;
      continue;
    }
    const double allowed = tolerance * expected.magnitude[i];
    const double error = std::fabs(value - expected.want[i]);
    // An exact zero magnitude (all terms zero) allows no error at all.
    const double ratio = allowed > 0 ? error / allowed : (error > 0 ? INFINITY : 0.0);
    if (ratio > 1) result.overTolerance++;
    if (ratio > result.worstRatio) {
      result.worstRatio = ratio;
      result.worst = i;
    }
  }
  return result;
}

std::size_t guardBytesChanged(const void* guard, std::size_t bytes, unsigned char pattern) {
  const unsigned char* p = static_cast<const unsigned char*>(guard);
  std::size_t changed = 0;
  for (std::size_t i = 0; i < bytes; i++) changed += p[i] != pattern;
  return changed;
}

}  // namespace reference
