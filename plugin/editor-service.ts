/**
 * The editor plugin's work in tsserver's thread (ts-plugin.cts is its entry): for a kernel file, tskernel's
 * diagnostics as TypeScript diagnostics, for tsserver to show beside its own in any editor. `begin` hands the
 * file's text to the compile worker (editor-worker.ts) before tsserver type-checks the file, and the function
 * it returns collects the result after, so the two run at once; where no worker can start, the compile runs
 * here (kernel-diagnostics.ts). Each compile is written to tsserver's log.
 *
 * A diagnostic keeps its catalogue code (`code` 3001 with `source` "tskernel", and `TSK3001` leading the
 * text), its span, its label and notes (the text's further lines) and its related spans (related
 * information). A diagnostic whose span lies in another file (a helper's) is shown at the start of this one
 * with the real place as related information; one without a span (TSK4004 for a module that declares no
 * kernels, such as a helper that imports only the language's types) is not shown.
 */

import path from "node:path";
import { MessageChannel, receiveMessageOnPort, Worker } from "node:worker_threads";
import type ts from "typescript";
import type { Diagnostic } from "../compiler/index.ts";
import { isKernelText, KernelFileDiagnostics, type EditorPluginConfig } from "./kernel-diagnostics.ts";
import type { CompileJob, CompileResult, WorkerData } from "./editor-worker.ts";

/** The numeric part of a catalogue code, which TypeScript's diagnostics carry as `code`. */
function codeNumber(code: string): number {
  return Number(code.replace(/^TSK/, ""));
}

/**
 * Our diagnostics as TypeScript's, on `sourceFile` (tsserver's own SourceFile of the file, whose text the
 * offsets index); `sourceFileOf` finds other files for related spans.
 */
export function toTypeScriptDiagnostics(
  typescript: typeof ts,
  diagnostics: readonly Diagnostic[],
  sourceFile: ts.SourceFile,
  sourceFileOf: (file: string) => ts.SourceFile | undefined,
): ts.Diagnostic[] {
  const here = path.resolve(sourceFile.fileName);
  return diagnostics.map((d) => {
    const span = d.span!;
    const inThisFile = path.resolve(span.file) === here;
    const lines = [d.label, ...d.notes.map((note) => `note: ${note}`)].filter((line): line is string => Boolean(line));
    const related: ts.DiagnosticRelatedInformation[] = [];
    if (!inThisFile) related.push(relatedInformation(typescript, span, d.label ?? "reported here", sourceFileOf));
    for (const r of d.related) related.push(relatedInformation(typescript, r.span, r.message, sourceFileOf));
    return {
      file: sourceFile,
      start: inThisFile ? span.start : 0,
      length: inThisFile ? Math.max(0, span.end - span.start) : 0,
      messageText: { messageText: `${d.code}: ${d.message}`, category: category(typescript, d), code: codeNumber(d.code), next: lines.map((line) => ({ messageText: line, category: typescript.DiagnosticCategory.Message, code: codeNumber(d.code) })) },
      category: category(typescript, d),
      code: codeNumber(d.code),
      source: "tskernel",
      relatedInformation: related,
    };
  });
}

function category(typescript: typeof ts, d: Diagnostic): ts.DiagnosticCategory {
  return d.severity === "error" ? typescript.DiagnosticCategory.Error : typescript.DiagnosticCategory.Warning;
}

function relatedInformation(typescript: typeof ts, span: NonNullable<Diagnostic["span"]>, message: string, sourceFileOf: (file: string) => ts.SourceFile | undefined): ts.DiagnosticRelatedInformation {
  const file = sourceFileOf(span.file);
  return { file, start: file ? span.start : undefined, length: file ? Math.max(0, span.end - span.start) : undefined, messageText: message, category: typescript.DiagnosticCategory.Message, code: 0 };
}

/** How long tsserver's thread waits for a compile before it gives up on that request (the log says so). */
const compileTimeoutMs = 30_000;

/** Compiles in a worker thread; `result` blocks tsserver's thread until the job's result is there. */
class CompileWorker {
  private readonly worker: Worker;
  private readonly results: MessageChannel;
  private readonly counter: Int32Array;
  private nextId = 1;
  /** Set when the worker has stopped: the service compiles in its own thread from then on. */
  failed = false;

  constructor(config: EditorPluginConfig, onExit: (why: string) => void) {
    this.results = new MessageChannel();
    const signal = new SharedArrayBuffer(4);
    this.counter = new Int32Array(signal);
    // The worker's file sits beside this one: .js once built (the only way tsserver runs it).
    const file = new URL(`./editor-worker${path.extname(new URL(import.meta.url).pathname)}`, import.meta.url);
    const data: WorkerData = { config, results: this.results.port2, signal };
    this.worker = new Worker(file, { workerData: data, transferList: [this.results.port2] });
    // The worker must not keep tsserver alive when it exits.
    this.worker.unref();
    this.worker.on("error", (error) => {
      this.failed = true;
      onExit(`the compile worker failed: ${error.stack ?? error.message}`);
    });
    this.worker.on("exit", (code) => {
      this.failed = true;
      onExit(`the compile worker exited (status ${code})`);
    });
  }

  ready(): Promise<{ configProblems: string[] }> {
    return new Promise((resolve) => this.worker.once("message", resolve));
  }

  send(job: Omit<CompileJob, "id">): number {
    const id = this.nextId++;
    this.worker.postMessage({ ...job, id });
    return id;
  }

  /** The result of job `id`, or undefined after the timeout. Results of abandoned jobs are dropped. */
  result(id: number): CompileResult | undefined {
    const deadline = Date.now() + compileTimeoutMs;
    for (;;) {
      const seen = Atomics.load(this.counter, 0);
      const received = receiveMessageOnPort(this.results.port1)?.message as CompileResult | undefined;
      if (received) {
        if (received.id === id) return received;
        continue;
      }
      const left = deadline - Date.now();
      if (left <= 0 || this.failed) return undefined;
      Atomics.wait(this.counter, 0, seen, left);
    }
  }
}

export interface EditorService {
  /**
   * Starts on the file's diagnostics; the function returned gives them, once tsserver's program has the same
   * version of the file (call it after TypeScript's own semantic diagnostics).
   */
  begin(fileName: string): () => ts.Diagnostic[];
}

/**
 * The plugin's service for one tsserver project, once its compiler is loaded (in the worker, or here).
 * `info` is what tsserver gives a plugin's `create`.
 */
export async function createEditorService(typescript: typeof ts, info: ts.server.PluginCreateInfo): Promise<EditorService> {
  const config = (info.config ?? {}) as EditorPluginConfig;
  const log = (message: string) => info.project.projectService.logger.info(`tskernel: ${message}`);
  let inline: KernelFileDiagnostics | undefined;
  const inThisThread = () => {
    if (!inline) {
      inline = new KernelFileDiagnostics(config);
      inline.onCompiled = (file, version, ms) => log(`compiled ${file} (version ${version}) in ${ms.toFixed(1)} ms, in tsserver's thread`);
    }
    return inline;
  };
  let worker: CompileWorker | undefined;
  if (config.worker !== false) {
    try {
      worker = new CompileWorker(config, log);
      const { configProblems } = await worker.ready();
      for (const problem of configProblems) log(`plugin configuration: ${problem}`);
    } catch (error) {
      log(`no compile worker (${error instanceof Error ? error.message : String(error)}); compiling in tsserver's thread`);
      worker = undefined;
    }
  }
  if (!worker) for (const problem of inThisThread().configProblems) log(`plugin configuration: ${problem}`);
  // The last diagnostics of each file, by version: an unchanged file is not sent again.
  const latest = new Map<string, { version: string; diagnostics: readonly Diagnostic[] }>();

  const convert = (fileName: string, diagnostics: readonly Diagnostic[]): ts.Diagnostic[] => {
    const program = info.languageService.getProgram();
    const sourceFile = program?.getSourceFile(fileName);
    if (!sourceFile) return [];
    return toTypeScriptDiagnostics(typescript, diagnostics, sourceFile, (file) => program?.getSourceFile(file));
  };

  return {
    begin(fileName: string): () => ts.Diagnostic[] {
      const snapshot = info.languageServiceHost.getScriptSnapshot(fileName);
      const text = snapshot?.getText(0, snapshot.getLength());
      if (text === undefined || fileName.endsWith(".d.ts") || !isKernelText(text)) return () => [];
      const version = info.languageServiceHost.getScriptVersion(fileName);
      const known = latest.get(fileName);
      if (known?.version === version) return () => convert(fileName, known.diagnostics);
      const remember = (diagnostics: readonly Diagnostic[]) => {
        latest.set(fileName, { version, diagnostics });
        return convert(fileName, diagnostics);
      };
      if (!worker || worker.failed) {
        return () => {
          try {
            return remember(inThisThread().diagnosticsOf(fileName, version, text));
          } catch (error) {
            // A compiler crash must not take the editor's other diagnostics with it.
            log(`internal compiler error on ${fileName}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
            return [];
          }
        };
      }
      const compiling = worker;
      const id = compiling.send({ file: fileName, version, text });
      return () => {
        const result = compiling.result(id);
        if (!result) {
          log(`no diagnostics for ${fileName} (version ${version}): the compile took more than ${compileTimeoutMs / 1000} s or the worker stopped`);
          return [];
        }
        if ("error" in result) {
          log(`internal compiler error on ${fileName}: ${result.error}`);
          return [];
        }
        if (result.ms !== undefined) log(`compiled ${fileName} (version ${version}) in ${result.ms.toFixed(1)} ms`);
        return remember(result.diagnostics);
      };
    },
  };
}
