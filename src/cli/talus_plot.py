"""Static figure of a Talus run (talus simulate --plot FILE): the time series of the recording.

Usage: python3 talus_plot.py SERIES.csv OUT.(png|svg|pdf) [TITLE] [--fixed-base]

SERIES.csv is what `talus simulate --csv` writes (tl_recorder_write_csv): t, base_x/y/z,
base_vx/vy/vz, q_<coord>..., tau_<dof>..., fn_<link>..., kinetic, potential, energy.
Panels: base height, base velocity (not with --fixed-base: the plotted system's base is welded
to the world, its height and velocity say nothing), joint positions, joint torques, contact
normal forces (links that touched something), energy. The series are those of one system, the
one `talus simulate --plot-system` chose (default: the robot, or a world file's first system). The talus binary embeds this script and runs it with
/usr/bin/python3 (or $TALUS_PYTHON); it needs matplotlib (Debian: python3-matplotlib).
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read(path):
    with open(path, newline="") as f:
        # a '#' line is a note, not a frame (a diverged run ends with "# diverged: ...")
        rows = [r for r in csv.reader(f) if r and not r[0].startswith("#")]
    if len(rows) < 2:
        raise SystemExit(f"talus_plot: {path}: no frames")
    names = rows[0]
    cols = {n: [] for n in names}
    for r in rows[1:]:
        for n, v in zip(names, r):
            cols[n].append(float(v))
    return names, cols


def panels(names, cols, fixed_base=False):
    def pick(prefix):
        return [n for n in names if n.startswith(prefix)]

    out = []
    if "base_z" in cols and not fixed_base:
        out.append(("base height (m)", ["base_z"], lambda n: "z"))
        out.append(("base velocity (m/s)", ["base_vx", "base_vy", "base_vz"], lambda n: n[5:]))
    if pick("q_"):
        out.append(("joint positions (rad, m)", pick("q_"), lambda n: n[2:]))
    if pick("tau_"):
        out.append(("joint torques (N m, N)", pick("tau_"), lambda n: n[4:]))
    touched = [n for n in pick("fn_") if any(v != 0.0 for v in cols[n])]
    if touched:
        out.append(("contact normal forces (N)", touched, lambda n: n[3:]))
    out.append(("energy (J)", ["kinetic", "potential", "energy"], lambda n: "total" if n == "energy" else n))
    return out


def main(argv):
    fixed_base = "--fixed-base" in argv[1:]
    argv = [a for a in argv if a != "--fixed-base"]
    if len(argv) < 3:
        raise SystemExit(__doc__)
    names, cols = read(argv[1])
    title = argv[3] if len(argv) > 3 else "Talus"
    rows = panels(names, cols, fixed_base)
    fig, axes = plt.subplots(len(rows), 1, sharex=True, figsize=(9, 2.1 * len(rows) + 0.6), squeeze=False)
    t = cols["t"]
    for ax, (label, series, short) in zip(axes[:, 0], rows):
        for n in series:
            ax.plot(t, cols[n], linewidth=1, label=short(n))
        ax.set_ylabel(label, fontsize=8)
        ax.grid(True, linewidth=0.4, alpha=0.6)
        ax.tick_params(labelsize=7)
        if len(series) > 1:
            # many series (more than 24): the legend goes beside the panel, in columns
            if len(series) > 24:
                ax.legend(fontsize=5, ncol=(len(series) + 11) // 12, loc="upper left", bbox_to_anchor=(1.005, 1.0),
                          framealpha=0.7, borderaxespad=0)
            else:
                ax.legend(fontsize=6, ncol=min(6, (len(series) + 1) // 2), loc="upper right", framealpha=0.7)
    axes[-1, 0].set_xlabel("t (s)", fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(argv[2], dpi=120, bbox_inches="tight")


if __name__ == "__main__":
    main(sys.argv)
