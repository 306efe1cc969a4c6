// Checks: subgroupAdd of a bool is reported (TSK2008); count with subgroupBallot or subgroupAdd of 0/1.
import { kernel, subgroupAdd, threadIdx, type ReadonlyInt32Array } from "tskernel";

export const countPositive = kernel({ block: [32] }, (out: Int32Array, input: ReadonlyInt32Array) => {
  out[threadIdx.x] = subgroupAdd(input[threadIdx.x] > 0);
});
