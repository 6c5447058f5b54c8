"""Statistics shared by the science gallery's scripts (science_*.py): fits, time averages with
error bars, the vortex census, and the numbers.json every case writes.

Needs numpy and h5py only (matplotlib is imported by the scripts that draw). Works with numpy
1.24 (Debian 12) and 2.x.

    import science_stats as ss
    slope, const, err = ss.fit_power_law(k, E, k_lo, k_hi)
    mean, err, blocks = ss.block_mean(values_in_time, nblocks=5)
    vortices = ss.vortex_census(omega, lx, ly)
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import cascade_io  # noqa: E402


# ---------------------------------------------------------------- the run's deck

def parse_resolved_deck(text):
    """The resolved deck cascade stores in its files ('deck_resolved': two levels,
    'section:' then '  key: value') -> {section: {key: value}}, numbers as float, lists and
    strings as text. Enough for the keys the gallery reads (grid, physics, forcing, time)."""
    out, section = {}, None
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line.startswith(" ") and line.rstrip().endswith(":"):
            section = line.strip()[:-1]
            out[section] = {}
        elif section is not None and ":" in line and line.startswith("  ") and not line.startswith("   "):
            key, _, value = line.strip().partition(":")
            value = value.strip()
            try:
                out[section][key] = float(value)
            except ValueError:
                out[section][key] = value
    return out


def run_deck(run_dir):
    """The resolved deck of a run (from spectra.h5, diagnostics.h5 or a snapshot), or {}."""
    import h5py
    candidates = [os.path.join(run_dir, "spectra.h5"), os.path.join(run_dir, "diagnostics.h5")]
    candidates += cascade_io.list_snapshots(run_dir)[:1]
    for path in candidates:
        if os.path.exists(path):
            with h5py.File(path, "r") as f:
                text = f.attrs.get("deck_resolved")
                if text is not None:
                    return parse_resolved_deck(text.decode() if isinstance(text, bytes) else str(text))
    return {}


def run_backend(run_dir):
    """The backend string cascade recorded (e.g. 'cuda (NVIDIA H100 ...)'), or ''."""
    import h5py
    for path in [os.path.join(run_dir, "diagnostics.h5"), os.path.join(run_dir, "spectra.h5")]:
        if os.path.exists(path):
            with h5py.File(path, "r") as f:
                value = f.attrs.get("backend", b"")
                return value.decode() if isinstance(value, bytes) else str(value)
    return ""


# ---------------------------------------------------------------- fits and averages

def fit_line(x, y):
    """Least squares y = a + b x -> (b, a, standard error of b)."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n = x.size
    if n < 2:
        raise ValueError("a fit needs at least two points")
    A = np.vstack([np.ones(n), x]).T
    coef, _, _, _ = np.linalg.lstsq(A, y, rcond=None)
    a, b = float(coef[0]), float(coef[1])
    if n > 2:
        resid = y - (a + b * x)
        s2 = float(resid @ resid) / (n - 2)
        sxx = float(((x - x.mean()) ** 2).sum())
        err = float(np.sqrt(s2 / sxx)) if sxx > 0 else float("nan")
    else:
        err = 0.0
    return b, a, err


def fit_power_law(k, y, k_lo, k_hi):
    """Fit y = c k^s over k_lo <= k <= k_hi (positive y only) in log-log -> (s, c, err of s)."""
    k = np.asarray(k, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    sel = (k >= k_lo) & (k <= k_hi) & (y > 0) & np.isfinite(y)
    s, loga, err = fit_line(np.log(k[sel]), np.log(y[sel]))
    return s, float(np.exp(loga)), err


def fit_growth_rate(t, energy):
    """Growth rate sigma of an amplitude whose energy is E(t) = E0 exp(2 sigma t) -> (sigma,
    standard error)."""
    b, _, err = fit_line(t, np.log(energy))
    return 0.5 * b, 0.5 * err


def block_mean(values, nblocks=5):
    """Mean over the first axis (time) of `values` and its standard error from `nblocks`
    consecutive blocks (the blocks' spread / sqrt(nblocks - 1)): the error bar of a time average
    whose samples are correlated over less than a block. Returns (mean, err, block means)."""
    v = np.asarray(values, dtype=np.float64)
    n = v.shape[0]
    nblocks = max(1, min(nblocks, n))
    edges = np.linspace(0, n, nblocks + 1).astype(int)
    blocks = np.array([v[edges[i]:edges[i + 1]].mean(axis=0) for i in range(nblocks)])
    mean = v.mean(axis=0)
    if nblocks > 1:
        err = blocks.std(axis=0, ddof=1) / np.sqrt(nblocks)
    else:
        err = np.full_like(np.asarray(mean, dtype=np.float64), np.nan)
    return mean, err, blocks


def window(t, t_lo, t_hi=None):
    """Boolean mask of the times in [t_lo, t_hi]."""
    t = np.asarray(t)
    hi = np.inf if t_hi is None else t_hi
    return (t >= t_lo - 1e-9) & (t <= hi + 1e-9)


def band_mean(k, y, k_lo, k_hi):
    """Mean and spread (std) of y over the shells k_lo <= k <= k_hi."""
    k = np.asarray(k)
    sel = (k >= k_lo) & (k <= k_hi)
    vals = np.asarray(y, dtype=np.float64)[..., sel]
    return float(vals.mean()), float(vals.std())


# ---------------------------------------------------------------- fields

def wavenumbers(ny, nx, lx, ly):
    """(KX, KY) of an (ny, nx) periodic field, numpy FFT ordering (full transform)."""
    kx = 2 * np.pi * np.fft.fftfreq(nx, d=lx / nx)
    ky = 2 * np.pi * np.fft.fftfreq(ny, d=ly / ny)
    return np.meshgrid(kx, ky)


def velocity_gradients(omega, lx, ly):
    """From the vorticity (ny, nx): u, v and the gradients (ux, uy, vx, vy), spectrally, with
    omega = dv/dx - du/dy, u = dpsi/dy, v = -dpsi/dx, lap psi = -omega."""
    ny, nx = omega.shape
    KX, KY = wavenumbers(ny, nx, lx, ly)
    K2 = KX ** 2 + KY ** 2
    K2[0, 0] = 1.0
    w = np.fft.fft2(omega)
    w[0, 0] = 0.0
    psi = w / K2
    u_hat = 1j * KY * psi
    v_hat = -1j * KX * psi
    real = lambda a: np.real(np.fft.ifft2(a))  # noqa: E731
    return (real(u_hat), real(v_hat), real(1j * KX * u_hat), real(1j * KY * u_hat),
            real(1j * KX * v_hat), real(1j * KY * v_hat))


def okubo_weiss(omega, lx, ly):
    """W = s_n^2 + s_s^2 - omega^2: negative where rotation dominates strain."""
    _, _, ux, uy, vx, vy = velocity_gradients(omega, lx, ly)
    sn = ux - vy
    ss = vx + uy
    return sn ** 2 + ss ** 2 - omega ** 2


def label_periodic(mask):
    """Connected components (4-neighbour, periodic in both directions) of a boolean (ny, nx)
    array -> (labels, count): labels -1 outside the mask, 0..count-1 inside. Pure numpy: each
    point takes the smallest index among its neighbours, then follows its label's label
    (pointer jumping), until nothing changes."""
    ny, nx = mask.shape
    big = ny * nx
    idx = np.arange(big, dtype=np.int64).reshape(ny, nx)
    lab = np.where(mask, idx, big)
    flat_mask = mask.ravel()
    while True:
        new = lab
        for axis in (0, 1):
            for shift in (1, -1):
                nb = np.roll(lab, shift, axis=axis)
                new = np.where(mask, np.minimum(new, nb), big)
        flat = new.ravel().copy()
        inside = flat_mask
        for _ in range(64):  # pointer jumping: lab <- lab[lab]
            jumped = flat.copy()
            jumped[inside] = flat[flat[inside]]
            if np.array_equal(jumped, flat):
                break
            flat = jumped
        new = flat.reshape(ny, nx)
        if np.array_equal(new, lab):
            break
        lab = new
    roots = np.unique(lab[mask])
    out = np.full((ny, nx), -1, dtype=np.int64)
    out[mask] = np.searchsorted(roots, lab[mask])
    return out, int(roots.size)


# The census's thresholds (docs/science.md, "Decaying turbulence"): fixed before any run.
CENSUS = {
    "ow_factor": 0.2,        # rotation dominated: W < -0.2 W_rms (Elhmaidi, Provenzale & Babiano 1993)
    "peak_fraction": 0.1,    # a vortex's extremum |omega|_peak >= 0.1 max |omega| of the field
    "min_radius_cells": 2.0,  # area >= pi (2 dx)^2
    "max_aspect": 3.0,       # second-moment aspect ratio <= 3 (filaments are not vortices)
}


def vortex_census(omega, lx, ly, params=None):
    """Coherent vortices of a vorticity field (ny, nx): connected regions of one sign of omega
    where the Okubo-Weiss parameter W < -ow_factor W_rms, kept when their extremum exceeds
    peak_fraction max|omega|, their area pi (min_radius_cells dx)^2 and their aspect ratio (from
    the second moments of |omega| over the region) is at most max_aspect. Returns a list of dicts
    (x, y, peak, circulation, area, radius, aspect, sign), strongest first."""
    p = dict(CENSUS)
    if params:
        p.update(params)
    ny, nx = omega.shape
    dx, dy = lx / nx, ly / ny
    W = okubo_weiss(omega, lx, ly)
    w_rms = float(np.sqrt(np.mean(W ** 2)))
    rot = W < -p["ow_factor"] * w_rms
    wmax = float(np.max(np.abs(omega)))
    min_area = np.pi * (p["min_radius_cells"] * dx) * (p["min_radius_cells"] * dy)
    X, Y = np.meshgrid(np.arange(nx) * dx, np.arange(ny) * dy)
    found = []
    for sign in (1, -1):
        mask = rot & (sign * omega > 0)
        labels, count = label_periodic(mask)
        if count == 0:
            continue
        flat = labels.ravel()
        inside = flat >= 0
        order = np.argsort(flat[inside], kind="stable")
        pts = np.nonzero(inside)[0][order]
        bounds = np.searchsorted(flat[inside][order], np.arange(count + 1))
        w_flat = (sign * omega).ravel()
        for c in range(count):
            members = pts[bounds[c]:bounds[c + 1]]
            area = members.size * dx * dy
            wv = w_flat[members]
            peak = float(wv.max())
            if peak < p["peak_fraction"] * wmax or area < min_area:
                continue
            # Positions relative to the extremum, unwrapped across the periodic boundary.
            j0 = members[np.argmax(wv)]
            x0, y0 = X.ravel()[j0], Y.ravel()[j0]
            rx = (X.ravel()[members] - x0 + lx / 2) % lx - lx / 2
            ry = (Y.ravel()[members] - y0 + ly / 2) % ly - ly / 2
            wt = wv / wv.sum()
            mx, my = float(wt @ rx), float(wt @ ry)
            cxx = float(wt @ (rx - mx) ** 2)
            cyy = float(wt @ (ry - my) ** 2)
            cxy = float(wt @ ((rx - mx) * (ry - my)))
            ev = np.linalg.eigvalsh(np.array([[cxx, cxy], [cxy, cyy]]))
            aspect = float(np.sqrt(ev[1] / ev[0])) if ev[0] > 0 else np.inf
            if aspect > p["max_aspect"]:
                continue
            found.append({
                "x": float((x0 + mx) % lx), "y": float((y0 + my) % ly), "peak": sign * peak,
                "circulation": sign * float(wv.sum() * dx * dy), "area": float(area),
                "radius": float(np.sqrt(area / np.pi)), "aspect": aspect, "sign": sign,
            })
    found.sort(key=lambda v: -abs(v["peak"]))
    return found


# ---------------------------------------------------------------- output

def _plain(obj):
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _plain(obj.tolist())
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, float) and not np.isfinite(obj):
        return None
    return obj


def write_numbers(path, numbers):
    """numbers.json: the statistics of one case (plain JSON: NaN and inf as null)."""
    with open(path, "w") as f:
        json.dump(_plain(numbers), f, indent=1, sort_keys=False)
        f.write("\n")
    return path


def read_numbers(path):
    with open(path) as f:
        return json.load(f)


def wall_seconds(run_dir):
    """Wall time of a run from its diagnostics (the last row's wall_seconds), or None."""
    try:
        d = cascade_io.read_diagnostics(run_dir)
        return float(d["wall_seconds"][-1])
    except (OSError, KeyError, IndexError):
        return None


def grid_of(run_dir):
    deck = run_deck(run_dir).get("grid", {})
    return [int(deck.get("nx", 0)), int(deck.get("ny", 0))]


# ---------------------------------------------------------------- time-averaged spectra

WINDOW_FRACTION = 0.5  # every forced case averages over the second half of its run
NBLOCKS = 5            # error bars from 5 consecutive blocks of the window


def forced_band_window(run_dir, band, name):
    """The deck, forcing.k_f, the averaged spectra window (spectra_window) and the band
    band[0] k_f <= k <= band[1] k_f of a forced run: (deck, k_f, w, k_lo, k_hi, sel)."""
    deck = run_deck(run_dir)
    k_f = float(deck.get("forcing", {}).get("k_f", 0)) or None
    if not k_f:
        raise SystemExit("%s: %s: the deck has no forcing.k_f" % (name, run_dir))
    w = spectra_window(run_dir)
    k_lo, k_hi = band[0] * k_f, band[1] * k_f
    sel = (w["k"] >= k_lo) & (w["k"] <= k_hi)
    return deck, k_f, w, k_lo, k_hi, sel


def spectra_window(run_dir, fraction=WINDOW_FRACTION, nblocks=NBLOCKS):
    """The shell spectra and fluxes of a run averaged over its last `fraction` of simulated time,
    with block error bars, and the diagnostics averaged over the same window. Returns a dict:
    k, t_from, t_to, count (spectra averaged), E, E_err, Pi, Pi_err, Pi_Z, Pi_Z_err, Z,
    diag (name -> (mean, err)), E_t/t (the energy time series)."""
    s = cascade_io.read_spectra(run_dir)
    d = cascade_io.read_diagnostics(run_dir)
    t_end = float(max(s["t"][-1], d["t"][-1]))
    t_from = t_end - fraction * t_end
    sel = window(s["t"], t_from)
    out = {"k": s["k"], "t_from": t_from, "t_to": t_end, "count": int(sel.sum()), "dk": s["dk"]}
    for name in ("E", "Z", "Pi", "Pi_Z"):
        if name in s:
            mean, err, _ = block_mean(s[name][sel], nblocks)
            out[name] = mean
            out[name + "_err"] = err
    dsel = window(d["t"], t_from) & (d["t"] > 0)
    out["diag"] = {}
    for name in ("E", "Z", "injection", "dissipation", "dissipation_nu", "dissipation_mu", "dissipation_alpha",
                 "injection_Z", "dissipation_Z", "max_u"):
        if name in d:
            mean, err, _ = block_mean(d[name][dsel], nblocks)
            out["diag"][name] = (float(mean), float(err))
    out["series"] = {"t": d["t"], "E": d["E"], "Z": d["Z"]}
    for name in ("injection", "dissipation_alpha", "dissipation_mu", "dissipation_nu", "dt", "max_u"):
        if name in d:
            out["series"][name] = d[name]
    return out


def compensated_band(k, E, E_err, power, norm, k_lo, k_hi, extra=None):
    """The compensated spectrum E k^power / norm over k_lo <= k <= k_hi (times `extra`(k) when
    given): its mean over the band, the band's spread (std over shells) and the time-average
    error (block error of E, propagated, averaged over the band)."""
    k = np.asarray(k)
    sel = (k >= k_lo) & (k <= k_hi)
    factor = k[sel] ** power / norm
    if extra is not None:
        factor = factor * extra(k[sel])
    comp = E[sel] * factor
    err = E_err[sel] * factor
    return float(comp.mean()), float(comp.std()), float(np.sqrt(np.mean(err ** 2)))


# ---------------------------------------------------------------- the scripts' command line

def case_main(argv, prog, doc, analyse, draw, png_name, summary):
    """The command line every one-run case shares: `prog RUN [--png FILE] [--json FILE]`.
    analyse(run) -> (numbers, *data); draw(numbers, *data, png); summary(numbers) -> a line."""
    import argparse
    p = argparse.ArgumentParser(prog=prog, description=doc.split("\n")[0])
    p.add_argument("run", help="the run's output directory")
    p.add_argument("--png", help="the picture (default RUN/%s)" % png_name)
    p.add_argument("--json", help="the numbers (default RUN/numbers.json)")
    args = p.parse_args(argv)
    numbers, *data = analyse(args.run)
    write_numbers(args.json or os.path.join(args.run, "numbers.json"), numbers)
    draw(numbers, *data, args.png or os.path.join(args.run, png_name))
    print(summary(numbers))
    return 0


def run_header(run_dir, case, deck=None):
    """The first entries of every case's numbers.json: case, grid, backend, cascade's wall time,
    steps and the physics section of the deck."""
    deck = run_deck(run_dir) if deck is None else deck
    d = cascade_io.read_diagnostics(run_dir)
    return {"case": case, "grid": grid_of(run_dir), "backend": run_backend(run_dir), "wall_s": wall_seconds(run_dir),
            "steps": int(d["step"][-1]), "physics": deck.get("physics", {})}
