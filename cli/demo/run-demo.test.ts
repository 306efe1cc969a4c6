/**
 * The demo on the CPU device's two other configurations: every seed matmul variant against float64 in
 * checked mode (which must find no fault in any of them) and on two worker threads (so blocks really are
 * split), at odd and round sizes. The demo's own inputs are fresh random numbers with NaN-poisoned outputs.
 */

import { afterAll, describe, expect, it } from "vitest";
import { CpuDevice } from "../../runtime/cpu/cpu-device.ts";
import { runDemo } from "./run-demo.ts";
import { compileSeedLibrary } from "./seed-library.ts";

const library = compileSeedLibrary("cpu");

describe("the demo in checked mode", () => {
  it("passes every seed matmul variant at an odd size", async () => {
    const { rows, ok } = await runDemo(new CpuDevice({ checked: true }), { size: 37, library });
    expect(rows.map((r) => `${r.variant}:${r.status}`)).toEqual(rows.map((r) => `${r.variant}:pass`));
    expect(ok).toBe(true);
  });
});

describe("the demo on worker threads", () => {
  const device = new CpuDevice({ workers: 2 });
  afterAll(() => device.dispose());

  it.each([37, 64])("runs every seed matmul variant at n = %i on two workers, each matching float64", async (n) => {
    const { rows, ok } = await runDemo(device, { size: n, library });
    expect(rows.length).toBeGreaterThan(15);
    for (const row of rows) expect(row.status, `${row.variant}: ${row.note ?? ""}`).toBe("pass");
    expect(ok).toBe(true);
  });
});
