#!/usr/bin/env python3
"""The chart of TF32 rounded by the copy (bench/README.md, "TF32 rounded by the copy"): per shape, the percentage
of torch.mm TF32 that the clustered TF32 rung reaches with tensor maps that round A and B as they copy (TFLOAT32,
torch's error) and with plain f32 maps (A truncated by the tensor cores), each from its own bench/torch-matmul.py
report of the same run, with the normwise error of each.

    python3 bench/tf32-rounding-chart.py rounded.json plain.json out.svg
"""

import json
import sys
from xml.sax.saxutils import escape

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
    bar_h, gap, left, width = 14, 10, 120, 520
    height = 60 + sum(len(b) * bar_h + gap for _, b in rows)
    scale = width / 125.0
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 260}" height="{height}" font-family="sans-serif" font-size="11">',
             f'<text x="10" y="20" font-size="14">TF32 GEMM on the H100: % of torch.mm TF32 ({escape(rounded.get("date", ""))}, {escape(rounded.get("device", ""))})</text>']
    x100 = left + 100 * scale
    parts.append(f'<line x1="{x100:.1f}" y1="30" x2="{x100:.1f}" y2="{height - 10}" stroke="#888" stroke-dasharray="3,3"/>')
    parts.append(f'<text x="{x100 - 12:.1f}" y="42" fill="#555">100 %</text>')
    y = 50
    for label, bars in rows:
        parts.append(f'<text x="10" y="{y + bar_h * len(bars) / 2 + 4:.1f}">{escape(label)}</text>')
        for name, percent, error in bars:
            color = "#2b6cb0" if "round" in name else "#a0aec0"
            parts.append(f'<rect x="{left}" y="{y}" width="{percent * scale:.1f}" height="{bar_h - 2}" fill="{color}"/>')
            parts.append(f'<text x="{left + percent * scale + 4:.1f}" y="{y + bar_h - 4}">{percent:.1f} % {escape(name)}, error {error:.2e}</text>')
            y += bar_h
        y += gap
    parts.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(parts) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
