/**
 * The meaning of the vector functions, written once as IR: each lane of `dot`, `normalize`, `mix`, … in
 * terms of scalar operations, as the WGSL specification defines them (`mix(a, b, t)` is `a·(1−t) + b·t`,
 * `smoothstep` clamps then takes t²(3 − 2t), `reflect(e1, e2)` is `e1 − 2·dot(e2, e1)·e2`). WGSL prints the
 * functions natively; the targets that do not have them use these definitions: the CPU backend through the
 * scalarizing pass (passes/scalarize-vectors.ts), CUDA through the inline helpers it generates for vectors
 * (backends/cuda-vectors.ts) and, for the scalar forms (`clamp(x, lo, hi)` of f32s), through legalization.
 *
 * A definition takes each argument as its lanes (one expression per lane; one for a scalar) and gives the
 * result's lanes. Where a definition would repeat a part (the length in `normalize`), it asks `bind` for a
 * name for it: a local where the caller can declare one, or the expression itself where it cannot.
 */

import type { BinaryOp, Expr, IntrinsicName, ScalarType, Span } from "./ir.ts";

/** Gives an expression a name (a local) where the caller can, so that it is computed once; or returns it. */
export type Bind = (expr: Expr, name: string) => Expr;

/** The intrinsics that some target has no function for, on scalars or vectors: expandIntrinsic defines them. */
export const definedIntrinsics: ReadonlySet<IntrinsicName> = new Set<IntrinsicName>([
  "clamp", "mix", "fract", "step", "smoothstep", "inverseSqrt", "saturate",
  "dot", "cross", "length", "distance", "normalize", "reflect", "faceForward", "all", "any",
]);

/** Builds scalar IR of one element type at one span. */
class Builder {
  constructor(
    readonly element: ScalarType,
    readonly span: Span,
  ) {}

  literal(value: number, type: ScalarType = this.element): Expr {
    return { kind: "literal", type, value, span: this.span };
  }

  binary(op: BinaryOp, left: Expr, right: Expr): Expr {
    const comparison = op === "eq" || op === "ne" || op === "lt" || op === "le" || op === "gt" || op === "ge" || op === "logand" || op === "logor";
    return { kind: "binary", op, type: comparison ? "bool" : (left.type as ScalarType), left, right, span: this.span };
  }

  call(name: IntrinsicName, ...args: Expr[]): Expr {
    return { kind: "intrinsic", name, type: args[0]!.type as ScalarType, args, span: this.span };
  }

  select(condition: Expr, whenTrue: Expr, whenFalse: Expr): Expr {
    return { kind: "select", type: whenTrue.type, condition, whenTrue, whenFalse, span: this.span };
  }

  /** a0·b0 + a1·b1 + …, left to right. */
  dot(a: readonly Expr[], b: readonly Expr[]): Expr {
    return a.map((lane, i) => this.binary("mul", lane, b[i]!)).reduce((sum, term) => this.binary("add", sum, term));
  }
}

/**
 * The lanes of `name` applied to arguments given as lanes (`args[i][lane]`), for arguments of element type
 * `element`. Component-wise functions apply lane by lane; the others follow their definitions above. A
 * scalar argument has one lane, and so has a scalar result.
 */
export function expandIntrinsic(name: IntrinsicName, element: ScalarType, args: readonly (readonly Expr[])[], span: Span, bind: Bind): Expr[] {
  const b = new Builder(element, span);
  const lanes = args[0]!.length;
  const each = (f: (lane: number) => Expr): Expr[] => Array.from({ length: lanes }, (_, lane) => f(lane));
  const arg = (i: number, lane: number) => args[i]![lane]!;
  switch (name) {
    case "clamp":
      return each((l) => b.call("min", b.call("max", arg(0, l), arg(1, l)), arg(2, l)));
    case "saturate":
      return each((l) => b.call("min", b.call("max", arg(0, l), b.literal(0)), b.literal(1)));
    case "mix":
      // WGSL: e1 * (1 - e3) + e2 * e3.
      return each((l) => {
        const t = bind(arg(2, l), "t");
        return b.binary("add", b.binary("mul", arg(0, l), b.binary("sub", b.literal(1), t)), b.binary("mul", arg(1, l), t));
      });
    case "fract":
      return each((l) => {
        const x = bind(arg(0, l), "x");
        return b.binary("sub", x, b.call("floor", x));
      });
    case "step":
      // 1 where edge <= x, else 0.
      return each((l) => b.select(b.binary("le", arg(0, l), arg(1, l)), b.literal(1), b.literal(0)));
    case "smoothstep":
      return each((l) => {
        const low = bind(arg(0, l), "low");
        const ratio = b.binary("div", b.binary("sub", arg(2, l), low), b.binary("sub", arg(1, l), low));
        const t = bind(b.call("min", b.call("max", ratio, b.literal(0)), b.literal(1)), "t");
        return b.binary("mul", b.binary("mul", t, t), b.binary("sub", b.literal(3), b.binary("mul", b.literal(2), t)));
      });
    case "inverseSqrt":
      return each((l) => b.binary("div", b.literal(1), b.call("sqrt", arg(0, l))));
    case "length": {
      if (lanes === 1) return [b.call("abs", arg(0, 0))];
      const v = args[0]!.map((lane) => bind(lane, "lane"));
      return [b.call("sqrt", b.dot(v, v))];
    }
    case "distance": {
      if (lanes === 1) return [b.call("abs", b.binary("sub", arg(0, 0), arg(1, 0)))];
      const d = each((l) => bind(b.binary("sub", arg(0, l), arg(1, l)), "d"));
      return [b.call("sqrt", b.dot(d, d))];
    }
    case "dot":
      return [b.dot(args[0]!, args[1]!)];
    case "normalize": {
      const v = each((l) => bind(arg(0, l), "lane"));
      const length = bind(b.call("sqrt", b.dot(v, v)), "length");
      return v.map((lane) => b.binary("div", lane, length));
    }
    case "cross": {
      const [ax, ay, az] = args[0]!.map((lane) => bind(lane, "a"));
      const [bx, by, bz] = args[1]!.map((lane) => bind(lane, "b"));
      const term = (p: Expr, q: Expr, r: Expr, s: Expr) => b.binary("sub", b.binary("mul", p, q), b.binary("mul", r, s));
      return [term(ay!, bz!, az!, by!), term(az!, bx!, ax!, bz!), term(ax!, by!, ay!, bx!)];
    }
    case "reflect": {
      // WGSL: e1 - 2 * dot(e2, e1) * e2, the scalar 2·dot first.
      const twice = bind(b.binary("mul", b.literal(2), b.dot(args[1]!, args[0]!)), "k");
      return each((l) => b.binary("sub", arg(0, l), b.binary("mul", twice, arg(1, l))));
    }
    case "faceForward": {
      // e1 where dot(e2, e3) < 0, else -e1.
      const facing = bind(b.binary("lt", b.dot(args[1]!, args[2]!), b.literal(0)), "facing");
      return each((l) => {
        const e1 = bind(arg(0, l), "lane");
        return b.select(facing, e1, { kind: "unary", op: "neg", type: element, operand: e1, span });
      });
    }
    case "all":
      return [args[0]!.reduce((acc, lane) => b.binary("logand", acc, lane))];
    case "any":
      return [args[0]!.reduce((acc, lane) => b.binary("logor", acc, lane))];
    default:
      // A component-wise scalar function (sqrt, min, pow, …): the same function on each lane.
      return each((l) => ({ kind: "intrinsic", name, type: element, args: args.map((a) => a[l]!), span }));
  }
}
