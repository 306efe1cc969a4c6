/** The module cache: keys change exactly when what decides the cubin changes; unusable directories degrade. */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ModuleCache, moduleCacheKey, type ModuleKey } from "./module-cache.ts";

const base: ModuleKey = { source: 'extern "C" __global__ void k() {}', options: ["--gpu-architecture=sm_90", "-lineinfo"], arch: "sm_90", driverVersion: 13000, compilerVersion: "13.0" };

describe("module cache keys", () => {
  it("are stable for the same inputs", () => {
    expect(moduleCacheKey(base)).toBe(moduleCacheKey({ ...base, options: [...base.options] }));
    expect(moduleCacheKey(base)).toMatch(/^[0-9a-f]{64}$/);
  });

  it("change with the source, options, architecture, driver and compiler, and only then", () => {
    const variants: ModuleKey[] = [
      { ...base, source: `${base.source} ` },
      { ...base, options: [...base.options, "--fmad=false"] },
      { ...base, arch: "sm_80" },
      { ...base, driverVersion: 13010 },
      { ...base, compilerVersion: "13.1" },
      // Fields must not run into each other: moving a character between two fields is a different key.
      { ...base, source: base.source + "-", options: base.options },
      { ...base, options: ["--gpu-architecture=sm_9", "0-lineinfo"] },
    ];
    const keys = new Set([moduleCacheKey(base), ...variants.map(moduleCacheKey)]);
    expect(keys.size).toBe(variants.length + 1);
  });
});

describe("module cache storage", () => {
  const elf = new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 1, 2, 3]);

  it("stores and finds a module", () => {
    const cache = new ModuleCache(fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-cache-")), () => {
      throw new Error("no warning expected");
    });
    expect(cache.get(base)).toBeUndefined();
    cache.put(base, elf);
    expect([...cache.get(base)!]).toEqual([...elf]);
    expect(cache.get({ ...base, arch: "sm_80" })).toBeUndefined();
  });

  it("treats a damaged entry as a miss", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-cache-"));
    const cache = new ModuleCache(dir);
    fs.writeFileSync(path.join(dir, `${moduleCacheKey(base)}.cubin`), "garbage");
    expect(cache.get(base)).toBeUndefined();
  });

  it("degrades to no cache, with one warning, when the directory cannot be written", () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-cache-")), "not-a-dir");
    fs.writeFileSync(file, "a file where the cache directory should be");
    const warnings: string[] = [];
    const cache = new ModuleCache(path.join(file, "cuda"), (message) => warnings.push(message));
    cache.put(base, elf);
    cache.put({ ...base, arch: "sm_80" }, elf);
    expect(cache.get(base)).toBeUndefined();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/is not usable \(write: .*\); compiling without a cache$/);
  });
});
