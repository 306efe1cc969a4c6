// The CUDA runtime's own launch cost on this GPU, the floor under any host's launch path (bench/gpu.sh
// --only launch runs it beside tskernel's and PyTorch's; bench/README.md, "Launch throughput"). A tiny kernel
// (y = a·x + y on 1024 floats, a = 0, blocks of 256, as the launch benchmark's saxpy) and an empty one, launched
// with <<<>>> in bursts of 100 and 1000 on the legacy default stream, on a blocking stream and on a
// non-blocking one: host µs per launch before the burst's synchronize, and with it (median of 10 bursts);
// then the GPU's time per launch back to back (CUDA events around 1000). Build here (no GPU needed):
//   nvcc -O2 -arch=sm_90 -o launch-probe bench/launch-probe.cu
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

__global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
__global__ void empty() {}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

static double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int main() {
  const int n = 1024;
  float *x, *y;
  cudaMalloc(&x, n * 4);
  cudaMalloc(&y, n * 4);
  cudaMemset(x, 0, n * 4);
  cudaMemset(y, 0, n * 4);
  cudaStream_t blocking, nonBlocking;
  cudaStreamCreate(&blocking);
  cudaStreamCreateWithFlags(&nonBlocking, cudaStreamNonBlocking);
  struct Stream { const char *name; cudaStream_t s; } streams[] = {{"legacy", 0}, {"blocking", blocking}, {"non-blocking", nonBlocking}};
  for (int i = 0; i < 2000; i++) saxpy<<<4, 256>>>(n, 0.f, x, y);
  cudaDeviceSynchronize();
  printf("{\n");
  for (int kernel = 0; kernel < 2; kernel++) {
    for (const Stream &stream : streams) {
      for (int burst : {100, 1000}) {
        std::vector<double> enqueue, total;
        for (int trial = 0; trial < 10; trial++) {
          double start = now_us();
          for (int i = 0; i < burst; i++) {
            if (kernel == 0) saxpy<<<4, 256, 0, stream.s>>>(n, 0.f, x, y);
            else empty<<<1, 1, 0, stream.s>>>();
          }
          double enqueued = now_us();
          cudaDeviceSynchronize();
          enqueue.push_back((enqueued - start) / burst);
          total.push_back((now_us() - start) / burst);
        }
        printf("  \"%s %s burst %d\": { \"hostUs\": %.3f, \"withSyncUs\": %.3f },\n", kernel == 0 ? "saxpy" : "empty", stream.name, burst, median(enqueue), median(total));
      }
    }
  }
  cudaEvent_t begin, end;
  cudaEventCreate(&begin);
  cudaEventCreate(&end);
  cudaEventRecord(begin);
  for (int i = 0; i < 1000; i++) saxpy<<<4, 256>>>(n, 0.f, x, y);
  cudaEventRecord(end);
  cudaEventSynchronize(end);
  float ms = 0;
  cudaEventElapsedTime(&ms, begin, end);
  printf("  \"saxpy gpu back to back\": { \"usPerLaunch\": %.3f },\n", ms * 1000 / 1000);
  printf("  \"error\": \"%s\"\n}\n", cudaGetErrorString(cudaGetLastError()));
  return 0;
}
