// Checks: a private array's size must be a compile-time constant (TSK3003); a local const computed from Const
// parameters is still a run-time value, and the note says to write its expression in place.
import { kernel, local, threadIdx, type Const, type i32, type ReadonlyFloat32Array } from "tskernel";

export const copy = kernel({ block: [32] }, (out: Float32Array, input: ReadonlyFloat32Array, ITEMS: Const<i32> = 4) => {
  const count = ITEMS * 2;
  const held = local.f32(count);
  for (let i = 0; i < 8; i++) {
    held[i] = input[threadIdx.x * 8 + i];
  }
  out[threadIdx.x] = held[0] + held[7];
});
