// Valid WGSL text but not a valid pipeline: 16384 f32 = 64 KiB of workgroup storage, above any
// device limit Dawn grants (16 KiB by default), so only createComputePipeline rejects it.
var<workgroup> tile: array<f32, 16384>;

@compute @workgroup_size(64)
fn main(@builtin(local_invocation_id) lid: vec3u) {
  tile[lid.x] = f32(lid.x);
}
