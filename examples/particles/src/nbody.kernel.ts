// All-pairs gravity on an array of structs, the classic GPU N-body (GPU Gems 3, chapter 31): every body
// feels every other through a softened inverse square law, a = Σ m_j (p_j − p_i) / (|p_j − p_i|² + ε²)^{3/2},
// then takes one symplectic Euler step (velocity first, then position with the new velocity). G is 1 (it is
// in the masses). Each block stages BLOCK bodies at a time in shared memory (position and mass in one vec4f),
// and each thread keeps BODIES bodies (first, first + BLOCK, …) in registers, so that one shared load serves
// BODIES interactions. Launch: block BLOCK (fixed), grid ceil(n / (BODIES · BLOCK)); `next` and `bodies` are
// two buffers of n particles (ping-pong: the kernel reads every body while it writes). The default build
// (BLOCK 64, BODIES 1) is the page's: the fastest through Dawn on the H100 (33.1 TFLOP/s against 30.7 for two
// bodies per thread, bench/results/2026-11-26-particles-gpu-h100-run1.json); the others are for
// bench/particles-gpu.ts, which counts 20 flops per interaction, the usual convention.
import { add, blockIdx, inverseSqrt, kernel, length, local, mul, shared, sub, syncThreads, threadIdx, vec3f, vec4f, type Const, type f32, type i32 } from "tskernel";

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
  { block: ["BLOCK"], specializations: [{ BLOCK: 64, BODIES: 1 }, { BLOCK: 64, BODIES: 2 }, { BLOCK: 32, BODIES: 2 }, { BLOCK: 128, BODIES: 2 }, { BLOCK: 64, BODIES: 4 }] },
  (next: Particle[], bodies: readonly Particle[], params: StepParams, BLOCK: Const<i32> = 64, BODIES: Const<i32> = 1) => {
    const tile = shared.vec4f(BLOCK);
    const mine = local.array<Particle>(BODIES);
    const acc = local.vec3f(BODIES);
    const tid = threadIdx.x;
    const first = blockIdx.x * BODIES * BLOCK + tid;
    const n = params.n;
    // Past the end, a thread still loads tiles for the others (and computes for a copy of the last body).
    unrollLoad: for (let b = 0; b < BODIES; b++) {
      mine[b] = bodies[Math.min(first + b * BLOCK, n - 1)];
      acc[b] = vec3f(0);
    }
    for (let start = 0; start < n; start += BLOCK) {
      const j = start + tid;
      if (j < n) {
        const other = bodies[j];
        tile[tid] = vec4f(other.pos, other.mass);
      } else {
        tile[tid] = vec4f(0); // massless: pulls nothing
      }
      syncThreads();
      unrollTile: for (let k = 0; k < BLOCK; k++) {
        const q = tile[k];
        unrollBodies: for (let b = 0; b < BODIES; b++) {
          acc[b] = pull(acc[b], mine[b].pos, q, params.softening2);
        }
      }
      syncThreads();
    }
    unrollStore: for (let b = 0; b < BODIES; b++) {
      if (first + b * BLOCK < n) next[first + b * BLOCK] = advance(mine[b], acc[b], params.dt);
    }
  },
);
