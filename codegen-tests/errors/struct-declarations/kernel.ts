// Struct declarations the compiler refuses: each kernel parameter names one.
import { kernel, vec3f, type bf16, type f32 } from "tskernel";

interface Flagged {
  pos: vec3f;
  visible: boolean; // TSK1150: bool has no layout the targets share
}

interface Optional {
  pos: vec3f;
  mass?: f32; // TSK1153
}

interface Empty {} // TSK1151

interface Node {
  value: f32;
  next: Node; // TSK1152
}

interface Packed {
  pos: vec3f;
  weight: bf16; // TSK1150: WGSL keeps bf16 in u32 words
}

interface Shaped {
  area(): f32; // TSK1153
}

export const a = kernel((items: Flagged[]) => {
  items[0]!.pos.x = 0;
});
export const b = kernel((items: Optional[]) => {
  items[0]!.pos.x = 0;
});
export const c = kernel((items: Empty[]) => {
  void items;
});
export const d = kernel((items: Node[]) => {
  void items;
});
export const e = kernel((shape: Shaped) => {
  void shape;
});
export const f = kernel((items: Packed[]) => {
  items[0]!.pos.x = 0;
});
