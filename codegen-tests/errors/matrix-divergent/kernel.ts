// A matrix operation that only some lanes reach, and a fragment chosen per thread.
import { fragment, kernel, loadFragment, mma, storeFragment, threadIdx, type ReadonlyFloat32Array } from "tskernel";

export const half = kernel({ block: [64] }, (A: ReadonlyFloat32Array, B: ReadonlyFloat32Array, C: Float32Array) => {
  const acc = fragment.accumulator("m16n8k8", "f32", 2);
  const a = fragment.a("m16n8k8", "tf32", 1);
  const b = fragment.b("m16n8k8", "tf32", 1);
  loadFragment(a[0], A, 0, 8);
  loadFragment(b[0], B, 0, 8);
  if (threadIdx.x < 32) {
    mma(acc[0], a[0], b[0]);
  }
  storeFragment(acc[threadIdx.x / 32], C, 0, 8);
});
