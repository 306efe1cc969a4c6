// Invalid WGSL: `scale` is never declared (line 6).
@group(0) @binding(0) var<storage, read_write> data: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3u) {
  data[gid.x] = data[gid.x] * scale;
}
