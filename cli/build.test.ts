/**
 * `tskernel build` where users meet it: a directory or a glob builds what the same files listed one by one
 * build; a bad `--out` is an error naming the path (and returns: /proc/x used to hang Node's recursive mkdir
 * forever, so that case runs as a process with a timeout); nothing outside `--out` is written and nothing
 * the user had in it is deleted; `--watch` builds again after a real file change, prints the diagnostics of
 * a broken edit, keeps the last good outputs, picks up a new kernel file and stops on Ctrl-C (SIGINT), and
 * says it is watching only once it is (an edit made the moment that line appears is rebuilt).
 * The process cases run the built CLI (bin/tskernel.js, from dist/: `npm test` builds it first).
 */

import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { packageRoot, type Manifest } from "../compiler/index.ts";
import { watchBuild } from "./build.ts";
import { runCli } from "./main.ts";

const root = packageRoot();
const bin = path.join(root, "bin", "tskernel.js");
const examplesDir = path.join(root, "examples");

/** The kernel files a directory stands for: every .ts under it that imports "tskernel" (examples/vite-app/src has some). */
async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await runCli(args, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
  return { code, stdout, stderr };
}

function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-build-"));
}

const readManifest = (dir: string) => JSON.parse(fs.readFileSync(path.join(dir, "manifest.json"), "utf8")) as Manifest;

/** Every file under a folder with its bytes and modification time. */
function snapshot(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (current: string) => {
    for (const entry of fs.readdirSync(current, { withFileTypes: true })) {
      const file = path.join(current, entry.name);
      if (entry.isDirectory()) {
        files.set(`${path.relative(dir, file)}/`, "(folder)");
        walk(file);
      } else files.set(path.relative(dir, file), `${fs.readFileSync(file, "base64")}@${fs.statSync(file).mtimeMs}`);
    }
  };
  walk(dir);
  return files;
}

/**
 * The example kernel files in the order a directory argument finds them: each folder's entries sorted by name,
 * subfolders (examples/cmake-app/kernels) entered where they sort.
 */
function exampleKernelFiles(dir = examplesDir): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .flatMap((entry) => {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) return exampleKernelFiles(file);
      return entry.name.endsWith(".ts") && fs.readFileSync(file, "utf8").includes('from "tskernel"') ? [file] : [];
    });
}

function kernelSource(name: string, value: number): string {
  return `import { kernel, threadIdx } from "tskernel";\nexport const ${name} = kernel({ block: [4] }, (out: Float32Array) => {\n  out[threadIdx.x] = ${value};\n});\n`;
}

describe("tskernel build: directories and globs", () => {
  it("builds a directory and a glob as it builds the same files listed one by one", async () => {
    const listed = tempDir();
    const files = exampleKernelFiles();
    expect(files).toContain(path.join(examplesDir, "cmake-app", "kernels", "gemm.ts")); // a folder inside is entered
    expect(files.some((f) => f.includes(`${path.sep}vite-app${path.sep}`))).toBe(true);
    // JS, which every example builds for.
    expect((await cli("build", ...files, "--target", "js", "--out", listed)).code).toBe(0);
    const fromDir = tempDir();
    expect((await cli("build", `${examplesDir}${path.sep}`, "--target", "js", "--out", fromDir)).code).toBe(0);
    const fromGlob = tempDir();
    expect((await cli("build", path.join(examplesDir, "*.ts"), "--target", "js", "--out", fromGlob)).code).toBe(0);
    const kernels = (dir: string) => readManifest(dir).kernels.map((k) => `${k.source}#${k.entryName}`);
    expect(kernels(listed).length).toBeGreaterThan(30);
    expect(kernels(fromDir)).toEqual(kernels(listed));
    // The glob is one level deep: the top-level files only.
    expect(kernels(fromGlob)).toEqual(kernels(listed).filter((k) => !k.slice("examples/".length).includes("/")));
    for (const file of fs.readdirSync(listed)) expect(fs.readFileSync(path.join(fromDir, file), "utf8"), file).toBe(fs.readFileSync(path.join(listed, file), "utf8"));
  });

  it("check counts the files a directory stands for, and an empty directory is TSK4010", async () => {
    const ok = await cli("check", examplesDir, "--target", "cuda,wgsl,js");
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(new RegExp(`in ${exampleKernelFiles().length} file\\(s\\)`));
    const empty = await cli("check", tempDir());
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain("error[TSK4010]: no kernel files in");
  });
});

describe("tskernel build: --out", () => {
  it.skipIf(process.platform !== "linux")("an --out that cannot be created (/proc/x) is an error naming it, and the command returns", () => {
    // As a process with a timeout: the old recursive mkdir spun forever at 100 % CPU here.
    for (const [out, problem] of [
      ["/proc/x", "cannot create the directory /proc/x (ENOENT: no such file or directory)"],
      ["/proc/version/x", "/proc/version exists and is not a directory"],
    ] as const) {
      const run = spawnSync(process.execPath, [bin, "build", path.join(examplesDir, "elementwise.ts"), "--out", out], { encoding: "utf8", timeout: 60_000 });
      expect(run.signal, `tskernel build --out ${out} did not return within a minute`).toBeNull();
      expect(run.status).toBe(1);
      expect(run.stderr).toContain(`error[TSK4001]: cannot use ${out}: ${problem}`);
    }
  });

  it("an --out below a file names the file; a file that cannot be written is named too", async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, "file"), "");
    const below = await cli("build", path.join(examplesDir, "elementwise.ts"), "--out", path.join(dir, "file", "kernels"));
    expect(below.code).toBe(1);
    expect(below.stderr).toContain(`error[TSK4001]: cannot use ${path.join(dir, "file", "kernels")}: ${path.join(dir, "file")} exists and is not a directory`);
    const out = path.join(dir, "out");
    fs.mkdirSync(path.join(out, "elementwise.wgsl"), { recursive: true });
    const blocked = await cli("build", path.join(examplesDir, "elementwise.ts"), "--target", "wgsl", "--out", out);
    expect(blocked.code).toBe(1);
    expect(blocked.stderr).toContain(`error[TSK4001]: cannot use ${path.join(out, "elementwise.wgsl")}: cannot write it (EISDIR`);
  });

  it("writes nothing outside --out and deletes nothing the user had in it", async () => {
    const parent = tempDir();
    fs.writeFileSync(path.join(parent, "sibling.txt"), "mine");
    const out = path.join(parent, "kernels");
    fs.mkdirSync(path.join(out, "notes"), { recursive: true });
    fs.writeFileSync(path.join(out, "README.md"), "user file");
    fs.writeFileSync(path.join(out, "notes", "old.cu"), "user kernel");
    const before = snapshot(parent);
    const file = path.join(examplesDir, "matmul-tiled.ts");
    expect((await cli("build", file, "--target", "cuda,wgsl,js", "--out", out)).code).toBe(0);
    const after = snapshot(parent);
    // Every file that was there is there, unchanged; the new ones are the build's, all inside --out.
    for (const [name, content] of before) expect(after.get(name), name).toBe(content);
    const added = [...after.keys()].filter((name) => !before.has(name)).sort();
    expect(added).toEqual(["manifest.json", "matmul-tiled.cu", "matmul-tiled.cuh", "matmul-tiled.js", "matmul-tiled.wgsl", "matmul-tiled.wgsl.map.json"].map((f) => path.join("kernels", f)).sort());

    // A build with an error writes nothing at all, and a new --out is made with only its own folders.
    const broken = path.join(parent, "broken.ts");
    fs.writeFileSync(broken, kernelSource("k", 1).replace("= 1;", "= missing;"));
    const failed = await cli("build", broken, "--out", out);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain("nothing was written");
    const deeper = path.join(parent, "a", "b", "c");
    expect((await cli("build", file, "--target", "wgsl", "--out", deeper)).code).toBe(0);
    const final = snapshot(parent);
    const newer = [...final.keys()].filter((name) => !after.has(name)).sort();
    expect(newer).toEqual(["a/", "a/b/", "a/b/c/", "a/b/c/manifest.json", "a/b/c/matmul-tiled.wgsl", "a/b/c/matmul-tiled.wgsl.map.json", "broken.ts"].map((f) => f.split("/").join(path.sep)));
  });
});

describe("tskernel build --watch", () => {
  it("says it is watching only once its watchers are in place: an edit made the moment it says so is rebuilt", async () => {
    const dir = tempDir();
    const kernels = path.join(dir, "kernels");
    const out = path.join(dir, "out");
    fs.mkdirSync(kernels);
    const file = path.join(kernels, "first.ts");
    fs.writeFileSync(file, kernelSource("first", 1));
    let stderr = "";
    let stopWatching!: () => void;
    const stop = new Promise<void>((resolve) => (stopWatching = resolve));
    const finishedBuilds = () => (stderr.match(/\] (built|build failed); watching for changes/g) ?? []).length;
    const io = {
      stdout: () => {},
      stderr: (text: string) => {
        stderr += text;
        // The edit lands in the same tick as the line, before the CLI does anything else: with the line
        // printed before the watchers started, this edit was never seen.
        if (finishedBuilds() === 1 && text.includes("watching for changes")) fs.writeFileSync(file, kernelSource("first", 2) + kernelSource("second", 3).split("\n").slice(1).join("\n"));
      },
    };
    const watching = watchBuild([kernels], { out, targets: ["js"], defines: new Map(), lineDirectives: true }, io, stop);
    const deadline = Date.now() + 30_000;
    while (finishedBuilds() < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    stopWatching();
    expect(await watching).toBe(0);
    expect(finishedBuilds(), stderr).toBe(2);
    expect(stderr).toMatch(/first\.ts changed: building again[\s\S]*\] built; watching/);
    expect(readManifest(out).kernels.map((k) => k.name).sort()).toEqual(["first", "second"]);
  });

  it("builds again after a change, reports a broken edit, keeps the last outputs, finds a new file, and stops on SIGINT", async () => {
    const dir = tempDir();
    const kernels = path.join(dir, "kernels");
    const out = path.join(dir, "out");
    fs.mkdirSync(kernels);
    fs.writeFileSync(path.join(kernels, "first.ts"), kernelSource("first", 1));
    const child = spawn(process.execPath, [bin, "build", kernels, "--target", "js", "--out", out, "--watch"], { stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    let stdout = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    /** Waits until stderr has `count` lines saying a build finished; returns the text since the previous wait. */
    let seen = 0;
    const builds = async (count: number): Promise<string> => {
      const deadline = Date.now() + 60_000;
      while ((stderr.match(/\] (built|build failed); watching for changes/g) ?? []).length < count) {
        if (Date.now() > deadline) throw new Error(`no build ${count} within a minute; stderr:\n${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const text = stderr.slice(seen);
      seen = stderr.length;
      return text;
    };
    const kernelNames = () => readManifest(out).kernels.map((k) => k.name).sort();
    try {
      expect(await builds(1)).toContain("] built; watching for changes");
      expect(kernelNames()).toEqual(["first"]);

      // A real edit: the file gains a second kernel.
      fs.writeFileSync(path.join(kernels, "first.ts"), kernelSource("first", 2) + kernelSource("second", 3).split("\n").slice(1).join("\n"));
      expect(await builds(2)).toMatch(/first\.ts changed: building again[\s\S]*\] built;/);
      expect(kernelNames()).toEqual(["first", "second"]);
      expect(fs.readFileSync(path.join(out, "first.js"), "utf8")).toContain("second");

      // A broken edit: its diagnostic is printed, nothing is written, the last outputs stay.
      fs.writeFileSync(path.join(kernels, "first.ts"), kernelSource("first", 4).replace("= 4;", "= undefinedName;"));
      const failed = await builds(3);
      expect(failed).toMatch(/error\[TSK\d{4}\][^\n]*\n\s+--> .*first\.ts:3:/);
      expect(failed).toContain("nothing was written");
      expect(failed).toContain("] build failed; watching for changes");
      expect(kernelNames()).toEqual(["first", "second"]);

      // Fixed, and a new kernel file in a new folder under the watched directory.
      fs.writeFileSync(path.join(kernels, "first.ts"), kernelSource("first", 5));
      fs.mkdirSync(path.join(kernels, "more"));
      fs.writeFileSync(path.join(kernels, "more", "third.ts"), kernelSource("third", 6));
      let text = await builds(4);
      // The two writes may land in one build or two; wait for the one that sees both.
      while (!kernelNames().includes("third")) text += await builds((stderr.match(/\] (built|build failed); watching/g) ?? []).length + 1);
      expect(text).toContain("] built;");
      expect(kernelNames()).toEqual(["first", "third"]);
      expect(stdout).toMatch(/wrote 2 files and manifest\.json \(2 kernel specializations\)/);
    } finally {
      child.kill("SIGINT");
    }
    expect(await exited).toBe(0);
  });
});
