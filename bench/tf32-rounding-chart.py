#!/usr/bin/env python3
"""The chart of TF32 rounded by the copy (bench/README.md, "TF32 rounded by the copy"): per shape, the percentage
of torch.mm TF32 that the clustered TF32 rung reaches with tensor maps that round A and B as they copy (TFLOAT32,
torch's error) and with plain f32 maps (A truncated by the tensor cores), each from its own bench/torch-matmul.py
report of the same run, with the normwise error of each.

    python3 bench/tf32-rounding-chart.py rounded.json plain.json out.svg
"""

import json
import sys

from svg_bars import write_bar_chart

RUNG = "sgemm-wgmma-cluster"


def best(shape):
    found = [c for c in shape["candidates"] if c.get("rung") == RUNG and c.get("pass")]
    return max(found, key=lambda c: c["percentOfTorchTf32"]) if found else None


def main(argv):
    rounded_path, plain_path, out = argv
    with open(rounded_path) as f:
        rounded = json.load(f)
    with open(plain_path) as f:
        plain = json.load(f)
    plain_shapes = {(s["m"], s["n"], s["k"]): s for s in plain["shapes"]}
    rows = []
    for shape in rounded["shapes"]:
        key = (shape["m"], shape["n"], shape["k"])
        bars = []
        for name, source in (("maps that round (TFLOAT32)", shape), ("plain f32 maps (A truncated)", plain_shapes.get(key))):
            row = best(source) if source else None
            if row:
                bars.append((name, row["percentOfTorchTf32"], row["relativeError"]))
        if bars:
            rows.append(("×".join(str(x) for x in key), bars))
    groups = [
        (label, [(percent, f"{percent:.1f} % {name}, error {error:.2e}", "#2b6cb0" if "round" in name else "#a0aec0") for name, percent, error in bars])
        for label, bars in rows
    ]
    title = f"TF32 GEMM on the H100: % of torch.mm TF32 ({rounded.get('date', '')}, {rounded.get('device', '')})"
    write_bar_chart(out, title, groups, scale_max=125.0, label_width=120, text_width=260)


if __name__ == "__main__":
    main(sys.argv[1:])
