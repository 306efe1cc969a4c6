// A shader that needs the subgroups feature: Dawn accepts it only on a device that has it.
enable subgroups;
@group(0) @binding(0) var<storage, read_write> data: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_id) id: vec3<u32>, @builtin(subgroup_invocation_id) lane: u32) {
  data[id.x] = subgroupAdd(data[id.x]) + f32(lane);
}
