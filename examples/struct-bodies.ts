// One integration step of bouncing bodies stored as an array of structs, one body per thread: gravity and
// drag from a uniform struct parameter, a bounce off a floor, a spin rotated a quarter turn, a step counter.
// Shows structs as buffer elements (with a nested struct and vec3 fields: WGSL's layout, the same bytes on
// every target), as a uniform parameter whose nested struct WebGPU's uniform rules lay out otherwise, as a
// shared array's elements, locals built from object literals, helper arguments, and stores to fields.
// Launch: block 64, any grid covering n bodies; `gaps[i]` gets the distance from body i to the next body of
// its block before the step (to itself for the block's last).
import { add, blockIdx, distance, dot, kernel, mul, shared, syncThreads, threadIdx, vec2f, vec3f, type f32, type i32, type u32 } from "tskernel";

export interface Material {
  restitution: f32;
  tint: vec3f;
}

export interface Body {
  pos: vec3f;
  mass: f32;
  vel: vec3f;
  steps: u32;
  material: Material;
  spin: vec2f;
}

/** The floor's height range: bodies below `low` bounce back to it. */
export interface Floor {
  low: f32;
  high: f32;
}

export interface Step {
  gravity: vec3f;
  dt: f32;
  floor: Floor;
  drag: f32;
}

function kineticEnergy(body: Body): f32 {
  return 0.5 * body.mass * dot(body.vel, body.vel);
}

export const stepBodies = kernel({ block: [64] }, (bodies: Body[], energy: Float32Array, gaps: Float32Array, step: Step, n: i32) => {
  const tile = shared.array<Body>(64);
  const tid = threadIdx.x;
  const i = blockIdx.x * 64 + tid;
  if (i < n) {
    tile[tid] = bodies[i];
  } else {
    const resting: Body = { pos: vec3f(0), mass: 1, vel: vec3f(0), steps: 0, material: { restitution: 0, tint: vec3f(0) }, spin: vec2f(0) };
    tile[tid] = resting;
  }
  syncThreads();
  if (i >= n) return;
  let body = tile[tid];
  const last = i === n - 1 || tid === 63;
  gaps[i] = distance(body.pos, tile[last ? tid : tid + 1].pos);
  const accel = add(step.gravity, mul(body.vel, -step.drag / body.mass));
  body.vel = add(body.vel, mul(accel, step.dt));
  body.pos = add(body.pos, mul(body.vel, step.dt));
  if (body.pos.y < step.floor.low) {
    body.pos.y = step.floor.low;
    body.vel.y = -body.vel.y * body.material.restitution;
  }
  body.spin = vec2f(-body.spin.y, body.spin.x);
  body.steps += 1;
  bodies[i] = body;
  bodies[i].material.tint = mul(body.material.tint, 0.5);
  energy[i] = kineticEnergy(body);
});
