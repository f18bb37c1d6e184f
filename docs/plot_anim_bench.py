#!/usr/bin/env python3
"""Draws docs/anim-bench.png from the CSV the `anim` bench writes.

    cargo bench -p vkskin --no-default-features --bench anim
    python3 docs/plot_anim_bench.py [target/anim-bench.csv] [docs/anim-bench.png]
"""
import csv
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402,F401

src = sys.argv[1] if len(sys.argv) > 1 else "target/anim-bench.csv"
dst = sys.argv[2] if len(sys.argv) > 2 else "docs/anim-bench.png"
rows = list(csv.DictReader(open(src)))


def num(s):
    try:
        v = float(s)
        return None if math.isnan(v) else v
    except ValueError:
        return None


configs = [("tree64", "tree 64"), ("tree256", "tree 256"), ("chain64", "chain 64"), ("chain256", "chain 256")]
colors = ["#4c72b0", "#55a868", "#8172b2", "#64b5cd"]
fig, ax = plt.subplots(figsize=(11, 0.55 * len(rows) + 1.5))
height = 0.18
for i, r in enumerate(rows):
    y = len(rows) - 1 - i
    vals = [(label, num(r[key]), c) for (key, label), c in zip(configs, colors)]
    vals = [v for v in vals if v[1] is not None]
    if r["unit"] == "ns/vertex":
        vals = [("100k vertices, 64-joint palette", v, "#dd8452") for (_, v, _) in vals]
    for k, (label, v, c) in enumerate(vals):
        off = (k - (len(vals) - 1) / 2) * height
        ax.barh(y + off, v, height=height, color=c, label=label)
    t, o = num(r["target"]), num(r["ozz"])
    span = height * max(len(vals), 1) / 2 + 0.05
    if t is not None:
        ax.plot([t, t], [y - span, y + span], color="red", lw=2.5, label="target" if i == 0 else None)
    if o is not None:
        ax.plot([o, o], [y - span, y + span], color="black", lw=1.5, ls="--", label="ozz 0.16" if i == 0 else None)
labels = [f"{r['workload']} ({r['unit']})" for r in rows]
ax.set_yticks(range(len(rows) - 1, -1, -1))
ax.set_yticklabels(labels, fontsize=8)
ax.set_xscale("log")
ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
ax.xaxis.set_minor_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}" if str(v)[0] in "25" else ""))
ax.set_xlabel("ns per joint / per vertex (log scale, lower is better)")
ax.set_title("vkskin CPU animation, single thread, vs targets (red) and ozz-animation 0.16 (dashed)")
handles, names = ax.get_legend_handles_labels()
seen = {}
for h, n in zip(handles, names):
    seen.setdefault(n, h)
ax.legend(seen.values(), seen.keys(), loc="lower right", fontsize=8)
ax.grid(axis="x", which="both", alpha=0.3)
fig.tight_layout()
fig.savefig(dst, dpi=110)
print("wrote", dst)
