/**
 * `tskernel tune matmul` as the CLI runs it (cli/main.ts parses the options and calls this): opens
 * the device, tunes, prints progress on stderr and the final table on stdout, writes the JSON report, and says
 * where the results were stored. Exit status 1 when the backend is missing, an option names an unknown
 * rung, nothing could be verified, or the store could not be written.
 */

import fs from "node:fs";
import type { BackendName } from "../runtime/device.ts";
import { matmulRungs } from "../runtime/matmul/matmul.ts";
import { defaultTuneDir, deviceKeyOf, TuningStore } from "../runtime/matmul/tune-store.ts";
import { formatTuneTable, tuneMatmul } from "../runtime/matmul/tune.ts";
import { openDevice } from "./open-device.ts";

export interface TuneCommandOptions {
  readonly backend: BackendName | "auto";
  readonly sizes?: readonly number[];
  readonly runs: number;
  readonly rungs?: readonly string[];
  readonly maxCandidates?: number;
  readonly store?: string;
  readonly json?: string;
}

interface Io {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}

export const tunableRungs = matmulRungs.filter((r) => r.search).map((r) => r.name);

export async function tuneCommand(options: TuneCommandOptions, io: Io): Promise<number> {
  const unknown = (options.rungs ?? []).filter((name) => !tunableRungs.includes(name));
  if (unknown.length > 0) {
    io.stderr(`tskernel: unknown rung(s) ${unknown.map((n) => `'${n}'`).join(", ")}; the tunable rungs are ${tunableRungs.join(", ")}\n`);
    return 1;
  }
  const device = await openDevice({ backend: options.backend }, io);
  if (!device) return 1;
  const sizes = options.sizes ?? (device.backend === "cpu" ? [64, 128] : [1024, 4096]);
  const store = new TuningStore(options.store ?? defaultTuneDir(), (message) => io.stderr(`warning: ${message}\n`));
  io.stderr(`store: ${store.fileFor(deviceKeyOf(device))}\n`);
  const report = await tuneMatmul(device, {
    sizes,
    runs: options.runs,
    rungs: options.rungs,
    maxCandidates: options.maxCandidates,
    store,
    onProgress: (line) => io.stderr(`${line}\n`),
  });
  io.stdout(`${formatTuneTable(report)}\n`);
  const count = (status: string) => report.candidates.filter((c) => c.status === status).length;
  io.stdout(`${count("ok")} verified, ${count("wrong")} wrong (discarded), ${count("pruned")} pruned, ${count("failed")} failed`);
  io.stdout(report.storeFile ? `; stored in ${report.storeFile}\n` : "\n");
  if (options.json) fs.writeFileSync(options.json, `${JSON.stringify(report, null, 2)}\n`);
  if (report.storeError) {
    io.stderr(`tskernel: ${report.storeError}\n`);
    return 1;
  }
  return count("ok") > 0 ? 0 : 1;
}
