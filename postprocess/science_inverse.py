"""Gallery case 2: the inverse energy cascade (forcing at small scale k_f, large-scale sink).

    python3 postprocess/science_inverse.py RUN [--png FILE] [--json FILE]

Over the window (the second half of the run, science_stats.WINDOW_FRACTION) the shell spectra
E(k) and the energy flux Pi(k) are averaged, with error bars from 5 consecutive blocks. In the
band k_f/8 <= k <= k_f/2 (fixed before any run):
  - the inverse flux eps_I = -<Pi(k)> (mean over the band; its spread over the band shows how
    constant it is) against the injection eps and the large-scale sink (hypoviscosity +
    friction dissipation from the diagnostics);
  - the slope of E(k) (least squares in log-log) against -5/3;
  - the Kolmogorov constant C = <E(k) k^(5/3)> eps_I^(-2/3), against Boffetta & Ecke (2012),
    C ~ 6.
Writes numbers.json and inverse.png in RUN (or where --json/--png say).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import science_stats as ss  # noqa: E402

BAND = (1.0 / 8.0, 1.0 / 2.0)   # the band, in units of k_f
LITERATURE_C = 6.0


def analyse(run_dir):
    deck, k_f, w, k_lo, k_hi, sel = ss.forced_band_window(run_dir, BAND, "science_inverse")
    k = w["k"]
    flux = -w["Pi"][sel]
    eps_I = float(flux.mean())
    eps = w["diag"]["injection"][0]
    sink = w["diag"].get("dissipation_alpha", (0, 0))[0] + w["diag"].get("dissipation_mu", (0, 0))[0]
    sink_err = np.hypot(w["diag"].get("dissipation_alpha", (0, 0))[1], w["diag"].get("dissipation_mu", (0, 0))[1])
    slope, _, slope_err = ss.fit_power_law(k, w["E"], k_lo, k_hi)
    C, C_spread, C_err = ss.compensated_band(k, w["E"], w["E_err"], 5.0 / 3.0, eps_I ** (2.0 / 3.0), k_lo, k_hi)
    # The same constant with the large-scale sink as the flux (what reaches large scales and is removed).
    C_sink = C * (eps_I / sink) ** (2.0 / 3.0) if sink > 0 else float("nan")
    E_series = w["series"]["E"]
    t_series = w["series"]["t"]
    in_win = t_series >= w["t_from"]
    half = t_series[in_win]
    e_win = E_series[in_win]
    drift = float((e_win[half >= half.mean()].mean() - e_win[half < half.mean()].mean()) / e_win.mean())
    numbers = ss.run_header(run_dir, "inverse", deck)
    numbers.update({
        "k_f": k_f,
        "window": {"t_from": w["t_from"], "t_to": w["t_to"], "spectra": w["count"], "blocks": ss.NBLOCKS},
        "band": [k_lo, k_hi],
        "injection": {"mean": eps, "err": w["diag"]["injection"][1]},
        "large_scale_sink": {"mean": sink, "err": float(sink_err)},
        "flux_band": {"mean": eps_I, "spread": float(flux.std()), "min": float(flux.min()), "max": float(flux.max()),
                      "err": float(np.sqrt(np.mean(w["Pi_err"][sel] ** 2)))},
        "flux_over_injection": eps_I / eps,
        "sink_over_injection": sink / eps,
        "slope": {"value": slope, "fit_err": slope_err, "theory": -5.0 / 3.0},
        "C": {"value": C, "band_spread": C_spread, "time_err": C_err, "with_sink_as_flux": C_sink,
              "literature": LITERATURE_C,
              "reference": "Boffetta & Ecke, Annu. Rev. Fluid Mech. 44, 427 (2012): C ~ 6"},
        "energy_drift_in_window": drift,
    })
    return numbers, w


def draw(numbers, w, png):
    import plotting
    k = w["k"]
    k_lo, k_hi = numbers["band"]
    eps_I = numbers["flux_band"]["mean"]
    eps = numbers["injection"]["mean"]
    good = (k > 0) & (w["E"] > 1e-14 * w["E"].max())
    fig, axes = plotting.plt.subplots(1, 3, figsize=(12, 3.5))
    ax = axes[0]
    comp = w["E"] * k ** (5.0 / 3.0) / eps_I ** (2.0 / 3.0)
    err = w["E_err"] * k ** (5.0 / 3.0) / eps_I ** (2.0 / 3.0)
    ax.fill_between(k[good], (comp - err)[good], (comp + err)[good], color="C0", alpha=0.3, lw=0)
    ax.loglog(k[good], comp[good], "C0", lw=1)
    ax.axvspan(k_lo, k_hi, color="0.9", zorder=0)
    ax.axhline(numbers["C"]["value"], color="C3", lw=1, label="C = %.2f (band mean)" % numbers["C"]["value"])
    ax.axhline(numbers["C"]["literature"], color="k", ls=":", lw=1, label="Boffetta & Ecke: C ~ 6")
    ax.axvline(numbers["k_f"], color="0.5", lw=0.6)
    ax.set_xlabel("k")
    ax.set_ylabel(r"$E(k)\,k^{5/3}\,\epsilon_I^{-2/3}$")
    ax.set_ylim(0.1, 100)
    ax.legend(fontsize=7)
    ax = axes[1]
    kk = k[k > 0]
    pi = w["Pi"][k > 0] / eps
    pe = w["Pi_err"][k > 0] / eps
    ax.fill_between(kk, pi - pe, pi + pe, color="C2", alpha=0.3, lw=0)
    ax.semilogx(kk, pi, "C2", lw=1, label=r"$\Pi(k)/\epsilon$")
    ax.axhline(-numbers["sink_over_injection"], color="k", ls=":", lw=1, label="large-scale sink / $\\epsilon$")
    ax.axvspan(k_lo, k_hi, color="0.9", zorder=0)
    ax.axhline(0, color="0.6", lw=0.5)
    ax.set_xlabel("k")
    ax.legend(fontsize=7)
    ax = axes[2]
    s = w["series"]
    ax.plot(s["t"], s["E"], "C0", lw=1)
    ax.axvspan(numbers["window"]["t_from"], numbers["window"]["t_to"], color="0.9", zorder=0)
    ax.set_xlabel("t")
    ax.set_ylabel("E(t)")
    nx, ny = numbers["grid"]
    fig.suptitle("Inverse cascade, %d$^2$, $k_f$ = %g, window t = %.3g-%.3g (shaded)"
                 % (nx, numbers["k_f"], numbers["window"]["t_from"], numbers["window"]["t_to"]), fontsize=10)
    fig.tight_layout()
    plotting.save(fig, png)


def summary(numbers):
    return ("inverse: C = %.3f +- %.3f (band spread %.3f), slope %.3f, flux/eps = %.3f (spread %.3f), sink/eps = %.3f"
          % (numbers["C"]["value"], numbers["C"]["time_err"], numbers["C"]["band_spread"], numbers["slope"]["value"],
             numbers["flux_over_injection"], numbers["flux_band"]["spread"] / numbers["injection"]["mean"],
             numbers["sink_over_injection"]))


def main(argv=None):
    return ss.case_main(argv, "science_inverse", __doc__, analyse, draw, "inverse.png", summary)


if __name__ == "__main__":
    sys.exit(main())
