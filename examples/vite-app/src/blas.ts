// A helper the SAXPY kernel imports from another file: the bundler plugin compiles it into the kernel's
// WGSL, and watches this file, so an edit here recompiles the kernel in `vite dev`.
import { fma, type f32 } from "tskernel";

/** a·x + y, rounded once (like CUDA's default contraction). */
export function axpy(a: f32, x: f32, y: f32): f32 {
  return fma(a, x, y);
}
