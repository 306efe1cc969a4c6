/**
 * The CUDA leg up to the device: it skips cleanly where CUDA cannot be opened (here: no driver), and with
 * the CPU standing in for CUDA it runs programs and writes the summary the coordinator collects.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, it } from "vitest";
import { CpuDevice } from "../../../runtime/cpu/cpu-device.ts";
import { BackendUnavailable } from "../../../runtime/device.ts";
import { runCudaLeg } from "./cuda-leg.ts";

const out = () => fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-fuzz-cuda-"));

it("is skipped, with the reason in its summary, where CUDA is unavailable", async () => {
  const dir = out();
  const summary = await runCudaLeg({ out: dir, seed: 1, count: 5, open: () => { throw new BackendUnavailable("cuda", "no driver in this test"); } });
  expect(summary.skipped).toContain("no driver in this test");
  expect(JSON.parse(fs.readFileSync(path.join(dir, "fuzz-cuda.json"), "utf8")).skipped).toBe(summary.skipped);
});

it("runs programs against the CPU and the reference and writes the summary", async () => {
  const dir = out();
  const summary = await runCudaLeg({ out: dir, seed: 3, count: 6, open: () => new CpuDevice(), target: "js" });
  if (!("programs" in summary)) throw new Error(`skipped: ${summary.skipped}`);
  expect(summary.programs).toBe(6);
  expect(summary.failures).toEqual([]);
  expect(summary.backends).toEqual(["cpu", "cuda"]);
  const written = JSON.parse(fs.readFileSync(path.join(dir, "fuzz-cuda.json"), "utf8"));
  expect(written.programs).toBe(6);
  expect(written.compared).toBe(summary.compared);
});
