"""The science gallery's statistics on synthetic input whose answer is known (make test).

    python3 tests/science_checks.py CASE     (kolmogorov, inverse, direct, decaying, condensate)

Each case writes a fake run (cascade's file layout: snapshots, spectra.h5, diagnostics.h5, with
the resolved deck as an attribute) holding a planted answer, runs the case's postprocessing
script on it and checks the numbers it finds; the report formatter must take them. Prints
PASS/FAIL lines; exit 1 on any failure; SKIPPED without matplotlib.
"""
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "postprocess"))

try:
    import h5py
    import matplotlib  # noqa: F401
    import numpy as np
except ImportError as e:
    print("SKIPPED: %s" % e)
    sys.exit(0)

import science_report  # noqa: E402
import science_stats as ss  # noqa: E402

FAILS = []


def check(name, ok, detail=""):
    print("%s: %s %s" % ("PASS" if ok else "FAIL", name, detail))
    if not ok:
        FAILS.append(name)


def close(name, got, want, tol):
    check(name, got is not None and abs(got - want) <= tol, "(got %r, want %r +- %g)" % (got, want, tol))


def deck_text(sections):
    lines = []
    for sec, kv in sections.items():
        lines.append("%s:" % sec)
        lines += ["  %s: %s" % (k, v) for k, v in kv.items()]
    return "\n".join(lines) + "\n"


def write_snapshot(run, index, t, omega, deck, extra=None):
    os.makedirs(os.path.join(run, "snapshots"), exist_ok=True)
    with h5py.File(os.path.join(run, "snapshots", "snap_%06d.h5" % index), "w") as f:
        f["vorticity"] = omega
        f.attrs["time"] = t
        f.attrs["step"] = index
        f.attrs["lx"] = 2 * np.pi
        f.attrs["ly"] = 2 * np.pi
        f.attrs["deck_resolved"] = deck
        for k, v in (extra or {}).items():
            f[k] = v


def write_diagnostics(run, t, deck, **series):
    n = len(t)
    with h5py.File(os.path.join(run, "diagnostics.h5"), "w") as f:
        f.attrs["deck_resolved"] = deck
        f.attrs["backend"] = "synthetic"
        f["t"] = np.asarray(t, dtype=float)
        f["step"] = np.arange(n, dtype=np.int64) * 10
        f["cfl_limit"] = np.ones(n, dtype=np.int64)
        f["wall_seconds"] = np.linspace(0, 1, n)
        for name in ("E", "Z", "injection", "dissipation", "dissipation_nu", "dissipation_mu", "dissipation_alpha",
                     "injection_Z", "dissipation_Z", "max_u", "dt"):
            f[name] = np.asarray(series.get(name, np.zeros(n)), dtype=float)


def write_spectra(run, k, t, deck, **arrays):
    with h5py.File(os.path.join(run, "spectra.h5"), "w") as f:
        f.attrs["deck_resolved"] = deck
        f.attrs["dk"] = float(k[1] - k[0])
        f["k"] = k
        f["t"] = np.asarray(t, dtype=float)
        f["step"] = np.arange(len(t), dtype=np.int64)
        for name in ("E", "Z", "Pi", "Pi_Z"):
            f[name] = arrays.get(name, np.zeros((len(t), len(k))))


def report_ok(case, numbers):
    numbers = dict(numbers)
    numbers = ss.read_numbers(ss.write_numbers(os.path.join(tempfile.mkdtemp(), "n.json"), numbers))
    text = science_report.FORMAT[case](numbers)
    line = science_report.summary_line(case, numbers)
    check("%s: the report formats its numbers" % case, "|" in text and case in line)


# ---------------------------------------------------------------- 1. Kolmogorov

def test_kolmogorov(work):
    import kolmogorov_theory as kt
    import science_kolmogorov as sk
    # (a) Meshalkin & Sinai's long-wave limit: R_c -> sqrt(2) as a/n -> 0; n = 1 is stable.
    close("long-wave limit R_c(a/n = 1/64) -> sqrt 2", kt.critical_R(1, 0, 64), np.sqrt(2), 2e-3)
    check("R_c decreases towards sqrt 2 as a/n falls",
          kt.critical_R(1, 0, 4) > kt.critical_R(1, 0, 8) > kt.critical_R(1, 0, 16) > np.sqrt(2))
    check("n = 1: the laminar flow is stable at every R", not np.isfinite(kt.critical_R(1, 0, 1, R_max=1e3)))
    R_c = kt.critical_R(1, 0, 4)
    close("R_c of sin(4y) in a 2 pi box, mode (1, 0)", R_c, 1.552180, 5e-6)
    check("(1, 0) is the critical mode of the box", kt.critical_modes(4)[0][1:] == (1, 0))
    # (b) the eigenpair against the linearised equation evaluated on a grid (physical space).
    n, nu = 4, 0.1
    U0 = 1.2 * R_c * nu * n
    N = 256
    w_field, lam = kt.mode_field(1, 0, n, U0, nu, N, N, 1.0)
    x = np.arange(N) * 2 * np.pi / N
    X, Y = np.meshgrid(x, x)
    U = U0 * np.sin(n * Y)
    dOmega_dy = U0 * n * n * np.sin(n * Y)  # Omega = -dU/dy = -U0 n cos(ny)
    KX, KY = ss.wavenumbers(N, N, 2 * np.pi, 2 * np.pi)
    K2 = KX ** 2 + KY ** 2
    K2[0, 0] = 1
    wh = np.fft.fft2(w_field)
    v = np.real(np.fft.ifft2(-1j * KX * wh / K2))
    wx = np.real(np.fft.ifft2(1j * KX * wh))
    lap = np.real(np.fft.ifft2(-K2 * wh))
    Lw = -U * wx - v * dOmega_dy + nu * lap
    check("leading eigenvalue of (1, 0) is real at 1.2 R_c", abs(lam.imag) < 1e-10)
    resid = np.abs(Lw - lam.real * w_field).max() / np.abs(lam.real * w_field).max()
    check("eigenmode solves the linearised equation on a grid", resid < 1e-9, "(residual %.1e)" % resid)
    # (c) the analysis on planted exponentials: two runs either side of R_c.
    case = os.path.join(work, "kolmogorov")
    os.makedirs(case)
    names = []
    for ratio in (0.9, 1.1):
        U0 = ratio * R_c * nu * n
        chi = U0 * nu * n * n
        sigma = kt.growth_rate(1, 0, n, U0, nu)
        name = "r%.2f" % ratio
        names.append("%s %.17g none" % (name, chi))
        deck = deck_text({"grid": {"nx": 32, "ny": 32}, "physics": {"nu": nu, "mu": 0},
                          "forcing": {"type": "kolmogorov", "amplitude": "%.17g" % chi, "wavenumber": n}})
        y = np.arange(32) * 2 * np.pi / 32
        lam_field = np.repeat((-U0 * n * np.cos(n * y))[:, None], 32, axis=1)
        mode, _ = kt.mode_field(1, 0, n, U0, nu, 32, 32, 1e-6)
        for i, t in enumerate(np.arange(0, 41, 2.0)):
            write_snapshot(os.path.join(case, name), i, t, lam_field + np.exp(sigma * t) * mode, deck)
    with open(os.path.join(case, "runs.txt"), "w") as f:
        f.write("\n".join(names) + "\n")
    sk.analyse(case)
    numbers = ss.read_numbers(os.path.join(case, "numbers.json"))
    check("growth rates of planted exponentials to 1e-9", numbers["max_rel_err"] < 1e-9,
          "(%.1e)" % numbers["max_rel_err"])
    b = numbers["bracket"]
    check("threshold bracketed by the runs", b is not None and b["R_stable"] < R_c < b["R_unstable"])
    check("kolmogorov.png written", os.path.getsize(os.path.join(case, "kolmogorov.png")) > 1000)
    report_ok("kolmogorov", numbers)


# ---------------------------------------------------------------- 2./3. spectra

def spectral_run(run, deck, k, E_of_k, Pi_of_k, PiZ_of_k, injection, injection_Z, sink_alpha=0.0,
                 noise=0.0, t_end=10.0, E_series=None):
    os.makedirs(run)
    t = np.linspace(0, t_end, 101)
    rng = np.random.default_rng(1)
    wiggle = 1 + noise * rng.standard_normal((t.size, 1))
    E = E_of_k[None, :] * wiggle
    Pi = np.repeat(Pi_of_k[None, :], t.size, axis=0)
    PiZ = np.repeat(PiZ_of_k[None, :], t.size, axis=0)
    write_spectra(run, k, t, deck, E=E, Z=E * k ** 2, Pi=Pi, Pi_Z=PiZ)
    td = np.linspace(0, t_end, 201)
    one = np.ones(td.size)
    write_diagnostics(run, td, deck, E=E_series(td) if E_series else one, Z=one, injection=injection * one,
                      dissipation_alpha=sink_alpha * one, injection_Z=injection_Z * one)
    return run


def test_inverse(work):
    import science_inverse as si
    k_f, eps, eps_I, C = 50.0, 1.0, 0.8, 6.0
    k = np.arange(0, 683, dtype=float)
    E = np.zeros_like(k)
    E[1:] = C * eps_I ** (2.0 / 3.0) * k[1:] ** (-5.0 / 3.0)
    Pi = np.where(k < k_f, -eps_I, 0.0)
    deck = deck_text({"grid": {"nx": 2048, "ny": 2048}, "physics": {"nu": 1e-20, "alpha": 100},
                      "forcing": {"type": "ring", "k_f": k_f, "epsilon": eps}})
    run = spectral_run(os.path.join(work, "inverse"), deck, k, E, Pi, np.zeros_like(k), eps, eps * k_f ** 2,
                       sink_alpha=eps_I, noise=0.01)
    numbers, w = si.analyse(run)
    close("inverse: Kolmogorov constant of a planted k^-5/3 spectrum", numbers["C"]["value"], C, 0.01 * C)
    check("inverse: the time error bar sees the planted 1% noise", 0.001 < numbers["C"]["time_err"] < 0.05)
    close("inverse: slope", numbers["slope"]["value"], -5.0 / 3.0, 1e-9)
    close("inverse: flux / injection", numbers["flux_over_injection"], eps_I / eps, 1e-12)
    close("inverse: sink / injection", numbers["sink_over_injection"], eps_I / eps, 1e-12)
    check("inverse: window is the second half", abs(numbers["window"]["t_from"] - 5.0) < 1e-9)
    si.draw(numbers, w, os.path.join(run, "inverse.png"))
    # A spectrum with another constant must give it (the statistic can fail).
    numbers2, _ = si.analyse(spectral_run(os.path.join(work, "inverse2"), deck, k, E * 0.5, Pi, 0 * k, eps, 0,
                                          sink_alpha=eps_I))
    close("inverse: half the spectrum, half the constant", numbers2["C"]["value"], C / 2, 0.005 * C)
    report_ok("inverse", numbers)


def test_direct(work):
    import science_direct as sd
    k_f, eta, C = 4.0, 10.0, 1.5
    k = np.arange(0, 342, dtype=float)
    E = np.zeros_like(k)
    E[1:] = C * eta ** (2.0 / 3.0) * k[1:] ** -3.0
    PiZ = np.where(k > k_f, eta, 0.0)
    deck = deck_text({"grid": {"nx": 1024, "ny": 1024}, "physics": {"nu": 1e-18, "mu": 0.1},
                      "forcing": {"type": "ring", "k_f": k_f, "epsilon": 1}})
    run = spectral_run(os.path.join(work, "direct"), deck, k, E, np.zeros_like(k), PiZ, 1.0, eta)
    numbers, w = sd.analyse(run)
    close("direct: Kraichnan constant of a planted k^-3 spectrum", numbers["C_kraichnan"]["value"], C, 1e-9)
    close("direct: slope", numbers["slope"]["value"], -3.0, 1e-9)
    close("direct: enstrophy flux / injection", numbers["flux_Z_over_injection_Z"], 1.0, 1e-12)
    sd.draw(numbers, w, os.path.join(run, "direct.png"))
    # Kraichnan's log-corrected spectrum: the corrected constant is exact, the plain one is not.
    E2 = np.zeros_like(k)
    E2[5:] = C * eta ** (2.0 / 3.0) * k[5:] ** -3.0 * np.log(k[5:] / k_f) ** (-1.0 / 3.0)
    numbers2, _ = sd.analyse(spectral_run(os.path.join(work, "direct2"), deck, k, E2, 0 * k, PiZ, 1.0, eta))
    close("direct: log-corrected constant of a log-corrected spectrum", numbers2["C_kraichnan_log"]["value"], C, 1e-9)
    check("direct: the plain constant differs there", abs(numbers2["C_kraichnan"]["value"] - C) > 0.05)
    report_ok("direct", numbers)


# ---------------------------------------------------------------- 4./5. census

def gaussian(X, Y, x0, y0, r, peak, lx=2 * np.pi, stretch=1.0):
    dx = (X - x0 + lx / 2) % lx - lx / 2
    dy = (Y - y0 + lx / 2) % lx - lx / 2
    return peak * np.exp(-(dx ** 2 / stretch ** 2 + dy ** 2 * stretch ** 2) / (2 * r * r))


def planted_field(N, count, rng, weak=True, filament=True):
    """count Gaussian vortices (random signs, radii 3-5 cells) on a jittered lattice, one of
    them across the periodic corner, plus a weak vortex and a filament that must not count."""
    x = np.arange(N) * 2 * np.pi / N
    X, Y = np.meshgrid(x, x)
    side = int(np.ceil(np.sqrt(count + 2)))
    cell = 2 * np.pi / side
    spots = rng.permutation(side * side)
    omega = np.zeros((N, N))
    dx = 2 * np.pi / N
    for j, s in enumerate(spots[:count]):
        cx = (s % side + 0.5 + 0.15 * rng.uniform(-1, 1)) * cell
        cy = (s // side + 0.5 + 0.15 * rng.uniform(-1, 1)) * cell
        if j == 0:
            cx, cy = 0.0, 0.0   # across the periodic boundary in both directions
        r = rng.uniform(3, 5) * dx
        omega += gaussian(X, Y, cx, cy, r, rng.choice([-1, 1]) * rng.uniform(5, 10))
    free = spots[count:]
    if weak:
        s = free[0]
        omega += gaussian(X, Y, (s % side + 0.5) * cell, (s // side + 0.5) * cell, 4 * dx, 0.3)
    if filament:
        s = free[1]
        omega += gaussian(X, Y, (s % side + 0.5) * cell, (s // side + 0.5) * cell, 2.5 * dx, 6.0, stretch=4.0)
    return omega - omega.mean()


def test_decaying(work):
    import science_decaying as sdc
    rng = np.random.default_rng(7)
    N = 256
    labels, count = ss.label_periodic(np.array([[1, 0, 0, 1], [0, 0, 0, 0], [0, 1, 1, 0], [1, 0, 0, 1]], bool))
    check("periodic labelling joins the four corners", count == 2 and len(set(labels[[0, 0, 3, 3], [0, 3, 0, 3]])) == 1)
    run = os.path.join(work, "decaying")
    deck = deck_text({"grid": {"nx": N, "ny": N}, "physics": {"nu": 1e-18, "nu_order": 4}})
    times = np.array([0.0, 2, 3, 4, 6, 8, 11, 16, 22, 32, 45])
    xi = 0.7
    planted = [int(round(60 * (t / 4.0) ** -xi)) if t > 0 else 100 for t in times]
    counts = []
    for i, (t, n_v) in enumerate(zip(times, planted)):
        write_snapshot(run, i, t, planted_field(N, n_v, rng), deck)
        if t > 0:
            counts.append(len(ss.vortex_census(planted_field(N, n_v, np.random.default_rng(i)), 2 * np.pi, 2 * np.pi)))
    check("census counts planted vortices exactly (no weak vortex, no filament)", counts == planted[1:],
          "(%s vs %s)" % (counts, planted[1:]))
    write_diagnostics(run, times, deck, E=np.full(times.size, 0.5), Z=10 * np.maximum(times, 1) ** -0.35)
    numbers, rows, last, sel = sdc.analyse(run)
    check("census of the run's snapshots", [int(r["N"]) for r in rows] == planted[1:])
    tt = times[1:][sel]
    want = -ss.fit_line(np.log(tt), np.log(np.array(planted[1:], float)[sel]))[0]
    close("xi of the planted counts (fit window t >= t_end/8, N >= 10)", numbers["xi"]["value"], want, 1e-9)
    close("xi near the planted 0.7 (rounding to whole vortices)", numbers["xi"]["value"], xi, 0.03)
    close("enstrophy exponent", numbers["enstrophy_exponent"]["value"], 0.35, 1e-9)
    sdc.draw(numbers, rows, last, sel, os.path.join(run, "decaying.png"))
    report_ok("decaying", numbers)


def test_condensate(work):
    import science_condensate as scd
    run = os.path.join(work, "condensate")
    os.makedirs(run)
    N = 128
    deck = deck_text({"grid": {"nx": N, "ny": N}, "physics": {"alpha": 1e-3}, "forcing": {"type": "ring", "k_f": 16}})
    t = np.linspace(0, 20, 101)
    eps = 1.0
    write_diagnostics(run, t, deck, E=0.9 * eps * t, injection=np.full(t.size, eps))
    k = np.arange(0, 61, dtype=float)
    ts = np.arange(0, 21, 1.0)
    E = np.zeros((ts.size, k.size))
    E[:, 1] = 0.9 * ts * np.minimum(ts / 10, 0.8)
    E[:, 16] = 0.9 * ts * (1 - np.minimum(ts / 10, 0.8)) + 1e-3
    write_spectra(run, k, ts, deck, E=E)
    x = np.arange(N) * 2 * np.pi / N
    X, Y = np.meshgrid(x, x)
    pair = gaussian(X, Y, np.pi / 2, np.pi, 0.6, 5.0) + gaussian(X, Y, 3 * np.pi / 2, np.pi, 0.6, -5.0)
    write_snapshot(run, 0, 20.0, pair - pair.mean(), deck)
    numbers, d, s, frac, last, vortices = scd.analyse(run)
    close("condensate: dE/dt / injection", numbers["dEdt_over_injection"], 0.9, 1e-9)
    close("condensate: box-scale share at the end", numbers["condensate_fraction"]["end"], 0.8, 1e-3)
    check("condensate: a counter-rotating pair", numbers["final_census"]["count"] == 2
          and numbers["final_census"]["opposite_signs"])
    scd.draw(numbers, d, s, frac, last, vortices, os.path.join(run, "condensate.png"))
    report_ok("condensate", numbers)


def main(argv):
    tests = {"kolmogorov": test_kolmogorov, "inverse": test_inverse, "direct": test_direct,
             "decaying": test_decaying, "condensate": test_condensate}
    names = argv[1:] or list(tests)
    with tempfile.TemporaryDirectory() as work:
        for name in names:
            tests[name](work)
    print("%d failed" % len(FAILS) if FAILS else "all passed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    import matplotlib as _mpl
    _mpl.use("Agg")
    sys.exit(main(sys.argv))
