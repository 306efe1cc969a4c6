/**
 * Barrier uniformity on small kernels: what must be accepted (barriers in control flow every thread of the
 * block takes) and what must be rejected, each rejection with the location of the barrier and of the cause.
 */

import { describe, expect, it } from "vitest";
import { compileSource, header } from "../../tests/compile-source.ts";

function kernelWith(body: string): string {
  return `${header}export const k = kernel({ block: [64] }, (out: Float32Array, x: ReadonlyFloat32Array, n: i32) => {\n  const tile = shared.f32(64);\n${body}\n});\n`;
}

function barrierErrors(body: string) {
  const result = compileSource(kernelWith(body));
  return { result, errors: result.diagnostics.filter((d) => d.code === "TSK3001") };
}

describe("accepted: uniform control flow", () => {
  it.each([
    ["a loop bounded by a scalar parameter", "for (let t = 0; t < n; t += 64) {\n  tile[threadIdx.x] = x[t + threadIdx.x];\n  syncThreads();\n  out[t] = tile[0];\n  syncThreads();\n}"],
    ["a condition on blockIdx and a read-only buffer", "if (blockIdx.x < n && x[blockIdx.x] > 0.0) {\n  syncThreads();\n}"],
    ["a guarded store between barriers", "tile[threadIdx.x] = 1;\nsyncThreads();\nif (threadIdx.x < n) {\n  out[threadIdx.x] = tile[63 - threadIdx.x];\n}\nsyncThreads();"],
    ["a return after the last barrier", "syncThreads();\nif (threadIdx.x >= n) {\n  return;\n}\nout[threadIdx.x] = 1;"],
    ["a thread-dependent break in a loop that has no barrier", "for (let i = 0; i < n; i++) {\n  if (i > threadIdx.x) {\n    break;\n  }\n}\nsyncThreads();"],
  ])("%s", (_name, body) => {
    const { result, errors } = barrierErrors(body);
    expect(errors).toEqual([]);
    expect(result.ok, result.rendered).toBe(true);
  });
});

describe("rejected: barriers some threads may not reach", () => {
  it.each([
    ["under a condition on threadIdx", "if (threadIdx.x < 16) {\n  syncThreads();\n}", "this condition depends on threadIdx.x"],
    ["under a condition on a value derived from threadIdx", "const row = blockIdx.x * 64 + threadIdx.x;\nif (row < n) {\n  syncThreads();\n}", "depends on 'row', which depends on threadIdx.x"],
    ["after a thread-dependent return", "if (threadIdx.x >= n) {\n  return;\n}\nsyncThreads();", "some threads may return here"],
    ["in a loop that some threads leave early", "for (let i = 0; i < n; i++) {\n  if (threadIdx.x === i) {\n    break;\n  }\n  syncThreads();\n}", "some threads may leave the loop here"],
    ["in a loop whose bound depends on threadIdx", "for (let i = 0; i < threadIdx.x; i++) {\n  syncThreads();\n}", "this loop condition depends on threadIdx.x"],
    ["under a condition on shared memory", "tile[threadIdx.x] = x[threadIdx.x];\nsyncThreads();\nif (tile[0] > 0.0) {\n  syncThreads();\n}", "reads shared memory ('tile')"],
    ["under a condition on a writable buffer", "if (out[0] > 0.0) {\n  syncThreads();\n}", "reads the writable buffer 'out'"],
    ["in a loop that a thread may return from after the barrier", "for (let i = 0; i < n; i++) {\n  syncThreads();\n  if (threadIdx.x === i) {\n    return;\n  }\n}", "some threads may leave the loop here"],
    ["under a variable assigned in thread-dependent control flow", "let flag = false;\nif (threadIdx.x === 0) {\n  flag = true;\n}\nif (flag) {\n  syncThreads();\n}", "which is assigned under a condition"],
  ])("%s", (_name, body, cause) => {
    const { result, errors } = barrierErrors(body);
    expect(result.ok).toBe(false);
    expect(errors).toHaveLength(1);
    const error = errors[0]!;
    const source = kernelWith(body);
    expect(source.slice(error.span!.start, error.span!.end)).toBe("syncThreads()");
    expect(error.related).toHaveLength(1);
    expect(error.related[0]!.message).toContain(cause);
    // Nothing is emitted for a kernel that fails validation.
    expect(result.files[0]!.cuda).toBeUndefined();
  });
});
