// WGSL that compiles but draws a warning (unreachable statement, line 7; Dawn points at its `=`); the project treats warnings as failures.
@group(0) @binding(0) var<storage, read_write> data: array<f32>;

@compute @workgroup_size(1)
fn main() {
  return;
  data[0] = 1.0;
}
