/**
 * Worker threads for the CPU backend. A launch's blocks (or the range of them the pool is given) are split into
 * contiguous ranges, one per worker, or taken from a shared queue: chunks of blocks that each worker and the
 * calling thread claim in turn (cpu-device.ts), so that a thread the OS keeps waiting takes fewer chunks
 * instead of holding up the launch. Every worker runs the same generated block function on buffers in shared
 * memory (SharedArrayBuffer).
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
  /** Claim chunks from this queue instead of running start..end-1 (BlockQueue). */
  readonly queue?: Int32Array;
  readonly chunk?: number;
}

/**
 * A launch's blocks as a queue in shared memory: `counter[0]` is the next block to claim, `counter[1]` the
 * number of blocks finished; a thread claims `chunk` blocks at a time (Atomics.add) until `end`, and counts
 * each chunk as finished after running it, so that a reader who sees `counter[1] === end` (Atomics.load) also
 * sees everything the blocks wrote.
 */
export interface BlockQueue {
  readonly counter: Int32Array;
  readonly chunk: number;
  readonly end: number;
}

/** A fresh queue of blocks 0..total-1 in chunks of about one eighth of each thread's share. */
export function blockQueue(total: number, threads: number): BlockQueue {
  const counter = new Int32Array(new SharedArrayBuffer(8));
  return { counter, chunk: Math.max(1, Math.floor(total / (threads * 8))), end: total };
}

/**
 * Claims and runs chunks of the queue until it is empty (runs: blocks start..end-1). Returns when no block is
 * left to claim; others may still be running theirs.
 */
export function drainQueue(queue: BlockQueue, run: (start: number, end: number) => void): void {
  for (;;) {
    const start = Atomics.add(queue.counter, 0, queue.chunk);
    if (start >= queue.end) return;
    const end = Math.min(start + queue.chunk, queue.end);
    run(start, end);
    Atomics.add(queue.counter, 1, end - start);
  }
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
    const run = (start, end) => {
      for (let i = start; i < end; i++) {
        blockIdx[0] = i % gx;
        blockIdx[1] = Math.floor(i / gx) % gy;
        blockIdx[2] = Math.floor(i / (gx * gy));
        fn(job.args, blockIdx, job.block, job.grid, undefined, job.subgroupSize);
      }
    };
    if (job.queue === undefined) run(job.start, job.end);
    else {
      // As drainQueue in worker-pool.ts.
      const counter = job.queue;
      for (;;) {
        const start = Atomics.add(counter, 0, job.chunk);
        if (start >= job.end) break;
        const end = Math.min(start + job.chunk, job.end);
        run(start, end);
        Atomics.add(counter, 1, end - start);
      }
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
  /**
   * Jobs sent and not yet answered. The worker keeps the process alive while any is out: a launch that
   * returned without waiting for a reply (cpu-device.ts) may leave one out when the next launch sends its own,
   * and the earlier reply must not let the process exit under the later one.
   */
  outstanding: number;
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
      return { worker, modules: new Set<number>(), outstanding: 0 };
    });
  }

  /**
   * Runs the blocks `blocks.start` to `blocks.end` − 1 of a launch (default all, in x-fastest order) on the
   * workers and resolves when all are done, or, given a `queue`, has every worker claim chunks of it (a worker
   * per block at most, leaving one to the calling thread) and resolves when each has found it empty. `args` are
   * typed arrays on SharedArrayBuffers (so that writes are seen here) and scalars.
   */
  async run(
    source: { readonly factoryBody: string; readonly function: string },
    args: readonly unknown[],
    grid: readonly number[],
    block: readonly number[],
    subgroupSize = 32,
    timeLimitMs?: number,
    blocks?: { readonly start: number; readonly end: number },
    queue?: BlockQueue,
  ): Promise<void> {
    if (this.stopped) throw new Error("tskernel: internal: a stopped worker pool was asked to run a launch");
    let module = this.moduleIds.get(source.factoryBody);
    if (module === undefined) {
      module = this.moduleIds.size;
      this.moduleIds.set(source.factoryBody, module);
    }
    const first = blocks?.start ?? 0;
    const total = (blocks?.end ?? grid[0]! * grid[1]! * grid[2]!) - first;
    const shares = queue ? Math.min(this.workers.length, queue.end - 1) : Math.min(this.workers.length, total);
    const jobs: Promise<void>[] = [];
    for (let w = 0; w < shares; w++) {
      // With a queue, `end` is the queue's end and `start` is unused.
      const start = queue ? 0 : first + Math.floor((total * w) / shares);
      const end = queue ? queue.end : first + Math.floor((total * (w + 1)) / shares);
      const target = this.workers[w]!;
      const unseen = !target.modules.has(module);
      target.modules.add(module);
      const job: Job = { id: this.nextJob++, module, factoryBody: unseen ? source.factoryBody : undefined, function: source.function, args, grid, block, subgroupSize, start, end, queue: queue?.counter, chunk: queue?.chunk };
      jobs.push(
        new Promise<void>((resolve, reject) => {
          this.pending.set(job.id, { resolve, reject });
          if (target.outstanding++ === 0) target.worker.ref();
          target.worker.postMessage(job);
        }).finally(() => {
          if (--target.outstanding === 0) target.worker.unref();
        }),
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
