"""Gallery case 4: decaying two-dimensional turbulence, the census of coherent vortices.

    python3 postprocess/science_decaying.py RUN [--png FILE] [--json FILE]

Each snapshot's vortices are counted by science_stats.vortex_census (thresholds in
science_stats.CENSUS: one-signed regions where the Okubo-Weiss parameter W < -0.2 W_rms, with an
extremum at least 0.1 max|omega|, an area at least pi (2 dx)^2 and an aspect ratio at most 3).
N(t) is fitted by a power law N ~ t^-xi over the snapshots with t >= t_end/8 and N >= 10 (fixed
before any run: after the vortices have formed, before too few are left); the error bar is the
larger of the fit's standard error and the difference of the two halves' exponents. Carnevale et
al. (1991) report xi ~ 0.75 and, in their scaling theory, the enstrophy Z ~ t^(-xi/2), the mean
vortex radius ~ t^(xi/4) and the peak vorticity constant: the same fits are made here.
Writes numbers.json and decaying.png in RUN (or where --json/--png say).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import cascade_io  # noqa: E402
import science_stats as ss  # noqa: E402

FIT_FROM = 1.0 / 8.0   # fraction of t_end where the fit starts
MIN_COUNT = 10         # fewer vortices: finite-box effects and counting noise
LITERATURE_XI = 0.75


def census_series(run_dir):
    rows = []
    last = None
    for path in cascade_io.list_snapshots(run_dir):
        s = cascade_io.read_snapshot(path)
        t = float(s["attrs"]["time"])
        if t <= 0:
            continue
        v = ss.vortex_census(s["vorticity"], s["attrs"]["lx"], s["attrs"]["ly"])
        rows.append({
            "t": t, "N": len(v),
            "radius": float(np.mean([x["radius"] for x in v])) if v else float("nan"),
            "peak": float(np.mean([abs(x["peak"]) for x in v])) if v else float("nan"),
        })
        last = (s, v)
    return rows, last


def power_fit(t, y):
    """Exponent (y ~ t^-xi) with its error bar: max(fit error, |xi(first half) - xi(second half)|)."""
    t, y = np.asarray(t, dtype=float), np.asarray(y, dtype=float)
    if t.size < 3:
        return float("nan"), float("nan")
    slope, _, err = ss.fit_line(np.log(t), np.log(y))
    half = t.size // 2
    s1, _, _ = ss.fit_line(np.log(t[:half + 1]), np.log(y[:half + 1]))
    s2, _, _ = ss.fit_line(np.log(t[half:]), np.log(y[half:]))
    return -slope, max(err, abs(s2 - s1))


def analyse(run_dir):
    rows, last = census_series(run_dir)
    if not rows:
        raise SystemExit("science_decaying: %s: no snapshots after t = 0" % run_dir)
    t = np.array([r["t"] for r in rows])
    N = np.array([r["N"] for r in rows], dtype=float)
    t_end = t.max()
    sel = (t >= FIT_FROM * t_end - 1e-9) & (N >= MIN_COUNT)
    xi, xi_err = power_fit(t[sel], N[sel])
    rad = np.array([r["radius"] for r in rows])
    peak = np.array([r["peak"] for r in rows])
    r_exp, r_err = power_fit(t[sel], rad[sel])
    p_exp, p_err = power_fit(t[sel], peak[sel])
    d = cascade_io.read_diagnostics(run_dir)
    dsel = (d["t"] >= t[sel].min() - 1e-9) & (d["t"] <= t[sel].max() + 1e-9) if sel.any() else d["t"] < 0
    z_exp, z_err = power_fit(d["t"][dsel], d["Z"][dsel]) if dsel.sum() > 2 else (float("nan"), float("nan"))
    numbers = {
        "case": "decaying",
        "grid": ss.grid_of(run_dir),
        "backend": ss.run_backend(run_dir),
        "wall_s": ss.wall_seconds(run_dir),
        "steps": int(d["step"][-1]),
        "physics": ss.run_deck(run_dir).get("physics", {}),
        "initial": ss.run_deck(run_dir).get("initial", {}),
        "census": dict(ss.CENSUS),
        "fit": {"t_from": float(t[sel].min()) if sel.any() else None,
                "t_to": float(t[sel].max()) if sel.any() else None,
                "snapshots": int(sel.sum()), "rule": "t >= t_end/8 and N >= 10"},
        "N": {"t": t, "N": N},
        "xi": {"value": xi, "err": xi_err, "literature": LITERATURE_XI,
               "reference": "Carnevale, McWilliams, Pomeau, Weiss & Young, PRL 66, 2735 (1991)"},
        "enstrophy_exponent": {"value": z_exp, "err": z_err, "scaling_theory": "xi/2"},
        "radius_exponent": {"value": -r_exp, "err": r_err, "scaling_theory": "xi/4"},
        "peak_exponent": {"value": -p_exp, "err": p_err, "scaling_theory": "0"},
        "E_change": float(d["E"][-1] / d["E"][1] - 1) if d["E"].size > 1 else None,
    }
    return numbers, rows, last, sel


def draw(numbers, rows, last, sel, png):
    import plotting
    t = np.array([r["t"] for r in rows])
    N = np.array([r["N"] for r in rows], dtype=float)
    fig, axes = plotting.plt.subplots(1, 2, figsize=(9, 4))
    ax = axes[0]
    ax.loglog(t, N, "o", color="0.6", ms=3, label="census")
    ax.loglog(t[sel], N[sel], "o", color="C0", ms=4, label="fitted")
    xi = numbers["xi"]["value"]
    if np.isfinite(xi) and sel.any():
        ts = t[sel]
        c = np.exp(np.mean(np.log(N[sel]) + xi * np.log(ts)))
        ax.loglog(ts, c * ts ** -xi, "C3", lw=1, label=r"$t^{-%.2f \pm %.2f}$" % (xi, numbers["xi"]["err"]))
        ax.loglog(ts, c * ts[0] ** (-xi + 0.75) * ts ** -0.75, "k:", lw=1, label=r"$t^{-0.75}$ (Carnevale et al.)")
    ax.set_xlabel("t")
    ax.set_ylabel("number of vortices N(t)")
    ax.legend(fontsize=7)
    ax = axes[1]
    if last is not None:
        s, vortices = last
        plotting.field_image(ax, s, "vorticity")
        ax.scatter([v["x"] for v in vortices], [v["y"] for v in vortices], s=12, facecolors="none",
                   edgecolors="k", linewidths=0.6)
        ax.set_title("t = %.3g: %d vortices" % (s["attrs"]["time"], len(vortices)), fontsize=9)
    nx, ny = numbers["grid"]
    fig.suptitle("Decaying turbulence, %d$^2$: vortex census" % nx, fontsize=10)
    fig.tight_layout()
    plotting.save(fig, png)


def summary(numbers):
    return ("decaying: xi = %.3f +- %.3f over t = %s-%s (%d snapshots), N: %s"
          % (numbers["xi"]["value"], numbers["xi"]["err"], numbers["fit"]["t_from"], numbers["fit"]["t_to"],
             numbers["fit"]["snapshots"], " ".join(str(int(n)) for n in numbers["N"]["N"])))


def main(argv=None):
    return ss.case_main(argv, "science_decaying", __doc__, analyse, draw, "decaying.png", summary)


if __name__ == "__main__":
    sys.exit(main())
