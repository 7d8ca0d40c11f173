#!/usr/bin/python3
"""Draw bench/results/ratio.svg from bench/results/latest.json.

    /usr/bin/python3 bench/chart.py [LATEST_JSON] [OUT_SVG]

Horizontal bars, one group per case: ratio = peer median / onnxrun median for each peer (ONNX
Runtime; oneDNN in its preferred blocked layouts, where it has a result) and thread count, on a
log scale, with a line at 1.0 (right of it: onnxrun faster). The SVG is written
by hand (no matplotlib needed: Debian's python3-matplotlib is not installed on the bench
machines by default, and a plain SVG diffs and renders everywhere).
"""
import json
import math
import os
import sys
from xml.sax.saxutils import escape

HERE = os.path.dirname(os.path.abspath(__file__))
COLORS = ["#4C72B0", "#DD8452", "#55A868", "#C44E52"]


def main(argv):
    src = argv[0] if argv else os.path.join(HERE, "results", "latest.json")
    dst = argv[1] if len(argv) > 1 else os.path.join(HERE, "results", "ratio.svg")
    with open(src) as f:
        res = json.load(f)
    cases = []
    threads = sorted({c["threads"] for c in res["cases"]})
    peers = [("ratio", "ORT")]
    if any(c.get("ratio_dnnl_blocked") for c in res["cases"]):
        peers.append(("ratio_dnnl_blocked", "oneDNN blocked"))
    series = [(key, label, t) for key, label in peers for t in threads]
    by = {}
    for c in res["cases"]:
        if c.get("dtype") == "float64":  # no ratio: no peer has a float64 ConvTranspose
            continue
        if c["case"] not in by:
            by[c["case"]] = {}
            cases.append((c["case"], c["op"]))
        for key, _ in peers:
            by[c["case"]][(key, c["threads"])] = c.get(key)
    vals = [r for d in by.values() for r in d.values() if r]
    if not vals:
        raise SystemExit("chart: no ratios in " + src)
    lo = 10 ** math.floor(math.log10(min(min(vals), 1.0) * 0.9))
    hi = 10 ** math.ceil(math.log10(max(max(vals), 1.0) * 1.1))
    dec_lo, dec_hi = int(round(math.log10(lo))), int(round(math.log10(hi)))

    label_w, plot_w, right = 300, 620, 30
    bar_h, gap = 9, 8
    group_h = bar_h * len(series) + gap
    top, bottom = 70, 60
    plot_h = group_h * len(cases)
    width = label_w + plot_w + right
    height = top + plot_h + bottom

    def x_of(v):
        return label_w + plot_w * (math.log10(v) - dec_lo) / (dec_hi - dec_lo)

    out = []
    a = out.append
    a(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
      f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Arial, sans-serif" font-size="11">')
    a(f'<rect width="{width}" height="{height}" fill="white"/>')
    m = res.get("machine") or {}
    title = "onnxrun vs ONNX Runtime and oneDNN (CPU): ratio = peer time / onnxrun time (log scale; > 1: onnxrun faster)"
    sub = f"{res.get('date', '')} · {m.get('model_name', '')}, {m.get('cores', '')} cores · commit {res.get('git_commit', '')}"
    a(f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="13" font-weight="bold">{escape(title)}</text>')
    a(f'<text x="{width / 2}" y="37" text-anchor="middle" fill="#555">{escape(sub)}</text>')
    # grid: decades and 2x/5x
    for d in range(dec_lo, dec_hi + 1):
        for mult in (1, 2, 5):
            v = mult * 10 ** d
            if v < lo or v > hi:
                continue
            x = x_of(v)
            major = mult == 1
            a(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + plot_h}" '
              f'stroke="{"#bbb" if major else "#e3e3e3"}" stroke-width="1"/>')
            lab = f"{v:g}" if v >= 0.01 else f"{v:.0e}"
            if major or (dec_hi - dec_lo) <= 3:
                a(f'<text x="{x:.1f}" y="{top + plot_h + 15}" text-anchor="middle" fill="#333">{lab}</text>')
    x1 = x_of(1.0)
    for i, (name, op) in enumerate(cases):
        y0 = top + i * group_h + gap / 2
        if i % 2:
            a(f'<rect x="0" y="{y0 - gap / 2:.1f}" width="{width}" height="{group_h}" fill="#f6f6f6"/>')
        a(f'<text x="{label_w - 8}" y="{y0 + bar_h * len(series) / 2 + 4:.1f}" text-anchor="end">'
          f'{escape(name)}</text>')
        for j, (key, label, t) in enumerate(series):
            r = by[name].get((key, t))
            y = y0 + j * bar_h
            if not r:
                a(f'<text x="{x1 + 4:.1f}" y="{y + bar_h - 1:.1f}" fill="#999" font-size="8">no {escape(label)} result</text>')
                continue
            xr = x_of(r)
            xa, xb = min(x1, xr), max(x1, xr)
            a(f'<rect x="{xa:.1f}" y="{y:.1f}" width="{max(xb - xa, 1):.1f}" height="{bar_h - 1}" '
              f'fill="{COLORS[j % len(COLORS)]}"><title>{escape(name)} {escape(label)} threads={t}: {r:.3g}</title></rect>')
            tx = xb + 3 if r >= 1 else xa - 3
            anchor = "start" if r >= 1 else "end"
            a(f'<text x="{tx:.1f}" y="{y + bar_h - 1.5:.1f}" text-anchor="{anchor}" font-size="8.5" '
              f'fill="#333">{r:.2g}</text>')
    a(f'<line x1="{x1:.1f}" y1="{top - 5}" x2="{x1:.1f}" y2="{top + plot_h}" stroke="black" stroke-width="1.5"/>')
    a(f'<text x="{x1:.1f}" y="{top - 9}" text-anchor="middle" font-size="10">1.0 (parity)</text>')
    # axis label and legend
    a(f'<text x="{label_w + plot_w / 2}" y="{top + plot_h + 32}" text-anchor="middle">'
      'ratio peer median / onnxrun median</text>')
    geo = res.get("geomean", {})
    lx = 20
    ly = top + plot_h + 50
    for j, (key, label, t) in enumerate(series):
        g = (geo.get(str(t)) or {}).get("geomean_" + key)
        text = f"{label}, {t} thread{'s' if t != 1 else ''}" + (f" (geomean {g:.3g})" if g else "")
        a(f'<rect x="{lx}" y="{ly - 9}" width="12" height="10" fill="{COLORS[j % len(COLORS)]}"/>')
        a(f'<text x="{lx + 16}" y="{ly}">{escape(text)}</text>')
        lx += 230
    a('</svg>')
    with open(dst, "w") as f:
        f.write("\n".join(out) + "\n")
    print(f"chart: wrote {dst}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
