"""Gallery case 1: stability of the Kolmogorov flow sin(4y) in a 2 pi box, cascade against the
linear theory of kolmogorov_theory.py.

    python3 postprocess/science_kolmogorov.py prepare CASE_DIR [--nx 64]
    python3 postprocess/science_kolmogorov.py analyse CASE_DIR

prepare: for each R/R_c in RATIOS writes CASE_DIR/ic_<name>.h5, the laminar state
u = U0 sin(4y) plus the leading eigenmode (a, b) = (1, 0) at 1e-6 of the laminar vorticity, and
CASE_DIR/runs.txt, one line 'name chi ic_path' a run (cascade run input/science/kolmogorov.yaml
--set forcing.amplitude=chi --set initial.path=ic_path --output CASE_DIR/name).

analyse: in each run, the energy of the perturbation's x wavenumber 1 (all y wavenumbers) from
the snapshots, E1(t) = sum |omega_hat(1, q)|^2 / K^2; its growth rate sigma is half the slope
of log E1 over t >= T_SKIP (least squares); the error bar is the difference of the rates of the
window's two halves. Compared with the theory's leading eigenvalue at the run's own nu and
chi, and the threshold R_c located by the runs that bracket it (linear interpolation of sigma).
Writes CASE_DIR/numbers.json and CASE_DIR/kolmogorov.png.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import cascade_io  # noqa: E402
import kolmogorov_theory as kt  # noqa: E402
import science_stats as ss  # noqa: E402

N_F = 4          # forcing wavenumber (2 pi box)
NU = 0.1         # viscosity of every run (input/science/kolmogorov.yaml)
RATIOS = [0.8, 0.95, 0.98, 1.02, 1.05, 1.2]   # R / R_c of the runs
PERTURBATION = 1e-6   # max |omega'| / max |omega_laminar|
T_SKIP = 5.0     # the fit starts here (the eigenmode is planted: no transient expected)
MODE = (1, 0)    # the critical mode (a, b) of this box


def run_name(ratio):
    return "r%.2f" % ratio


def prepare(case_dir, nx):
    import h5py
    os.makedirs(case_dir, exist_ok=True)
    R_c = kt.critical_R(MODE[0], MODE[1], N_F)
    lines = []
    for ratio in RATIOS:
        R = ratio * R_c
        U0 = R * NU * N_F
        chi = U0 * NU * N_F ** 2
        y = np.arange(nx) * 2 * np.pi / nx
        laminar = np.repeat((-U0 * N_F * np.cos(N_F * y))[:, None], nx, axis=1)
        pert, _ = kt.mode_field(MODE[0], MODE[1], N_F, U0, NU, nx, nx, PERTURBATION * U0 * N_F)
        path = os.path.abspath(os.path.join(case_dir, "ic_%s.h5" % run_name(ratio)))
        with h5py.File(path, "w") as f:
            f["vorticity"] = laminar + pert
        lines.append("%s %.17g %s" % (run_name(ratio), chi, path))
    with open(os.path.join(case_dir, "runs.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


def mode_energy(omega, a, lx=2 * np.pi, ly=2 * np.pi):
    """Energy of the Fourier modes with x wavenumber a (both signs), all y wavenumbers, and of
    every mode with x wavenumber other than 0 and a (to see a contamination)."""
    ny, nx = omega.shape
    w = np.fft.rfft2(omega) / (nx * ny)
    ky = 2 * np.pi * np.fft.fftfreq(ny, d=ly / ny)
    kx = 2 * np.pi * np.arange(w.shape[1]) / lx
    K2 = kx[None, :] ** 2 + ky[:, None] ** 2
    K2[0, 0] = 1.0
    e = np.abs(w) ** 2 / K2   # half of each mode's energy (its conjugate holds the other half)
    return float(e[:, a].sum()), float(e[:, 1:].sum() - e[:, a].sum())


def measure(run_dir, a=MODE[0]):
    """(t, E_a, E_other, sigma, err, nu, chi) of one run."""
    t, ea, eo = [], [], []
    for path in cascade_io.list_snapshots(run_dir):
        s = cascade_io.read_snapshot(path)
        e1, e2 = mode_energy(s["vorticity"], a, s["attrs"]["lx"], s["attrs"]["ly"])
        t.append(s["attrs"]["time"])
        ea.append(e1)
        eo.append(e2)
    t, ea, eo = np.array(t), np.array(ea), np.array(eo)
    sel = t >= T_SKIP - 1e-9
    sigma, _ = ss.fit_growth_rate(t[sel], ea[sel])
    ts, es = t[sel], ea[sel]
    half = ts.size // 2
    s1, _ = ss.fit_growth_rate(ts[:half + 1], es[:half + 1])
    s2, _ = ss.fit_growth_rate(ts[half:], es[half:])
    deck = ss.run_deck(run_dir)
    nu = float(deck.get("physics", {}).get("nu", NU))
    mu = float(deck.get("physics", {}).get("mu", 0.0))
    chi = float(deck.get("forcing", {}).get("amplitude", float("nan")))
    return {"t": t, "E1": ea, "E_other": eo, "sigma": sigma, "err": abs(s2 - s1), "nu": nu, "mu": mu,
            "chi": chi}


def analyse(case_dir, png=None):
    R_c = kt.critical_R(MODE[0], MODE[1], N_F)
    runs = []
    with open(os.path.join(case_dir, "runs.txt")) as f:
        names = [line.split()[0] for line in f if line.strip()]
    for name in names:
        run_dir = os.path.join(case_dir, name)
        m = measure(run_dir)
        U0 = m["chi"] / (m["nu"] * N_F ** 2 + m["mu"])
        R = U0 / (m["nu"] * N_F)
        theory = kt.growth_rate(MODE[0], MODE[1], N_F, U0, m["nu"], m["mu"])
        m.update({"name": name, "R": R, "R_over_Rc": R / R_c, "theory": theory,
                  "rel_err": abs(m["sigma"] - theory) / abs(theory),
                  "contamination": float(m["E_other"][-1] / m["E1"][-1]),
                  "wall_s": ss.wall_seconds(run_dir), "grid": ss.grid_of(run_dir)})
        runs.append(m)
    runs.sort(key=lambda r: r["R"])
    # The threshold from the runs: the last stable and the first unstable run.
    bracket = None
    for lo, hi in zip(runs[:-1], runs[1:]):
        if lo["sigma"] < 0 <= hi["sigma"]:
            R_est = lo["R"] + (hi["R"] - lo["R"]) * (-lo["sigma"]) / (hi["sigma"] - lo["sigma"])
            bracket = {"R_stable": lo["R"], "R_unstable": hi["R"], "R_c_interpolated": R_est,
                       "rel_err": abs(R_est - R_c) / R_c}
    numbers = {
        "case": "kolmogorov",
        "grid": runs[0]["grid"] if runs else None,
        "n_f": N_F, "nu": NU, "mode": {"a": MODE[0], "b": MODE[1]},
        "theory": {"R_c": R_c, "R_definition": "U0/(nu k_f), U0 = chi/(nu k_f^2 + mu)",
                   "chi_c_at_nu": R_c * NU ** 2 * N_F ** 3, "sqrt_chi_c_over_nu": float(np.sqrt(R_c * N_F ** 3)),
                   "next_modes": [{"a": a, "b": b, "R_c": R} for R, a, b in kt.critical_modes(N_F)[1:4]]},
        "fit": {"quantity": "energy of the x-wavenumber-1 modes from snapshots", "t_from": T_SKIP,
                "error_bar": "difference of the two half-windows' rates"},
        "runs": [{k: r[k] for k in ("name", "R", "R_over_Rc", "chi", "sigma", "err", "theory", "rel_err",
                                    "contamination", "wall_s")} for r in runs],
        "max_rel_err": max(r["rel_err"] for r in runs) if runs else None,
        "bracket": bracket,
        "wall_s": sum(r["wall_s"] or 0 for r in runs),
        "backend": ss.run_backend(os.path.join(case_dir, runs[0]["name"])) if runs else "",
    }
    ss.write_numbers(os.path.join(case_dir, "numbers.json"), numbers)
    draw(runs, R_c, png or os.path.join(case_dir, "kolmogorov.png"))
    for r in runs:
        print("%-6s R/R_c=%.3f sigma=%+.6f theory=%+.6f rel_err=%.2e" % (r["name"], r["R_over_Rc"], r["sigma"],
                                                                       r["theory"], r["rel_err"]))
    if bracket:
        print("R_c bracketed by runs: %.4f < R_c < %.4f, interpolated %.5f (theory %.5f)"
              % (bracket["R_stable"], bracket["R_unstable"], bracket["R_c_interpolated"], R_c))
    return 0


def draw(runs, R_c, png):
    import plotting
    fig, axes = plotting.plt.subplots(1, 2, figsize=(9, 3.6))
    ax = axes[0]
    for r in runs:
        ax.semilogy(r["t"], r["E1"] / r["E1"][0], label="R/R$_c$ = %.2f" % r["R_over_Rc"])
        ax.semilogy(r["t"], np.exp(2 * r["theory"] * (r["t"] - r["t"][0])), "k:", lw=0.8)
    ax.set_xlabel("t")
    ax.set_ylabel(r"$E_1(t)/E_1(0)$ (dotted: theory)")
    ax.legend(fontsize=7)
    ax = axes[1]
    nu = runs[0]["nu"]
    Rs = np.linspace(0.7 * R_c, 1.3 * R_c, 61)
    ax.plot(Rs / R_c, [kt.growth_rate(MODE[0], MODE[1], N_F, R * nu * N_F, nu) for R in Rs], "k-",
            lw=1, label="linear theory, mode (1, 0)")
    ax.errorbar([r["R_over_Rc"] for r in runs], [r["sigma"] for r in runs], yerr=[r["err"] for r in runs],
                fmt="o", color="C3", ms=4, label="cascade")
    ax.axhline(0, color="0.6", lw=0.6)
    ax.axvline(1, color="0.6", lw=0.6)
    ax.set_xlabel(r"$R/R_c$,  $R_c$ = %.4f" % R_c)
    ax.set_ylabel(r"growth rate $\sigma$")
    ax.legend(fontsize=7)
    fig.suptitle(r"Kolmogorov flow sin(4y), 2$\pi$ box, $\nu$ = %g" % nu, fontsize=10)
    fig.tight_layout()
    plotting.save(fig, png)


def main(argv=None):
    p = argparse.ArgumentParser(prog="science_kolmogorov", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    pp = sub.add_parser("prepare")
    pp.add_argument("case_dir")
    pp.add_argument("--nx", type=int, default=64)
    pa = sub.add_parser("analyse")
    pa.add_argument("case_dir")
    pa.add_argument("--png")
    args = p.parse_args(argv)
    if args.cmd == "prepare":
        return prepare(args.case_dir, args.nx)
    return analyse(args.case_dir, args.png)


if __name__ == "__main__":
    sys.exit(main())
