"""Time series of a cascade run: E, Z, P, the time step and the energy budget.

    python3 postprocess/plot_timeseries.py RUN [--source auto|h5|csv] [--out FILE]

Panels: E(t); Z(t); P(t); dt (log scale) marked by what bound it (cfl_limit); the energy
budget, dE/dt from the series (central differences) and the change over each diagnostics
interval against injection - dissipation (which cascade writes as means over the interval since
the previous row, so they are drawn at the interval midpoints), with the separate
dissipation_<term> columns (nu, mu, alpha, ...) when present; the residual of the exact
interval budget E_i - E_i-1 = (t_i - t_i-1)(injection - dissipation)_i; and the same for the
enstrophy (injection_Z, dissipation_Z) when present. --source picks diagnostics.h5 or diagnostics.csv (default: whichever has more rows,
so a run still going shows its latest rows). Default output RUN/timeseries.png. Prints the
path of the PNG; exits 2 with one line for a missing run or file.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import plotting  # noqa: E402

PROG = "plot_timeseries"
LIMIT_STYLE = {  # cfl_limit -> (colour, marker)
    "cfl": ("tab:blue", "o"),
    "dt_max": ("tab:green", "s"),
    "growth": ("tab:orange", "^"),
    "output": ("tab:red", "v"),
    "none": ("0.4", "x"),
}


def parse_args(argv):
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    p.add_argument("run", metavar="RUN", help="the run's output directory")
    p.add_argument("--source", default="auto", choices=("auto", "h5", "csv"),
                   help="diagnostics.h5 or diagnostics.csv (default: the one with more rows)")
    p.add_argument("--out", help="output PNG (default RUN/timeseries.png)")
    return p.parse_args(argv)


def clean(d):
    """The series sorted by t, one row per time (the last written wins: a restart rewrites
    the rows after its checkpoint)."""
    t = np.asarray(d["t"], dtype=np.float64)
    _, last = np.unique(t[::-1], return_index=True)
    keep = np.sort(len(t) - 1 - last)
    keep = keep[np.argsort(t[keep], kind="stable")]
    return {name: np.asarray(values)[keep] for name, values in d.items()
            if np.ndim(values) == 1 and len(values) == len(t)}


def energy_rate(t, E):
    """dE/dt by central differences (one-sided at the ends); None with fewer than 2 rows."""
    if len(t) < 2:
        return None
    return np.gradient(E, t, edge_order=2 if len(t) >= 3 else 1)


def budget_columns(d, quantity):
    """(injection, dissipation, parts) column names of the budget of E or Z: energy uses
    injection, dissipation and their parts dissipation_<term> (dissipation_nu, _mu, _alpha,
    ...); enstrophy uses injection_Z, dissipation_Z and dissipation_Z_<term>."""
    suffix = "" if quantity == "E" else "_Z"
    inj, dis = "injection" + suffix, "dissipation" + suffix

    def is_part(name, base):
        if not name.startswith(base + "_"):
            return False
        rest = name[len(base) + 1:]
        return quantity == "Z" or not (rest == "Z" or rest.startswith("Z_"))

    parts = sorted(n for n in d if is_part(n, inj) or is_part(n, dis))
    return inj, dis, parts


def interval_midpoints(t):
    """Where a row's budget terms belong: they are means over the interval since the previous
    row, so the interval's midpoint (the first row, with no interval, at its own time)."""
    return np.concatenate([t[:1], 0.5 * (t[1:] + t[:-1])])


def draw_budget(abud, ares, t, d, quantity):
    """The budget of X = E or Z. On abud: dX/dt from the series by central differences (at the
    rows), the change over each interval (X_i - X_i-1)/(t_i - t_i-1) (at its midpoint), and
    injection - dissipation with its separate terms, which cascade writes as means over the
    interval since the previous row (so plotted at the midpoints too). On ares: the residual of
    the exact interval budget, X_i - X_i-1 - (t_i - t_i-1)(injection - dissipation)_i, as a
    fraction of the largest rate."""
    name = {"E": "energy", "Z": "enstrophy"}[quantity]
    inj_name, dis_name, parts = budget_columns(d, quantity)
    x = d[quantity].astype(np.float64)
    rate = energy_rate(t, x)
    tm = interval_midpoints(t)
    inj = d[inj_name].astype(np.float64) if inj_name in d else np.zeros_like(t)
    dis = d[dis_name].astype(np.float64) if dis_name in d else np.zeros_like(t)
    model = inj - dis
    if rate is not None:
        abud.plot(t, rate, color="k", lw=2.4, alpha=0.35, label=r"$d%s/dt$ (central differences)" % quantity)
        abud.plot(tm[1:], np.diff(x) / np.diff(t), "o", color="k", ms=3.0,
                  label=r"$\Delta %s/\Delta t$ over each interval" % quantity)
    abud.plot(tm, model, color="tab:red", lw=1.2, label="injection $-$ dissipation (interval means)")
    if np.any(inj != 0):
        abud.plot(tm, inj, color="tab:green", lw=1.0, label="injection")
    for part in parts:
        sign, label = (1.0, part) if part.startswith("injection") else (-1.0, "$-$" + part)
        values = sign * d[part].astype(np.float64)
        if np.any(values != 0):  # terms switched off in the deck stay out of the legend
            abud.plot(tm, values, lw=0.9, ls="-." if sign > 0 else "--", label=label.replace("_", " "))
    abud.axhline(0.0, color="0.5", lw=0.8)
    abud.set_xlabel("t")
    abud.set_ylabel("rate of change of %s" % quantity)
    abud.set_title("%s budget" % name)
    abud.grid(True, alpha=0.3)
    abud.legend(loc="best")

    if rate is not None:
        change = np.diff(x) / np.diff(t)
        scale = max(np.max(np.abs(model)), np.max(np.abs(change)), 1e-300)
        residual = (change - model[1:]) / scale
        ares.plot(tm[1:], residual, "o-", color="tab:purple", lw=1.0, ms=3.0)
        ares.set_ylabel(r"$[\Delta %s/\Delta t - (\mathrm{inj} - \mathrm{diss})] \,/\, \max|\mathrm{rate}|$"
                        % quantity)
        ares.text(0.98, 0.04, "max |residual| = %.2g of the largest rate" % np.max(np.abs(residual)),
                  transform=ares.transAxes, ha="right", va="bottom", fontsize=8, color="0.3",
                  bbox=dict(facecolor="white", edgecolor="none", alpha=0.8))
    else:
        ares.text(0.5, 0.5, "fewer than 2 rows", transform=ares.transAxes, ha="center")
    ares.axhline(0.0, color="0.5", lw=0.8)
    ares.set_xlabel("t")
    ares.set_title("%s budget residual over each interval" % name)
    ares.grid(True, alpha=0.3)


def _series(ax, t, y, label, log=False):
    ax.plot(t, y, color="tab:blue", lw=1.4)
    ax.set_ylabel(label)
    ax.set_xlabel("t")
    if log and np.all(y[np.isfinite(y)] > 0) and np.any(np.isfinite(y)):
        ax.set_yscale("log")
    ax.grid(True, alpha=0.3)


def _main(argv):
    args = parse_args(argv)
    d = clean(plotting.diagnostics(args.run, args.source))
    if "t" not in d or len(d["t"]) == 0:
        raise plotting.Failure("diagnostics of %s hold no rows" % args.run)
    t = d["t"].astype(np.float64)

    zbudget = "dissipation_Z" in d  # the enstrophy budget, when the run writes its columns
    fig, axes = plotting.new_figure(4 if zbudget else 3, 2, width=11.0, height=14.0 if zbudget else 10.5)
    (aE, aZ), (aP, adt), (abud, ares) = axes[:3]
    _series(aE, t, d["E"], r"energy $E = \frac{1}{2}\langle|\mathbf{u}|^2\rangle$")
    aE.set_title("energy")
    _series(aZ, t, d["Z"], r"enstrophy $Z = \frac{1}{2}\langle\omega^2\rangle$", log=True)
    aZ.set_title("enstrophy")
    if "P" in d:
        _series(aP, t, d["P"], r"palinstrophy $P = \frac{1}{2}\langle|\nabla\omega|^2\rangle$", log=True)
    aP.set_title("palinstrophy")

    # Time step, marked by what bound it (the row at t = 0 has dt = 0: no step yet).
    dt = d.get("dt", np.full_like(t, np.nan)).astype(np.float64)
    limits = d.get("cfl_limit", np.array(["?"] * len(t)))
    stepped = dt > 0
    adt.plot(t[stepped], dt[stepped], color="0.75", lw=0.8, zorder=1)
    for name in list(LIMIT_STYLE) + sorted(set(limits) - set(LIMIT_STYLE)):
        sel = stepped & (limits == name)
        if sel.any():
            color, marker = LIMIT_STYLE.get(name, ("k", "."))
            adt.scatter(t[sel], dt[sel], s=14, color=color, marker=marker, zorder=2,
                        label="%s (%d)" % (name, sel.sum()))
    if "step" in d and len(t) >= 2:
        # Rows land on output times, so their own step is often cut short ('output'); the
        # mean step over each interval shows what the CFL condition allowed.
        steps = np.diff(d["step"].astype(np.float64))
        ok = steps > 0
        if ok.any():
            adt.step(t[1:][ok], np.diff(t)[ok] / steps[ok], where="pre", color="tab:purple", lw=1.0,
                     label="mean over interval", zorder=1)
    if adt.get_legend_handles_labels()[0]:
        adt.set_yscale("log")
        adt.legend(title="bound by", loc="best")
    else:
        adt.text(0.5, 0.5, "no steps between the rows", transform=adt.transAxes, ha="center")
    adt.set_xlabel("t")
    adt.set_ylabel(r"$\Delta t$ of the step ending at t")
    adt.set_title("time step")
    adt.grid(True, which="both", alpha=0.3)

    draw_budget(abud, ares, t, d, "E")
    if zbudget:
        draw_budget(axes[3][0], axes[3][1], t, d, "Z")

    fig.suptitle("diagnostics of %s (%d rows, t = %.4g to %.4g)"
                 % (os.path.basename(os.path.normpath(os.path.abspath(args.run))), len(t), t[0], t[-1]))
    plotting.save(fig, args.out or os.path.join(args.run, "timeseries.png"))
    return 0


def main(argv=None):
    return plotting.run_main(PROG, _main, argv)


if __name__ == "__main__":
    sys.exit(main())
