/**
 * Where the matmul tuner keeps what it measured, and where `matmul()` looks it up. One JSON file per device
 * key — backend, device name, and driver version where the device has one (CUDA) — in a store directory
 * ($TSKERNEL_TUNE_DIR, else $XDG_CACHE_HOME/tskernel/tune, else ~/.cache/tskernel/tune, or one passed in).
 * Inside, results are grouped by shape class and ranked by GFLOP/s; each names its rung, kernel, source file
 * and the sha256 of that file, so a result measured on other kernel code is never used. A file that cannot be
 * read, does not parse, or belongs to another key is ignored with one warning; nothing here throws on bad data.
 */

import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { BackendName, Device } from "../device.ts";
import { sameConstants } from "./candidates.ts";
import type { Constants } from "./rung.ts";

export interface DeviceKey {
  readonly backend: BackendName;
  readonly device: string;
  readonly driverVersion?: number | string;
}

/** The key of a device: its backend and name, plus the driver version where the device reports one. */
export function deviceKeyOf(device: Device): DeviceKey {
  const driver = (device as { driverVersion?: unknown }).driverVersion;
  return typeof driver === "number" || typeof driver === "string" ? { backend: device.backend, device: device.name, driverVersion: driver } : { backend: device.backend, device: device.name };
}

/**
 * The size class of an m×n×k product: the power of two nearest to √(m·n) on a log scale (724 to 1448 → 1024).
 * The output's area decides how many blocks a tile size makes, which is what separates small-tile from
 * large-tile winners; k only lengthens each block's loop. Divisibility is not part of the class: every
 * stored result carries its tile sizes, and `matmul` takes the fastest one whose tiles divide the shape.
 */
export function shapeClass(m: number, n: number, _k: number): number {
  return 2 ** Math.max(0, Math.round(Math.log2(Math.sqrt(m * n))));
}

/** One measured, verified candidate. */
export interface TunedEntry {
  readonly rung: string;
  readonly kernel: string;
  /** The kernel's source file as the rung table names it, and "sha256:…" of its content when measured. */
  readonly file: string;
  readonly sourceHash: string;
  readonly constants: Constants;
  /** The square size it was measured at (n×n times n×n). */
  readonly n: number;
  readonly ms: number;
  readonly gflops: number;
  /** Normwise relative error against the float64 reference in the same run. */
  readonly normwiseError: number;
  /** Registers per thread of the compiled function (CUDA). */
  readonly registers?: number;
  readonly date: string;
}

const FORMAT = "tskernel-tune-matmul";
const VERSION = 1;

interface StoreFile {
  readonly format: typeof FORMAT;
  readonly version: typeof VERSION;
  readonly key: DeviceKey;
  readonly updated: string;
  /** Shape class (as a decimal string) → results, fastest first. */
  readonly classes: Readonly<Record<string, readonly TunedEntry[]>>;
}

export function defaultTuneDir(): string {
  if (process.env.TSKERNEL_TUNE_DIR) return process.env.TSKERNEL_TUNE_DIR;
  return path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache"), "tskernel", "tune");
}

const defaultStores = new Map<string, TuningStore>();

/** The store `matmul()` reads when none is passed: one object per directory, so warnings are given once. */
export function defaultTuningStore(): TuningStore {
  const dir = defaultTuneDir();
  let store = defaultStores.get(dir);
  if (!store) defaultStores.set(dir, (store = new TuningStore(dir)));
  return store;
}

const sameKey = (a: DeviceKey, b: DeviceKey) => a.backend === b.backend && a.device === b.device && a.driverVersion === b.driverVersion;

export class TuningStore {
  private readonly warned = new Set<string>();
  /** Parsed files by path, with the mtime and size they were read at (re-read when either changes). */
  private readonly files = new Map<string, { stamp: string; data: StoreFile | undefined }>();

  constructor(
    readonly dir: string,
    private readonly onWarning: (message: string) => void = (message) => process.emitWarning(message),
  ) {}

  /** Reports a problem once per store. */
  warn(message: string): void {
    if (this.warned.has(message)) return;
    this.warned.add(message);
    this.onWarning(`tskernel: ${message}`);
  }

  /** The file of a device key: readable names for people, a hash of the whole key so no two keys share one. */
  fileFor(key: DeviceKey): string {
    const slug = key.device.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "").slice(0, 48) || "device";
    const digest = crypto.createHash("sha256").update(JSON.stringify([key.backend, key.device, key.driverVersion ?? null])).digest("hex").slice(0, 12);
    return path.join(this.dir, `matmul-${key.backend}-${slug}-${digest}.json`);
  }

  /** The stored results for a device and shape class, fastest first; empty when there are none or the file is unusable. */
  entries(key: DeviceKey, shapeClass: number): readonly TunedEntry[] {
    return this.load(key)?.classes[String(shapeClass)] ?? [];
  }

  /** Every shape class with results for a device. */
  classes(key: DeviceKey): number[] {
    return Object.keys(this.load(key)?.classes ?? {}).map(Number).sort((a, b) => a - b);
  }

  /**
   * Merges newly measured results into a shape class and writes the file; returns its path. A new result
   * replaces the stored one of the same rung and constants, and every stored result of its rung that was
   * measured on other source. Throws only when the directory or file cannot be written.
   */
  record(key: DeviceKey, shapeClass: number, results: readonly TunedEntry[]): string {
    const file = this.fileFor(key);
    const classes: Record<string, readonly TunedEntry[]> = { ...(this.load(key)?.classes ?? {}) };
    const kept = (classes[String(shapeClass)] ?? []).filter(
      (old) => !results.some((fresh) => fresh.rung === old.rung && (fresh.sourceHash !== old.sourceHash || sameConstants(fresh.constants, old.constants))),
    );
    classes[String(shapeClass)] = [...kept, ...results].sort((a, b) => b.gflops - a.gflops);
    const data: StoreFile = { format: FORMAT, version: VERSION, key, updated: new Date().toISOString(), classes };
    fs.mkdirSync(this.dir, { recursive: true });
    // Written aside and renamed, so a reader (another process's matmul) never sees half a file.
    const temporary = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(temporary, `${JSON.stringify(data, null, 2)}\n`);
    fs.renameSync(temporary, file);
    this.files.delete(file);
    return file;
  }

  private load(key: DeviceKey): StoreFile | undefined {
    const file = this.fileFor(key);
    let stamp: string;
    try {
      const stat = fs.statSync(file);
      stamp = `${stat.mtimeMs}:${stat.size}`;
    } catch {
      return undefined; // nothing tuned for this device yet
    }
    const cached = this.files.get(file);
    if (cached?.stamp === stamp) return cached.data;
    const data = this.parse(file, key);
    this.files.set(file, { stamp, data });
    return data;
  }

  private parse(file: string, key: DeviceKey): StoreFile | undefined {
    let value: unknown;
    try {
      value = JSON.parse(fs.readFileSync(file, "utf8"));
    } catch (error) {
      this.warn(`ignoring the tuning file ${file}: ${(error as Error).message}`);
      return undefined;
    }
    const object = value as Partial<StoreFile> | null;
    if (typeof object !== "object" || object === null || object.format !== FORMAT) {
      this.warn(`ignoring the tuning file ${file}: it is not a ${FORMAT} file`);
      return undefined;
    }
    if (object.version !== VERSION) {
      this.warn(`ignoring the tuning file ${file}: format version ${String(object.version)}, this tskernel reads ${VERSION}`);
      return undefined;
    }
    const stored = object.key as DeviceKey | undefined;
    if (typeof stored !== "object" || stored === null || !sameKey(stored, key)) {
      this.warn(`ignoring the tuning file ${file}: it was written for ${describeKey(stored)}, not ${describeKey(key)}`);
      return undefined;
    }
    if (typeof object.classes !== "object" || object.classes === null) {
      this.warn(`ignoring the tuning file ${file}: it has no results`);
      return undefined;
    }
    const classes: Record<string, TunedEntry[]> = {};
    let dropped = 0;
    for (const [name, list] of Object.entries(object.classes)) {
      if (!/^\d+$/.test(name) || !Array.isArray(list)) {
        dropped++;
        continue;
      }
      const good = list.filter(isEntry);
      dropped += list.length - good.length;
      classes[name] = good.sort((a, b) => b.gflops - a.gflops);
    }
    if (dropped > 0) this.warn(`ignoring ${dropped} malformed result(s) in the tuning file ${file}`);
    return { format: FORMAT, version: VERSION, key, updated: String(object.updated), classes };
  }
}

function describeKey(key: DeviceKey | undefined): string {
  if (typeof key !== "object" || key === null) return "no device";
  return `${String(key.backend)} '${String(key.device)}'${key.driverVersion !== undefined ? ` (driver ${String(key.driverVersion)})` : ""}`;
}

function isEntry(value: unknown): value is TunedEntry {
  const e = value as Record<string, unknown> | null;
  if (typeof e !== "object" || e === null) return false;
  const strings = ["rung", "kernel", "file", "sourceHash", "date"].every((field) => typeof e[field] === "string");
  const numbers = ["n", "ms", "gflops", "normwiseError"].every((field) => typeof e[field] === "number" && Number.isFinite(e[field]));
  const constants = e.constants as Record<string, unknown> | null;
  const constantsOk = typeof constants === "object" && constants !== null && Object.values(constants).every((v) => typeof v === "number" && Number.isInteger(v));
  return strings && numbers && constantsOk && (e.registers === undefined || typeof e.registers === "number");
}
