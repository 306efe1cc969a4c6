// What the compiler refuses of struct values, each with the code it reports.
import { atomicAdd, kernel, shared, threadIdx, vec3b, vec3f, type f32, type u32 } from "tskernel";

interface Particle {
  pos: vec3f;
  mass: f32;
  count: u32;
}

export const misuse = kernel({ block: [32] }, (particles: Particle[]) => {
  const i = threadIdx.x;
  const p = particles[i];
  const heavy = p.weight; // TSK1155
  const partial: Particle = { pos: vec3f(0), mass: 1 }; // TSK1157: count is missing
  const twice: Particle = { pos: vec3f(0), mass: 1, count: 0, mass: 2 }; // TSK1157 (and TypeScript's TS1117)
  const loose = { pos: vec3f(0) }; // TSK1160
  const equal = p === particles[0]; // TSK1158
  atomicAdd(particles, i, 1); // TSK2011
  const bits = shared.array<vec3b>(32); // TSK1159
  particles[i] = { pos: p.pos, mass: 1, count: 0 };
});

export const boolParameter = kernel((particles: Particle[], flags: vec3b) => {
  if (flags.x) particles[0]!.count = 1; // TSK1159 on the parameter
});
