// Valid WGSL: a workgroup-shared tree reduction with uniform barriers.
@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> output: array<f32>;

var<workgroup> tile: array<f32, 256>;

@compute @workgroup_size(256)
fn reduce_sum(@builtin(local_invocation_id) lid: vec3u,
              @builtin(global_invocation_id) gid: vec3u,
              @builtin(workgroup_id) wid: vec3u) {
  let n = arrayLength(&input);
  tile[lid.x] = select(0.0, input[gid.x], gid.x < n);
  workgroupBarrier();
  for (var s = 128u; s > 0u; s = s >> 1u) {
    if (lid.x < s) {
      tile[lid.x] = tile[lid.x] + tile[lid.x + s];
    }
    workgroupBarrier();
  }
  if (lid.x == 0u) {
    output[wid.x] = tile[0];
  }
}
