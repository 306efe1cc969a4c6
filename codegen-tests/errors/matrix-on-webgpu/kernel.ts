// Matrix operations on a target without them: WebGPU (Dawn here exposes no subgroup matrices).
import { fragment, kernel, loadFragment, mma, storeFragment, type ReadonlyFloat32Array } from "tskernel";

export const tile = kernel({ block: [32] }, (A: ReadonlyFloat32Array, B: ReadonlyFloat32Array, C: Float32Array) => {
  const acc = fragment.accumulator("m16n8k8", "f32", 1);
  const a = fragment.a("m16n8k8", "tf32", 1);
  const b = fragment.b("m16n8k8", "tf32", 1);
  loadFragment(acc[0], C, 0, 8);
  loadFragment(a[0], A, 0, 8);
  loadFragment(b[0], B, 0, 8);
  mma(acc[0], a[0], b[0]);
  storeFragment(acc[0], C, 0, 8);
});
