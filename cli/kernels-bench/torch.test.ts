/**
 * The PyTorch side without a GPU: the plan built from nvcc cubins names every launch the Node bench would make
 * on CUDA, bench/torch-reference.py's dry run finds every cubin and function, packs every argument and, with
 * numpy, shows that its float64 references and checks pass a correct f32 result and reject a wrong one; and
 * torch.json joins the CUDA rows. Skipped where nvcc or python3 with numpy is missing.
 */

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../main.ts";
import { loadKernelLibrary } from "../../runtime/load-library.ts";
import { nvccAvailable } from "../../tests/tools/nvcc.ts";
import { repoRoot } from "../../tests/golden-cases.ts";
import { kernelCases, suiteFiles } from "./cases.ts";
import { joinTorch, makePlan, writePlan } from "./torch.ts";
import type { KernelBenchReport } from "./bench.ts";

const python = spawnSync("python3", ["-c", "import numpy"], { encoding: "utf8" });
const skipReason = !nvccAvailable() ? "nvcc not found" : python.status !== 0 ? "python3 with numpy not found" : undefined;
const temp = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-plan-"));
afterAll(() => fs.rmSync(temp, { recursive: true, force: true }));

describe.skipIf(skipReason)(`the PyTorch plan and torch-reference.py --dry-run${skipReason ? ` (skipped: ${skipReason})` : ""}`, () => {
  it("plans every case from cubins, and the script's dry run accepts the plan and tests its checks", async () => {
    const kernels = path.join(temp, "kernels");
    const io = { stdout: () => {}, stderr: (text: string) => void errors.push(text) };
    const errors: string[] = [];
    const code = await runCli(["build", ...suiteFiles.map((f) => path.join(repoRoot, f)), "--target", "cuda", "--cubin", "--arch", "sm_90", "--out", kernels], io);
    expect(code, errors.join("")).toBe(0);
    const plan = makePlan(loadKernelLibrary(kernels), "kernels");
    expect(plan.cases.map((c) => `${c.id} ${c.label}`)).toEqual(kernelCases.flatMap((c) => c.gpuShapes.map((s) => `${c.id} ${s.length === 1 ? `n=2^${Math.log2(s[0]!)}` : s.join("×")}`)));
    const sum = plan.cases.find((c) => c.id === "sum")!;
    expect(sum.steps.map((s) => s.grid[0])).toEqual([1024, 1]);
    expect(plan.cases.find((c) => c.id === "transpose" && c.label === "8191×8190")!.steps[0]!.function).toMatch(/^transposeAligned_/);
    expect(plan.cases.find((c) => c.id === "scan")!.steps.map((s) => s.function.replace(/_.*/, ""))).toEqual(["scanTileSums", "scanPartials", "scanTiles"]);
    const histogram = plan.cases.find((c) => c.id === "histogram")!;
    expect(histogram.steps.map((s) => [s.function.replace(/_.*/, ""), s.grid[0]])).toEqual([["clearBins", 1], ["histogram256Vec4", 1024]]);
    expect(histogram.buffers.map((b) => `${b.name}:${b.type}`)).toEqual(["x:u32", "hist:u32"]);
    expect(plan.cases.find((c) => c.id === "sum-onepass")).toMatchObject({ family: "sum" });
    writePlan(path.join(temp, "plan.json"), plan);
    const run = spawnSync("python3", [path.join(repoRoot, "bench", "torch-reference.py"), "--plan", path.join(temp, "plan.json"), "--dry-run"], { encoding: "utf8", timeout: 120_000 });
    expect(run.status, `${run.stdout}${run.stderr}`).toBe(0);
    expect(run.stdout).toContain(`dry run: ${plan.cases.length} cases, ${plan.cases.reduce((n, c) => n + c.steps.length, 0)} launches, every cubin and function found; references and checks tested on ${kernelCases.length} small cases with numpy`);

    // A plan naming a function the cubin lacks is refused.
    const broken = { ...plan, cases: [{ ...plan.cases[0]!, steps: [{ ...plan.cases[0]!.steps[0]!, function: "noSuchKernel" }] }] };
    writePlan(path.join(temp, "broken.json"), broken);
    const refused = spawnSync("python3", [path.join(repoRoot, "bench", "torch-reference.py"), "--plan", path.join(temp, "broken.json"), "--dry-run"], { encoding: "utf8", timeout: 120_000 });
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain("noSuchKernel is not in");
  });
});

describe("joining torch.json", () => {
  it("adds PyTorch's time and the speed ratio to the CUDA row of the same case and shape only", () => {
    const row = { kernel: "softmax", title: "row softmax", shape: [4096, 4096], label: "4096×4096", ms: 0.1 };
    const report: KernelBenchReport = { backend: "cuda", device: "GPU", date: "", rows: [{ ...row, backend: "cuda" }, { ...row, label: "65536×1024", shape: [65536, 1024], backend: "cuda" }] };
    const torch = { cases: [{ id: "softmax", label: "4096×4096", rounds: 30, ours: { ms: 0.1, check: { pass: true } }, torch: { ms: 0.15, gbps: 900, check: { pass: true } } }] };
    const joined = joinTorch(report, torch);
    expect(joined.rows[0]!.torch).toMatchObject({ ms: 0.15, oursMs: 0.1, rounds: 30, oursPass: true, torchPass: true });
    expect(joined.rows[0]!.torch!.speedup).toBeCloseTo(1.5, 12);
    expect(joined.rows[1]!.torch).toBeUndefined();
    const webgpu = joinTorch({ ...report, backend: "webgpu", rows: [{ ...row, backend: "webgpu" }] }, torch);
    expect(webgpu.rows[0]!.torch).toBeUndefined();
  });
});
