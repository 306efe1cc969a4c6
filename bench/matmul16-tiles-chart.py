#!/usr/bin/env python3
"""The chart of the 16-bit tile choice (bench/README.md, "Small 16-bit products"): per shape of a
bench/torch-matmul.py report, the percentage of torch.mm in the same type reached by the large-tile rung
(hgemm-wgmma-ws) and the small-tile one (hgemm-wgmma-small), bf16 and f16, the one matmul() takes marked.

    python3 bench/matmul16-tiles-chart.py report.json out.svg
"""

import json
import sys
from xml.sax.saxutils import escape


def main(argv):
    report_path, out = argv
    with open(report_path) as f:
        report = json.load(f)
    rows = []
    for shape in report["shapes"]:
        label = f"{shape['m']}×{shape['n']}×{shape['k']}"
        for dtype in ("bf16", "f16"):
            suffix = "" if dtype == "bf16" else "-f16"
            chosen = (shape.get("halves", {}).get(dtype, {}).get("matmul") or {}).get("rung")
            bars = []
            for rung, name in ((f"hgemm-wgmma-ws{suffix}", "128×256 tiles"), (f"hgemm-wgmma-small{suffix}", "64×128 tiles")):
                found = [c for c in shape["candidates"] if c.get("rung") == rung and c.get("pass")]
                if found:
                    best = max(found, key=lambda c: c["percentOfTorch16"])
                    bars.append((name, best["percentOfTorch16"], rung == chosen))
            if bars:
                rows.append((f"{label} {dtype}", bars))
    bar_h, gap, left, width = 14, 10, 150, 520
    height = 60 + sum(len(b) * bar_h + gap for _, b in rows)
    scale = width / 110.0
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 140}" height="{height}" font-family="sans-serif" font-size="11">',
             f'<text x="10" y="20" font-size="14">16-bit GEMM on the H100: % of torch.mm in the same type ({escape(report.get("date", ""))})</text>']
    x100 = left + 100 * scale
    parts.append(f'<line x1="{x100:.1f}" y1="30" x2="{x100:.1f}" y2="{height - 10}" stroke="#888" stroke-dasharray="3,3"/>')
    parts.append(f'<text x="{x100 - 12:.1f}" y="42" fill="#555">100 %</text>')
    y = 50
    for label, bars in rows:
        parts.append(f'<text x="10" y="{y + bar_h * len(bars) / 2 + 4:.1f}">{escape(label)}</text>')
        for name, percent, chosen in bars:
            color = "#2b6cb0" if name.startswith("64") else "#a0aec0"
            parts.append(f'<rect x="{left}" y="{y}" width="{percent * scale:.1f}" height="{bar_h - 2}" fill="{color}"/>')
            parts.append(f'<text x="{left + percent * scale + 4:.1f}" y="{y + bar_h - 4}">{percent:.1f} % {escape(name)}{" ← matmul()" if chosen else ""}</text>')
            y += bar_h
        y += gap
    parts.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(parts) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
