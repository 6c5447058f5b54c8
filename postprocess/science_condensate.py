"""Gallery case 5: the condensate (forcing at small scale, no large-scale sink worth the name).

    python3 postprocess/science_condensate.py RUN [--png FILE] [--json FILE]

From the diagnostics and spectra: the energy E(t), its growth rate dE/dt over the second half
of the run (least squares) against the injection eps, and the condensate fraction
f(t) = E(k = 1 shell) dk / E, the share of the energy in the box-scale modes (|k| = 1, the
shell 0.5 <= |k| < 1.5). From the last snapshot: the vortex census (science_stats.CENSUS) and
the circulation of its two strongest vortices; Chertkov, Connaughton, Kolokolov & Lebedev,
PRL 99, 084501 (2007) find a pair of counter-rotating box-size vortices holding most of the
energy, E growing linearly in time.
Writes numbers.json and condensate.png in RUN (or where --json/--png say).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import cascade_io  # noqa: E402
import science_stats as ss  # noqa: E402


def analyse(run_dir):
    d = cascade_io.read_diagnostics(run_dir)
    s = cascade_io.read_spectra(run_dir)
    k = s["k"]
    shell1 = int(np.argmin(np.abs(k - 1.0)))
    frac = s["E"][:, shell1] * s["dk"] / np.maximum(s["E"].sum(axis=1) * s["dk"], 1e-300)
    t_end = float(d["t"][-1])
    sel = ss.window(d["t"], 0.5 * t_end)
    rate, _, rate_err = ss.fit_line(d["t"][sel], d["E"][sel])
    eps, eps_err, _ = ss.block_mean(d["injection"][sel & (d["t"] > 0)], ss.NBLOCKS)
    snaps = cascade_io.list_snapshots(run_dir)
    last = cascade_io.read_snapshot(snaps[-1])
    vortices = ss.vortex_census(last["vorticity"], last["attrs"]["lx"], last["attrs"]["ly"])
    strongest = sorted(vortices, key=lambda v: -abs(v["circulation"]))[:2]
    numbers = {
        "case": "condensate",
        "grid": ss.grid_of(run_dir),
        "backend": ss.run_backend(run_dir),
        "wall_s": ss.wall_seconds(run_dir),
        "steps": int(d["step"][-1]),
        "physics": ss.run_deck(run_dir).get("physics", {}),
        "forcing": ss.run_deck(run_dir).get("forcing", {}),
        "t_end": t_end,
        "E_end": float(d["E"][-1]),
        "dEdt_second_half": {"value": rate, "fit_err": rate_err},
        "injection": {"mean": float(eps), "err": float(eps_err)},
        "dEdt_over_injection": rate / float(eps),
        "condensate_fraction": {"t": s["t"], "f": frac, "end": float(frac[-1])},
        "final_census": {"time": float(last["attrs"]["time"]), "count": len(vortices),
                         "two_strongest": [{"x": v["x"], "y": v["y"], "circulation": v["circulation"],
                                            "radius": v["radius"], "peak": v["peak"]} for v in strongest],
                         "opposite_signs": len(strongest) == 2 and strongest[0]["sign"] != strongest[1]["sign"]},
        "reference": "Chertkov, Connaughton, Kolokolov & Lebedev, PRL 99, 084501 (2007)",
    }
    return numbers, d, s, frac, last, vortices


def draw(numbers, d, s, frac, last, vortices, png):
    import plotting
    fig, axes = plotting.plt.subplots(1, 3, figsize=(12, 3.6))
    ax = axes[0]
    ax.plot(d["t"], d["E"], "C0", lw=1, label="E(t)")
    ax.plot(d["t"], numbers["injection"]["mean"] * d["t"], "k:", lw=1, label=r"$\epsilon\,t$")
    ax.set_xlabel("t")
    ax.set_ylabel("energy")
    ax.legend(fontsize=7)
    ax = axes[1]
    ax.plot(s["t"], frac, "C1", lw=1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("t")
    ax.set_ylabel(r"box-scale share $E(|k|=1)/E$")
    ax = axes[2]
    plotting.field_image(ax, last, "vorticity")
    ax.scatter([v["x"] for v in vortices], [v["y"] for v in vortices], s=20, facecolors="none", edgecolors="k",
               linewidths=0.8)
    nx, _ = numbers["grid"]
    fig.suptitle("Condensate, %d$^2$, $k_f$ = %g: final t = %.3g, %d vortices"
                 % (nx, numbers["forcing"].get("k_f", 0), numbers["final_census"]["time"],
                    numbers["final_census"]["count"]), fontsize=10)
    fig.tight_layout()
    plotting.save(fig, png)


def summary(numbers):
    return ("condensate: E(t_end) = %.3g, dE/dt / eps = %.3f, box-scale share %.3f, final census %d vortices%s"
          % (numbers["E_end"], numbers["dEdt_over_injection"], numbers["condensate_fraction"]["end"],
             numbers["final_census"]["count"],
             " (two strongest of opposite sign)" if numbers["final_census"]["opposite_signs"] else ""))


def main(argv=None):
    return ss.case_main(argv, "science_condensate", __doc__, analyse, draw, "condensate.png", summary)


if __name__ == "__main__":
    sys.exit(main())
