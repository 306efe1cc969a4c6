// What the compiler refuses of vectors, each with the code it reports.
import { add, f32, kernel, load4, neg, threadIdx, vec2f, vec3f, vec3i, vec3u, vec4f, lt, type i32 } from "tskernel";

export const misuse = kernel({ block: [32] }, (out: vec4f[], ints: vec3i[], n: i32) => {
  const i = threadIdx.x;
  let v = vec3f(1, 2, 3);
  const a = v.w; // TSK1154: a vec3f has no w
  v.xx = vec2f(1, 2); // TSK1156: repeated lanes
  const same = v === vec3f(1); // TSK1158
  const short = vec4f(v.xy, 1); // TSK2008: 3 lanes for a vec4f
  const mixed = add(v, ints[i]); // TSK2008: vec3f and vec3i
  const negative = neg(vec3u(1)); // TSK2005
  const root = Math.sqrt(v); // TSK2008, with a note naming sqrt()
  const numbers = vec3f(lt(v, vec3f(0))); // TSK2008: bools do not convert
  const fixed = vec3f(0);
  fixed.x = 1; // TSK1014: a const
  const [x, y, z, w] = load4(out, 0); // TSK2011
  out[i] = vec4f(v, f32(n));
});
