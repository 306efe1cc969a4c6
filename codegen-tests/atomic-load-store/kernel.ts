// atomicLoad and atomicStore on i32, u32 and f32 elements of global buffers and of a shared array, in a spin
// loop (the load runs before each test of the condition), as a value, and as a statement whose value is dropped.
import { atomicLoad, atomicStore, f32, kernel, shared, syncThreads, threadIdx } from "tskernel";

export const loadStore = kernel({ block: [64] }, (flags: Int32Array, masks: Uint32Array, values: Float32Array, out: Float32Array, v: f32) => {
  const seen = shared.f32(64);
  const tid = threadIdx.x;
  atomicStore(values, tid, v + 1);
  atomicStore(masks, tid, 3);
  atomicStore(seen, tid, v);
  syncThreads();
  while (atomicLoad(flags, 0) === 7) {
    atomicStore(flags, 0, 8);
  }
  atomicLoad(masks, 1);
  out[tid] = atomicLoad(values, tid) + atomicLoad(seen, 63 - tid) + f32(atomicLoad(masks, tid));
});
