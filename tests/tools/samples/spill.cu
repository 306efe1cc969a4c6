// Register pressure that must spill: __launch_bounds__(1024, 2) caps ptxas at 32 registers per thread,
// while 96 values stay live across a dependent update chain, so ptxas has to spill to local memory.
extern "C" __global__ void __launch_bounds__(1024, 2)
spill_heavy(const float* __restrict__ in, float* __restrict__ out) {
  float v[96];
#pragma unroll
  for (int j = 0; j < 96; j++) v[j] = in[threadIdx.x + j * 1024];
  float acc = 0.0f;
#pragma unroll
  for (int r = 0; r < 4; r++) {
#pragma unroll
    for (int j = 0; j < 96; j++) {
      v[j] = v[j] * v[(j * 7 + r) % 96] + acc;
      acc += v[j];
    }
  }
#pragma unroll
  for (int j = 0; j < 96; j++) out[threadIdx.x + j * 1024] = v[j];
}
