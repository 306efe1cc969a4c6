/**
 * Recorded sequences on WebGPU (device.record): every launch checked, its pipeline made and its bind group
 * created once, and the scalars of all of them written into the sequence's own uniform buffer, one slot per
 * launch. A WebGPU command buffer can be submitted only once, so a replay encodes the dispatches again, into
 * the device's open batch: three calls per launch (set the pipeline, the bind group at the launch's offset,
 * dispatch), with no checks but that the buffers were not freed since. `update` writes new scalars into the
 * launch's slot, after submitting any replay still being recorded, since a write reaches the queue before
 * the batch it would otherwise overtake. Timings (device.timeSequence) encode the same steps as passes.
 */

import type { KernelHandle, LaunchOptions, LaunchSequence, LaunchStep, Stream } from "../device.ts";
import { LaunchError, type CheckedLaunch } from "../launch-check.ts";
import { checkStream, type SingleQueueStream } from "../streams.ts";
import type { BindGroupCache, CommandBatcher } from "./command-batch.ts";
import { writeScalars, type KernelPlan, type PipelineEntry, type WebGpuBuffer } from "./launch-plan.ts";

/** What a sequence needs of its device (webgpu-device.ts, which imports this file). */
export interface SequenceHost {
  readonly gpu: GPUDevice;
  readonly batcher: CommandBatcher;
  readonly bindGroups: BindGroupCache;
  readonly waitingForPipelines: boolean;
  checkLaunch(kernel: KernelHandle, options: LaunchOptions): CheckedLaunch;
  cachedPipeline(kernel: KernelHandle, block: readonly [number, number, number]): PipelineEntry | undefined;
  pipeline(kernel: KernelHandle, block: readonly [number, number, number]): Promise<PipelineEntry>;
  plan(kernel: KernelHandle): KernelPlan;
  recordReplay(steps: readonly SequenceStep[]): void;
  inTurn<T>(job: () => Promise<T>): Promise<T>;
  /** A launch's arguments with a checked build's implicit ones after them (`tag` gives its records' tag). */
  launchArgs(kernel: KernelHandle, args: readonly unknown[], tag: () => number): readonly unknown[];
  /** The tag of a recorded step of a checked build (0 for others). */
  sequenceTag(kernel: KernelHandle): number;
}

/** One recorded launch, ready to encode. */
export interface SequenceStep {
  readonly kernel: KernelHandle;
  readonly plan: KernelPlan;
  readonly checked: CheckedLaunch;
  readonly entry: PipelineEntry;
  readonly bindGroup: GPUBindGroup;
  /** Where its scalars sit in the sequence's uniform buffer (undefined: the kernel has none). */
  readonly uniformOffset?: number;
  /** The buffers it uses (storage and uniform), which must outlive any batch that encodes it. */
  readonly storage: readonly GPUBuffer[];
  /** A checked build's: the tag its records carry (checked-build.ts); 0 for others. */
  readonly tag: number;
}

const resolved = Promise.resolve();

export class WebGpuSequence implements LaunchSequence {
  private disposed = false;
  /** The batch serial the last replay was recorded into (see update). */
  private replayedInto = -1;

  private constructor(
    private readonly device: SequenceHost,
    private readonly steps: SequenceStep[],
    /** The sequence's uniform buffer, when a launch has scalars, and each launch's slot in it. */
    private readonly uniform: GPUBuffer | undefined,
    private readonly slots: readonly (number | undefined)[],
  ) {}

  /** Checks every step and makes what replays need: pipelines, the uniform buffer with the scalars, bind groups. */
  static async create(device: SequenceHost, launches: readonly LaunchStep[]): Promise<WebGpuSequence> {
    const checked = launches.map((step) => device.checkLaunch(step.kernel, step.options));
    const entries: PipelineEntry[] = [];
    for (const [i, step] of launches.entries()) entries.push(device.cachedPipeline(step.kernel, checked[i]!.block) ?? (await device.pipeline(step.kernel, checked[i]!.block)));
    const plans = launches.map((step) => device.plan(step.kernel));
    const tags = launches.map((step) => device.sequenceTag(step.kernel));
    const args = launches.map((step, i) => device.launchArgs(step.kernel, checked[i]!.args, () => tags[i]!));
    const alignment = Math.max(4, device.gpu.limits.minUniformBufferOffsetAlignment);
    let bytes = 0;
    const slots = plans.map((plan) => {
      if (!plan.uniform) return undefined;
      const offset = bytes;
      bytes += Math.ceil(plan.uniform.size / alignment) * alignment;
      return offset;
    });
    const uniform = bytes > 0 ? device.gpu.createBuffer({ size: bytes, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST, label: "tskernel sequence scalars" }) : undefined;
    const sequence = new WebGpuSequence(device, [], uniform, slots);
    if (uniform) {
      const data = new DataView(new ArrayBuffer(bytes));
      plans.forEach((plan, i) => {
        if (plan.uniform) writeScalars(plan, args[i]!, data, slots[i]!);
      });
      device.gpu.queue.writeBuffer(uniform, 0, data.buffer);
    }
    launches.forEach((step, i) => sequence.steps.push(sequence.step(step.kernel, plans[i]!, checked[i]!, args[i]!, entries[i]!, slots[i], tags[i]!)));
    return sequence;
  }

  private step(kernel: KernelHandle, plan: KernelPlan, checked: CheckedLaunch, args: readonly unknown[], entry: PipelineEntry, slot: number | undefined, tag: number): SequenceStep {
    const storage = plan.bindingArgs.map((arg) => (args[arg] as WebGpuBuffer).gpuBuffer);
    const uniform = plan.uniform && this.uniform ? { binding: plan.uniform.binding, buffer: this.uniform, size: plan.uniform.size } : undefined;
    const bindGroup = this.device.bindGroups.get(entry.layout, plan.bindings, storage, uniform);
    return { kernel, plan, checked, entry, bindGroup, uniformOffset: slot, storage: uniform ? [...storage, uniform.buffer] : storage, tag };
  }

  get length(): number {
    return this.steps.length;
  }

  replay(options: { readonly stream?: Stream } = {}): Promise<void> {
    try {
      if (this.disposed) throw new Error("tskernel: the sequence was disposed");
      checkStream(options.stream, this.device, "(sequence)", (stream) => (stream as SingleQueueStream).disposed);
    } catch (error) {
      return Promise.reject(error);
    }
    const replayNow = () => {
      this.device.recordReplay(this.steps);
      this.replayedInto = this.device.batcher.currentSerial;
    };
    if (this.device.waitingForPipelines) return this.device.inTurn(async () => replayNow());
    try {
      replayNow();
    } catch (error) {
      return Promise.reject(error);
    }
    return resolved;
  }

  update(index: number, options: LaunchOptions): void {
    const old = this.steps[index];
    if (!old || this.disposed) throw new RangeError(`tskernel: the sequence has no launch ${index}${this.disposed ? " (it was disposed)" : ""}`);
    const checked = this.device.checkLaunch(old.kernel, options);
    const args = this.device.launchArgs(old.kernel, checked.args, () => old.tag);
    const entry = this.device.cachedPipeline(old.kernel, checked.block);
    if (!entry) throw new LaunchError(old.plan.name, `the sequence was recorded with blocks of [${old.checked.block.join(", ")}]; record it again to launch blocks of [${checked.block.join(", ")}]`);
    const slot = this.slots[index];
    if (old.plan.uniform && this.uniform && slot !== undefined) {
      // A replay still being recorded must read the old scalars: it goes to the queue before the write.
      if (this.replayedInto === this.device.batcher.currentSerial) this.device.batcher.flush();
      const data = new DataView(new ArrayBuffer(old.plan.uniform.size));
      writeScalars(old.plan, args, data, 0);
      this.device.gpu.queue.writeBuffer(this.uniform, slot, data.buffer);
    }
    this.steps[index] = this.step(old.kernel, old.plan, checked, args, entry, slot, old.tag);
  }

  /** The steps as one command buffer for a timed run: one pass per launch, timestamps at the first and last. */
  encodeTimed(querySet?: GPUQuerySet): GPUCommandBuffer {
    const encoder = this.device.gpu.createCommandEncoder();
    this.steps.forEach((step, i) => {
      const first = i === 0;
      const last = i === this.steps.length - 1;
      const timestampWrites = querySet && (first || last) ? { querySet, ...(first ? { beginningOfPassWriteIndex: 0 } : {}), ...(last ? { endOfPassWriteIndex: 1 } : {}) } : undefined;
      const pass = encoder.beginComputePass(timestampWrites ? { timestampWrites } : {});
      pass.setPipeline(step.entry.pipeline);
      if (step.uniformOffset === undefined) pass.setBindGroup(0, step.bindGroup);
      else pass.setBindGroup(0, step.bindGroup, [step.uniformOffset]);
      pass.dispatchWorkgroups(...step.checked.grid);
      pass.end();
    });
    return encoder.finish();
  }

  /** Releases the uniform buffer once no batch being recorded uses it (submitted replays keep it alive). */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    if (this.uniform) {
      this.device.bindGroups.forget(this.uniform);
      this.device.batcher.destroy(this.uniform);
    }
  }
}
