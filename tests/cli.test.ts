/**
 * The command line as scripts see it: exit statuses, what is written where, the manifest's contents, and
 * help text. Most cases run the CLI in-process through `runCli`; one runs the real `bin/tskernel.js`.
 */

import { execFileSync, spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { runCli } from "../cli/main.ts";
import { targetNames, type Manifest } from "../compiler/index.ts";
import { repoRoot } from "./golden-cases.ts";
import { nvccAvailable } from "./tools/nvcc.ts";

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return cliAt(undefined, ...args);
}

/** The CLI as a terminal `columns` wide shows it (undefined: a pipe). */
async function cliAt(columns: number | undefined, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await runCli(args, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), columns });
  return { code, stdout, stderr };
}

/** Every example builds for every target: kernels that use what WebGPU lacks declare `targets: ["cuda", "js"]`. */
const examples = fs.readdirSync(path.join(repoRoot, "examples")).filter((f) => f.endsWith(".ts")).map((f) => path.join(repoRoot, "examples", f));
/** What a build for WebGPU says it skipped: the examples' kernels that declare targets without wgsl. */
const skippedForWgsl = "skipped for wgsl (not in the kernels' targets): flashAttentionBackwardPre, flashAttentionBackwardKV, flashAttentionBackwardQ in examples/flash-attention-backward.ts; flashAttentionFold in examples/flash-attention-fold.ts; flashAttentionOverlap in examples/flash-attention-overlap.ts; flashAttentionPingPong in examples/flash-attention-pingpong.ts; flashAttentionPipelined in examples/flash-attention-pipelined.ts; flashAttentionRegP in examples/flash-attention-regp.ts; flashAttention in examples/flash-attention.ts; fp8gemmTiled in examples/fp8gemm-tiled.ts; fp8gemmWgmmaWs in examples/fp8gemm-wgmma-ws.ts; hgemmMmaGuarded in examples/hgemm-mma-guarded.ts; hgemmMma in examples/hgemm-mma.ts; hgemmTiledBf16, hgemmTiledF16 in examples/hgemm-tiled.ts; hgemmWgmmaSmall in examples/hgemm-wgmma-small.ts; hgemmWgmmaWs, hgemmWgmmaWsF16 in examples/hgemm-wgmma-ws.ts; scanLookbackSubgroups in examples/scan-lookback-subgroups.ts; scanLookback in examples/scan-lookback.ts; sgemmStreamK in examples/sgemm-streamk.ts; sgemmTensorCore in examples/sgemm-tensorcore.ts; sgemmWgmmaCluster in examples/sgemm-wgmma-cluster.ts; sgemmWgmmaWs in examples/sgemm-wgmma-ws.ts; sgemmWgmma in examples/sgemm-wgmma.ts\n";

function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-cli-"));
}

/** Kernel names declared in a file, read straight from the text (independently of the compiler). */
function declaredKernels(file: string): string[] {
  return [...fs.readFileSync(file, "utf8").matchAll(/export const (\w+) = kernel\(/g)].map((m) => m[1]!);
}

describe("tskernel check", () => {
  it("accepts every example for CUDA and WebGPU, skipping for WebGPU the kernels whose targets leave it out", async () => {
    const result = await cli("check", ...examples);
    expect(result.stderr).not.toMatch(/error\[/);
    expect(result.code).toBe(0);
    const [summary, ...skipped] = result.stdout.split(/(?<=\n)/);
    expect(summary).toMatch(new RegExp(`^ok: \\d+ kernel specializations in ${examples.length} file\\(s\\)\n$`));
    expect(skipped).toEqual([skippedForWgsl]);
    // For the targets those kernels declare, nothing is skipped and nothing is said.
    const declared = await cli("check", path.join(repoRoot, "examples", "scan-lookback.ts"), path.join(repoRoot, "examples", "sgemm-tensorcore.ts"), "--target", "cuda,js");
    expect(declared.code).toBe(0);
    expect(declared.stdout).toMatch(/^ok: \d+ kernel specializations in 2 file\(s\)\n$/);
  });

  it("still refuses matrix operations and threadFence() for WebGPU in a kernel that declares no targets, suggesting the option", async () => {
    const dir = tempDir();
    for (const [example, code, message] of [
      ["sgemm-tensorcore.ts", "TSK3048", "error[TSK3048]: WebGPU has no matrix operations, and kernel 'sgemmTensorCore' uses loadFragment()"],
      ["scan-lookback.ts", "TSK3050", "error[TSK3050]: threadFence() has no equivalent on WebGPU: it has no device-scope memory fence"],
    ] as const) {
      const text = fs.readFileSync(path.join(repoRoot, "examples", example), "utf8");
      const undeclared = text.replace(/,? ?targets: \["cuda", "js"\],?/, "");
      expect(undeclared, `${example} declares its targets`).not.toBe(text);
      const file = path.join(dir, example);
      fs.writeFileSync(file, undeclared);
      const refused = await cli("check", file, "--target", "wgsl");
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(message);
      expect([...refused.stderr.matchAll(/error\[(TSK\d+)\]/g)].map((m) => m[1])).toContain(code);
      expect(refused.stderr).toContain('= note: declare the targets the kernel is for in its options, `kernel({ …, targets: ["cuda", "js"] }, …)`: a build for WebGPU then skips it');
    }
  });

  it("exits 1 and prints a located diagnostic for a kernel with an error", async () => {
    const file = path.join(tempDir(), "divergent.ts");
    fs.writeFileSync(
      file,
      [
        'import { kernel, syncThreads, threadIdx } from "tskernel";',
        "export const k = kernel((out: Float32Array) => {",
        "  if (threadIdx.x < 16) {",
        "    syncThreads();",
        "  }",
        "  out[threadIdx.x] = 1;",
        "});",
        "",
      ].join("\n"),
    );
    const result = await cli("check", file);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error\[TSK3001\]: syncThreads\(\) is reached in non-uniform control flow\n\s+--> .*divergent\.ts:4:5\n/);
    expect(result.stderr).toMatch(/divergent\.ts:3:7\n/);
    expect(result.stderr).toContain("1 error, 0 warnings");
  });

  it("reports a missing file as TSK4001 and exits 1", async () => {
    const result = await cli("check", path.join(repoRoot, "no-such-kernel.ts"));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("error[TSK4001]: cannot use");
  });

  it("rejects an empty target list with TSK4006", async () => {
    const result = await cli("check", "--target", " , ", examples[0]!);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("error[TSK4006]: no targets given; targets are cuda, wgsl, js");
  });

  it("rejects an unknown target with TSK4002", async () => {
    const result = await cli("check", "--target", "cuda,metal", examples[0]!);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("error[TSK4002]: unknown target 'metal'; targets are cuda, wgsl");
  });
});

describe("tskernel build", () => {
  it("writes .cu, .cuh, .wgsl per example and a manifest listing every example kernel", async () => {
    const out = tempDir();
    const result = await cli("build", ...examples, "--target", "cuda,wgsl", "--out", out);
    expect(result.stderr).not.toMatch(/error\[/);
    expect(result.code).toBe(0);
    const manifest = JSON.parse(fs.readFileSync(path.join(out, "manifest.json"), "utf8")) as Manifest;
    expect(manifest.version).toBe(1);
    const listed = new Set(manifest.kernels.map((k) => `${k.source}#${k.name}`));
    for (const file of examples) {
      const names = declaredKernels(file);
      expect(names.length, `${file} declares kernels`).toBeGreaterThan(0);
      for (const name of names) expect(listed.has(`examples/${path.basename(file)}#${name}`), `${name} in manifest`).toBe(true);
    }
    expect(result.stdout.endsWith(skippedForWgsl)).toBe(true);
    const declaring = manifest.kernels.filter((k) => k.declaredTargets);
    expect([...new Set(declaring.map((k) => k.name))].sort()).toEqual(["flashAttention", "flashAttentionBackwardKV", "flashAttentionBackwardPre", "flashAttentionBackwardQ", "flashAttentionFold", "flashAttentionOverlap", "flashAttentionPingPong", "flashAttentionPipelined", "flashAttentionRegP", "fp8gemmTiled", "fp8gemmWgmmaWs", "hgemmMma", "hgemmMmaGuarded", "hgemmTiledBf16", "hgemmTiledF16", "hgemmWgmmaSmall", "hgemmWgmmaWs", "hgemmWgmmaWsF16", "scanLookback", "scanLookbackSubgroups", "sgemmStreamK", "sgemmTensorCore", "sgemmWgmma", "sgemmWgmmaCluster", "sgemmWgmmaWs"]);
    for (const kernel of manifest.kernels) {
      // Built for the build's targets that the kernel's `targets` (if any) name, with outputs for those only.
      const expected = ["cuda", "wgsl"].filter((t) => !kernel.declaredTargets || (kernel.declaredTargets as readonly string[]).includes(t));
      expect(kernel.builtFor, kernel.entryName).toEqual(expected);
      expect(Object.keys(kernel.outputs).sort(), kernel.entryName).toEqual([...expected].sort());
      const cuda = kernel.outputs.cuda!;
      expect(fs.readFileSync(path.join(out, cuda.file), "utf8")).toContain(`extern "C" __global__ void`);
      expect(fs.readFileSync(path.join(out, cuda.file), "utf8")).toContain(` ${cuda.function}(`);
      expect(fs.readFileSync(path.join(out, cuda.header), "utf8")).toContain(`launch_${cuda.function}(`);
      const wgsl = kernel.outputs.wgsl;
      if (!wgsl) continue;
      expect(fs.readFileSync(path.join(out, wgsl.file), "utf8")).toContain(`fn ${wgsl.entryPoint}(`);
      // Every run-time parameter appears in the WGSL layout exactly once, in order.
      const runtime = kernel.params.filter((p) => p.kind !== "const").map((p) => p.name);
      const bound = [...wgsl.layout.bindings.map((b) => b.param), ...(wgsl.layout.uniform?.fields.map((f) => f.param) ?? [])];
      expect(bound.sort()).toEqual([...runtime].sort());
      if (kernel.block) expect(wgsl.workgroupSizeOverrides).toBeNull();
      else expect(wgsl.workgroupSizeOverrides).toHaveLength(3);
    }
  });

  it("builds the examples for WebGPU alone: kernels whose targets leave it out are skipped, and a file left with none gets no file", async () => {
    const out = tempDir();
    const result = await cli("build", path.join(repoRoot, "examples"), "--target", "wgsl", "--out", out);
    expect(result.stderr).not.toMatch(/error\[|warning\[TSK30(48|50)/);
    expect(result.code).toBe(0);
    expect(result.stdout.endsWith(skippedForWgsl)).toBe(true);
    const written = fs.readdirSync(out);
    // sgemm-streamk.ts, sgemm-tensorcore.ts, sgemm-wgmma.ts, sgemm-wgmma-ws.ts and sgemm-wgmma-cluster.ts have one kernel each, skipped;
    // the scan-lookback files keep their clearing kernels, which run anywhere.
    expect(written.filter((f) => f.startsWith("sgemm-streamk") || f.startsWith("sgemm-tensorcore") || f.startsWith("sgemm-wgmma"))).toEqual([]);
    expect(written.filter((f) => f.startsWith("scan-lookback")).sort()).toEqual(["scan-lookback-subgroups.wgsl", "scan-lookback-subgroups.wgsl.map.json", "scan-lookback.wgsl", "scan-lookback.wgsl.map.json"]);
    const wgsl = fs.readFileSync(path.join(out, "scan-lookback.wgsl"), "utf8");
    expect(wgsl).toContain("fn clearScanState(");
    expect(wgsl).not.toMatch(/scanLookback/);
    // The manifest still lists the skipped kernels, built for nothing, so that a runtime can say why.
    const manifest = JSON.parse(fs.readFileSync(path.join(out, "manifest.json"), "utf8")) as Manifest;
    const tensorCore = manifest.kernels.filter((k) => k.name === "sgemmTensorCore");
    expect(tensorCore.length).toBeGreaterThan(1);
    for (const kernel of tensorCore) {
      expect(kernel.declaredTargets).toEqual(["cuda", "js"]);
      expect(kernel.builtFor).toEqual([]);
      expect(kernel.outputs).toEqual({});
    }
    const clear = manifest.kernels.find((k) => k.name === "clearScanState")!;
    expect(clear.declaredTargets).toBeUndefined();
    expect(clear.builtFor).toEqual(["wgsl"]);
  });

  it("records shared-memory bytes and block shape of a specialization", async () => {
    const out = tempDir();
    const file = path.join(repoRoot, "examples", "matmul-tiled.ts");
    expect((await cli("build", file, "--out", out)).code).toBe(0);
    const manifest = JSON.parse(fs.readFileSync(path.join(out, "manifest.json"), "utf8")) as Manifest;
    const tiled = manifest.kernels.find((k) => k.name === "matmulTiled")!;
    const tile = tiled.specialization.TILE as number;
    expect(tile).toBe(16);
    expect(tiled.block).toEqual([tile, tile, 1]);
    expect(tiled.sharedBytes).toBe(2 * tile * tile * 4);
    expect(tiled.params.map((p) => `${p.name}:${p.kind}`)).toEqual(["C:buffer", "A:buffer", "B:buffer", "m:scalar", "n:scalar", "k:scalar", "TILE:const"]);
  });

  it("--define picks the specialization values", async () => {
    const out = tempDir();
    const file = path.join(repoRoot, "examples", "matmul-cuda-samples.ts");
    const result = await cli("build", file, "--target", "cuda", "--define", "BLOCK_SIZE=8", "--out", out);
    expect(result.code).toBe(0);
    const manifest = JSON.parse(fs.readFileSync(path.join(out, "manifest.json"), "utf8")) as Manifest;
    expect(manifest.kernels.map((k) => k.specialization)).toEqual([{ BLOCK_SIZE: 8 }]);
    expect(manifest.kernels[0]!.block).toEqual([8, 8, 1]);
    expect(manifest.kernels[0]!.outputs.wgsl).toBeUndefined();
    expect(fs.readFileSync(path.join(out, "matmul-cuda-samples.cu"), "utf8")).toContain("__shared__ float");
  });

  it("an --out that is a file is a diagnostic, not a crash", async () => {
    const file = path.join(tempDir(), "not-a-dir");
    fs.writeFileSync(file, "");
    const result = await cli("build", path.join(repoRoot, "examples", "matmul-naive.ts"), "--out", file);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`error[TSK4001]: cannot use ${file}: it exists and is not a directory`);
  });

  it("rejects a malformed or unknown --define and writes nothing", async () => {
    const out = path.join(tempDir(), "never");
    const malformed = await cli("build", examples[0]!, "--define", "BLOCK_SIZE", "--out", out);
    expect(malformed.code).toBe(1);
    expect(malformed.stderr).toContain("error[TSK4003]");
    const unknown = await cli("build", path.join(repoRoot, "examples", "matmul-naive.ts"), "--define", "NOPE=1", "--out", out);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("error[TSK4005]");
    expect(fs.existsSync(out)).toBe(false);
  });

  it.skipIf(!nvccAvailable())(`--cubin builds a cubin per file with nvcc and records it in the manifest${nvccAvailable() ? "" : " (skipped: no nvcc)"}`, async () => {
    const out = tempDir();
    const result = await cli("build", path.join(repoRoot, "examples", "matmul-tiled.ts"), "--target", "cuda", "--cubin", "--arch", "sm_90", "--out", out);
    expect(result.code, result.stderr).toBe(0);
    const manifest = JSON.parse(fs.readFileSync(path.join(out, "manifest.json"), "utf8")) as Manifest;
    const cubin = manifest.kernels[0]!.outputs.cuda!.cubin!;
    expect(cubin).toEqual({ file: "matmul-tiled.sm_90.cubin", arch: "sm_90" });
    const bytes = fs.readFileSync(path.join(out, cubin.file));
    expect([...bytes.subarray(0, 4)]).toEqual([0x7f, 0x45, 0x4c, 0x46]); // an ELF object
  });

  it("--cubin reports a missing nvcc (TSK4007) and a failing one (TSK4008)", async () => {
    const saved = process.env.NVCC;
    try {
      process.env.NVCC = path.join(tempDir(), "no-such-nvcc");
      const missing = await cli("build", path.join(repoRoot, "examples", "matmul-naive.ts"), "--target", "cuda", "--cubin", "--out", tempDir());
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/error\[TSK4007\]: --cubin needs nvcc, which could not be run: .*no-such-nvcc/);
      process.env.NVCC = "false"; // exits 1 without output
      const failing = await cli("build", path.join(repoRoot, "examples", "matmul-naive.ts"), "--target", "cuda", "--cubin", "--out", tempDir());
      expect(failing.code).toBe(1);
      expect(failing.stderr).toContain("error[TSK4008]: nvcc failed on matmul-naive.cu:");
    } finally {
      if (saved === undefined) delete process.env.NVCC;
      else process.env.NVCC = saved;
    }
  });

  it("--cubin without the cuda target is an error", async () => {
    const result = await cli("build", examples[0]!, "--target", "wgsl", "--cubin", "--out", tempDir());
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("error[TSK4009]: --cubin needs --target cuda");
  });

  it("explains every command in --help, with an example", async () => {
    for (const command of [["check"], ["build"], ["report"], ["demo"], ["bench"], ["bench", "matmul"], ["bench", "kernels"], ["tune"], ["tune", "matmul"], []]) {
      const help = await cli(...command, "--help");
      expect(help.code).toBe(0);
      expect(help.stdout).toContain(`Usage: tskernel ${command.join(" ")}`.trimEnd());
      expect(help.stdout).toMatch(/Example/);
    }
    // Help wraps to the terminal's width: compared with the whitespace folded.
    const folded = async (...command: string[]) => (await cli(...command, "--help")).stdout.replace(/\s+/g, " ");
    for (const command of ["check", "build"]) {
      const help = await folded(command);
      expect(help).toContain('kernel files, directories (their TypeScript files that import from "tskernel") or quoted globs');
      expect(help).toMatch(/\$ tskernel \w+ 'src\/\*\*\/\*\.kernel\.ts'/);
    }
    expect(await folded("build")).toContain("--watch build, then build again whenever a kernel file changes, printing diagnostics, until Ctrl-C");
    // The help names the compiler's targets without loading the compiler: the two lists must agree.
    expect(await folded("build")).toContain(`targets to generate, comma-separated (${targetNames.join(", ")}, torch)`);
  });
});

describe("tskernel demo", () => {
  it("fits its table to the terminal's width, wrapping the long rungs' names, and writes them whole with --json", async () => {
    const json = path.join(tempDir(), "demo.json");
    const narrow = await cliAt(80, "demo", "--backend", "cpu", "--size", "8", "--json", json);
    expect(narrow.code, narrow.stderr).toBe(0);
    const lines = narrow.stdout.trimEnd().split("\n");
    expect(lines.at(-1)).toMatch(/^\d+ passed, 0 failed, \d+ skipped$/);
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(80);
    const written = JSON.parse(fs.readFileSync(json, "utf8")) as { backend: string; size: number; rows: { variant: string; constants?: Record<string, number>; status: string }[] };
    expect(written.backend).toBe("cpu");
    expect(written.size).toBe(8);
    const multistage = written.rows.find((row) => row.variant.startsWith("sgemm-multistage ("))!;
    expect(multistage.variant).toBe(`sgemm-multistage (${Object.entries(multistage.constants!).map(([name, value]) => `${name} ${value}`).join(", ")})`);
    expect(multistage.variant.length).toBeGreaterThan(80);
    // On a pipe (no width) every row is one line, as before.
    const piped = await cliAt(undefined, "demo", "--backend", "cpu", "--size", "8");
    const rows = piped.stdout.trimEnd().split("\n").slice(2, -1);
    expect(rows.map((row) => row.split(/\s{2,}/)[0])).toEqual(written.rows.map((row) => row.variant));
  });
});

describe("tskernel tune matmul", () => {
  it("tunes on the CPU, prints progress and a table, and writes the store and the JSON report", async () => {
    const store = tempDir();
    const json = path.join(tempDir(), "tune.json");
    const result = await cli("tune", "matmul", "--backend", "cpu", "--sizes", "64", "--rungs", "sgemm-1d-blocktiling", "--runs", "1", "--max-candidates", "3", "--store", store, "--json", json);
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(fs.readFileSync(json, "utf8")) as import("../runtime/matmul/tune.ts").TuneReport;
    expect(report.backend).toBe("cpu");
    // The 1-D kernel's defaults first, then the best of each tile area in turn (128×128, which 64 does not
    // divide, then 64×64); the 2048-thread setting is pruned.
    expect(report.candidates.map((c) => `${c.status} ${c.n ?? "-"} ${JSON.stringify(c.constants)}`)).toEqual([
      'pruned - {"BM":128,"BN":128,"BK":16,"TM":8}',
      'ok 64 {"BM":64,"BN":64,"BK":8,"TM":8}',
      'ok 64 {"BM":64,"BN":64,"BK":4,"TM":16}',
    ]);
    expect(result.stderr).toContain("  pruned sgemm-1d-blocktiling BM=128 BN=128 BK=16 TM=8: 2048 threads per block; the device allows 1024\n");
    expect(result.stderr).toContain("n=64: 1 candidate(s) need tile multiples that 64 is not, not measured\n");
    expect(result.stderr).toMatch(/\n\[1\/2\] n=64 sgemm-1d-blocktiling BM=64 BN=64 BK=8 TM=8: [\d.]+ ms, [\d.]+ GFLOP\/s\n/);
    expect(result.stderr).toMatch(/\n\[2\/2\] n=64 sgemm-1d-blocktiling BM=64 BN=64 BK=4 TM=16: /);
    const files = fs.readdirSync(store);
    expect(files).toHaveLength(1);
    expect(report.storeFile).toBe(path.join(store, files[0]!));
    const stored = JSON.parse(fs.readFileSync(path.join(store, files[0]!), "utf8"));
    expect(stored.key).toEqual({ backend: "cpu", device: report.device });
    expect(stored.classes["64"].map((e: { constants: { BK: number } }) => e.constants).sort((a: { BK: number }, b: { BK: number }) => a.BK - b.BK)).toEqual([
      { BM: 64, BN: 64, BK: 4, TM: 16 },
      { BM: 64, BN: 64, BK: 8, TM: 8 },
    ]);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^ n {2}class {2}rung +constants +time \(ms\) +GFLOP\/s +default GFLOP\/s +gain +checked +wrong$/);
    expect(lines[2]).toMatch(/^64 +64 {2}sgemm-1d-blocktiling \* {2}BM=64 BN=64 BK=\d+ TM=\d+ +[\d.]+ +[\d.]+ +[\d.]+ +[\d.]+x +2 +0$/);
    expect(lines[3]).toBe(`2 verified, 0 wrong (discarded), 1 pruned, 0 failed; stored in ${report.storeFile}`);
  });

  it("refuses an unknown rung and an unknown backend", async () => {
    const rung = await cli("tune", "matmul", "--backend", "cpu", "--rungs", "sgemm-2d-blocktiling,sgemm-9d");
    expect(rung.code).toBe(1);
    expect(rung.stderr).toBe("tskernel: unknown rung(s) 'sgemm-9d'; the tunable rungs are hgemm-wgmma-ws, hgemm-tiled, hgemm-wgmma-ws-f16, hgemm-tiled-f16, sgemm-wgmma-cluster, sgemm-wgmma-ws, sgemm-wgmma, sgemm-tensorcore, sgemm-multistage, sgemm-warptiling-double-buffered, sgemm-warptiling, sgemm-vectorized, sgemm-2d-transposed-a, sgemm-2d-blocktiling, sgemm-1d-blocktiling, sgemm-multistage-guarded, sgemm-warptiling-guarded, sgemm-register-staged, sgemm-2d-guarded\n");
    const bench = await cli("bench", "matmul", "--backend", "cpu,metal");
    expect(bench.code).toBe(1);
    expect(bench.stderr).toContain("option '--backend <list>' argument 'cpu,metal' is invalid. expected auto, cpu, webgpu, cuda, or several of them comma-separated");
  });

  it("sets the CPU's subgroup size with --subgroup-size, and refuses sizes that are not powers of two up to 128", async () => {
    const demo = await cli("demo", "--backend", "cpu", "--subgroup-size", "4", "--size", "8");
    expect(demo.code).toBe(0);
    expect(demo.stderr).toMatch(/^device: CPU \(.*, JavaScript, one thread, subgroups of 4\)$/m);
    for (const bad of ["3", "256", "0", "4.5"]) {
      const refused = await cli("demo", "--backend", "cpu", "--subgroup-size", bad);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`option '--subgroup-size <n>' argument '${bad}' is invalid. expected a power of two from 1 to 128`);
    }
  });
});

describe("bin/tskernel.js", () => {
  it("runs the demo on the CPU with worker threads, every variant passing, and refuses 0 workers", () => {
    const bin = path.join(repoRoot, "bin", "tskernel.js");
    const out = execFileSync(process.execPath, [bin, "demo", "--backend", "cpu", "--workers", "2", "--size", "40"], { encoding: "utf8", stdio: "pipe" });
    expect(out).toMatch(/^24 passed, 0 failed, 0 skipped$/m);
    const refused = spawnSync(process.execPath, [bin, "demo", "--backend", "cpu", "--workers", "0"], { encoding: "utf8" });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain("option '--workers <n>' argument '0' is invalid. expected a positive integer");
  });

  it("stops quietly with status 141 when the reader of its output has gone (`tskernel --help | head -3`)", async () => {
    const bin = path.join(repoRoot, "bin", "tskernel.js");
    // The read end is closed before Node has started, so the first write fails with EPIPE every time.
    const child = spawn(process.execPath, [bin, "--help"], { stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.destroy();
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const status = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(stderr).toBe("");
    expect(status).toBe(141);
  });

  it("loads neither the compiler nor the runtime for --help and --version, and loads them for the commands that need them", () => {
    const bin = path.join(repoRoot, "bin", "tskernel.js");
    const loaded = (...args: string[]) => {
      // A module hook that writes down every module the process resolves.
      const dir = tempDir();
      const log = path.join(dir, "modules.txt");
      const hooks = path.join(dir, "hooks.mjs");
      fs.writeFileSync(hooks, `import { appendFileSync } from "node:fs";\nexport async function resolve(specifier, context, next) {\n  const result = await next(specifier, context);\n  appendFileSync(${JSON.stringify(log)}, result.url + "\\n");\n  return result;\n}\n`);
      const register = `import { register } from "node:module"; register(${JSON.stringify(pathToFileURL(hooks).href)});`;
      const run = spawnSync(process.execPath, ["--import", `data:text/javascript,${encodeURIComponent(register)}`, bin, ...args], { encoding: "utf8" });
      expect(run.status, run.stderr).toBe(0);
      return fs.readFileSync(log, "utf8").trim().split("\n");
    };
    const heavy = (urls: string[]) => urls.filter((url) => /\/dist\/(compiler|runtime)\/|\/ts-morph\//.test(url));
    expect(heavy(loaded("--version"))).toEqual([]);
    expect(heavy(loaded("--help"))).toEqual([]);
    expect(heavy(loaded("build", "--help"))).toEqual([]);
    const check = loaded("check", path.join(repoRoot, "examples", "matmul-naive.ts"));
    expect(check.some((url) => url.includes("/ts-morph/"))).toBe(true);
    expect(check.some((url) => url.endsWith("/dist/compiler/index.js"))).toBe(true);
    expect(check.filter((url) => url.includes("/dist/runtime/"))).toEqual([]);
  });

  it("runs the built CLI as a process", () => {
    const bin = path.join(repoRoot, "bin", "tskernel.js");
    if (!fs.existsSync(path.join(repoRoot, "dist", "cli", "main.js"))) {
      throw new Error("dist/ is missing: run `npm run build` first (npm test does)");
    }
    const out = execFileSync(process.execPath, [bin, "check", path.join(repoRoot, "examples", "matmul-naive.ts")], { encoding: "utf8" });
    expect(out).toMatch(/^ok: 1 kernel specializations in 1 file\(s\)/);
  });
});
