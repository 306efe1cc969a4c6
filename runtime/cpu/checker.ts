/**
 * The checked CPU mode's run-time half: the generated checked JS calls these for every array access and
 * every block-level condition. It finds, with the kernel's TypeScript location and the block and thread:
 * out-of-bounds reads and writes (global and shared), vector accesses (load4, store4) whose index is not a
 * multiple of 4 (CUDA faults on them), reads of elements that a `copyAsync4` wrote before the copying thread
 * waited for its group (`waitAsync`: the copies run at once here, but on CUDA the data is not there yet), reads
 * of shared memory no thread of the block has
 * written since the block started, races on shared memory (two threads touching one element between the
 * same two barriers, one of them writing), conditions around barriers and subgroup operations that differ
 * between threads, integer divisions by zero and shift amounts outside 0…31. The first fault stops the launch
 * with a KernelFault (kernel-fault.ts, whose texts the checked GPU builds' reports share).
 */

import { divisionDetail, KernelFault, misalignedDetail, outOfBoundsDetail, shiftDetail, type FaultKind } from "../kernel-fault.ts";

export { KernelFault, type FaultKind } from "../kernel-fault.ts";

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
  /** Where the last plain write and read of each element stood, to name them when an atomic races with them. */
  readonly writeWhere: string[];
  readonly readWhere: string[];
  /** The thread that updated each element with atomics in `atomicEpoch` (MANY: several), and where. */
  readonly atomicThread: Int32Array;
  readonly atomicEpoch: Int32Array;
  readonly atomicWhere: string[];
}

const MANY = -2;

type Typed = Float32Array | Int32Array | Uint32Array;

export class Checker {
  private blockIdx: readonly number[] = [0, 0, 0];
  private blockDim: readonly number[] = [1, 1, 1];
  private subgroupSize = 32;
  /**
   * The barrier epoch and the record of shared arrays, one for all the blocks of a cluster (`sibling`): a barrier
   * in any of them orders every block's accesses, which can only hide a race between blocks, never invent one.
   */
  private clock = { epoch: 1 };
  private shared = new Map<Typed, SharedState>();
  private get epoch(): number {
    return this.clock.epoch;
  }
  private set epoch(value: number) {
    this.clock.epoch = value;
  }
  /** Per thread: groups of asynchronous copies committed so far, and how many of them a waitAsync completed. */
  private committed = new Int32Array(0);
  private completed = new Int32Array(0);

  private ticks = 0;
  private deadline: number;

  /** `timeLimitMs`: the launch's limit, counted from now. */
  constructor(
    private readonly kernel: string,
    private readonly timeLimitMs?: number,
  ) {
    this.deadline = timeLimitMs === undefined ? Infinity : performance.now() + timeLimitMs;
  }

  /**
   * A checker for another block of the same cluster (js.ts's cluster runner makes one a block): its own block,
   * threads and copy groups; this one's barrier epoch, shared-array record and time limit.
   */
  sibling(): Checker {
    const other = new Checker(this.kernel, this.timeLimitMs);
    other.clock = this.clock;
    other.shared = this.shared;
    other.deadline = this.deadline;
    return other;
  }

  /** The start of a loop iteration (thread t, or -1 for a loop of the whole block): looks at the clock now and then. */
  tick(t: number, where: string): void {
    if ((++this.ticks & 0x3ff) !== 0 || performance.now() <= this.deadline) return;
    this.fault("time-limit", where, t < 0 ? undefined : t, `the launch ran past its time limit of ${this.timeLimitMs} ms in this loop`);
  }

  beginBlock(blockIdx: readonly number[], blockDim: readonly number[], subgroupSize = 32): void {
    this.blockIdx = [...blockIdx];
    this.blockDim = blockDim;
    this.subgroupSize = subgroupSize;
    this.epoch = 1;
    // Cleared, not replaced: the blocks of a cluster share it (each begins before any of them runs).
    this.shared.clear();
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
    return this.fault("out-of-bounds", where, t, outOfBoundsDetail(verb, name, indices, shape));
  }

  /** The last index of a vector access, which must be a multiple of `width`; returns it. */
  aligned(index: number, width: number, name: string, t: number, where: string): number {
    if (index % width !== 0) this.fault("misaligned-vector-access", where, t, misalignedDetail(name, index, width));
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

  /** An integer divisor (`/`, `%` of `text`): 0 is a fault. Returns it. */
  div(divisor: number, op: "/" | "%", text: string, t: number, where: string): number {
    if (divisor === 0) this.fault("division-by-zero", where, t, divisionDetail(op, text));
    return divisor;
  }

  /** A shift amount (of `text`): outside 0…31 is a fault (the language takes it modulo 32). Returns it. */
  shift(amount: number, text: string, t: number, where: string): number {
    if (!(amount >= 0 && amount < 32)) this.fault("shift-out-of-range", where, t, shiftDetail(amount, text));
    return amount;
  }

  /** A typed view of a buffer of vectors or structs, `per` view elements to one of the buffer's: reported in the buffer's. */
  ldv(view: Typed, name: string, index: number, per: number, t: number, where: string): number {
    if (!(index >= 0 && index < view.length)) this.outOfBounds(where, t, "read of", `'${name}'`, [Math.floor(index / per)], `it has ${view.length / per} elements`);
    return view[index]!;
  }

  stv(view: Typed, name: string, index: number, per: number, value: number, t: number, where: string): void {
    if (!(index >= 0 && index < view.length)) this.outOfBounds(where, t, "write to", `'${name}'`, [Math.floor(index / per)], `it has ${view.length / per} elements`);
    view[index] = value;
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
        writeWhere: [],
        readWhere: [],
        atomicThread: new Int32Array(n),
        atomicEpoch: new Int32Array(n),
        atomicWhere: [],
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
        `read of ${element()}, which an asynchronous copy (copyAsync4, 8 or 16) of ${who} has not been waited for: commitAsync() and waitAsync() in the copying thread, then syncThreads(), come before the read`,
      );
    }
    if (state.writeEpoch[flat] === this.epoch && state.writer[flat] !== t) {
      this.fault("shared-race", where, t, `read of ${element()}, written by thread (${this.thread(state.writer[flat]!).join(", ")}) with no syncThreads() in between`);
    }
    this.plainAfterAtomic(state, flat, t, where, `read of ${element()}`);
    if (state.readEpoch[flat] !== this.epoch) state.reader[flat] = t;
    else if (state.reader[flat] !== t) state.reader[flat] = MANY;
    state.readEpoch[flat] = this.epoch;
    state.readWhere[flat] = where;
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
    this.plainAfterAtomic(state, flat, t, where, `write to ${element()}`);
    array[flat] = value;
    state.written[flat] = 1;
    state.writer[flat] = t;
    state.writeEpoch[flat] = this.epoch;
    state.writeWhere[flat] = where;
    state.copier[flat] = -1;
  }

  /** A plain access to an element that another thread updated with an atomic since the last barrier. */
  private plainAfterAtomic(state: SharedState, flat: number, t: number, where: string, access: string): void {
    if (state.atomicEpoch[flat] !== this.epoch || state.atomicThread[flat] === t) return;
    const who = state.atomicThread[flat] === MANY ? "other threads" : `thread (${this.thread(state.atomicThread[flat]!).join(", ")})`;
    this.fault("shared-race", where, t, `${access}, which ${who} updated with an atomic at ${state.atomicWhere[flat]} with no syncThreads() in between; mix plain and atomic accesses to one element only across a barrier`);
  }

  /** An atomic on a global buffer: only its bounds are checked. Returns the index. */
  atmg(array: Typed, name: string, index: number, t: number, where: string): number {
    if (!(index >= 0 && index < array.length)) this.outOfBounds(where, t, "atomic on", `'${name}'`, [index], `it has ${array.length} elements`);
    return index;
  }

  /** An atomic on a 1-D shared array (see `atomic`); returns the element's index. */
  atms1(array: Typed, name: string, i: number, size: number, t: number, where: string, readsOld: boolean): number {
    if (!(i >= 0 && i < size)) this.outOfBounds(where, t, "atomic on", `shared '${name}'`, [i], `it is [${size}]`);
    return this.atomic(array, name, i, i, -1, t, where, readsOld);
  }

  atms2(array: Typed, name: string, i: number, j: number, rows: number, cols: number, t: number, where: string, readsOld: boolean): number {
    if (!(i >= 0 && i < rows && j >= 0 && j < cols)) this.outOfBounds(where, t, "atomic on", `shared '${name}'`, [i, j], `it is [${rows}][${cols}]`);
    return this.atomic(array, name, i * cols + j, i, j, t, where, readsOld);
  }

  /**
   * An atomic on a shared element: atomics of several threads on one element do not race, but a plain write
   * or read of another thread since the last barrier does, reported at that plain access's line. An atomic
   * that uses the old value reads it, so the element must have been written.
   */
  private atomic(array: Typed, name: string, flat: number, i: number, j: number, t: number, where: string, readsOld: boolean): number {
    const state = this.state(array);
    const element = `shared '${name}'[${i}]${j >= 0 ? `[${j}]` : ""}`;
    if (readsOld && !state.written[flat]) this.fault("uninitialized-shared-read", where, t, `atomic on ${element}, which no thread of this block has written`);
    const copier = state.copier[flat]!;
    if (readsOld && copier >= 0 && state.copyGroup[flat]! >= this.completed[copier]!) {
      this.fault("async-copy-not-waited", where, t, `atomic on ${element}, which an asynchronous copy has not been waited for`);
    }
    if (state.writeEpoch[flat] === this.epoch && state.writer[flat] !== t) {
      this.fault("shared-race", state.writeWhere[flat]!, state.writer[flat]!, `write to ${element}, which thread (${this.thread(t).join(", ")}) also updates with an atomic at ${where} with no syncThreads() in between; mix plain and atomic accesses to one element only across a barrier`);
    }
    if (state.readEpoch[flat] === this.epoch && state.reader[flat] !== t) {
      const reader = state.reader[flat]!;
      this.fault("shared-race", state.readWhere[flat]!, reader === MANY ? undefined : reader, `read of ${element}, which thread (${this.thread(t).join(", ")}) updates with an atomic at ${where} with no syncThreads() in between; mix plain and atomic accesses to one element only across a barrier`);
    }
    if (state.atomicEpoch[flat] !== this.epoch) state.atomicThread[flat] = t;
    else if (state.atomicThread[flat] !== t) state.atomicThread[flat] = MANY;
    state.atomicEpoch[flat] = this.epoch;
    state.atomicWhere[flat] = where;
    state.written[flat] = 1;
    state.copier[flat] = -1;
    return flat;
  }

  /** Lanes of a subgroup that reach a subgroup operation while others of the subgroup returned. */
  partialSubgroup(base: number, size: number, live: readonly boolean[], where: string): never {
    const missing = live.findIndex((alive) => !alive);
    const present = live.findIndex(Boolean);
    return this.fault(
      "divergent-subgroup-op",
      where,
      base + missing,
      `lane ${missing} of subgroup ${base / size} has returned, but lane ${present} reaches this subgroup operation: every lane of a subgroup must take part`,
    );
  }

  /**
   * A condition that decides whether barriers or subgroup operations run: every live thread must see the
   * same value. `inside` names the first subgroup operation the condition guards and where it is: lanes of one subgroup that
   * disagree are a `divergent-subgroup-op` there (with the lane), and so are subgroups that disagree when no
   * barrier is involved (tskernel asks every thread of the block to agree, as WGSL does).
   */
  uniform(
    condition: (t: number) => boolean,
    threads: number,
    done: Uint8Array | undefined,
    where: string,
    inside?: { readonly barrier: boolean; readonly operation: string; readonly at: string },
    /** The first thread that must agree (a warpgroup's, in kernels with roles: threads from … threads − 1). */
    from = 0,
  ): boolean {
    if (inside) this.subgroupsAgree(condition, threads, done, where, inside, from);
    let first: boolean | undefined;
    let firstThread = from;
    for (let t = from; t < threads; t++) {
      if (done?.[t]) continue;
      const value = condition(t);
      if (first === undefined) {
        first = value;
        firstThread = t;
      } else if (value !== first) {
        if (inside && !inside.barrier) {
          this.fault(
            "divergent-subgroup-op",
            inside.at,
            t,
            `the condition at ${where} is ${value} for subgroup ${Math.floor(t / this.subgroupSize)} but ${first} for subgroup ${Math.floor(firstThread / this.subgroupSize)}; every thread of the block must agree on the conditions around ${inside.operation}`,
          );
        }
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

  /** Lanes of one subgroup that disagree on a condition around a subgroup operation: the lane and the operation. */
  private subgroupsAgree(
    condition: (t: number) => boolean,
    threads: number,
    done: Uint8Array | undefined,
    where: string,
    inside: { readonly operation: string; readonly at: string },
    from: number,
  ): void {
    const size = this.subgroupSize;
    for (let base = from; base < threads; base += size) {
      let first: boolean | undefined;
      let firstLane = 0;
      for (let lane = 0; lane < size && base + lane < threads; lane++) {
        if (done?.[base + lane]) continue;
        const value = condition(base + lane);
        if (first === undefined) {
          first = value;
          firstLane = lane;
        } else if (value !== first) {
          this.fault(
            "divergent-subgroup-op",
            inside.at,
            base + lane,
            `the condition at ${where} is ${value} for lane ${lane} of subgroup ${base / size} but ${first} for lane ${firstLane}, so only part of the subgroup reaches ${inside.operation}`,
          );
        }
      }
    }
  }
}
