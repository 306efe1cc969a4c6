/**
 * Specialization drops the arrays its folded body no longer names (a branch of a constant condition that
 * folding removed): they are neither declared nor counted in `sharedBytes`, which must match what ptxas keeps.
 * An unused array whose size is not a valid constant is still reported.
 */

import { expect, it } from "vitest";
import { compileSource, header } from "../../tests/compile-source.ts";

const source = `${header}import type { bool } from "tskernel";
export const pick = kernel({ block: [64], specializations: [{ STAGE: true }, { STAGE: false }] }, (out: Float32Array, STAGE: Const<bool> = true) => {
  const staged = shared.f32(256);
  const other = shared.f32(16);
  const tid = threadIdx.x;
  if (STAGE) {
    staged[tid] = out[tid];
    syncThreads();
    out[tid] = staged[63 - tid];
  } else {
    other[tid % 16] = 1;
    out[tid] = 2;
  }
});
`;

it("leaves out the shared arrays only a folded-away branch used", () => {
  const result = compileSource(source, { targets: ["cuda", "wgsl", "js"] });
  expect(result.rendered).toBe("");
  const [staging, direct] = result.files[0]!.specializations;
  expect(staging!.facts.sharedBytes).toBe(256 * 4);
  expect(direct!.facts.sharedBytes).toBe(16 * 4);
  const cuda = result.files[0]!.cuda!.source;
  const body = (entry: string) => cuda.slice(cuda.indexOf(`${entry}(`), cuda.indexOf("\n}\n", cuda.indexOf(`${entry}(`)));
  expect(body(staging!.entryName)).toContain("__shared__ float staged[256];");
  expect(body(staging!.entryName)).not.toContain("other[");
  expect(body(direct!.entryName)).toContain("__shared__ float other[16];");
  expect(body(direct!.entryName)).not.toContain("staged");
});

it("still reports an unused array whose size is not a positive constant", () => {
  const result = compileSource(`${header}
export const bad = kernel({ block: [64] }, (out: Float32Array, N: Const<i32> = 0) => {
  const unused = shared.f32(N);
  out[threadIdx.x] = 1;
});
`);
  expect(result.diagnostics.map((d) => d.code)).toContain("TSK3005");
});
