// All-pairs gravity on an array of structs, the classic GPU N-body (GPU Gems 3, chapter 31): every body
// feels every other through a softened inverse square law, a = Σ m_j (p_j − p_i) / (|p_j − p_i|² + ε²)^{3/2},
// then takes one symplectic Euler step (velocity first, then position with the new velocity). G is 1 (it is
// in the masses). Each block stages BLOCK bodies at a time in shared memory (position and mass in one vec4f),
// and each thread keeps BODIES bodies (first, first + BLOCK, …) in registers, so that one shared load serves
// BODIES interactions. Launch: block BLOCK (fixed), grid ceil(n / (BODIES · BLOCK)); `next` and `bodies` are
// two buffers of n particles (ping-pong: the kernel reads every body while it writes). The default build
// (BLOCK 64, BODIES 1) is the page's: the fastest through Dawn on the H100 (33.1 TFLOP/s against 30.7 for two
// bodies per thread, bench/results/2026-11-26-particles-gpu-h100-run1.json); the others are for
// bench/particles-gpu.ts, which counts 20 flops per interaction, the usual convention. At N = 65 536 a thread
// per body is only 2048 warps (16 an SM on the H100, 4 a scheduler), so SPLIT > 1 lets SPLIT threads share a
// body, each summing the pulls of one slice of every tile (SPLIT times the warps; the partial sums are added
// at the end), and AHEAD issues the load of a thread's entry of the next tile before computing with this one.
// Launch grid with those: ceil(n · SPLIT / (BODIES · BLOCK)).
//
// The balanced step, `pulls` then `gather` (two launches a step), is for a GPU that `step`'s grid does not
// divide evenly: at N = 65 536 the 512/8/8 build is 128 blocks of one per multiprocessor, and an H100 has 132.
// A unit of work is one tile (BLOCK entries) of one group (the BODIES · BLOCK / SPLIT bodies a `step` block
// keeps); `pulls` is launched with exactly `blocks` blocks (the multiprocessors, or a multiple), and block b
// computes the units ⌊b·U/blocks⌋ … ⌊(b+1)·U/blocks⌋ − 1 of the U in group-major order, with `step`'s inner
// loop (AHEAD, SPLIT, BODIES). Where its range leaves a group, and at its end, it adds its slices and writes
// that group's partial accelerations to `partials` (one slot per block and group it touched: no float atomics,
// which WGSL lacks, so the sums are the same on every run). `gather` then adds, for each body, the partials of
// the blocks that covered its group in block order, and takes the step into `next`. balance.ts computes the
// launches and the scratch size ((groups + blocks − 1) · group vec4fs) and refuses shapes that overflow i32.
import { add, blockIdx, gridDim, inverseSqrt, kernel, length, local, mul, shared, sub, syncThreads, threadIdx, vec3f, vec4f, type bool, type Const, type f32, type i32 } from "tskernel";

/** One body: 32 bytes (pos at 0, mass packed into pos's last 4 bytes, vel at 16, speed at 28). */
export interface Particle {
  pos: vec3f;
  mass: f32;
  vel: vec3f;
  /** |vel|, written by each step for the drawing kernels. */
  speed: f32;
}

export interface StepParams {
  dt: f32;
  /** ε², the softening: keeps close encounters finite (and a body's pull on itself zero). */
  softening2: f32;
  n: i32;
}

/** acc plus the pull on a body at p of the body q (xyz its position, w its mass). */
function pull(acc: vec3f, p: vec3f, q: vec4f, softening2: f32): vec3f {
  const d = sub(q.xyz, p);
  const r2 = softening2 + d.x * d.x + d.y * d.y + d.z * d.z;
  const inv = inverseSqrt(r2);
  return add(acc, mul(d, q.w * inv * inv * inv));
}

function advance(body: Particle, acc: vec3f, dt: f32): Particle {
  const vel = add(body.vel, mul(acc, dt));
  return { pos: add(body.pos, mul(vel, dt)), mass: body.mass, vel, speed: length(vel) };
}

export const step = kernel(
  {
    block: ["BLOCK"],
    specializations: [
      { BLOCK: 64, BODIES: 1 },
      { BLOCK: 64, BODIES: 2 },
      { BLOCK: 32, BODIES: 2 },
      { BLOCK: 128, BODIES: 2 },
      { BLOCK: 64, BODIES: 4 },
      { BLOCK: 64, BODIES: 1, AHEAD: true },
      { BLOCK: 64, BODIES: 1, SPLIT: 2, AHEAD: true },
      { BLOCK: 128, BODIES: 1, SPLIT: 2, AHEAD: true },
      { BLOCK: 256, BODIES: 1, SPLIT: 2, AHEAD: true },
      { BLOCK: 128, BODIES: 2, SPLIT: 2, AHEAD: true },
      { BLOCK: 128, BODIES: 2, SPLIT: 4, AHEAD: true },
      { BLOCK: 256, BODIES: 2, SPLIT: 4, AHEAD: true },
      { BLOCK: 256, BODIES: 4, SPLIT: 4, AHEAD: true },
      // After run 3 (38.7 TFLOP/s for the one above, the most bodies and slices then): more of both.
      { BLOCK: 128, BODIES: 4, SPLIT: 4, AHEAD: true },
      { BLOCK: 256, BODIES: 8, SPLIT: 4, AHEAD: true },
      { BLOCK: 256, BODIES: 8, SPLIT: 8, AHEAD: true },
      { BLOCK: 256, BODIES: 4, SPLIT: 8, AHEAD: true },
      // After run 4 (39.2 TFLOP/s for 256/8/8, whose 256 blocks leave 8 of the 132 multiprocessors one block
      // instead of two): the same work in 128 blocks of 512, the fastest build (runs 5 and 6: 40.0 and 40.1
      // TFLOP/s, though 4 multiprocessors idle; 131 blocks of 504 threads, one idle, ran 38.9).
      { BLOCK: 512, BODIES: 8, SPLIT: 8, AHEAD: true },
      // 504 bodies a block as six of 84 lanes: 131 blocks, one multiprocessor idle, fewer registers than 8 bodies.
      { BLOCK: 504, BODIES: 6, SPLIT: 6, AHEAD: true },
    ],
  },
  (next: Particle[], bodies: readonly Particle[], params: StepParams, BLOCK: Const<i32> = 64, BODIES: Const<i32> = 1, SPLIT: Const<i32> = 1, AHEAD: Const<bool> = false) => {
    const tile = shared.vec4f(BLOCK);
    const mine = local.array<Particle>(BODIES);
    const acc = local.vec3f(BODIES);
    const tid = threadIdx.x;
    // SPLIT slices of LANES threads: the thread at lane l of slice s steps the bodies `first` + b · LANES and
    // sums their pulls from the entries s · LANES … (s + 1) · LANES − 1 of each tile.
    const LANES = BLOCK / SPLIT;
    const lane = SPLIT > 1 ? tid % LANES : tid;
    const slice = SPLIT > 1 ? tid / LANES : 0;
    const first = blockIdx.x * BODIES * LANES + lane;
    const n = params.n;
    // Past the end, a thread still loads tiles for the others (and computes for a copy of the last body).
    unrollLoad: for (let b = 0; b < BODIES; b++) {
      mine[b] = bodies[Math.min(first + b * LANES, n - 1)];
      acc[b] = vec3f(0);
    }
    // With AHEAD, a thread loads its entry of the next tile before it computes with this one (in flight
    // meanwhile); without it, at the start of each tile. Past n the entry is massless: it pulls nothing.
    let ahead = vec4f(0);
    if (AHEAD && tid < n) {
      const other = bodies[tid];
      ahead = vec4f(other.pos, other.mass);
    }
    for (let start = 0; start < n; start += BLOCK) {
      if (AHEAD) {
        tile[tid] = ahead;
      } else {
        const j = start + tid;
        if (j < n) {
          const other = bodies[j];
          tile[tid] = vec4f(other.pos, other.mass);
        } else {
          tile[tid] = vec4f(0);
        }
      }
      syncThreads();
      if (AHEAD) {
        const j = start + BLOCK + tid;
        ahead = vec4f(0);
        if (j < n) {
          const other = bodies[j];
          ahead = vec4f(other.pos, other.mass);
        }
      }
      unrollTile: for (let k = 0; k < LANES; k++) {
        const q = tile[slice * LANES + k];
        unrollBodies: for (let b = 0; b < BODIES; b++) {
          acc[b] = pull(acc[b], mine[b].pos, q, params.softening2);
        }
      }
      syncThreads();
    }
    // The slices' sums, added in slice order by slice 0 through the tile (one body at a time).
    if (SPLIT > 1) {
      unrollSum: for (let b = 0; b < BODIES; b++) {
        tile[tid] = vec4f(acc[b], 0);
        syncThreads();
        if (slice == 0) {
          unrollSlices: for (let s = 1; s < SPLIT; s++) acc[b] = add(acc[b], tile[s * LANES + lane].xyz);
        }
        syncThreads();
      }
    }
    if (slice == 0) {
      unrollStore: for (let b = 0; b < BODIES; b++) {
        if (first + b * LANES < n) next[first + b * LANES] = advance(mine[b], acc[b], params.dt);
      }
    }
  },
);

// ---------------------------------------------------------------------------------------------------------
// The balanced step: `pulls` then `gather`, two launches per step (see the opening comment).

/** Where `gather` finds what `pulls` was launched with. */
export interface Balance {
  /** The blocks `pulls` ran (its grid). */
  blocks: i32;
  /** Bodies a group: BODIES · BLOCK / SPLIT of the `pulls` build. */
  group: i32;
  /** Entries a tile: the build's BLOCK. */
  tile: i32;
}

/**
 * The first unit of block b when `units` units are split into `blocks` contiguous ranges: ⌊b · units / blocks⌋,
 * computed as b · q + ⌊b · r / blocks⌋ (q, r: the quotient and remainder of units / blocks) so that no product
 * exceeds blocks² or units (b · units would overflow i32 at a million bodies).
 */
function rangeStart(b: i32, q: i32, r: i32, blocks: i32): i32 {
  return b * q + (b * r) / blocks;
}

export const pulls = kernel(
  {
    block: ["BLOCK"],
    specializations: [
      // For the tests and small counts (every path: one body a thread; SPLIT with AHEAD).
      { BLOCK: 64, BODIES: 1 },
      { BLOCK: 64, BODIES: 2, SPLIT: 2, AHEAD: true },
      // step's fastest build (512/8/8: 128 blocks at N = 65 536), now over all the multiprocessors; 256/8/8 for
      // two blocks a multiprocessor; 448/8/8 (56 lanes) for a block with up to 146 registers a thread.
      { BLOCK: 512, BODIES: 8, SPLIT: 8, AHEAD: true },
      { BLOCK: 256, BODIES: 8, SPLIT: 8, AHEAD: true },
      { BLOCK: 448, BODIES: 8, SPLIT: 8, AHEAD: true },
    ],
  },
  (partials: vec4f[], bodies: readonly Particle[], params: StepParams, BLOCK: Const<i32> = 64, BODIES: Const<i32> = 1, SPLIT: Const<i32> = 1, AHEAD: Const<bool> = false) => {
    const tile = shared.vec4f(BLOCK);
    // Only the positions: the velocities are gather's (step keeps whole bodies in registers through its loop).
    const mine = local.vec3f(BODIES);
    const acc = local.vec3f(BODIES);
    const tid = threadIdx.x;
    const LANES = BLOCK / SPLIT;
    const GROUP = BODIES * LANES;
    const lane = SPLIT > 1 ? tid % LANES : tid;
    const slice = SPLIT > 1 ? tid / LANES : 0;
    const n = params.n;
    // A unit is one tile of one group; unit u is tile u % tiles of group u / tiles (group-major order).
    const tiles = (n + BLOCK - 1) / BLOCK;
    const units = ((n + GROUP - 1) / GROUP) * tiles;
    const blocks = gridDim.x;
    const q = units / blocks;
    const r = units - q * blocks;
    const end = rangeStart(blockIdx.x + 1, q, r, blocks);
    let unit = rangeStart(blockIdx.x, q, r, blocks);
    let ahead = vec4f(0);
    if (AHEAD) {
      const j = (unit % tiles) * BLOCK + tid;
      if (j < n) {
        const other = bodies[j];
        ahead = vec4f(other.pos, other.mass);
      }
    }
    // One pass per group the range touches (a segment): its bodies, its tiles, its partial sums.
    while (unit < end) {
      const group = unit / tiles;
      const stop = Math.min(end, (group + 1) * tiles);
      const first = group * GROUP + lane;
      unrollLoad: for (let b = 0; b < BODIES; b++) {
        mine[b] = bodies[Math.min(first + b * LANES, n - 1)].pos;
        acc[b] = vec3f(0);
      }
      const last = (stop - group * tiles) * BLOCK;
      for (let start = (unit - group * tiles) * BLOCK; start < last; start += BLOCK) {
        if (AHEAD) {
          tile[tid] = ahead;
        } else {
          const j = start + tid;
          if (j < n) {
            const other = bodies[j];
            tile[tid] = vec4f(other.pos, other.mass);
          } else {
            tile[tid] = vec4f(0);
          }
        }
        syncThreads();
        if (AHEAD) {
          // The next unit's entry: the next tile of this group, or after its last tile the first of the next
          // group (where the next segment starts). Past the block's range it is loaded and not used.
          const following = start + BLOCK < n ? start + BLOCK : 0;
          const j = following + tid;
          ahead = vec4f(0);
          if (j < n) {
            const other = bodies[j];
            ahead = vec4f(other.pos, other.mass);
          }
        }
        unrollTile: for (let k = 0; k < LANES; k++) {
          const q4 = tile[slice * LANES + k];
          unrollBodies: for (let b = 0; b < BODIES; b++) {
            acc[b] = pull(acc[b], mine[b], q4, params.softening2);
          }
        }
        syncThreads();
      }
      if (SPLIT > 1) {
        unrollSum: for (let b = 0; b < BODIES; b++) {
          tile[tid] = vec4f(acc[b], 0);
          syncThreads();
          if (slice == 0) {
            unrollSlices: for (let s = 1; s < SPLIT; s++) acc[b] = add(acc[b], tile[s * LANES + lane].xyz);
          }
          syncThreads();
        }
      }
      // Body i's sum from block b goes to partials[i + b · GROUP]: segment (block b, group g) owns the slot
      // g + b, distinct for every segment since a block's next segment is the next group and block b + 1
      // starts in the group where block b ended or later. Bodies past n (the last group's padding) are written
      // too (in bounds: the scratch holds (groups + blocks − 1) · GROUP) and never read.
      if (slice == 0) {
        unrollStore: for (let b = 0; b < BODIES; b++) partials[first + b * LANES + blockIdx.x * GROUP] = vec4f(acc[b], 0);
      }
      unit = stop;
    }
  },
);

/**
 * The last block whose range starts at or before `unit` (the block that computes it). ⌊unit / (q + 1)⌋ never
 * passes it (block b starts at b · q + ⌊b · r / blocks⌋ ≤ b · (q + 1)), and is at most about blocks² / units
 * short of it (one or two steps at N = 65 536; up to `blocks` when there are fewer units than blocks).
 */
function blockOf(unit: i32, q: i32, r: i32, blocks: i32): i32 {
  let b = unit / (q + 1);
  while (b + 1 < blocks && rangeStart(b + 1, q, r, blocks) <= unit) b++;
  return b;
}

export const gather = kernel({ block: [256] }, (next: Particle[], bodies: readonly Particle[], partials: readonly vec4f[], params: StepParams, balance: Balance) => {
  const i = blockIdx.x * 256 + threadIdx.x;
  const n = params.n;
  if (i >= n) return;
  const tiles = (n + balance.tile - 1) / balance.tile;
  const units = ((n + balance.group - 1) / balance.group) * tiles;
  const blocks = balance.blocks;
  const q = units / blocks;
  const r = units - q * blocks;
  const group = i / balance.group;
  const after = (group + 1) * tiles;
  // The blocks that covered the group, in block order (a block with an empty range, possible only when there
  // are fewer units than blocks, wrote nothing).
  let b = blockOf(group * tiles, q, r, blocks);
  let from = rangeStart(b, q, r, blocks);
  let acc = vec3f(0);
  while (b < blocks && from < after) {
    const to = rangeStart(b + 1, q, r, blocks);
    if (to > from) acc = add(acc, partials[i + b * balance.group].xyz);
    from = to;
    b++;
  }
  next[i] = advance(bodies[i], acc, params.dt);
});
