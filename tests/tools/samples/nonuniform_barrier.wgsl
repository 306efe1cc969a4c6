// Invalid WGSL: workgroupBarrier() under a branch on local_invocation_id (non-uniform control flow, line 8).
var<workgroup> tile: array<f32, 64>;

@compute @workgroup_size(64)
fn main(@builtin(local_invocation_id) lid: vec3u) {
  tile[lid.x] = f32(lid.x);
  if (lid.x < 32u) {
    workgroupBarrier();
  }
}
