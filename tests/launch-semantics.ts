/**
 * What asynchronous launches promise, as checks any device can be put through (docs/runtime.md, "Launches
 * are asynchronous"): launches not awaited run in the order they were made, a read waits for them, a write
 * comes after them, a buffer freed while a launch uses it is still there for that launch, a recorded
 * sequence replays the same work (and takes updated scalars from the next replay on), and streams ordered by
 * an event see each other's results. runtime/launch-semantics.test.ts runs them on the CPU and WebGPU; the
 * GPU runner (bench/gpu-run.ts --only launch) on CUDA and Dawn there. The kernels are examples/elementwise.ts'
 * saxpy (y = a·x + y) and gelu, chained so that any other order gives a different result: every check
 * compares with a float64 reference of the chain in its order, and with the reference of the chain in
 * another order, which must be far off (else the check could not fail). Inputs are fresh random values;
 * outputs are poisoned with NaN first. Each check throws an Error saying what differed.
 */

import type { Device, DeviceBuffer, KernelHandle, LaunchStep } from "../runtime/device.ts";

export interface SemanticsKernels {
  /** saxpy(n, a, x, y): y = a·x + y, blocks of 256. */
  readonly saxpy: KernelHandle;
  /** gelu(out, input, n), blocks of 256. */
  readonly gelu: KernelHandle;
}

/** GELU's tanh approximation in float64, as the kernel computes it in f32. */
function gelu(x: number): number {
  return 0.5 * x * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x * x * x)));
}

function random(length: number, scale = 1): Float32Array {
  return Float32Array.from({ length }, () => scale * (Math.random() * 2 - 1));
}

/**
 * One step of a chain: y = a·x + y (saxpy), or y = a·gelu(y) + y through a scratch buffer (gelu then saxpy):
 * what each step adds depends on y so far, so the order of the steps shows in the result.
 */
interface ChainStep {
  readonly kind: "saxpy" | "gelu";
  readonly a: number;
}

/**
 * Saxpy steps add ±(0.2 to 0.5)·x; gelu steps take 0.2 to 0.8 of gelu(y) away, which pulls positive y back.
 * The values stay within a few units: GELU's tanh overflows to NaN on SwiftShader for inputs beyond about 10.
 */
function randomChain(length: number): ChainStep[] {
  return Array.from({ length }, (_, i) =>
    i % 3 === 1 ? { kind: "gelu", a: -(0.2 + 0.6 * Math.random()) } : { kind: "saxpy", a: (Math.random() < 0.5 ? -1 : 1) * (0.2 + 0.3 * Math.random()) },
  );
}

/** The chain in float64. */
function chainReference(x: Float32Array, y0: Float32Array, chain: readonly ChainStep[]): Float64Array {
  const y = Float64Array.from(y0);
  for (const step of chain) {
    for (let i = 0; i < y.length; i++) y[i] = step.a * (step.kind === "saxpy" ? x[i]! : gelu(y[i]!)) + y[i]!;
  }
  return y;
}

/** The launches of a chain on x, y and a scratch buffer of the same length. */
function chainLaunches(kernels: SemanticsKernels, chain: readonly ChainStep[], x: DeviceBuffer, y: DeviceBuffer, scratch: DeviceBuffer): LaunchStep[] {
  const n = x.length;
  const grid = [Math.ceil(n / 256)] as [number];
  return chain.flatMap((step): LaunchStep[] =>
    step.kind === "saxpy"
      ? [{ kernel: kernels.saxpy, options: { grid, args: [n, step.a, x, y] } }]
      : [
          { kernel: kernels.gelu, options: { grid, args: [scratch, y, n] } },
          { kernel: kernels.saxpy, options: { grid, args: [n, step.a, scratch, y] } },
        ],
  );
}

/** Largest |got − ref| / max(|ref|, 1): the chain's values are of order 1 to 10. */
function maxError(got: ArrayLike<number>, reference: ArrayLike<number>): number {
  let worst = 0;
  for (let i = 0; i < reference.length; i++) {
    const error = Math.abs(got[i]! - reference[i]!) / Math.max(Math.abs(reference[i]!), 1);
    worst = Number.isNaN(error) ? Infinity : Math.max(worst, error);
  }
  return worst;
}

/** f32 rounding over a chain of up to a few hundred steps stays far below this. */
const tolerance = 1e-4;

/** Throws unless `got` matches the chain's reference and not the reference of the chain in another order. */
function expectChain(what: string, got: ArrayLike<number>, x: Float32Array, y0: Float32Array, chain: readonly ChainStep[]): number {
  const error = maxError(got, chainReference(x, y0, chain));
  if (!(error <= tolerance)) throw new Error(`${what}: the result differs from the float64 reference of the launches in order by ${error} (allowed ${tolerance})`);
  const reordered = [...chain.slice(1), chain[0]!];
  const other = maxError(got, chainReference(x, y0, reordered));
  if (!(other > 100 * tolerance)) throw new Error(`${what}: the check cannot tell the order apart (the reordered chain is within ${other})`);
  return error;
}

export interface SemanticsResult {
  readonly check: string;
  readonly launches: number;
  readonly maxError: number;
}

/** Fresh x (random), y (random) and scratch (NaN) buffers of n elements. */
function buffers(device: Device, n: number) {
  const x = random(n, 0.5);
  const y0 = random(n);
  return { x, y0, X: device.createBuffer(x), Y: device.createBuffer(y0), scratch: device.createBuffer(new Float32Array(n).fill(Number.NaN)) };
}

/** `count` launches made without awaiting any, then one read: they ran in order, all of them. */
export async function launchesInOrder(device: Device, kernels: SemanticsKernels, n = 4099, steps = 60): Promise<SemanticsResult> {
  const { x, y0, X, Y, scratch } = buffers(device, n);
  const chain = randomChain(steps);
  const launches = chainLaunches(kernels, chain, X, Y, scratch);
  const pending = launches.map((step) => device.launch(step.kernel, step.options));
  const got = await device.read(Y);
  await Promise.all(pending);
  return { check: "launches not awaited run in order; read waits for them", launches: launches.length, maxError: expectChain("launchesInOrder", got, x, y0, chain) };
}

/** A write made after launches that read the buffer lands after them: they see the old contents. */
export async function writeAfterLaunches(device: Device, kernels: SemanticsKernels, n = 2053): Promise<SemanticsResult> {
  const { x, y0, X, Y, scratch } = buffers(device, n);
  const chain = randomChain(9);
  for (const step of chainLaunches(kernels, chain, X, Y, scratch)) void device.launch(step.kernel, step.options);
  // x changes after the launches were made, before anyone waited: they must have used the old x.
  const written = device.write(X, random(n));
  const got = await device.read(Y);
  await written;
  return { check: "a write comes after the launches made before it", launches: chainLaunches(kernels, chain, X, Y, scratch).length, maxError: expectChain("writeAfterLaunches", got, x, y0, chain) };
}

/** Buffers freed right after launches that use them, before the launches ran: the launches still see them. */
export async function freeWhileInUse(device: Device, kernels: SemanticsKernels, n = 3001): Promise<SemanticsResult> {
  const { x, y0, X, Y, scratch } = buffers(device, n);
  const chain = randomChain(12);
  const launches = chainLaunches(kernels, chain, X, Y, scratch);
  for (const step of launches) void device.launch(step.kernel, step.options);
  device.free(X);
  device.free(scratch);
  // Memory freed may be reused at once by a new buffer: fill one, so that reused memory would show.
  const filler = device.createBuffer(new Float32Array(2 * n).fill(1e6));
  const got = await device.read(Y);
  device.free(filler);
  let refused = false;
  try {
    await device.launch(kernels.saxpy, { grid: [1], args: [n, 1, X, Y] });
  } catch {
    refused = true;
  }
  if (!refused) throw new Error("freeWhileInUse: a launch with a freed buffer was not refused");
  return { check: "buffers freed while launches use them stay alive for those launches", launches: launches.length, maxError: expectChain("freeWhileInUse", got, x, y0, chain) };
}

/** A recorded chain replayed several times is the chain repeated; an update changes the replays after it. */
export async function replayedSequence(device: Device, kernels: SemanticsKernels, n = 4096, replays = 4): Promise<SemanticsResult> {
  const { x, y0, X, Y, scratch } = buffers(device, n);
  const chain = randomChain(10);
  const sequence = await device.record(chainLaunches(kernels, chain, X, Y, scratch));
  for (let i = 0; i < replays; i++) void sequence.replay();
  // The first launch is a saxpy: a new scalar for the replays from here on, the earlier ones keep theirs.
  const changed = { ...chain[0]!, a: -chain[0]!.a };
  sequence.update(0, { grid: [Math.ceil(n / 256)], args: [n, changed.a, X, Y] });
  void sequence.replay();
  const got = await device.read(Y);
  sequence.dispose();
  const expected = [...Array.from({ length: replays }, () => chain).flat(), changed, ...chain.slice(1)];
  return { check: "a recorded sequence replays in order; update applies to later replays", launches: sequence.length * (replays + 1), maxError: expectChain("replayedSequence", got, x, y0, expected) };
}

/**
 * Two streams: one runs a chain on y1, the other a chain on y2 and then, after waiting for an event recorded
 * on the first, adds y1 (saxpy with x = y1) to y2: right only if the event ordered them.
 */
export async function streamsAndEvents(device: Device, kernels: SemanticsKernels, n = 8192): Promise<SemanticsResult> {
  const first = buffers(device, n);
  const second = buffers(device, n);
  const [a, b] = [device.createStream(), device.createStream()];
  const chainA = randomChain(30);
  const chainB = randomChain(6);
  const launchesA = chainLaunches(kernels, chainA, first.X, first.Y, first.scratch);
  const launchesB = chainLaunches(kernels, chainB, second.X, second.Y, second.scratch);
  for (const step of launchesA) void device.launch(step.kernel, { ...step.options, stream: a });
  const done = a.recordEvent();
  for (const step of launchesB) void device.launch(step.kernel, { ...step.options, stream: b });
  b.waitEvent(done);
  const weight = 0.5;
  void device.launch(kernels.saxpy, { grid: [Math.ceil(n / 256)], args: [n, weight, first.Y, second.Y], stream: b });
  await b.synchronize();
  if (!done.done()) throw new Error("streamsAndEvents: an event waited for is not done after its stream was synchronized");
  const got = await device.read(second.Y);
  const y1 = chainReference(first.x, first.y0, chainA);
  const y2 = chainReference(second.x, second.y0, chainB);
  const reference = y2.map((v, i) => v + weight * y1[i]!);
  const error = maxError(got, reference);
  if (!(error <= tolerance)) throw new Error(`streamsAndEvents: the result differs from float64 by ${error} (allowed ${tolerance})`);
  a.dispose();
  b.dispose();
  return { check: "streams ordered by an event see each other's results", launches: launchesA.length + launchesB.length + 1, maxError: error };
}

/** Every check, in order. */
export async function checkLaunchSemantics(device: Device, kernels: SemanticsKernels): Promise<SemanticsResult[]> {
  return [
    await launchesInOrder(device, kernels),
    await writeAfterLaunches(device, kernels),
    await freeWhileInUse(device, kernels),
    await replayedSequence(device, kernels),
    await streamsAndEvents(device, kernels),
  ];
}
