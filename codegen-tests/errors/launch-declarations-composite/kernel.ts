// Launch declarations (options tensors and grid) on kernels with vector or struct parameters: the Python
// runtime's operators pass tensors of f32, i32, u32 and bool and scalars, so these are refused (TSK1161).
import { add, blockIdx, kernel, vec3f, type f32 } from "tskernel";

export interface Particle {
  pos: vec3f;
  mass: f32;
}

export const structBuffer = kernel({ block: [64], tensors: { out: "output [n]", particles: "[n]" }, grid: ["n"] }, (out: Float32Array, particles: Particle[]) => {
  out[blockIdx.x] = particles[blockIdx.x].mass;
});

export const vectorBuffer = kernel({ block: [64], tensors: { out: "output [n]", points: "[n]" }, grid: ["n"] }, (out: Float32Array, points: vec3f[]) => {
  out[blockIdx.x] = points[blockIdx.x].x;
});

export const vectorUniform = kernel({ block: [64], tensors: { out: "output [n]", input: "[n]" }, grid: ["n"] }, (out: Float32Array, input: Float32Array, offset: vec3f) => {
  out[blockIdx.x] = add(vec3f(input[blockIdx.x]), offset).z;
});
