#!/usr/bin/env python3
"""The chart of bench/wgmma-probe.py reports (TF32 GEMMs against torch.mm TF32) and bench/fp8-probe.py reports
(against torch._scaled_mm: --reference "torch._scaled_mm" --percent percentOfScaledMm): per shape, horizontal bars
of TFLOP/s for the reference and the chosen builds, each labelled with its percentage of the reference and whether
its float64 check passed. Rows come from one or more reports as REPORT:ID=LABEL (the first report's reference row
gives each shape's reference bar; a row from another report is shown with its own percentage).

    python3 bench/gemm-chart.py out.svg --title T run20.json:lang_cluster.cubin="tskernel sgemm-wgmma-cluster" ...
"""

import argparse
import json
from xml.sax.saxutils import escape


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("rows", nargs="+", help="REPORT:ID=LABEL")
    parser.add_argument("--title", default="TF32 GEMM vs torch.mm TF32")
    parser.add_argument("--reference", default="torch.mm TF32", help="the id of the reference row")
    parser.add_argument("--percent", default="percentOfTorchTf32", help="the rows' key of their percentage of the reference")
    args = parser.parse_args(argv)
    reports, picks = {}, []
    for spec in args.rows:
        path, rest = spec.split(":", 1)
        row_id, label = rest.split("=", 1)
        if path not in reports:
            with open(path) as f:
                reports[path] = json.load(f)
        picks.append((path, row_id, label))
    first = reports[picks[0][0]]
    shapes = first["shapes"]
    bar_h, gap, left, scale = 18, 4, 330, 0.9
    height = 40 + len(shapes) * (30 + (len(picks) + 1) * (bar_h + gap)) + 20
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="1000" height="{height}" font-family="sans-serif" font-size="12">',
           '<rect width="100%" height="100%" fill="white"/>',
           f'<text x="10" y="24" font-size="16" font-weight="bold">{escape(args.title)}</text>']
    y = 40
    for index, shape in enumerate(shapes):
        key = (shape["m"], shape["n"], shape["k"])
        y += 22
        out.append(f'<text x="10" y="{y}" font-weight="bold">{key[0]}×{key[1]}×{key[2]}</text>')
        y += 8
        torch_row = next(r for r in shape["rows"] if r["id"] == args.reference)
        bars = [(args.reference, torch_row, "#888")]
        for path, row_id, label in picks:
            other = next(s for s in reports[path]["shapes"] if (s["m"], s["n"], s["k"]) == key)
            row = next(r for r in other["rows"] if r["id"] == row_id)
            bars.append((label, row, "#3b73b9" if row["pass"] else "#c0504d"))
        for label, row, colour in bars:
            width = row["tflops"] * scale
            note = "" if row["pass"] else ", FAILED its float64 check"
            error = f", error {row['relativeError']:.1e}" if row.get("relativeError") else ""
            out.append(f'<text x="{left - 8}" y="{y + 13}" text-anchor="end">{escape(label)}</text>')
            out.append(f'<rect x="{left}" y="{y}" width="{width:.1f}" height="{bar_h}" fill="{colour}"/>')
            out.append(f'<text x="{left + width + 6:.1f}" y="{y + 13}">{row["tflops"]:.0f} TFLOP/s, {row[args.percent]:.1f} %{error}{note}</text>')
            y += bar_h + gap
    out.append("</svg>")
    with open(args.out, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
