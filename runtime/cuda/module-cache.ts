/**
 * The disk cache of compiled CUDA modules. A cubin is keyed by what determines it: the generated source,
 * the NVRTC options, the GPU architecture, the driver version and the NVRTC version — not by PTX text, so a
 * hit skips NVRTC entirely. It lives in $TSKERNEL_CACHE_DIR, else $XDG_CACHE_HOME/tskernel/cuda, else
 * ~/.cache/tskernel/cuda. A directory that cannot be created, read or written degrades to no cache, with one
 * warning; a damaged entry is treated as a miss.
 */

import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export interface ModuleKey {
  readonly source: string;
  readonly options: readonly string[];
  readonly arch: string;
  readonly driverVersion: number;
  readonly compilerVersion: string;
}

export function moduleCacheKey(key: ModuleKey): string {
  const hash = crypto.createHash("sha256");
  // Length-prefixed fields: no two different keys can produce the same byte stream.
  for (const field of [key.source, key.options.join("\u0000"), key.arch, String(key.driverVersion), key.compilerVersion]) {
    hash.update(`${field.length}:`);
    hash.update(field);
  }
  return hash.digest("hex");
}

export function defaultCacheDir(): string {
  if (process.env.TSKERNEL_CACHE_DIR) return process.env.TSKERNEL_CACHE_DIR;
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache");
  return path.join(base, "tskernel", "cuda");
}

export class ModuleCache {
  private disabled = false;

  constructor(
    readonly dir: string = defaultCacheDir(),
    private readonly warn: (message: string) => void = (message) => process.emitWarning(message),
  ) {}

  private degrade(what: string, error: unknown): void {
    if (this.disabled) return;
    this.disabled = true;
    this.warn(`tskernel: the module cache at ${this.dir} is not usable (${what}: ${(error as Error).message}); compiling without a cache`);
  }

  get(key: ModuleKey): Uint8Array | undefined {
    if (this.disabled) return undefined;
    const file = path.join(this.dir, `${moduleCacheKey(key)}.cubin`);
    try {
      const data = fs.readFileSync(file);
      // An ELF header at least: a truncated write is a miss, not a crash in cuModuleLoadData.
      return data.length > 4 && data[0] === 0x7f && data[1] === 0x45 ? new Uint8Array(data) : undefined;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") this.degrade("read", error);
      return undefined;
    }
  }

  put(key: ModuleKey, cubin: Uint8Array): void {
    if (this.disabled) return;
    const file = path.join(this.dir, `${moduleCacheKey(key)}.cubin`);
    try {
      fs.mkdirSync(this.dir, { recursive: true });
      const temporary = `${file}.${process.pid}.tmp`;
      fs.writeFileSync(temporary, cubin);
      fs.renameSync(temporary, file);
    } catch (error) {
      this.degrade("write", error);
    }
  }
}
