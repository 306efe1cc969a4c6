"""Horizontal bar charts as SVG for the bench's small chart scripts (bench/matmul16-tiles-chart.py,
bench/tf32-rounding-chart.py): groups of labelled bars, each a percentage with its text, and a dashed line at 100 %."""

from xml.sax.saxutils import escape


def write_bar_chart(out, title, groups, scale_max=110.0, label_width=150, text_width=140):
    """`groups` is [(label, [(percent, text, color), ...]), ...]; bars are drawn to scale_max %."""
    bar_h, gap, width = 14, 10, 520
    left = label_width
    height = 60 + sum(len(bars) * bar_h + gap for _, bars in groups)
    scale = width / scale_max
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + text_width}" height="{height}" font-family="sans-serif" font-size="11">',
             f'<text x="10" y="20" font-size="14">{escape(title)}</text>']
    x100 = left + 100 * scale
    parts.append(f'<line x1="{x100:.1f}" y1="30" x2="{x100:.1f}" y2="{height - 10}" stroke="#888" stroke-dasharray="3,3"/>')
    parts.append(f'<text x="{x100 - 12:.1f}" y="42" fill="#555">100 %</text>')
    y = 50
    for label, bars in groups:
        parts.append(f'<text x="10" y="{y + bar_h * len(bars) / 2 + 4:.1f}">{escape(label)}</text>')
        for percent, text, color in bars:
            parts.append(f'<rect x="{left}" y="{y}" width="{percent * scale:.1f}" height="{bar_h - 2}" fill="{color}"/>')
            parts.append(f'<text x="{left + percent * scale + 4:.1f}" y="{y + bar_h - 4}">{escape(text)}</text>')
            y += bar_h
        y += gap
    parts.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(parts) + "\n")
