/**
 * The editor plugin's worker thread: it compiles kernel files (kernel-diagnostics.ts) while tsserver's own
 * thread type-checks them, so that an edit costs the longer of the two, not their sum. Jobs come on
 * `parentPort`; each result goes on the port tsserver's thread reads synchronously (editor-service.ts), after
 * which the counter in the shared buffer is raised to wake it. "ready" goes on `parentPort` once the compiler
 * is loaded.
 */

import { parentPort, workerData, type MessagePort } from "node:worker_threads";
import { KernelFileDiagnostics, type EditorPluginConfig } from "./kernel-diagnostics.ts";

/** What tsserver's thread sends. */
export interface CompileJob {
  readonly id: number;
  readonly file: string;
  readonly version: string;
  readonly text: string;
}

/** What comes back: the diagnostics and how long the compile took (absent when the version was compiled before), or why it failed. */
export type CompileResult =
  | { readonly id: number; readonly diagnostics: readonly import("../compiler/index.ts").Diagnostic[]; readonly ms?: number }
  | { readonly id: number; readonly error: string };

export interface WorkerData {
  readonly config: EditorPluginConfig;
  readonly results: MessagePort;
  /** One Int32: raised by one after each result. */
  readonly signal: SharedArrayBuffer;
}

const { config, results, signal } = workerData as WorkerData;
const counter = new Int32Array(signal);
const kernels = new KernelFileDiagnostics(config);
let ms: number | undefined;
kernels.onCompiled = (_file, _version, took) => (ms = took);

parentPort!.on("message", (job: CompileJob) => {
  let result: CompileResult;
  try {
    ms = undefined;
    result = { id: job.id, diagnostics: kernels.diagnosticsOf(job.file, job.version, job.text), ms };
  } catch (error) {
    result = { id: job.id, error: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  }
  results.postMessage(result);
  Atomics.add(counter, 0, 1);
  Atomics.notify(counter, 0);
});
parentPort!.postMessage({ ready: true, configProblems: kernels.configProblems });
