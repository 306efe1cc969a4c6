// The launches of the balanced N-body step (nbody.kernel.ts's `pulls` then `gather`) for n bodies, a build of
// `pulls` and a block count: the grids, the size of the scratch buffer of partial sums, and `gather`'s Balance
// argument. Plain TypeScript (no kernels), shared by bench/particles-gpu.ts and tests/particles.test.ts. It
// refuses the shapes whose index arithmetic would leave i32 in the kernels, with a message that says which.

export interface BalancedBuild {
  readonly BLOCK: number;
  readonly BODIES: number;
  readonly SPLIT?: number;
}

export interface BalancedLaunch {
  /** `pulls`'s grid: one block per range of units (the GPU's multiprocessors, or a multiple of them). */
  readonly pullsGrid: [number];
  /** `gather`'s grid (its block is 256 threads, one body each). */
  readonly gatherGrid: [number];
  /** vec4f elements of the scratch buffer: (groups + blocks − 1) · group (see `pulls`). */
  readonly partials: number;
  /** `gather`'s `balance` argument. */
  readonly balance: { blocks: number; group: number; tile: number };
  /** Units (one tile of one group) in all, and the most any block computes. */
  readonly units: number;
  readonly unitsPerBlock: number;
}

const I32_MAX = 2 ** 31 - 1;

export function balancedLaunch(n: number, build: BalancedBuild, blocks: number): BalancedLaunch {
  if (!Number.isInteger(n) || n < 1) throw new Error(`balancedLaunch: n must be a positive integer (got ${n})`);
  if (!Number.isInteger(blocks) || blocks < 1) throw new Error(`balancedLaunch: blocks must be a positive integer (got ${blocks})`);
  const group = (build.BODIES * build.BLOCK) / (build.SPLIT ?? 1);
  const tiles = Math.ceil(n / build.BLOCK);
  const groups = Math.ceil(n / group);
  const units = groups * tiles;
  const partials = (groups + blocks - 1) * group;
  // rangeStart forms b · r with r < blocks, and units itself; the scratch is indexed up to `partials`; gather
  // forms (group + 1) · tiles ≤ units. WGSL also caps a grid dimension at 65 535 workgroups.
  if (blocks * blocks > I32_MAX) throw new Error(`balancedLaunch: ${blocks} blocks is more than 46 340, whose square leaves i32 in the kernels' range arithmetic`);
  if (units > I32_MAX) throw new Error(`balancedLaunch: ${n} bodies make ${units} units (tiles of ${build.BLOCK} times groups of ${group}), more than i32 can count: use a build with larger tiles or groups`);
  if (partials > I32_MAX) throw new Error(`balancedLaunch: the scratch would hold ${partials} sums, more than i32 can index: use fewer blocks`);
  return {
    pullsGrid: [blocks],
    gatherGrid: [Math.ceil(n / 256)],
    partials,
    balance: { blocks, group, tile: build.BLOCK },
    units,
    unitsPerBlock: Math.ceil(units / blocks),
  };
}
