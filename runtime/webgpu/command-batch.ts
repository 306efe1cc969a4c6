/**
 * How the WebGPU device submits its launches. Consecutive launches are recorded as dispatches of one compute
 * pass in one command encoder and submitted together: when the device is synchronized or read, when a write,
 * copy or timing must come after them, every `batchSize` launches, and at the latest when the JavaScript task
 * that recorded them ends (a timer), so that work nobody waits for still starts. WebGPU orders the
 * dispatches of a pass as it orders passes: each sees what the ones before it wrote.
 *
 * A launch creates no GPU object: its scalars go into a ring of uniform buffers (one chunk per batch, written
 * with one writeBuffer at submission and bound with a dynamic offset per launch), and bind groups are cached
 * per layout, storage buffers and uniform buffer. Each batch runs inside an error scope; when one reports an
 * error, the batch's dispatches are encoded again one by one, without submitting, to find the launch that
 * failed (the ledger then names it). A buffer freed while a batch that binds it is still open is destroyed
 * just after that batch is submitted: WebGPU refuses a submission that uses a destroyed buffer, and keeps the
 * buffers of submitted work alive itself.
 */

import type { LaunchLedger } from "../launch-ledger.ts";

/** One launch as the pass encodes it. */
export interface Dispatch {
  /** Its number in the device's ledger, and its kernel. */
  readonly launch: number;
  readonly kernel: string;
  readonly pipeline: GPUComputePipeline;
  readonly bindGroup: GPUBindGroup;
  /** The dynamic offset of its scalars in the bind group's uniform buffer; undefined: the kernel has none. */
  readonly uniformOffset?: number;
  readonly grid: readonly [number, number, number];
}

/** A uniform buffer of the ring, or a recorded sequence's own. */
export interface UniformBuffer {
  readonly buffer: GPUBuffer;
}

/** Where a launch writes its scalars: `view` at `offset`, which is also the dynamic offset to bind. */
export interface UniformSlot {
  readonly uniform: UniformBuffer;
  readonly view: DataView;
  readonly offset: number;
}

interface OpenBatch {
  readonly encoder: GPUCommandEncoder;
  readonly pass: GPUComputePassEncoder;
  readonly dispatches: Dispatch[];
  /** The ring chunk its scalars go to, once a launch has scalars, and the bytes used. */
  chunk?: UniformBuffer;
  used: number;
  lastPipeline?: GPUComputePipeline;
  /** Storage buffers its dispatches bind. */
  readonly buffers: Set<GPUBuffer>;
  /** Buffers freed meanwhile, destroyed once it is submitted. */
  readonly destroyAfterSubmit: GPUBuffer[];
}

/** Bytes of each chunk of the uniform ring: room for 256 launches' scalars at the usual 256-byte alignment. */
const chunkBytes = 64 * 1024;

export class CommandBatcher {
  private open?: OpenBatch;
  /** The validation of each submitted batch, until it has settled (its errors are then in the ledger). */
  private readonly inFlight = new Set<Promise<void>>();
  /** Submissions made, and the last one known complete. */
  private submittedSerial = 0;
  private completedSerial = 0;
  /** Ring chunks free for a new batch; a chunk returns here once its batch has run. */
  private readonly freeChunks: UniformBuffer[] = [];
  private readonly staging = new Uint8Array(chunkBytes);
  private readonly stagingView = new DataView(this.staging.buffer);
  private readonly alignment: number;
  private flushTimer?: ReturnType<typeof setTimeout>;
  /** Submissions so far (for tests and the benchmark: launches per submission). */
  submissions = 0;

  constructor(
    private readonly gpu: GPUDevice,
    private readonly ledger: LaunchLedger,
    /** Launches per submission at most. */
    readonly batchSize: number,
  ) {
    this.alignment = Math.max(4, gpu.limits.minUniformBufferOffsetAlignment);
  }

  /** Whether an open (not yet submitted) batch binds `buffer`. */
  binds(buffer: GPUBuffer): boolean {
    return this.open?.buffers.has(buffer) ?? false;
  }

  /** Destroys `buffer` now, or right after the open batch that binds it is submitted. */
  destroy(buffer: GPUBuffer): void {
    if (this.open?.buffers.has(buffer)) this.open.destroyAfterSubmit.push(buffer);
    else buffer.destroy();
  }

  /** A serial that completes once everything recorded so far has run (for stream events). */
  get currentSerial(): number {
    return this.open ? this.submittedSerial + 1 : this.submittedSerial;
  }

  completed(serial: number): boolean {
    return this.completedSerial >= serial;
  }

  /**
   * Room for `bytes` of a launch's scalars in the open batch's ring chunk (opening a batch, or submitting a
   * full one first). Call before `bindGroup`, which binds the chunk it returns.
   */
  uniformSlot(bytes: number): UniformSlot {
    let batch = this.ensureOpen();
    const size = Math.ceil(bytes / this.alignment) * this.alignment;
    if (batch.chunk && batch.used + size > chunkBytes) {
      this.flush();
      batch = this.ensureOpen();
    }
    batch.chunk ??= this.freeChunks.pop() ?? { buffer: this.gpu.createBuffer({ size: chunkBytes, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST, label: "tskernel uniform ring" }) };
    const offset = batch.used;
    batch.used += size;
    return { uniform: batch.chunk, view: this.stagingView, offset };
  }

  /** Records a dispatch into the open batch (opening one); submits the batch once it holds `batchSize`. */
  record(dispatch: Dispatch, storage: readonly GPUBuffer[]): void {
    const batch = this.ensureOpen();
    if (batch.lastPipeline !== dispatch.pipeline) {
      batch.pass.setPipeline(dispatch.pipeline);
      batch.lastPipeline = dispatch.pipeline;
    }
    if (dispatch.uniformOffset === undefined) batch.pass.setBindGroup(0, dispatch.bindGroup);
    else batch.pass.setBindGroup(0, dispatch.bindGroup, [dispatch.uniformOffset]);
    batch.pass.dispatchWorkgroups(dispatch.grid[0], dispatch.grid[1], dispatch.grid[2]);
    batch.dispatches.push(dispatch);
    for (const buffer of storage) batch.buffers.add(buffer);
    if (batch.dispatches.length >= this.batchSize) this.flush();
  }

  private ensureOpen(): OpenBatch {
    if (this.open) return this.open;
    // The scope catches what the batch's recording and submission report: bind groups made for it, and the
    // encoder's and the submission's validation.
    this.gpu.pushErrorScope("validation");
    const encoder = this.gpu.createCommandEncoder();
    this.open = { encoder, pass: encoder.beginComputePass(), dispatches: [], used: 0, buffers: new Set(), destroyAfterSubmit: [] };
    this.flushTimer = setTimeout(() => this.flush(), 0);
    return this.open;
  }

  /**
   * Submits the open batch, if any. `extra` command buffers (a read's copy, a timing's passes) follow it in
   * the same submission, inside its error scope.
   */
  flush(extra: readonly GPUCommandBuffer[] = []): void {
    const batch = this.open;
    if (!batch) {
      if (extra.length > 0) this.submitAlone(extra);
      return;
    }
    this.open = undefined;
    clearTimeout(this.flushTimer);
    batch.pass.end();
    if (batch.chunk && batch.used > 0) this.gpu.queue.writeBuffer(batch.chunk.buffer, 0, this.staging, 0, batch.used);
    this.gpu.queue.submit([batch.encoder.finish(), ...extra]);
    for (const buffer of batch.destroyAfterSubmit) buffer.destroy();
    const error = this.gpu.popErrorScope();
    const validated = error.then(
      (found) => (found ? this.diagnose(batch.dispatches, found) : undefined),
      (failure: unknown) => this.ledger.failOneOf(refs(batch.dispatches), failure, "the error scope around their submission failed"),
    );
    this.inFlight.add(validated);
    void validated.finally(() => this.inFlight.delete(validated));
    const chunk = batch.chunk;
    const lastLaunch = batch.dispatches.at(-1)?.launch;
    this.afterSubmit(() => {
      if (lastLaunch !== undefined) this.ledger.settle(lastLaunch);
      if (chunk) this.freeChunks.push(chunk);
    });
  }

  /** Command buffers submitted on their own, after everything recorded before (a read's copy). */
  private submitAlone(commands: readonly GPUCommandBuffer[]): void {
    this.gpu.queue.submit([...commands]);
    this.afterSubmit(() => {});
  }

  /** Counts a submission, and runs `done` once it has run. */
  private afterSubmit(done: () => void): void {
    this.submissions++;
    const serial = ++this.submittedSerial;
    void this.gpu.queue.onSubmittedWorkDone().then(() => {
      if (serial > this.completedSerial) this.completedSerial = serial;
      done();
    });
  }

  /**
   * Waits until every submitted batch has been validated, so that their errors are in the ledger. (Whether
   * they have run is the caller's to wait for: onSubmittedWorkDone, or a mapped buffer.)
   */
  async validated(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  /**
   * A batch reported `error`: encodes each of its dispatches again in a command buffer of its own, without
   * submitting it, to find the ones WebGPU refuses; the batch as a whole when none is refused alone (an
   * error of the submission). Nothing of the batch ran: WebGPU drops an invalid command buffer.
   */
  private async diagnose(dispatches: readonly Dispatch[], error: GPUError): Promise<void> {
    const note = dispatches.length > 1 ? `; nothing of the ${dispatches.length} launches submitted with it (#${dispatches[0]!.launch}–#${dispatches.at(-1)!.launch}) ran` : "";
    for (const dispatch of dispatches) {
      this.gpu.pushErrorScope("validation");
      const encoder = this.gpu.createCommandEncoder();
      const pass = encoder.beginComputePass();
      pass.setPipeline(dispatch.pipeline);
      if (dispatch.uniformOffset === undefined) pass.setBindGroup(0, dispatch.bindGroup);
      else pass.setBindGroup(0, dispatch.bindGroup, [dispatch.uniformOffset]);
      pass.dispatchWorkgroups(dispatch.grid[0], dispatch.grid[1], dispatch.grid[2]);
      pass.end();
      encoder.finish();
      const own = await this.gpu.popErrorScope();
      if (own) {
        this.ledger.fail(dispatch.launch, dispatch.kernel, new Error(`WebGPU reported: ${own.message}${note}`));
        return;
      }
    }
    this.ledger.failOneOf(refs(dispatches), new Error(`WebGPU reported: ${error.message}`), "WebGPU reported the error for their submission as a whole");
  }

  /** Stops the timer of an open batch (the device is being destroyed). */
  dispose(): void {
    clearTimeout(this.flushTimer);
    this.open = undefined;
  }
}

/**
 * Bind groups made once per layout, storage buffers and uniform buffer, and kept: a launch with buffers seen
 * before creates none. Those of a buffer are dropped when it is freed.
 */
export class BindGroupCache {
  private readonly groups = new Map<string, GPUBindGroup>();
  /** The keys of the groups that bind each buffer (by its id), to drop them when it is freed. */
  private readonly keysOf = new Map<number, string[]>();
  private readonly ids = new WeakMap<object, number>();
  private nextId = 1;

  constructor(private readonly gpu: GPUDevice) {}

  private id(object: object): number {
    let id = this.ids.get(object);
    if (id === undefined) this.ids.set(object, (id = this.nextId++));
    return id;
  }

  /**
   * The group of `layout` that binds `storage[i]` at `bindings[i]`, and the uniform buffer (`uniformSize`
   * bytes at a dynamic offset) at `uniformBinding`.
   */
  get(layout: GPUBindGroupLayout, bindings: readonly number[], storage: readonly GPUBuffer[], uniform?: { readonly binding: number; readonly buffer: GPUBuffer; readonly size: number }): GPUBindGroup {
    const ids = storage.map((buffer) => this.id(buffer));
    const key = `${this.id(layout)}:${ids.join(",")}${uniform ? `|${this.id(uniform.buffer)}` : ""}`;
    const cached = this.groups.get(key);
    if (cached) return cached;
    // A bound on what the cache holds: programs that make buffers without end would otherwise fill it.
    if (this.groups.size >= 4096) {
      this.groups.clear();
      this.keysOf.clear();
    }
    const entries: GPUBindGroupEntry[] = storage.map((buffer, i) => ({ binding: bindings[i]!, resource: { buffer } }));
    if (uniform) entries.push({ binding: uniform.binding, resource: { buffer: uniform.buffer, size: uniform.size } });
    const group = this.gpu.createBindGroup({ layout, entries });
    this.groups.set(key, group);
    for (const id of new Set(ids)) {
      const keys = this.keysOf.get(id);
      if (keys) keys.push(key);
      else this.keysOf.set(id, [key]);
    }
    return group;
  }

  /** Drops the groups that bind `buffer`. */
  forget(buffer: GPUBuffer): void {
    const id = this.ids.get(buffer);
    if (id === undefined) return;
    for (const key of this.keysOf.get(id) ?? []) this.groups.delete(key);
    this.keysOf.delete(id);
  }
}

function refs(dispatches: readonly Dispatch[]): { launch: number; kernel: string }[] {
  return dispatches.map((d) => ({ launch: d.launch, kernel: d.kernel }));
}
