/**
 * A minimal tsserver client, as an editor is one: starts `tsserver` (TypeScript's language server) as a
 * process and speaks its protocol on stdin/stdout (one JSON request per line; responses and events framed by
 * `Content-Length` headers). The editor plugin's test and its latency benchmark drive it: open a file, edit
 * it, ask for its semantic diagnostics.
 */

import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";

/** A diagnostic as tsserver's protocol carries it (`semanticDiagnosticsSync`, without line positions). */
export interface ProtocolDiagnostic {
  readonly start: { readonly line: number; readonly offset: number };
  readonly end: { readonly line: number; readonly offset: number };
  readonly text: string;
  readonly code: number;
  readonly category: string;
  readonly source?: string;
  readonly relatedInformation?: readonly { readonly span?: { readonly file: string; readonly start: { readonly line: number; readonly offset: number } }; readonly message: string }[];
}

interface Message {
  readonly type: "response" | "event";
  readonly request_seq?: number;
  readonly success?: boolean;
  readonly message?: string;
  readonly event?: string;
  readonly body?: unknown;
}

export class TsServer {
  private readonly process: ChildProcessWithoutNullStreams;
  private seq = 0;
  private buffer = Buffer.alloc(0);
  private readonly pending = new Map<number, { resolve: (m: Message) => void; reject: (e: Error) => void }>();
  private readonly eventWaiters: { name: string; resolve: (m: Message) => void }[] = [];
  /** Every event received, in order (`projectsUpdatedInBackground`, …). */
  readonly events: Message[] = [];
  stderr = "";

  /** `tsserverPath`: TypeScript's lib/tsserver.js; `args`: more of its options (`--pluginProbeLocations`, `--logFile`, …). */
  constructor(tsserverPath: string, args: readonly string[] = [], cwd?: string) {
    this.process = spawn(process.execPath, [tsserverPath, "--disableAutomaticTypingAcquisition", ...args], { cwd, stdio: ["pipe", "pipe", "pipe"] });
    this.process.stdout.on("data", (chunk: Buffer) => this.receive(chunk));
    this.process.stderr.on("data", (chunk: Buffer) => (this.stderr += chunk.toString()));
    this.process.on("exit", () => {
      for (const { reject } of this.pending.values()) reject(new Error(`tsserver exited: ${this.stderr}`));
      this.pending.clear();
    });
  }

  private receive(chunk: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const headerEnd = this.buffer.indexOf("\r\n\r\n");
      if (headerEnd < 0) return;
      const length = Number(/Content-Length: (\d+)/.exec(this.buffer.subarray(0, headerEnd).toString())?.[1]);
      const start = headerEnd + 4;
      if (this.buffer.length < start + length) return;
      const message = JSON.parse(this.buffer.subarray(start, start + length).toString()) as Message;
      this.buffer = this.buffer.subarray(start + length);
      if (message.type === "response" && message.request_seq !== undefined) {
        this.pending.get(message.request_seq)?.resolve(message);
        this.pending.delete(message.request_seq);
      } else if (message.type === "event") {
        this.events.push(message);
        for (const waiter of this.eventWaiters.filter((w) => w.name === message.event)) {
          this.eventWaiters.splice(this.eventWaiters.indexOf(waiter), 1);
          waiter.resolve(message);
        }
      }
    }
  }

  /** Sends a request; resolves to the response's body (rejects on an unsuccessful response). */
  request<T = unknown>(command: string, args: unknown): Promise<T> {
    const seq = ++this.seq;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(seq, {
        resolve: (message) => (message.success === false ? reject(new Error(`tsserver ${command}: ${message.message}`)) : resolve(message.body as T)),
        reject,
      });
      this.process.stdin.write(`${JSON.stringify({ seq, type: "request", command, arguments: args })}\n`);
    });
  }

  /** Sends a request that has no response (`open`, `change`, `updateOpen` answer nothing unless asked). */
  notify(command: string, args: unknown): void {
    this.process.stdin.write(`${JSON.stringify({ seq: ++this.seq, type: "request", command, arguments: args })}\n`);
  }

  /** The next event of this name (or one already received since `since`, an index into `events`). */
  nextEvent(name: string, since = this.events.length): Promise<Message> {
    const seen = this.events.slice(since).find((m) => m.event === name);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => this.eventWaiters.push({ name, resolve }));
  }

  open(file: string, fileContent: string, projectRootPath?: string): void {
    this.notify("open", { file, fileContent, projectRootPath });
  }

  /** Replaces the text from (line, offset) to (endLine, endOffset), all 1-based, with `newText`. */
  edit(file: string, start: { line: number; offset: number }, end: { line: number; offset: number }, newText: string): void {
    this.notify("updateOpen", { changedFiles: [{ fileName: file, textChanges: [{ start, end, newText }] }] });
  }

  semanticDiagnostics(file: string): Promise<ProtocolDiagnostic[]> {
    return this.request<ProtocolDiagnostic[]>("semanticDiagnosticsSync", { file, includeLinePosition: false });
  }

  async close(): Promise<void> {
    this.process.stdin.end();
    if (this.process.exitCode === null) await new Promise((resolve) => this.process.once("exit", resolve));
  }
}
