// Checks: a private array's size must be known at compile time (TSK3003): a const computed from Const parameters
// may size it, one computed from a run-time parameter may not.
import { kernel, local, threadIdx, type Const, type i32, type ReadonlyFloat32Array } from "tskernel";

export const copy = kernel({ block: [32] }, (out: Float32Array, input: ReadonlyFloat32Array, n: i32, ITEMS: Const<i32> = 4) => {
  const known = ITEMS * 2;
  const held = local.f32(known);
  const unknown = n * 2;
  const more = local.f32(unknown);
  for (let i = 0; i < 8; i++) {
    held[i] = input[threadIdx.x * 8 + i];
    more[i] = held[i];
  }
  out[threadIdx.x] = held[0] + more[7];
});
