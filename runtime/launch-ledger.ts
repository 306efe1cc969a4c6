/**
 * The numbers of a device's launches and the errors they meet while they run. Launches are asynchronous: by
 * the time a GPU faults, or the CPU's checked mode finds an out-of-bounds read, the call that enqueued the
 * launch has returned, so the device keeps the error here and its next synchronize() or read() raises it as
 * a LaunchFailure naming the kernel and the launch's number (the n-th launch of the device, counting from 1,
 * each launch of a replayed sequence included). Every device keeps one ledger. The CPU and WebGPU know which
 * launch failed; CUDA reports a fault for the whole context, so its failure names every launch that may have
 * been running: those enqueued since the device was last known to be idle.
 */

export interface LaunchRef {
  /** The launch's number on its device: the first launch of a device is #1. */
  readonly launch: number;
  readonly kernel: string;
}

/** An error a kernel met while it ran, raised by the next synchronize() or read() of its device. */
export class LaunchFailure extends Error {
  /** The first launch it names (the only one where the backend knows which launch failed). */
  readonly kernel: string;
  readonly launch: number;
  /**
   * The launches that may have failed: one where the backend knows which (the CPU, WebGPU), every launch in
   * flight where it does not (a CUDA fault), up to the last 64 of them.
   */
  readonly launches: readonly LaunchRef[];

  constructor(launches: readonly LaunchRef[], detail: string, cause: unknown, options: { readonly unsure?: string; readonly later?: number } = {}) {
    const first = launches[0]!;
    const which =
      launches.length === 1 && !options.unsure
        ? `launch #${first.launch} of '${first.kernel}'`
        : `one of launches #${first.launch}–#${launches[launches.length - 1]!.launch} (${describeLaunches(launches)}; ${options.unsure})`;
    const later = options.later ? ` (${options.later} later failure${options.later > 1 ? "s" : ""} not shown)` : "";
    super(`tskernel: ${which} failed: ${detail}${later}`, { cause });
    this.kernel = first.kernel;
    this.launch = first.launch;
    this.launches = launches;
  }
}

/** "'gelu' #12, 'layerNorm' #13, …", runs of one kernel shortened to "'saxpy' #14–#20". */
function describeLaunches(launches: readonly LaunchRef[]): string {
  const runs: string[] = [];
  for (let i = 0; i < launches.length; ) {
    let j = i;
    while (j + 1 < launches.length && launches[j + 1]!.kernel === launches[i]!.kernel && launches[j + 1]!.launch === launches[j]!.launch + 1) j++;
    runs.push(`'${launches[i]!.kernel}' #${launches[i]!.launch}${j > i ? `–#${launches[j]!.launch}` : ""}`);
    i = j + 1;
  }
  return runs.join(", ");
}

/** The message of an error as a LaunchFailure quotes it, without the "tskernel: " its own message starts with. */
export function errorDetail(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).replace(/^tskernel: /, "");
}

/** How many unsettled launches the ledger remembers by name (a CUDA failure names them). */
const remembered = 64;

interface Recorded {
  readonly launches: readonly LaunchRef[];
  readonly detail: string;
  readonly cause: unknown;
  readonly unsure?: string;
}

export class LaunchLedger {
  /** Launches numbered so far. */
  private count = 0;
  /** Every launch up to this number is known to have finished. */
  private settledUpTo = 0;
  /** The kernel of launch n at n % remembered (the last `remembered` launches). */
  private readonly names: string[] = new Array<string>(remembered);
  private readonly failures: Recorded[] = [];

  /** Numbers a new launch of `kernel`. */
  next(kernel: string): number {
    const launch = ++this.count;
    this.names[launch % remembered] = kernel;
    return launch;
  }

  /** The number of the last launch (0 before the first). */
  get last(): number {
    return this.count;
  }

  /** Whether launches were enqueued that are not known to have finished. */
  get unsettled(): boolean {
    return this.count > this.settledUpTo;
  }

  /** Every launch up to `launch` (default: all so far) has finished. */
  settle(launch = this.count): void {
    if (launch > this.settledUpTo) this.settledUpTo = launch;
  }

  /** Launch `launch` of `kernel` met `cause` while it ran. */
  fail(launch: number, kernel: string, cause: unknown): void {
    this.failures.push({ launches: [{ launch, kernel }], detail: errorDetail(cause), cause });
  }

  /** One of the given launches failed, and the backend cannot say which (`unsure` says why). */
  failOneOf(launches: readonly LaunchRef[], cause: unknown, unsure: string): void {
    if (launches.length === 1) this.failures.push({ launches, detail: errorDetail(cause), cause });
    else this.failures.push({ launches, detail: errorDetail(cause), cause, unsure });
  }

  /**
   * Some launch enqueued since the device was last known to be idle failed (a CUDA fault); they are now
   * settled, as a failed context runs nothing more. Without such launches the error is not a launch's, and is
   * thrown as it is.
   */
  failUnsettled(cause: unknown, unsure: string): void {
    const first = Math.max(this.settledUpTo + 1, this.count - remembered + 1);
    const launches: LaunchRef[] = [];
    for (let launch = first; launch <= this.count; launch++) launches.push({ launch, kernel: this.names[launch % remembered]! });
    this.settle();
    if (launches.length === 0) throw cause;
    this.failOneOf(launches, cause, unsure);
  }

  /** Throws the first failure recorded (then forgets them all: each is raised once); nothing when none was. */
  raise(): void {
    if (this.failures.length === 0) return;
    const [first, ...others] = this.failures.splice(0);
    throw new LaunchFailure(first!.launches, first!.detail, first!.cause, { unsure: first!.unsure, later: others.length });
  }
}
