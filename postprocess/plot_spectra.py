"""Shell spectra E(k) and Z(k) of a cascade run at a few times, with k^-5/3 and k^-3 guides.

    python3 postprocess/plot_spectra.py RUN [--times T ...] [--compensate none|5/3|3] [--out FILE]

Default times: the first, a middle and the last spectrum (each --times value takes the nearest
spectrum written). --compensate adds a panel with E(k) k^(5/3) or E(k) k^3. When spectra.h5
holds the fluxes /Pi and /Pi_Z, a panel shows Pi(k) and Pi_Z(k). Default output
RUN/spectra.png. Prints the path of the PNG; exits 2 with one line for a missing run or file.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import plotting  # noqa: E402

PROG = "plot_spectra"
COMPENSATE = {"none": None, "5/3": 5.0 / 3.0, "3": 3.0}
COMPENSATE_LABEL = {"5/3": r"$E(k)\,k^{5/3}$", "3": r"$E(k)\,k^{3}$"}
SLOPE_LABEL = {"5/3": r"$k^{-5/3}$", "3": r"$k^{-3}$"}


def parse_args(argv):
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    p.add_argument("run", metavar="RUN", help="the run's output directory")
    p.add_argument("--times", type=float, nargs="+", metavar="T",
                   help="times to show (nearest spectrum written; default first, middle, last)")
    p.add_argument("--compensate", default="none", choices=list(COMPENSATE),
                   help="add a compensated spectrum panel: E k^(5/3) or E k^3 (default none)")
    p.add_argument("--out", help="output PNG (default RUN/spectra.png)")
    return p.parse_args(argv)


def default_indices(n):
    return sorted({0, (n - 1) // 2, n - 1})


def _positive(values, floor):
    """values with those at or below floor (zeros beyond the dealiasing cut, round-off) as NaN."""
    out = np.array(values, dtype=np.float64)
    out[~(out > floor)] = np.nan
    return out


def resolved_range(k, spectrum):
    """(k_peak, k_cut): where the spectrum peaks, and the largest k it still holds (above
    round-off: 1e-13 of the peak, which drops the modes removed by dealiasing)."""
    good = np.isfinite(spectrum) & (spectrum > 1e-13 * np.nanmax(spectrum))
    kk = k[good]
    k_peak = float(k[np.nanargmax(spectrum)])
    return k_peak, float(kk.max()) if kk.size else float(k.max())


def guide(ax, k, spectrum, slope, label, k_lo, k_hi, factor, style):
    """A line c k^slope over [k_lo, k_hi], `factor` times above the spectrum (the largest of
    the curves shown, rows of a 2-D array) where it is highest relative to the line, so that the
    guide runs just above the data rather than through it."""
    if not k_hi > k_lo:
        return
    inside = (k >= k_lo) & (k <= k_hi)
    ratio = np.atleast_2d(spectrum)[:, inside] / k[inside] ** slope
    if not np.isfinite(ratio).any():
        return
    c = factor * np.nanmax(ratio)
    kk = np.geomspace(k_lo, k_hi, 32)
    ax.loglog(kk, c * kk ** slope, style, color="0.25", lw=1.2, label=label)


def _main(argv):
    args = parse_args(argv)
    sp = plotting.spectra(args.run)
    k, times = np.asarray(sp["k"], dtype=np.float64), np.asarray(sp["t"], dtype=np.float64)
    rows = plotting.nearest_indices(times, args.times) if args.times else default_indices(len(times))
    shown = k > 0
    k = k[shown]
    colors = plotting.time_colors(len(rows))
    E = {r: np.asarray(sp["E"][r], dtype=np.float64)[shown] for r in rows}
    Z = {r: np.asarray(sp["Z"][r], dtype=np.float64)[shown] for r in rows}
    fluxes = [name for name in plotting.SPECTRA_EXTRA if name in sp]
    power = COMPENSATE[args.compensate]

    panels = ["E", "Z"] + (["compensated"] if power is not None else []) + (["flux"] if fluxes else [])
    ncols = 2
    nrows = (len(panels) + 1) // 2
    fig, axes = plotting.new_figure(nrows, ncols, width=11.0, height=4.2 * nrows)
    axes = list(axes.ravel())
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    ax_for = dict(zip(panels, axes))

    # The last spectrum sets the guides' ranges: k^-3 over the enstrophy range above its peak,
    # k^-5/3 below the peak (where an inverse energy cascade would show).
    last = rows[-1]
    floor_E = 1e-13 * np.nanmax(E[last])
    floor_Z = 1e-13 * np.nanmax(Z[last])
    Elast = _positive(E[last], floor_E)
    k_peak, k_cut = resolved_range(k, Elast)
    k_lo3 = max(2.0 * k_peak, k[0])
    k_hi3 = max(k_lo3, 0.7 * k_cut)
    k_lo53 = max(k_peak / 8.0, k[0])

    for spectra, key, ax, floor, ylabel in ((E, "E", ax_for["E"], floor_E, r"$E(k)$"),
                                            (Z, "Z", ax_for["Z"], floor_Z, r"$Z(k)$")):
        for r, c in zip(rows, colors):
            ax.loglog(k, _positive(spectra[r], floor * 1e-3), color=c, lw=1.4,
                      label="t = %.4g (step %d)" % (times[r], int(sp["step"][r])))
        s = np.array([_positive(spectra[r], floor) for r in rows])
        # Z(k) = k^2 E(k): the same two ranges have slopes 1/3 and -1.
        shift = 0.0 if key == "E" else 2.0
        guide(ax, k, s, -3.0 + shift, r"$k^{-3}$" if key == "E" else r"$k^{-1}$ ($E\sim k^{-3}$)",
              k_lo3, k_hi3, 2.0, "--")
        guide(ax, k, s, -5.0 / 3.0 + shift,
              r"$k^{-5/3}$" if key == "E" else r"$k^{1/3}$ ($E\sim k^{-5/3}$)", k_lo53, k_peak, 2.0, ":")
        ax.set_xlabel(r"$k$")
        ax.set_ylabel(ylabel)
        top, bottom = np.nanmax(s), np.nanmin(s)
        ax.set_ylim(max(bottom / 3.0, top * 1e-14), top * 10.0)
        ax.set_xlim(k[0] * 0.9, k_cut * 1.3)
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(loc="lower left")
    ax_for["E"].set_title("energy spectrum")
    ax_for["Z"].set_title("enstrophy spectrum")

    if power is not None:
        ax = ax_for["compensated"]
        for r, c in zip(rows, colors):
            ax.loglog(k, _positive(E[r], floor_E) * k ** power, color=c, lw=1.4, label="t = %.4g" % times[r])
        ax.set_xlabel(r"$k$")
        ax.set_ylabel(COMPENSATE_LABEL[args.compensate])
        ax.set_title("compensated energy spectrum (flat where $E \\sim$ %s)" % SLOPE_LABEL[args.compensate])
        ax.set_xlim(k[0] * 0.9, k_cut * 1.3)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(loc="best")

    if fluxes:
        ax = ax_for["flux"]
        ax2 = ax.twinx() if len(fluxes) == 2 else None
        styles = {"Pi": "-", "Pi_Z": "--"}
        for name in fluxes:
            target = ax2 if (name == "Pi_Z" and ax2 is not None) else ax
            for r, c in zip(rows, colors):
                target.semilogx(k, np.asarray(sp[name][r], dtype=np.float64)[shown], styles[name], color=c, lw=1.3,
                                label="t = %.4g" % times[r] if name == fluxes[0] else None)
        ax.axhline(0.0, color="0.5", lw=0.8)
        ax.set_xlabel(r"$k$")
        ax.set_xlim(k[0] * 0.9, k_cut * 1.3)
        labels = {"Pi": r"energy flux $\Pi(k)$ (solid)", "Pi_Z": r"enstrophy flux $\Pi_Z(k)$ (dashed)"}
        ax.set_ylabel(labels[fluxes[0]])
        if ax2 is not None:
            ax2.set_ylabel(labels["Pi_Z"])
            _align_zero(ax, ax2)
        ax.set_title("spectral fluxes through k")
        ax.legend(loc="best")
        ax.grid(True, which="major", alpha=0.3)

    fig.suptitle("spectra of %s" % os.path.basename(os.path.normpath(os.path.abspath(args.run))))
    plotting.save(fig, args.out or os.path.join(args.run, "spectra.png"))
    return 0


def _align_zero(ax, ax2):
    """Scale the two y axes so that both zeros lie at the same height."""
    lims = []
    for a in (ax, ax2):
        lo, hi = a.get_ylim()
        m = max(abs(lo), abs(hi)) or 1.0
        lims.append(m)
    ax.set_ylim(-lims[0] * 1.05, lims[0] * 1.05)
    ax2.set_ylim(-lims[1] * 1.05, lims[1] * 1.05)


def main(argv=None):
    return plotting.run_main(PROG, _main, argv)


if __name__ == "__main__":
    sys.exit(main())
