"""Gallery case 3: the direct enstrophy cascade (forcing at large scale k_f, Ekman friction).

    python3 postprocess/science_direct.py RUN [--png FILE] [--json FILE]

Over the window (the second half of the run) the shell spectra E(k) and the enstrophy flux
Pi_Z(k) are averaged, with error bars from 5 consecutive blocks. In the band
3 k_f <= k <= 25 k_f (fixed before any run):
  - the enstrophy flux eta = <Pi_Z(k)> (band mean, and its spread: how constant it is) against
    the enstrophy injection;
  - the slope of E(k) against -3 (friction steepens it: Boffetta & Ecke 2012, section 4);
  - the Kraichnan constant C' = <E(k) k^3> eta^(-2/3), and with Kraichnan's (1971) logarithmic
    correction C'_log = <E(k) k^3 ln(k/k_f)^(1/3)> eta^(-2/3), against the published
    C' ~ 1.3-2.
Writes numbers.json and direct.png in RUN (or where --json/--png say).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import science_stats as ss  # noqa: E402

BAND = (3.0, 25.0)   # the band, in units of k_f


def analyse(run_dir):
    deck, k_f, w, k_lo, k_hi, sel = ss.forced_band_window(run_dir, BAND, "science_direct")
    k = w["k"]
    flux = w["Pi_Z"][sel]
    eta = float(flux.mean())
    eta_in = w["diag"]["injection_Z"][0]
    slope, _, slope_err = ss.fit_power_law(k, w["E"], k_lo, k_hi)
    norm = eta ** (2.0 / 3.0)
    C, C_spread, C_err = ss.compensated_band(k, w["E"], w["E_err"], 3.0, norm, k_lo, k_hi)
    C_log, C_log_spread, C_log_err = ss.compensated_band(k, w["E"], w["E_err"], 3.0, norm, k_lo, k_hi,
                                                         extra=lambda kk: np.log(kk / k_f) ** (1.0 / 3.0))
    mu = float(deck.get("physics", {}).get("mu", 0.0))
    numbers = ss.run_header(run_dir, "direct", deck)
    numbers.update({
        "k_f": k_f,
        "window": {"t_from": w["t_from"], "t_to": w["t_to"], "spectra": w["count"], "blocks": ss.NBLOCKS},
        "band": [k_lo, k_hi],
        "injection": {"mean": w["diag"]["injection"][0], "err": w["diag"]["injection"][1]},
        "injection_Z": {"mean": eta_in, "err": w["diag"]["injection_Z"][1]},
        "friction_over_eta13": 2 * mu / eta ** (1.0 / 3.0) if eta > 0 else None,
        "flux_Z_band": {"mean": eta, "spread": float(flux.std()), "min": float(flux.min()), "max": float(flux.max()),
                        "err": float(np.sqrt(np.mean(w["Pi_Z_err"][sel] ** 2)))},
        "flux_Z_over_injection_Z": eta / eta_in if eta_in else None,
        "slope": {"value": slope, "fit_err": slope_err, "theory": -3.0},
        "C_kraichnan": {"value": C, "band_spread": C_spread, "time_err": C_err, "literature": [1.3, 2.0]},
        "C_kraichnan_log": {"value": C_log, "band_spread": C_log_spread, "time_err": C_log_err},
    })
    return numbers, w


def draw(numbers, w, png):
    import plotting
    k = w["k"]
    k_lo, k_hi = numbers["band"]
    eta = numbers["flux_Z_band"]["mean"]
    good = (k > 0) & (w["E"] > 1e-14 * w["E"].max())
    fig, axes = plotting.plt.subplots(1, 3, figsize=(12, 3.5))
    ax = axes[0]
    ax.loglog(k[good], w["E"][good], "C0", lw=1, label="E(k)")
    kk = np.array([k_lo, k_hi])
    c = numbers["C_kraichnan"]["value"] * eta ** (2.0 / 3.0)
    ax.loglog(kk, 3 * c * kk ** -3.0, "k:", lw=1, label=r"$k^{-3}$")
    ax.axvspan(k_lo, k_hi, color="0.9", zorder=0)
    ax.set_xlabel("k")
    ax.set_ylabel("E(k)")
    ax.legend(fontsize=7)
    ax = axes[1]
    comp = w["E"] * k ** 3 / eta ** (2.0 / 3.0)
    err = w["E_err"] * k ** 3 / eta ** (2.0 / 3.0)
    ax.fill_between(k[good], (comp - err)[good], (comp + err)[good], color="C0", alpha=0.3, lw=0)
    ax.semilogx(k[good], comp[good], "C0", lw=1, label=r"$E\,k^3\,\eta^{-2/3}$")
    with np.errstate(invalid="ignore", divide="ignore"):
        logc = comp * np.log(np.maximum(k, 1e-30) / numbers["k_f"]) ** (1.0 / 3.0)
    lsel = good & (k > numbers["k_f"])
    ax.semilogx(k[lsel], logc[lsel], "C1", lw=1, label=r"$\times\ \ln(k/k_f)^{1/3}$")
    ax.axhspan(1.3, 2.0, color="C3", alpha=0.15, lw=0, label="published C' 1.3-2")
    ax.axvspan(k_lo, k_hi, color="0.9", zorder=0)
    ax.set_ylim(0, 4 * max(2.0, numbers["C_kraichnan"]["value"]))
    ax.set_xlabel("k")
    ax.legend(fontsize=7)
    ax = axes[2]
    kp = k[k > 0]
    ax.semilogx(kp, w["Pi_Z"][k > 0] / numbers["injection_Z"]["mean"], "C2", lw=1, label=r"$\Pi_Z(k)/\eta_{in}$")
    ax.semilogx(kp, w["Pi"][k > 0] / numbers["injection"]["mean"], "C4", lw=1, label=r"$\Pi(k)/\epsilon_{in}$")
    ax.axvspan(k_lo, k_hi, color="0.9", zorder=0)
    ax.axhline(0, color="0.6", lw=0.5)
    ax.set_xlabel("k")
    ax.legend(fontsize=7)
    nx, ny = numbers["grid"]
    fig.suptitle("Direct cascade, %d$^2$, $k_f$ = %g, $\\mu$ = %g, window t = %.3g-%.3g"
                 % (nx, numbers["k_f"], numbers["physics"].get("mu", 0), numbers["window"]["t_from"],
                    numbers["window"]["t_to"]), fontsize=10)
    fig.tight_layout()
    plotting.save(fig, png)


def summary(numbers):
    return ("direct: C' = %.3f +- %.3f (band spread %.3f), C'_log = %.3f, slope %.3f, Pi_Z/eta_in = %.3f (spread %.3f)"
          % (numbers["C_kraichnan"]["value"], numbers["C_kraichnan"]["time_err"],
             numbers["C_kraichnan"]["band_spread"], numbers["C_kraichnan_log"]["value"], numbers["slope"]["value"],
             numbers["flux_Z_over_injection_Z"], numbers["flux_Z_band"]["spread"] / numbers["injection_Z"]["mean"]))


def main(argv=None):
    return ss.case_main(argv, "science_direct", __doc__, analyse, draw, "direct.png", summary)


if __name__ == "__main__":
    sys.exit(main())
