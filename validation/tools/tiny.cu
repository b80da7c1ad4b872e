// Tiny CUDA program: one kernel launch, used as the target when checking which ncu metrics work.
#include <cstdio>
__global__ void tiny(float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = a[i] * 2.0f + 1.0f;
}
int main() {
  const int n = 1 << 20;
  float *a;
  if (cudaMalloc(&a, n * sizeof(float)) != cudaSuccess) { printf("cudaMalloc failed\n"); return 1; }
  cudaMemset(a, 0, n * sizeof(float));
  tiny<<<(n + 255) / 256, 256>>>(a, n);
  cudaError_t e = cudaDeviceSynchronize();
  printf("tiny: %s\n", cudaGetErrorString(e));
  cudaFree(a);
  return e == cudaSuccess ? 0 : 1;
}
