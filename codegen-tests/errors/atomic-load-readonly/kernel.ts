// atomicLoad() is an atomic like the others: a read-only buffer is TSK1030 (declare it writable to poll it).
import { atomicLoad, kernel, threadIdx, type ReadonlyInt32Array } from "tskernel";

export const poll = kernel({ block: [64] }, (out: Int32Array, flags: ReadonlyInt32Array) => {
  out[threadIdx.x] = atomicLoad(flags, threadIdx.x);
});
