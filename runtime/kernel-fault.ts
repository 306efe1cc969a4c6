/**
 * What a checked run finds, as the CPU's checked mode (cpu/checker.ts) and the checked GPU builds
 * (checked-build.ts) both report it: a KernelFault names its kind, the kernel, the TypeScript
 * `file:line:column`, the block and thread, and what happened, in one text that is the same on every backend
 * for the same bug. No Node imports: the browser entry reports checked builds too.
 */

export type FaultKind =
  | "out-of-bounds"
  | "misaligned-vector-access"
  | "uninitialized-shared-read"
  | "async-copy-not-waited"
  | "shared-race"
  | "barrier-divergence"
  | "divergent-subgroup-op"
  | "division-by-zero"
  | "shift-out-of-range"
  | "time-limit";

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

/** The detail of an integer division (`/`) or remainder (`%`) by zero in `text`, the operation's source. */
export function divisionDetail(op: "/" | "%" | string, text: string): string {
  return `integer ${op === "%" ? "remainder" : "division"} by zero in \`${text}\``;
}

/** The detail of a shift by `amount`, outside 0…31, in `text`. */
export function shiftDetail(amount: number, text: string): string {
  return `shift amount ${amount} in \`${text}\` is outside 0 to 31`;
}

/** The detail of an access outside an array: `read of 'x'[16], but it has 16 elements`. */
export function outOfBoundsDetail(verb: string, name: string, indices: readonly number[], shape: string): string {
  return `${verb} ${name}${indices.map((i) => `[${i}]`).join("")}, but ${shape}`;
}

/** The detail of a vector access whose start is not a multiple of its elements. */
export function misalignedDetail(name: string, index: number, width: number): string {
  return `a vector access to '${name}' starts at index ${index}, which is not a multiple of ${width}`;
}
