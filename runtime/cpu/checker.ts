/**
 * The checked CPU mode's run-time half: the generated checked JS calls these for every array access and
 * every block-level condition. It finds, with the kernel's TypeScript location and the block and thread:
 * out-of-bounds reads and writes (global and shared), vector accesses (load4, store4) whose index is not a
 * multiple of 4 (CUDA faults on them), reads of elements that a `copyAsync4` wrote before the copying thread
 * waited for its group (`waitAsync`: the copies run at once here, but on CUDA the data is not there yet), reads
 * of shared memory no thread of the block has
 * written since the block started, races on shared memory (two threads touching one element between the
 * same two barriers, at least one writing), and barriers not reached by all threads (a block-level
 * condition that differs between threads). The first fault stops the launch with a KernelFault.
 */

export type FaultKind =
  | "out-of-bounds"
  | "misaligned-vector-access"
  | "uninitialized-shared-read"
  | "async-copy-not-waited"
  | "shared-race"
  | "barrier-divergence";

export class KernelFault extends Error {
  constructor(
    readonly kind: FaultKind,
    readonly kernel: string,
    readonly location: string,
    readonly blockIdx: readonly number[],
    readonly threadIdx: readonly number[] | undefined,
    detail: string,
  ) {
    const thread = threadIdx ? `, thread (${threadIdx.join(", ")})` : "";
    super(`tskernel: ${kind} in '${kernel}' at ${location}, block (${blockIdx.join(", ")})${thread}: ${detail}`);
  }
}

interface SharedState {
  readonly written: Uint8Array;
  /** The thread that last wrote each element, and in which barrier interval (epoch). */
  readonly writer: Int32Array;
  readonly writeEpoch: Int32Array;
  /** The thread that read each element in `readEpoch`, or MANY when several did. */
  readonly reader: Int32Array;
  readonly readEpoch: Int32Array;
  /** The thread whose `copyAsync4` last wrote each element (-1: an ordinary write), and the copy's group. */
  readonly copier: Int32Array;
  readonly copyGroup: Int32Array;
}

const MANY = -2;

type Typed = Float32Array | Int32Array | Uint32Array;

export class Checker {
  private blockIdx: readonly number[] = [0, 0, 0];
  private blockDim: readonly number[] = [1, 1, 1];
  private epoch = 1;
  private shared = new Map<Typed, SharedState>();
  /** Per thread: groups of asynchronous copies committed so far, and how many of them a waitAsync completed. */
  private committed = new Int32Array(0);
  private completed = new Int32Array(0);

  constructor(private readonly kernel: string) {}

  beginBlock(blockIdx: readonly number[], blockDim: readonly number[]): void {
    this.blockIdx = [...blockIdx];
    this.blockDim = blockDim;
    this.epoch = 1;
    this.shared = new Map();
    const threads = blockDim[0]! * blockDim[1]! * blockDim[2]!;
    this.committed = new Int32Array(threads);
    this.completed = new Int32Array(threads);
  }

  /** `commitAsync()`: thread t's copies since the last commit form a group. */
  asyncCommit(t: number): void {
    this.committed[t]!++;
  }

  /** `waitAsync(pending)`: all of thread t's committed groups but the newest `pending` are complete. */
  asyncWait(pending: number, t: number): void {
    this.completed[t] = Math.max(this.completed[t]!, this.committed[t]! - pending);
  }

  /** A shared-memory write by `copyAsync4` (made a plain copy): complete once its group is waited for. */
  asts1(array: Typed, name: string, i: number, size: number, value: number, t: number, where: string): void {
    this.sts1(array, name, i, size, value, t, where);
    this.markCopied(array, i, t);
  }

  asts2(array: Typed, name: string, i: number, j: number, rows: number, cols: number, value: number, t: number, where: string): void {
    this.sts2(array, name, i, j, rows, cols, value, t, where);
    this.markCopied(array, i * cols + j, t);
  }

  private markCopied(array: Typed, flat: number, t: number): void {
    const state = this.state(array);
    state.copier[flat] = t;
    // Copies before the first commit belong to group 0, the next to group 1, and so on.
    state.copyGroup[flat] = this.committed[t]!;
  }

  /** A barrier: accesses after it do not race with accesses before it. */
  sync(): void {
    this.epoch++;
  }

  private thread(t: number): number[] {
    const [nx, ny] = this.blockDim as [number, number];
    return [t % nx, Math.floor(t / nx) % ny, Math.floor(t / (nx * ny))];
  }

  private fault(kind: FaultKind, where: string, t: number | undefined, detail: string): never {
    throw new KernelFault(kind, this.kernel, where, this.blockIdx, t === undefined ? undefined : this.thread(t), detail);
  }

  private outOfBounds(where: string, t: number, verb: string, name: string, indices: readonly number[], shape: string): never {
    return this.fault("out-of-bounds", where, t, `${verb} ${name}${indices.map((i) => `[${i}]`).join("")}, but ${shape}`);
  }

  /** The last index of a vector access, which must be a multiple of `width`; returns it. */
  aligned(index: number, width: number, name: string, t: number, where: string): number {
    if (index % width !== 0) this.fault("misaligned-vector-access", where, t, `a vector access to '${name}' starts at index ${index}, which is not a multiple of ${width}`);
    return index;
  }

  ldg(array: Typed, name: string, index: number, t: number, where: string): number {
    if (!(index >= 0 && index < array.length)) this.outOfBounds(where, t, "read of", `'${name}'`, [index], `it has ${array.length} elements`);
    return array[index]!;
  }

  stg(array: Typed, name: string, index: number, value: number, t: number, where: string): void {
    if (!(index >= 0 && index < array.length)) this.outOfBounds(where, t, "write to", `'${name}'`, [index], `it has ${array.length} elements`);
    array[index] = value;
  }

  /** Private arrays: thread t's slice starts at t·size; only bounds are checked (no other thread sees it). */
  ldp(array: Typed, name: string, i: number, size: number, t: number, where: string): number {
    if (!(i >= 0 && i < size)) this.outOfBounds(where, t, "read of", `private '${name}'`, [i], `it is [${size}]`);
    return array[t * size + i]!;
  }

  stp(array: Typed, name: string, i: number, size: number, value: number, t: number, where: string): void {
    if (!(i >= 0 && i < size)) this.outOfBounds(where, t, "write to", `private '${name}'`, [i], `it is [${size}]`);
    array[t * size + i] = value;
  }

  lds1(array: Typed, name: string, i: number, size: number, t: number, where: string): number {
    if (!(i >= 0 && i < size)) this.outOfBounds(where, t, "read of", `shared '${name}'`, [i], `it is [${size}]`);
    return this.sharedRead(array, name, i, i, -1, t, where);
  }

  lds2(array: Typed, name: string, i: number, j: number, rows: number, cols: number, t: number, where: string): number {
    if (!(i >= 0 && i < rows && j >= 0 && j < cols)) this.outOfBounds(where, t, "read of", `shared '${name}'`, [i, j], `it is [${rows}][${cols}]`);
    return this.sharedRead(array, name, i * cols + j, i, j, t, where);
  }

  sts1(array: Typed, name: string, i: number, size: number, value: number, t: number, where: string): void {
    if (!(i >= 0 && i < size)) this.outOfBounds(where, t, "write to", `shared '${name}'`, [i], `it is [${size}]`);
    this.sharedWrite(array, name, i, i, -1, value, t, where);
  }

  sts2(array: Typed, name: string, i: number, j: number, rows: number, cols: number, value: number, t: number, where: string): void {
    if (!(i >= 0 && i < rows && j >= 0 && j < cols)) this.outOfBounds(where, t, "write to", `shared '${name}'`, [i, j], `it is [${rows}][${cols}]`);
    this.sharedWrite(array, name, i * cols + j, i, j, value, t, where);
  }

  private state(array: Typed): SharedState {
    let state = this.shared.get(array);
    if (!state) {
      const n = array.length;
      state = {
        written: new Uint8Array(n),
        writer: new Int32Array(n),
        writeEpoch: new Int32Array(n),
        reader: new Int32Array(n),
        readEpoch: new Int32Array(n),
        copier: new Int32Array(n).fill(-1),
        copyGroup: new Int32Array(n),
      };
      this.shared.set(array, state);
    }
    return state;
  }

  /** `j` is -1 for a 1-D array; indices only matter for messages. */
  private sharedRead(array: Typed, name: string, flat: number, i: number, j: number, t: number, where: string): number {
    const state = this.state(array);
    const element = () => `shared '${name}'[${i}]${j >= 0 ? `[${j}]` : ""}`;
    if (!state.written[flat]) this.fault("uninitialized-shared-read", where, t, `read of ${element()}, which no thread of this block has written`);
    const copier = state.copier[flat]!;
    if (copier >= 0 && state.copyGroup[flat]! >= this.completed[copier]!) {
      const who = copier === t ? "this thread" : `thread (${this.thread(copier).join(", ")})`;
      this.fault(
        "async-copy-not-waited",
        where,
        t,
        `read of ${element()}, which copyAsync4 of ${who} has not been waited for: commitAsync() and waitAsync() in the copying thread, then syncThreads(), come before the read`,
      );
    }
    if (state.writeEpoch[flat] === this.epoch && state.writer[flat] !== t) {
      this.fault("shared-race", where, t, `read of ${element()}, written by thread (${this.thread(state.writer[flat]!).join(", ")}) with no syncThreads() in between`);
    }
    if (state.readEpoch[flat] !== this.epoch) state.reader[flat] = t;
    else if (state.reader[flat] !== t) state.reader[flat] = MANY;
    state.readEpoch[flat] = this.epoch;
    return array[flat]!;
  }

  private sharedWrite(array: Typed, name: string, flat: number, i: number, j: number, value: number, t: number, where: string): void {
    const state = this.state(array);
    const element = () => `shared '${name}'[${i}]${j >= 0 ? `[${j}]` : ""}`;
    if (state.writeEpoch[flat] === this.epoch && state.writer[flat] !== t) {
      this.fault("shared-race", where, t, `write to ${element()}, also written by thread (${this.thread(state.writer[flat]!).join(", ")}) with no syncThreads() in between`);
    }
    if (state.readEpoch[flat] === this.epoch && state.reader[flat] !== t) {
      const who = state.reader[flat] === MANY ? "other threads" : `thread (${this.thread(state.reader[flat]!).join(", ")})`;
      this.fault("shared-race", where, t, `write to ${element()}, read by ${who} with no syncThreads() in between`);
    }
    array[flat] = value;
    state.written[flat] = 1;
    state.writer[flat] = t;
    state.writeEpoch[flat] = this.epoch;
    state.copier[flat] = -1;
  }

  /** A condition that decides whether barriers run: every live thread must see the same value. */
  uniform(condition: (t: number) => boolean, threads: number, done: Uint8Array | undefined, where: string): boolean {
    let first: boolean | undefined;
    let firstThread = 0;
    for (let t = 0; t < threads; t++) {
      if (done?.[t]) continue;
      const value = condition(t);
      if (first === undefined) {
        first = value;
        firstThread = t;
      } else if (value !== first) {
        this.fault(
          "barrier-divergence",
          where,
          t,
          `this condition is ${value} here but ${first} for thread (${this.thread(firstThread).join(", ")}), so not every thread reaches the same barriers`,
        );
      }
    }
    return first ?? false;
  }
}
