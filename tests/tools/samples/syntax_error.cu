// Invalid CUDA: uses an identifier that was never declared.
extern "C" __global__ void broken(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = undefined_thing * 2.0f;
}
