"""The science gallery's measured numbers as Markdown, from the numbers.json files that
scripts/science-runs collects (OUT/<case>/numbers.json), for docs/science.md.

    python3 postprocess/science_report.py OUT            # one Markdown table a case
    python3 postprocess/science_report.py --summary OUT  # a short plain-text table

A case without numbers.json is reported as missing; nothing is computed here, only formatted.
"""
import argparse
import json
import os
import sys

CASES = ["kolmogorov", "inverse", "direct", "decaying", "condensate"]


def load(out, case):
    path = os.path.join(out, case, "numbers.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        numbers = json.load(f)
    script = os.path.join(out, case, "script.json")
    if os.path.exists(script):
        with open(script) as f:
            numbers["script"] = json.load(f)
    return numbers


def g(x, fmt="%.4g"):
    if x is None:
        return "–"
    if isinstance(x, (list, tuple)):
        return "[" + ", ".join(g(v, fmt) for v in x) + "]"
    try:
        return fmt % x
    except TypeError:
        return str(x)


def pm(value, err, fmt="%.3f"):
    return "%s ± %s" % (g(value, fmt), g(err, fmt))


def table(rows):
    lines = ["| quantity | measured | reference |", "|---|---|---|"]
    lines += ["| %s | %s | %s |" % r for r in rows]
    return "\n".join(lines)


def common_rows(n):
    grid = n.get("grid") or [0, 0]
    rows = [("grid", "%d × %d" % tuple(grid[:2]), "")]
    if n.get("backend"):
        rows.append(("backend", n["backend"], ""))
    if n.get("steps") is not None:
        rows.append(("steps", "%d" % n["steps"], ""))
    wall = n.get("script", {}).get("wall_s_total")
    rows.append(("wall time (run + analysis)", "%s s" % g(wall, "%.1f"), "cascade alone: %s s" % g(n.get("wall_s"), "%.1f")))
    return rows


def kolmogorov(n):
    th = n["theory"]
    out = [table(common_rows(n) + [
        ("critical R = U0/(nu k_f), mode (a, b) = (%d, %d)" % (n["mode"]["a"], n["mode"]["b"]),
         "bracketed: %s < R_c < %s, interpolated %s" % (g(n["bracket"]["R_stable"], "%.4f"),
                                                        g(n["bracket"]["R_unstable"], "%.4f"),
                                                        g(n["bracket"]["R_c_interpolated"], "%.5f"))
         if n.get("bracket") else "not bracketed",
         "linear theory %s" % g(th["R_c"], "%.6f")),
        ("largest relative difference of sigma from theory", g(n["max_rel_err"], "%.2e"), "< 1e-2 asked"),
    ])]
    out.append("")
    out.append("| run | R/R_c | chi | sigma (cascade) | sigma (theory) | relative difference |")
    out.append("|---|---|---|---|---|---|")
    for r in n["runs"]:
        out.append("| %s | %.3f | %.6f | %+.6f ± %.1e | %+.6f | %.2e |" % (
            r["name"], r["R_over_Rc"], r["chi"], r["sigma"], r["err"], r["theory"], r["rel_err"]))
    return "\n".join(out)


def inverse(n):
    return table(common_rows(n) + [
        ("window (t), spectra averaged", "%s – %s, %d" % (g(n["window"]["t_from"]), g(n["window"]["t_to"]),
                                                       n["window"]["spectra"]), "second half of the run"),
        ("band", "%s ≤ k ≤ %s" % (g(n["band"][0]), g(n["band"][1])), "k_f/8 – k_f/2"),
        ("Kolmogorov constant C", "%s (band spread %s)" % (pm(n["C"]["value"], n["C"]["time_err"]),
                                                            g(n["C"]["band_spread"], "%.3f")),
         "≈ 6 (Boffetta & Ecke 2012)"),
        ("C with the large-scale sink as eps_I", g(n["C"]["with_sink_as_flux"], "%.3f"), ""),
        ("slope of E(k)", pm(n["slope"]["value"], n["slope"]["fit_err"]), "−5/3"),
        ("flux −Pi/eps in the band", "%s (spread %s, min %s, max %s)" % (
            g(n["flux_over_injection"], "%.3f"), g(n["flux_band"]["spread"] / n["injection"]["mean"], "%.3f"),
            g(n["flux_band"]["min"] / n["injection"]["mean"], "%.3f"),
            g(n["flux_band"]["max"] / n["injection"]["mean"], "%.3f")), "constant"),
        ("large-scale sink / eps", g(n["sink_over_injection"], "%.3f"), "= flux / eps in a steady state"),
        ("energy drift over the window", g(n["energy_drift_in_window"], "%+.3f"), "0 if steady"),
    ])


def direct(n):
    return table(common_rows(n) + [
        ("window (t), spectra averaged", "%s – %s, %d" % (g(n["window"]["t_from"]), g(n["window"]["t_to"]),
                                                       n["window"]["spectra"]), "second half of the run"),
        ("band", "%s ≤ k ≤ %s" % (g(n["band"][0]), g(n["band"][1])), "3 k_f – 25 k_f"),
        ("Kraichnan constant C'", "%s (band spread %s)" % (pm(n["C_kraichnan"]["value"], n["C_kraichnan"]["time_err"]),
                                                            g(n["C_kraichnan"]["band_spread"], "%.3f")),
         "1.3 – 2 (published)"),
        ("C' with the log correction", "%s (band spread %s)" % (
            pm(n["C_kraichnan_log"]["value"], n["C_kraichnan_log"]["time_err"]),
            g(n["C_kraichnan_log"]["band_spread"], "%.3f")), ""),
        ("slope of E(k)", pm(n["slope"]["value"], n["slope"]["fit_err"]), "−3 (steeper with friction)"),
        ("enstrophy flux Pi_Z / eta_in in the band", "%s (spread %s)" % (
            g(n["flux_Z_over_injection_Z"], "%.3f"),
            g(n["flux_Z_band"]["spread"] / n["injection_Z"]["mean"], "%.3f")), "constant"),
        ("2 mu / eta^(1/3)", g(n["friction_over_eta13"], "%.3f"), "friction's steepening parameter"),
    ])


def decaying(n):
    c = n["census"]
    return table(common_rows(n) + [
        ("census", "W < −%g W_rms, peak ≥ %g max|ω|, radius ≥ %g dx, aspect ≤ %g" % (
            c["ow_factor"], c["peak_fraction"], c["min_radius_cells"], c["max_aspect"]), "McWilliams 1990 (in spirit)"),
        ("fit", "t = %s – %s, %d snapshots (%s)" % (g(n["fit"]["t_from"]), g(n["fit"]["t_to"]), n["fit"]["snapshots"],
                                                   n["fit"]["rule"]), ""),
        ("N(t) at the fit's ends", "%s → %s" % fit_ends(n), ""),
        ("xi (N ~ t^-xi)", pm(n["xi"]["value"], n["xi"]["err"]), "≈ 0.75 (Carnevale et al. 1991)"),
        ("enstrophy exponent", pm(n["enstrophy_exponent"]["value"], n["enstrophy_exponent"]["err"]), "xi/2"),
        ("mean radius exponent", pm(n["radius_exponent"]["value"], n["radius_exponent"]["err"]), "xi/4"),
        ("mean peak vorticity exponent", pm(n["peak_exponent"]["value"], n["peak_exponent"]["err"]), "0"),
        ("relative energy change", g(n["E_change"], "%+.3f"), "≈ 0"),
    ])


def fit_ends(n):
    t, N = n["N"]["t"], n["N"]["N"]
    lo, hi = n["fit"]["t_from"], n["fit"]["t_to"]
    inside = [c for tt, c in zip(t, N) if lo is not None and lo - 1e-9 <= tt <= hi + 1e-9]
    return (g(inside[0], "%d"), g(inside[-1], "%d")) if inside else ("–", "–")


def condensate(n):
    fc = n["final_census"]
    return table(common_rows(n) + [
        ("final time, energy", "t = %s, E = %s" % (g(n["t_end"]), g(n["E_end"])), ""),
        ("dE/dt over the second half / eps", g(n["dEdt_over_injection"], "%.3f"), "→ 1 (E ~ eps t)"),
        ("box-scale share E(|k| = 1)/E at the end", g(n["condensate_fraction"]["end"], "%.3f"), "→ most of E"),
        ("vortices in the last snapshot", "%d%s" % (fc["count"], ", the two strongest of opposite sign"
                                                    if fc["opposite_signs"] else ""),
         "a counter-rotating pair (Chertkov et al. 2007)"),
        ("their circulations", ", ".join(g(v["circulation"], "%.3g") for v in fc["two_strongest"]), ""),
    ])


FORMAT = {"kolmogorov": kolmogorov, "inverse": inverse, "direct": direct, "decaying": decaying,
          "condensate": condensate}
TITLES = {"kolmogorov": "Kolmogorov flow stability", "inverse": "Inverse energy cascade",
          "direct": "Direct enstrophy cascade", "decaying": "Decaying turbulence: vortex census",
          "condensate": "Condensate"}


def summary_line(case, n):
    if n is None:
        return "%-11s missing" % case
    wall = n.get("script", {}).get("wall_s_total")
    head = "%-11s %5s s  " % (case, g(wall, "%.0f"))
    if case == "kolmogorov":
        b = n.get("bracket") or {}
        return head + "R_c theory %.5f, runs %s, max rel err %.1e" % (
            n["theory"]["R_c"], g(b.get("R_c_interpolated"), "%.5f"), n["max_rel_err"])
    if case == "inverse":
        return head + "C = %.2f +- %.2f (lit ~6), slope %.2f, -Pi/eps %.2f, sink/eps %.2f" % (
            n["C"]["value"], n["C"]["time_err"], n["slope"]["value"], n["flux_over_injection"],
            n["sink_over_injection"])
    if case == "direct":
        return head + "C' = %.2f +- %.2f (log %.2f; lit 1.3-2), slope %.2f, Pi_Z/eta %.2f" % (
            n["C_kraichnan"]["value"], n["C_kraichnan"]["time_err"], n["C_kraichnan_log"]["value"],
            n["slope"]["value"], n["flux_Z_over_injection_Z"] or float("nan"))
    if case == "decaying":
        return head + "xi = %s +- %s (lit ~0.75) over %d snapshots" % (
            g(n["xi"]["value"], "%.3f"), g(n["xi"]["err"], "%.3f"), n["fit"]["snapshots"])
    return head + "E_end %.3g, dE/dt/eps %.2f, box share %.2f, final vortices %d" % (
        n["E_end"], n["dEdt_over_injection"], n["condensate_fraction"]["end"], n["final_census"]["count"])


def main(argv=None):
    p = argparse.ArgumentParser(prog="science_report", description=__doc__.split("\n")[0])
    p.add_argument("out")
    p.add_argument("--summary", action="store_true")
    args = p.parse_args(argv)
    if args.summary:
        print("case        wall    result")
        for case in CASES:
            print(summary_line(case, load(args.out, case)))
        return 0
    for case in CASES:
        n = load(args.out, case)
        print("### %s: measured\n" % TITLES[case])
        if n is None:
            print("(no numbers.json: not run)\n")
            continue
        print(FORMAT[case](n))
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
