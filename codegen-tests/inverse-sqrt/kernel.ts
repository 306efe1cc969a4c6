// inverseSqrt on f32, vec3f and vec4f: CUDA computes it with the hardware's reciprocal square root
// (`tsk_rsqrtf`: rsqrt.approx.ftz.f32, one MUFU.RSQ), WGSL with its own `inverseSqrt`, the CPU by the
// definition 1 / sqrt(x); normalize keeps its definition, v / length(v), on CUDA.
// Launch: block 64, any grid covering n; `out` holds 3n floats.
import { blockIdx, inverseSqrt, kernel, mul, normalize, threadIdx, vec3f, vec4f, type f32, type i32 } from "tskernel";

export const inverseSqrts = kernel({ block: [64] }, (out: Float32Array, lanes: vec4f[], points: readonly vec3f[], scale: vec4f, n: i32) => {
  const i = blockIdx.x * 64 + threadIdx.x;
  if (i >= n) return;
  const p = points[i];
  const r2: f32 = p.x * p.x + p.y * p.y + p.z * p.z;
  out[i] = inverseSqrt(r2);
  const unit: vec3f = mul(p, inverseSqrt(vec3f(r2)));
  out[n + i] = unit.x;
  out[2 * n + i] = normalize(p).y;
  lanes[i] = inverseSqrt(mul(scale, p.x * p.x + 1));
});
