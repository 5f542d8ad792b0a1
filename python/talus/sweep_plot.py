"""Figure of a Talus sweep (talus sweep --plot, talus.sweep(plot=...)): success and forward speed
against each randomized parameter.

Usage: python3 sweep_plot.py SWEEP.csv OUT.(png|svg|pdf) [TITLE]

SWEEP.csv is the CSV of `talus sweep` (docs/sweeps.md): sample, seed, spec, the parameter
columns, status, the outcomes, message. One column of panels per parameter column: on top the
success rate (status ok) in ten bins of equal width with its Wilson 95 % interval (and each
sample as a tick at 0 or 1), below the mean forward speed of every sample coloured by its status.
The talus binary embeds this file and runs it with /usr/bin/python3 (or $TALUS_PYTHON); it
needs matplotlib (Debian: python3-matplotlib). From Python: talus.sweep_plot.plot(csv, out).
"""
import csv
import math
import sys

OUTCOMES = ("status", "time_to_fall", "mean_speed", "distance", "tracking_error", "contact_force_mean",
            "contact_force_max", "cost_of_transport", "max_penetration", "foot_slip", "max_roll_pitch", "message")
COLOURS = {"ok": "#2a9d4b", "fell": "#d9822b", "diverged": "#c23030", "error": "#7a5195"}


def read(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if len(rows) < 2:
        raise SystemExit(f"sweep_plot: {path}: no rows")
    names = rows[0]
    params = names[3:names.index("status")]
    cols = {n: [r[i] for r in rows[1:]] for i, n in enumerate(names)}
    return params, cols


def wilson(k, n, z=1.959963984540054):
    if n == 0:
        return 0.0, 1.0
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return max(0.0, c - h), min(1.0, c + h)


def plot(csv_path, out_path, title="Talus sweep"):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    params, cols = read(csv_path)
    status = cols["status"]
    ok = [s == "ok" for s in status]
    speed = [float(v) for v in cols["mean_speed"]]
    n = max(1, len(params))
    fig, axes = plt.subplots(2, n, figsize=(3.2 * n + 0.8, 6.0), squeeze=False)
    for j, name in enumerate(params or ["(no parameter)"]):
        top, bottom = axes[0, j], axes[1, j]
        x = [float(v) for v in cols[name]] if params else [float(i) for i in range(len(status))]
        finite = [v for v in x if math.isfinite(v)]
        lo, hi = (min(finite), max(finite)) if finite else (0.0, 1.0)
        if hi == lo:
            hi = lo + 1.0
        edges = [lo + (hi - lo) * k / 10 for k in range(11)]
        centres, rate, err_lo, err_hi = [], [], [], []
        for b in range(10):
            inside = [o for v, o in zip(x, ok) if edges[b] <= v < edges[b + 1] or (b == 9 and v == edges[10])]
            if not inside:
                continue
            k = sum(inside)
            w_lo, w_hi = wilson(k, len(inside))
            centres.append(0.5 * (edges[b] + edges[b + 1]))
            rate.append(k / len(inside))
            err_lo.append(k / len(inside) - w_lo)
            err_hi.append(w_hi - k / len(inside))
        top.plot(x, [1.0 if o else 0.0 for o in ok], "|", color="0.6", markersize=6, alpha=0.5)
        top.errorbar(centres, rate, yerr=[err_lo, err_hi], fmt="o-", color="#1f5fa8", markersize=3, linewidth=1,
                     capsize=2)
        top.set_ylim(-0.05, 1.05)
        top.set_title(name, fontsize=8)
        top.grid(True, linewidth=0.4, alpha=0.6)
        top.tick_params(labelsize=7)
        for s, c in COLOURS.items():
            pts = [(v, y) for v, y, t in zip(x, speed, status) if t == s and math.isfinite(y)]
            if pts:
                bottom.scatter([p[0] for p in pts], [p[1] for p in pts], s=6, color=c, label=s, alpha=0.8)
        bottom.grid(True, linewidth=0.4, alpha=0.6)
        bottom.tick_params(labelsize=7)
        bottom.set_xlabel(name, fontsize=8)
        if j == 0:
            top.set_ylabel("success rate (ok)", fontsize=8)
            bottom.set_ylabel("mean forward speed (m/s)", fontsize=8)
            bottom.legend(fontsize=6, loc="best")
    k = sum(ok)
    w = wilson(k, len(ok))
    fig.suptitle(f"{title}: success {k}/{len(ok)} = {k / max(1, len(ok)):.3f} (95 % {w[0]:.3f}..{w[1]:.3f})",
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(out_path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    plot(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "Talus sweep")
