#!/usr/bin/env python3
"""The chart of the 16-bit tile choice (bench/README.md, "Small 16-bit products"): per shape of a
bench/torch-matmul.py report, the percentage of torch.mm in the same type reached by the large-tile rung
(hgemm-wgmma-ws) and the small-tile one (hgemm-wgmma-small), bf16 and f16, the one matmul() takes marked.

    python3 bench/matmul16-tiles-chart.py report.json out.svg
"""

import json
import sys

from svg_bars import write_bar_chart


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
    groups = [
        (label, [(percent, f"{percent:.1f} % {name}{' ← matmul()' if chosen else ''}", "#2b6cb0" if name.startswith("64") else "#a0aec0") for name, percent, chosen in bars])
        for label, bars in rows
    ]
    write_bar_chart(out, f"16-bit GEMM on the H100: % of torch.mm in the same type ({report.get('date', '')})", groups)


if __name__ == "__main__":
    main(sys.argv[1:])
