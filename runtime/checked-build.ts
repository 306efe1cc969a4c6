/**
 * The runtime half of checked GPU builds (compiler/passes/checks.ts, docs/language.md "Checked GPU builds"),
 * shared by the CUDA and WebGPU devices: the arguments a checked kernel takes after its own (its error buffer,
 * the launch's tag, the lengths of its buffers), the tags that tell which launch a record came from, and the
 * reading of an error buffer into KernelFaults with the same text as the CPU's checked mode. A device keeps one
 * error buffer for all its checked launches; its next synchronize() or read() reads it (when checked launches
 * ran since the last time), clears it, and records each launch's failures in the ledger, which raises them as a
 * LaunchFailure: the violations did not happen (a load gave 0, a store was dropped), so the context survives and
 * the next launch runs. No Node imports: the browser entry runs checked builds too.
 */

import type { ManifestCheckSite, ManifestChecks, ManifestKernel } from "../compiler/lang/manifest.ts";
import type { DeviceBuffer, KernelArg } from "./device.ts";
import { divisionDetail, KernelFault, misalignedDetail, outOfBoundsDetail, shiftDetail } from "./kernel-fault.ts";
import type { LaunchLedger } from "./launch-ledger.ts";

/** How many records a failure's message shows after the first. */
const shownAfterFirst = 3;

/**
 * The failed checks of one checked launch: `faults` as the records hold them (at most the buffer's records;
 * `failed` counts every failed check of the launches read together). The message is the first fault's, then
 * the next few, one a line.
 */
export class CheckFailures extends Error {
  readonly kind: KernelFault["kind"];
  readonly location: string;
  constructor(
    readonly faults: readonly KernelFault[],
    readonly failed: number,
  ) {
    const [first, ...others] = faults;
    const more = others.slice(0, shownAfterFirst).map((fault) => `\n  also: ${fault.message.replace(/^tskernel: /, "")}`);
    const unshown = failed - 1 - more.length;
    super(`${first!.message}${more.join("")}${unshown > 0 ? `\n  (checked build: ${failed} checks failed in the launches read together; ${1 + more.length} shown)` : ""}`);
    this.kind = first!.kind;
    this.location = first!.location;
  }
}

/** The checks of the code a device runs for a kernel: the target's (CUDA's or WGSL's). */
export function checksOf(description: ManifestKernel, target: "cuda" | "wgsl"): ManifestChecks | undefined {
  return description.outputs[target]?.checks;
}

/** A launch's implicit arguments, in the manifest's order (`errors`: the device's error buffer). */
export function implicitArguments(checks: ManifestChecks, description: ManifestKernel, args: readonly KernelArg[], errors: DeviceBuffer, tag: number): KernelArg[] {
  const runtime = description.params.filter((param) => param.kind !== "const");
  return checks.implicit.map((param) => {
    switch (param.kind) {
      case "errors":
        return errors;
      case "launch":
        return tag >>> 0;
      case "length": {
        const index = runtime.findIndex((p) => p.name === param.of);
        const buffer = args[index] as DeviceBuffer | undefined;
        if (!buffer || typeof buffer !== "object" || !("length" in buffer)) throw new Error(`internal: the checked build measures '${param.of}', which is not a buffer argument`);
        return buffer.length >>> 0;
      }
    }
  });
}

/** Where a record's tag came from: a launch (its number) or a step of a recorded sequence. */
interface Tagged {
  readonly description: ManifestKernel;
  readonly checks: ManifestChecks;
  /** The launch's number; for a sequence step, the number of its latest replay. */
  launch: number;
}

/**
 * A device's checked launches since its error buffer was last read, by tag: a launch's tag is its number in
 * the ledger; a step of a recorded sequence, whose arguments are fixed when it is recorded, has a tag of its
 * own from 2³¹ up, and its records are reported as its latest replay's.
 */
export class CheckedLaunches {
  private readonly launches = new Map<number, Tagged>();
  private readonly steps = new Map<number, Tagged>();
  private nextStep = 0x80000000;
  /** Whether checked work ran since the buffer was last read. */
  pending = false;

  /** A launch `launch` of a checked kernel: its tag. */
  launched(launch: number, description: ManifestKernel, checks: ManifestChecks): number {
    this.launches.set(launch >>> 0, { description, checks, launch });
    this.pending = true;
    return launch >>> 0;
  }

  /** A tag for a step of a recorded sequence. */
  step(description: ManifestKernel, checks: ManifestChecks): number {
    const tag = this.nextStep++ >>> 0;
    if (this.nextStep > 0xffffffff) this.nextStep = 0x80000000;
    this.steps.set(tag, { description, checks, launch: 0 });
    return tag;
  }

  /** A replay of the step `tag` is launch `launch`. */
  replayed(tag: number, launch: number): void {
    const step = this.steps.get(tag);
    if (step) step.launch = launch;
    this.pending = true;
  }

  /** A sequence's steps are gone. */
  forget(tags: readonly number[]): void {
    for (const tag of tags) this.steps.delete(tag);
  }

  /**
   * Reads an error buffer's words (after every launch so far has run): each launch's records as a failure in
   * the ledger, in the order of their first records. The launches' tags are then forgotten.
   */
  report(words: Uint32Array, ledger: LaunchLedger): void {
    this.pending = false;
    const failed = words[0] ?? 0;
    const byLaunch = new Map<Tagged, KernelFault[]>();
    const seen = new Set<string>();
    const records = Math.min(failed, Math.floor((words.length - 1) / recordWords));
    for (let r = 0; r < records; r++) {
      const record = words.subarray(1 + r * recordWords, 1 + (r + 1) * recordWords);
      const key = record.join(",");
      if (seen.has(key)) continue;
      seen.add(key);
      const tagged = this.launches.get(record[1]!) ?? this.steps.get(record[1]!);
      if (!tagged) continue;
      const fault = faultOf(tagged, record);
      if (!fault) continue;
      const list = byLaunch.get(tagged);
      if (list) list.push(fault);
      else byLaunch.set(tagged, [fault]);
    }
    this.launches.clear();
    for (const [tagged, faults] of byLaunch) ledger.fail(tagged.launch, tagged.description.entryName, new CheckFailures(faults, failed));
  }
}

/** Words of a record: site, launch tag, block x y z, thread x y z, two values (compiler/passes/checks.ts). */
const recordWords = 10;

/** A record as the fault the CPU's checked mode would report for it. */
function faultOf(tagged: Tagged, record: Uint32Array): KernelFault | undefined {
  const site = tagged.checks.sites[record[0]!];
  if (!site) return undefined;
  const value = (i: 0 | 1) => (site.signed[i] ? record[8 + i]! | 0 : record[8 + i]!);
  const block = [record[2]!, record[3]!, record[4]!];
  const thread = [record[5]!, record[6]!, record[7]!];
  return new KernelFault(site.kind, tagged.description.entryName, site.location, block, thread, detailOf(site, value(0), value(1)));
}

/** What a failed check at `site` with values `a` and `b` reports (the CPU's words: runtime/kernel-fault.ts). */
export function detailOf(site: ManifestCheckSite, a: number, b: number): string {
  switch (site.kind) {
    case "out-of-bounds": {
      const name = site.space === "global" ? `'${site.array}'` : `${site.space} '${site.array}'`;
      const dims = site.dims ?? [];
      // A vector access reports its first element outside, as the CPU, which splits it, does.
      const lanes = site.lanes ?? 1;
      if (site.space === "global") return outOfBoundsDetail(site.access!, name, [firstOutside(a, b, lanes)], `it has ${b} elements`);
      const indices = dims.length === 2 ? [a, b] : [a];
      if (lanes > 1) {
        const last = indices.length - 1;
        const earlier = indices.slice(0, last).every((index, i) => index >= 0 && index < dims[i]!);
        if (earlier) indices[last] = firstOutside(indices[last]!, dims[last]!, lanes);
      }
      return outOfBoundsDetail(site.access!, name, indices, `it is ${dims.map((d) => `[${d}]`).join("")}`);
    }
    case "misaligned-vector-access":
      return misalignedDetail(site.array!, a, site.lanes!);
    case "division-by-zero":
      return divisionDetail(site.operator ?? "/", site.text ?? "");
    case "shift-out-of-range":
      return shiftDetail(a, site.text ?? "");
    case "barrier-divergence":
      return `${a} of the block's ${b} threads reached this barrier; the others returned or wait at another (every thread of a block must reach each syncThreads())`;
  }
}

/** The first element of `lanes` from `start` that lies outside `length` elements. */
function firstOutside(start: number, length: number, lanes: number): number {
  if (start < 0 || start >= length || lanes <= 1) return start;
  return length;
}

/** Whether a launch's kernel runs checked code on a target, for the devices' launch paths. */
export function isChecked(description: ManifestKernel, target: "cuda" | "wgsl"): boolean {
  return checksOf(description, target) !== undefined;
}
