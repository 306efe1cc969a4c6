/**
 * Recorded sequences on CUDA (device.record): a CUDA graph, built node by node rather than captured from a
 * stream, so that each launch's node handle is known. Every launch is checked once and becomes a kernel node
 * that depends on the one before (a chain, as the launches would run on one stream); the graph is
 * instantiated once, and a replay is one cuGraphLaunch, whatever the number of launches. `update` checks the
 * new options and changes the node in the instantiated graph (cuGraphExecKernelNodeSetParams): new scalars,
 * buffers, grid or block for the same function, which CUDA allows without re-instantiating; replays already
 * enqueued keep what they had. Each node keeps its own argument block, since the graph reads it when the
 * node is made or updated.
 */

import type { KernelHandle, LaunchOptions, LaunchSequence, LaunchStep, Stream } from "../device.ts";
import type { CheckedLaunch } from "../launch-check.ts";
import type { DriverApi } from "./cuda-api.ts";
import { check } from "./cuda-api.ts";
import { ArgumentBlock, NodeParams, type CudaLaunchPlan } from "./cuda-launch.ts";

/** What a sequence needs of its device (cuda-device.ts, which imports this file). */
export interface GraphHost {
  readonly cu: DriverApi;
  /** Every check a launch gets; throws as launch() would. */
  prepare(kernel: KernelHandle, options: LaunchOptions): { plan: CudaLaunchPlan; checked: CheckedLaunch };
  /** Throws if a buffer of the launch was freed since it was checked. */
  checkBuffers(name: string, checked: CheckedLaunch): void;
  /** The handle of a launch's stream (null: the device's own queue), refusing another device's. */
  streamHandle(stream: Stream | undefined, kernel: string): unknown;
  /** Numbers a launch in the device's ledger. */
  numberLaunch(kernel: string): number;
  /** Runs `release` once the work enqueued so far has finished. */
  releaseWhenDone(release: () => void): void;
  /** A launch's arguments with a checked build's implicit ones after them (`tag` gives its records' tag). */
  launchArgs(kernel: KernelHandle, args: CheckedLaunch["args"], tag: () => number): CheckedLaunch["args"];
  /** The tag of a recorded node of a checked build (0 for others), and a replay of it as launch `launch`. */
  sequenceTag(kernel: KernelHandle): number;
  replayed(tag: number, launch: number): void;
}

interface Node {
  readonly kernel: KernelHandle;
  plan: CudaLaunchPlan;
  checked: CheckedLaunch;
  readonly handle: bigint;
  readonly args: ArgumentBlock;
  /** A checked build's: the tag its records carry; 0 for others. */
  readonly tag: number;
}

export class CudaSequence implements LaunchSequence {
  private disposed = false;

  private constructor(
    private readonly host: GraphHost,
    private readonly graph: unknown,
    private readonly exec: unknown,
    private readonly nodes: Node[],
    private readonly params: NodeParams,
  ) {}

  static create(host: GraphHost, steps: readonly LaunchStep[]): CudaSequence {
    const prepared = steps.map((step) => host.prepare(step.kernel, step.options));
    const cu = host.cu;
    const graphOut: unknown[] = [null];
    check("cuGraphCreate", cu.cuGraphCreate(graphOut, 0));
    const graph = graphOut[0];
    const params = new NodeParams();
    const nodes: Node[] = [];
    try {
      for (const [i, { plan, checked }] of prepared.entries()) {
        const args = new ArgumentBlock(plan.slotCount);
        const tag = host.sequenceTag(steps[i]!.kernel);
        args.write(plan.kinds, host.launchArgs(steps[i]!.kernel, checked.args, () => tag), plan.layouts);
        params.write(plan.fnAddress, checked.grid, checked.block, plan.dynamicSharedBytes, args.pointers);
        const out: bigint[] = [0n];
        const previous = nodes.at(-1);
        check("cuGraphAddKernelNode", cu.cuGraphAddKernelNode_v2(out, graph, previous ? BigUint64Array.of(previous.handle) : null, previous ? 1 : 0, params.address));
        nodes.push({ kernel: steps[i]!.kernel, plan, checked, handle: BigInt(out[0]!), args, tag });
      }
      const execOut: unknown[] = [null];
      check("cuGraphInstantiateWithFlags", cu.cuGraphInstantiateWithFlags(execOut, graph, 0));
      return new CudaSequence(host, graph, execOut[0], nodes, params);
    } catch (error) {
      for (const node of nodes) node.args.release();
      params.release();
      cu.cuGraphDestroy(graph);
      throw error;
    }
  }

  get length(): number {
    return this.nodes.length;
  }

  /** One cuGraphLaunch; each launch of the graph is numbered in the ledger, as launch() numbers its own. */
  async replay(options: { readonly stream?: Stream } = {}): Promise<void> {
    if (this.disposed) throw new Error("tskernel: the sequence was disposed");
    const stream = this.host.streamHandle(options.stream, "(sequence)");
    for (const node of this.nodes) this.host.checkBuffers(node.plan.name, node.checked);
    check("cuGraphLaunch", this.host.cu.cuGraphLaunch(this.exec, stream));
    for (const node of this.nodes) this.host.replayed(node.tag, this.host.numberLaunch(node.plan.name));
  }

  update(index: number, options: LaunchOptions): void {
    const node = this.nodes[index];
    if (!node || this.disposed) throw new RangeError(`tskernel: the sequence has no launch ${index}${this.disposed ? " (it was disposed)" : ""}`);
    const { plan, checked } = this.host.prepare(node.kernel, options);
    node.args.write(plan.kinds, this.host.launchArgs(node.kernel, checked.args, () => node.tag), plan.layouts);
    this.params.write(plan.fnAddress, checked.grid, checked.block, plan.dynamicSharedBytes, node.args.pointers);
    check("cuGraphExecKernelNodeSetParams", this.host.cu.cuGraphExecKernelNodeSetParams_v2(this.exec, node.handle, this.params.address));
    node.plan = plan;
    node.checked = checked;
  }

  /** The graph and its instance go at once (CUDA frees an instance still running when it ends); the argument blocks once the work is done. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.host.cu.cuGraphExecDestroy(this.exec);
    this.host.cu.cuGraphDestroy(this.graph);
    this.host.releaseWhenDone(() => {
      for (const node of this.nodes) node.args.release();
      this.params.release();
    });
  }
}
