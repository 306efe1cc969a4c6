// atomicStore() returns nothing: using it as a value is TSK1011 (TypeScript lets a `void` call stand where
// an untyped value may: here the right side of an assignment to an element).
import { atomicStore, kernel, threadIdx } from "tskernel";

export const store = kernel({ block: [64] }, (flags: Int32Array) => {
  flags[0] = atomicStore(flags, threadIdx.x, 1);
});
