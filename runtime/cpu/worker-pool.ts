/**
 * Worker threads for the CPU backend. A launch's blocks (or the range of them the pool is given; the calling
 * thread may run the rest itself, cpu-device.ts) are split into contiguous ranges, one per worker, and every
 * worker runs the same generated block function on buffers in shared memory (SharedArrayBuffer).
 * Blocks of a launch are independent — as on a GPU, only barriers inside a block order anything — so they
 * may run in any order and at once; a kernel whose blocks race on global memory is as wrong here as there.
 * Each worker instantiates a file's generated code once and keeps it; later launches send only its number.
 * A launch with a time limit that runs past it terminates every worker (a loop that never ends cannot be
 * stopped any other way) and rejects with `TimeLimitExceeded`; the pool is then spent (`stopped`).
 */

import { Worker } from "node:worker_threads";

/** One launch's share for one worker: blocks start..end-1 in x-fastest order. */
interface Job {
  readonly id: number;
  readonly module: number;
  /** Sent the first time a worker sees this module. */
  readonly factoryBody?: string;
  readonly function: string;
  readonly args: readonly unknown[];
  readonly grid: readonly number[];
  readonly block: readonly number[];
  readonly subgroupSize: number;
  readonly start: number;
  readonly end: number;
}

// The worker's side, as source: it only instantiates generated code and walks its block range.
const workerSource = `
const { parentPort } = require("node:worker_threads");
const modules = new Map();
parentPort.on("message", (job) => {
  try {
    if (job.factoryBody !== undefined) modules.set(job.module, new Function(job.factoryBody)());
    const fn = modules.get(job.module)[job.function];
    const gx = job.grid[0], gy = job.grid[1];
    const blockIdx = [0, 0, 0];
    for (let i = job.start; i < job.end; i++) {
      blockIdx[0] = i % gx;
      blockIdx[1] = Math.floor(i / gx) % gy;
      blockIdx[2] = Math.floor(i / (gx * gy));
      fn(job.args, blockIdx, job.block, job.grid, undefined, job.subgroupSize);
    }
    parentPort.postMessage({ id: job.id });
  } catch (error) {
    parentPort.postMessage({ id: job.id, error: String((error && error.stack) || error) });
  }
});
`;

/** A launch ran past its time limit; its workers were terminated. */
export class TimeLimitExceeded extends Error {
  constructor(readonly limitMs: number) {
    super(`the launch ran past its time limit of ${limitMs} ms`);
  }
}

interface PoolWorker {
  readonly worker: Worker;
  readonly modules: Set<number>;
}

export class WorkerPool {
  private readonly workers: PoolWorker[];
  private readonly moduleIds = new Map<string, number>();
  private readonly pending = new Map<number, { resolve: () => void; reject: (error: Error) => void }>();
  private nextJob = 0;
  /** Set once the workers were terminated (past a time limit, or by terminate()): the pool runs nothing more. */
  stopped = false;

  constructor(readonly size: number) {
    this.workers = Array.from({ length: size }, () => {
      const worker = new Worker(workerSource, { eval: true });
      // Idle workers must not keep the process alive; running ones are ref'd while their jobs are out.
      worker.unref();
      worker.on("message", (message: { id: number; error?: string }) => this.settle(message.id, message.error));
      worker.on("error", (error) => this.failAll(error));
      return { worker, modules: new Set<number>() };
    });
  }

  /**
   * Runs the blocks `blocks.start` to `blocks.end` − 1 of a launch (default all, in x-fastest order) on the
   * workers and resolves when all are done. `args` are typed arrays on SharedArrayBuffers (so that writes are
   * seen here) and scalars.
   */
  async run(
    source: { readonly factoryBody: string; readonly function: string },
    args: readonly unknown[],
    grid: readonly number[],
    block: readonly number[],
    subgroupSize = 32,
    timeLimitMs?: number,
    blocks?: { readonly start: number; readonly end: number },
  ): Promise<void> {
    if (this.stopped) throw new Error("tskernel: internal: a stopped worker pool was asked to run a launch");
    let module = this.moduleIds.get(source.factoryBody);
    if (module === undefined) {
      module = this.moduleIds.size;
      this.moduleIds.set(source.factoryBody, module);
    }
    const first = blocks?.start ?? 0;
    const total = (blocks?.end ?? grid[0]! * grid[1]! * grid[2]!) - first;
    const shares = Math.min(this.workers.length, total);
    const jobs: Promise<void>[] = [];
    for (let w = 0; w < shares; w++) {
      const start = first + Math.floor((total * w) / shares);
      const end = first + Math.floor((total * (w + 1)) / shares);
      const target = this.workers[w]!;
      const unseen = !target.modules.has(module);
      target.modules.add(module);
      const job: Job = { id: this.nextJob++, module, factoryBody: unseen ? source.factoryBody : undefined, function: source.function, args, grid, block, subgroupSize, start, end };
      jobs.push(
        new Promise<void>((resolve, reject) => {
          this.pending.set(job.id, { resolve, reject });
          target.worker.ref();
          target.worker.postMessage(job);
        }).finally(() => target.worker.unref()),
      );
    }
    if (timeLimitMs === undefined) {
      await Promise.all(jobs);
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new TimeLimitExceeded(timeLimitMs)), timeLimitMs);
    });
    try {
      await Promise.race([Promise.all(jobs), expired]);
    } catch (error) {
      if (error instanceof TimeLimitExceeded) {
        this.pending.clear();
        await this.terminate();
      }
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  private settle(id: number, error: string | undefined): void {
    const waiter = this.pending.get(id);
    if (!waiter) return;
    this.pending.delete(id);
    if (error === undefined) waiter.resolve();
    else waiter.reject(new Error(`tskernel: a CPU worker thread failed: ${error}`));
  }

  private failAll(error: Error): void {
    for (const [id, waiter] of this.pending) {
      this.pending.delete(id);
      waiter.reject(new Error(`tskernel: a CPU worker thread stopped: ${error.message}`));
    }
  }

  async terminate(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.workers.map(({ worker }) => worker.terminate()));
  }
}
