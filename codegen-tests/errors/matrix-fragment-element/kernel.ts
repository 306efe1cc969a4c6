// A fragment's elements are spread over the lanes of a warp: kernels cannot index them.
import { fragment, kernel } from "tskernel";

export const peek = kernel({ block: [32] }, (C: Float32Array) => {
  const acc = fragment.accumulator("m16n8k8", "f32", 1);
  C[0] = acc[0];
});
