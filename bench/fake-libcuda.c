// A stand-in for libcuda.so.1 on a machine without a GPU: memory is host memory, kernels do nothing, every call
// succeeds at once. It measures the host side of tskernel's CUDA launch path alone (checks, argument packing,
// the koffi call: 0.54 µs per launch on the 2-core VM, bench/README.md "Launch throughput") and runs the CUDA
// device's code paths (graphs, streams, deferred frees); a few exports let a script read what was launched and
// make the next wait fail. Kernels come from a build with cubins (`tskernel build … --target cuda --cubin --arch
// sm_90`: nvcc here, no NVRTC needed). Build and use:
//   gcc -shared -fPIC -O2 -o /tmp/fake-cuda/libcuda.so.1 bench/fake-libcuda.c
//   LD_LIBRARY_PATH=/tmp/fake-cuda node my-script.mjs
// Nothing it returns is a GPU's result: never use it for correctness.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
typedef int CUresult;
static long launches = 0, graphLaunches = 0, frees = 0, syncs = 0;
static int failNextSync = 0;
static uint64_t lastNode[9]; static uint64_t lastParams[16]; static int lastParamCount = 0;
long fake_launches(void) { return launches; }
long fake_graph_launches(void) { return graphLaunches; }
long fake_frees(void) { return frees; }
long fake_syncs(void) { return syncs; }
void fake_fail_next_sync(int code) { failNextSync = code; }
uint64_t fake_last_node(int i) { return lastNode[i]; }
uint64_t fake_last_param(int i) { return lastParams[i]; }
static CUresult syncResult(void) { syncs++; if (failNextSync) { int c = failNextSync; failNextSync = 0; return c; } return 0; }
CUresult cuInit(unsigned f) { return 0; }
CUresult cuDriverGetVersion(int *v) { *v = 13000; return 0; }
CUresult cuDeviceGet(int *d, int o) { *d = 0; return 0; }
CUresult cuDeviceGetCount(int *c) { *c = 1; return 0; }
CUresult cuDeviceGetName(char *n, int len, int d) { strncpy(n, "Fake GPU", len); return 0; }
CUresult cuDeviceGetAttribute(int *v, int a, int d) {
  switch (a) { case 1: *v = 1024; break; case 2: case 3: *v = 1024; break; case 4: *v = 64; break; case 5: *v = 2147483647; break;
    case 6: case 7: *v = 65535; break; case 75: *v = 9; break; case 76: *v = 0; break; case 97: *v = 232448; break; case 38: *v = 52428800; break; case 16: *v = 132; break; default: *v = 0; }
  return 0; }
CUresult cuDevicePrimaryCtxRetain(void **c, int d) { *c = (void *)0x1000; return 0; }
CUresult cuCtxSetCurrent(void *c) { return 0; }
CUresult cuCtxSynchronize(void) { return syncResult(); }
CUresult cuModuleLoadData(void **m, const void *img) { *m = (void *)0x2000; return 0; }
CUresult cuModuleGetFunction(void **f, void *m, const char *name) { *f = (void *)(0x3000 + (strlen(name) << 4)); return 0; }
CUresult cuFuncGetAttribute(int *v, int a, void *f) { *v = a == 0 ? 1024 : a == 4 ? 32 : 0; return 0; }
CUresult cuFuncSetAttribute(void *f, int a, int v) { return 0; }
CUresult cuMemAlloc_v2(uint64_t *p, size_t b) { *p = (uint64_t)malloc(b); return 0; }
CUresult cuMemFree_v2(uint64_t p) { frees++; free((void *)p); return 0; }
CUresult cuMemcpyHtoD_v2(uint64_t d, const void *h, size_t b) { memcpy((void *)d, h, b); return syncResult(); }
CUresult cuMemcpyDtoH_v2(void *h, uint64_t d, size_t b) { memcpy(h, (void *)d, b); return syncResult(); }
CUresult cuMemsetD32_v2(uint64_t d, unsigned v, size_t c) { for (size_t i = 0; i < c; i++) ((unsigned *)d)[i] = v; return 0; }
CUresult cuMemcpyDtoDAsync_v2(uint64_t d, uint64_t s, size_t b, void *st) { memcpy((void *)d, (void *)s, b); return 0; }
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned sh, void *st, void **params, void **extra) {
  launches++; lastParamCount = 0; for (int i = 0; i < 4; i++) lastParams[i] = *(uint64_t *)params[i]; return 0; }
CUresult cuEventCreate(void **e, unsigned f) { *e = malloc(8); return 0; }
CUresult cuEventRecord(void *e, void *s) { return 0; }
CUresult cuEventQuery(void *e) { return 0; }
CUresult cuEventSynchronize(void *e) { return 0; }
CUresult cuEventElapsedTime(float *ms, void *a, void *b) { *ms = 0.01f; return 0; }
CUresult cuEventDestroy_v2(void *e) { free(e); return 0; }
CUresult cuStreamCreate(void **s, unsigned f) { *s = malloc(8); return 0; }
CUresult cuStreamWaitEvent(void *s, void *e, unsigned f) { return 0; }
CUresult cuStreamSynchronize(void *s) { return syncResult(); }
CUresult cuStreamDestroy_v2(void *s) { free(s); return 0; }
CUresult cuGraphCreate(void **g, unsigned f) { *g = malloc(8); return 0; }
static uint64_t nodeCounter = 0x5000;
CUresult cuGraphAddKernelNode_v2(uint64_t *node, void *g, const uint64_t *deps, size_t n, uint64_t params) {
  uint64_t *p = (uint64_t *)params; unsigned *u = (unsigned *)(params + 8);
  lastNode[0] = p[0]; for (int i = 0; i < 7; i++) lastNode[1 + i] = u[i];
  void **kp = (void **)p[5]; lastNode[8] = *(uint64_t *)kp[0];
  *node = nodeCounter++; return 0; }
CUresult cuGraphInstantiateWithFlags(void **e, void *g, unsigned long long f) { *e = malloc(8); return 0; }
CUresult cuGraphLaunch(void *e, void *s) { graphLaunches++; return 0; }
CUresult cuGraphExecKernelNodeSetParams_v2(void *e, uint64_t node, uint64_t params) { uint64_t *p = (uint64_t *)params; void **kp = (void **)p[5]; lastNode[8] = *(uint64_t *)kp[0]; return 0; }
CUresult cuGraphExecDestroy(void *e) { free(e); return 0; }
CUresult cuGraphDestroy(void *g) { free(g); return 0; }
CUresult cuGetErrorName(int code, const char **name) { *name = code == 700 ? "CUDA_ERROR_ILLEGAL_ADDRESS" : "CUDA_ERROR_UNKNOWN"; return 0; }
CUresult cuTensorMapEncodeTiled(uint64_t m, int t, unsigned r, uint64_t a, const uint64_t *d, const uint64_t *s, const unsigned *b, const unsigned *e, int i, int sw, int l2, int o) { return 0; }
