/** What every backend receives per kernel specialization: the specialized kernel and the facts validation found. */

import type { ArrayRef, Kernel } from "../ir/ir.ts";
import type { SharedLayout } from "../validate/shared-layout.ts";

export interface KernelUnit {
  readonly kernel: Kernel;
  /** The specialization's name (`specializedName`), which the backend uses for its function. */
  readonly entryName: string;
  readonly block?: readonly [number, number, number];
  /** Constant sizes of the shared and private arrays. */
  readonly sharedSizes: ReadonlyMap<ArrayRef, readonly number[]>;
  /** Where the shared arrays lie as CUDA allocates them (the validator's, so the manifest's bytes match). */
  readonly sharedLayout: SharedLayout;
}
