"""Common style and helpers for cascade's plotting scripts (plot_snapshot, plot_spectra,
plot_timeseries, make_movie).

Needs numpy, h5py and matplotlib (Debian: python3-numpy python3-h5py python3-matplotlib).
Matplotlib runs on the headless Agg backend. Every file is read through cascade_io.

    import plotting
    fig, ax = plotting.new_figure()
    snap = cascade_io.read_snapshot(path)
    plotting.field_image(ax, snap, "vorticity")
    plotting.save(fig, "out.png")
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import cascade_io  # noqa: E402

FIELDS = ("vorticity", "streamfunction", "u", "v", "speed")
DIVERGING = {"vorticity", "streamfunction", "u", "v"}
LABELS = {
    "vorticity": r"vorticity $\omega$",
    "streamfunction": r"streamfunction $\psi$",
    "u": r"velocity $u$",
    "v": r"velocity $v$",
    "speed": r"speed $|\mathbf{u}|$",
}
DIVERGING_CMAP = "RdBu_r"
SEQUENTIAL_CMAP = "viridis"

plt.rcParams.update({
    "figure.dpi": 100,
    "savefig.dpi": 120,
    "font.size": 10,
    "axes.grid": False,
    "axes.titlesize": 11,
    "legend.fontsize": 8,
    "legend.frameon": False,
})


class Failure(Exception):
    """A problem the user can fix (missing run directory or file, bad option): main() prints
    'SCRIPT: message' on one line and exits with code 2."""


# ---------------------------------------------------------------- command-line plumbing
def run_main(prog, body, argv):
    """Call body(argv); turn a Failure (or an unreadable file) into one line on stderr and 2."""
    try:
        return body(argv) or 0
    except Failure as e:
        print("%s: %s" % (prog, e), file=sys.stderr)
        return 2
    except (OSError, KeyError) as e:  # h5py raises these for unreadable or malformed files
        print("%s: cannot read the run's files: %s" % (prog, e), file=sys.stderr)
        return 2


def check_run_dir(run_dir):
    if not os.path.isdir(run_dir):
        raise Failure("run directory not found: %s" % run_dir)
    return run_dir


def require_file(path, what):
    if not os.path.isfile(path):
        raise Failure("%s not found: %s" % (what, path))
    return path


# ---------------------------------------------------------------- reading (through cascade_io)
def snapshots(run_dir):
    """The run's snapshot paths, in order; a Failure when there are none."""
    check_run_dir(run_dir)
    paths = cascade_io.list_snapshots(run_dir)
    if not paths:
        raise Failure("no snapshots in %s (set output.snapshot_every)" % os.path.join(run_dir, "snapshots"))
    return paths


def snapshot_number(path):
    """NNNNNN of snapshots/snap_NNNNNN.h5 (or None)."""
    stem = os.path.splitext(os.path.basename(path))[0]
    try:
        return int(stem.split("_")[-1])
    except ValueError:
        return None


def diagnostics(run_dir, source="auto"):
    """The diagnostics series via cascade_io. source 'auto' takes whichever of diagnostics.h5
    (written at checkpoints and the end) and diagnostics.csv (flushed row by row) has more rows,
    so a run still going shows its latest rows."""
    check_run_dir(run_dir)
    h5 = os.path.join(run_dir, "diagnostics.h5")
    csv = os.path.join(run_dir, "diagnostics.csv")
    if source in ("h5", "csv"):
        require_file(h5 if source == "h5" else csv, "diagnostics file")
        return cascade_io.read_diagnostics(run_dir, source)
    found = [s for s, p in (("h5", h5), ("csv", csv)) if os.path.isfile(p)]
    if not found:
        raise Failure("diagnostics file not found: %s (or diagnostics.csv)" % h5)
    series = [cascade_io.read_diagnostics(run_dir, s) for s in found]
    return max(series, key=lambda d: len(d.get("t", ())))


SPECTRA_EXTRA = ("Pi", "Pi_Z")


def spectra(run_dir):
    """spectra.h5 via cascade_io.read_spectra, plus the fluxes /Pi and /Pi_Z (time, k) when the
    file has them and the reader does not return them yet."""
    check_run_dir(run_dir)
    path = require_file(os.path.join(run_dir, "spectra.h5"), "spectra file")
    sp = cascade_io.read_spectra(run_dir)
    missing = [name for name in SPECTRA_EXTRA if name not in sp]
    if missing:
        import h5py  # same library cascade_io uses; only for datasets its reader skips
        with h5py.File(path, "r") as f:
            for name in missing:
                if name in f:
                    sp[name] = f[name][...]
    if len(sp["t"]) == 0:
        raise Failure("spectra file holds no spectra: %s" % path)
    return sp


# ---------------------------------------------------------------- fields
def domain(snap):
    """(lx, ly) of a snapshot (2 pi when the attributes are missing)."""
    a = snap["attrs"]
    return float(a.get("lx", 2 * np.pi)), float(a.get("ly", 2 * np.pi))


def _velocity_from_vorticity(w, lx, ly):
    """psi, u, v from omega with the solver's conventions: -lap psi = omega, u = dpsi/dy,
    v = -dpsi/dx (the mean and the Nyquist modes set to zero)."""
    ny, nx = w.shape
    w_hat = np.fft.rfft2(w)
    kx = 2 * np.pi * np.fft.rfftfreq(nx, lx / nx)
    ky = 2 * np.pi * np.fft.fftfreq(ny, ly / ny)
    k2 = kx[None, :] ** 2 + ky[:, None] ** 2
    k2[0, 0] = 1.0
    psi_hat = w_hat / k2
    psi_hat[0, 0] = 0.0
    if nx % 2 == 0:
        psi_hat[:, -1] = 0.0
    if ny % 2 == 0:
        psi_hat[ny // 2, :] = 0.0
    psi = np.fft.irfft2(psi_hat, s=(ny, nx))
    u = np.fft.irfft2(1j * ky[:, None] * psi_hat, s=(ny, nx))
    v = np.fft.irfft2(-1j * kx[None, :] * psi_hat, s=(ny, nx))
    return psi, u, v


def field(snap, name):
    """The field `name` (one of FIELDS) of a snapshot as float64 (ny, nx). Fields the snapshot
    does not hold (streamfunction, u, v, speed) are derived from the vorticity spectrally."""
    if name not in FIELDS:
        raise Failure("unknown field %r (choose from %s)" % (name, ", ".join(FIELDS)))
    if name in snap:
        return np.asarray(snap[name], dtype=np.float64)
    if name == "speed" and "u" in snap and "v" in snap:
        return np.hypot(np.asarray(snap["u"], dtype=np.float64), np.asarray(snap["v"], dtype=np.float64))
    if "vorticity" not in snap:
        raise Failure("snapshot has neither %s nor vorticity to derive it from" % name)
    psi, u, v = _velocity_from_vorticity(np.asarray(snap["vorticity"], dtype=np.float64), *domain(snap))
    return {"streamfunction": psi, "u": u, "v": v, "speed": np.hypot(u, v)}[name]


def color_limits(name, values):
    """(vmin, vmax): symmetric about 0 for the signed fields, [0, max] for speed."""
    values = np.asarray(values)
    top = float(np.nanmax(np.abs(values))) if values.size else 1.0
    if not np.isfinite(top) or top == 0.0:
        top = 1.0
    return (-top, top) if name in DIVERGING else (0.0, top)


def title(name, snap):
    a = snap["attrs"]
    return "%s   t = %.4g   step %d" % (name, float(a.get("time", np.nan)), int(a.get("step", -1)))


def field_image(ax, snap, name, limits=None, colorbar=True):
    """Draw field `name` of a snapshot on ax: physical axes x in [0, lx), y in [0, ly), origin
    lower, equal aspect, diverging colours (vmin = -vmax) for signed fields, a colour bar."""
    data = field(snap, name)
    lx, ly = domain(snap)
    vmin, vmax = limits if limits is not None else color_limits(name, data)
    cmap = DIVERGING_CMAP if name in DIVERGING else SEQUENTIAL_CMAP
    im = ax.imshow(data, origin="lower", extent=(0.0, lx, 0.0, ly), aspect="equal",
                   cmap=cmap, vmin=vmin, vmax=vmax, interpolation="nearest")
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    _pi_ticks(ax.xaxis, lx)
    _pi_ticks(ax.yaxis, ly)
    ax.set_title(title(name, snap))
    if colorbar:
        low, high = np.nanmin(data) < vmin, np.nanmax(data) > vmax  # clipped: arrow ends
        extend = {(False, False): "neither", (True, False): "min", (False, True): "max", (True, True): "both"}
        cb = ax.figure.colorbar(im, ax=ax, shrink=0.9, pad=0.03, extend=extend[(low, high)])
        unit = snap.get("units", {}).get(name, "")
        cb.set_label(LABELS.get(name, name) + (" [%s]" % unit if unit else ""))
    return im


def _pi_ticks(axis, length):
    """Ticks at multiples of pi/2 when the length is a multiple of pi (as 2pi decks are)."""
    ratio = length / np.pi
    if abs(ratio - round(ratio)) > 1e-9 or round(ratio) < 1 or round(ratio) > 8:
        return
    n = int(round(ratio))
    step = 0.5 if n <= 2 else 1.0
    ticks = np.arange(0.0, n + 1e-9, step)
    axis.set_ticks(ticks * np.pi)
    axis.set_ticklabels([_pi_label(t) for t in ticks])


def _pi_label(m):
    if m == 0:
        return "0"
    if m == 1:
        return r"$\pi$"
    if float(m).is_integer():
        return r"$%d\pi$" % m
    if m == 0.5:
        return r"$\pi/2$"
    return r"$%d\pi/2$" % int(round(2 * m))


# ---------------------------------------------------------------- figures
def new_figure(nrows=1, ncols=1, width=None, height=None, **kw):
    """A figure with constrained layout and nrows x ncols axes (a single Axes for 1x1)."""
    width = width or 5.0 * ncols + 0.6
    height = height or 3.6 * nrows + 0.4
    fig, axes = plt.subplots(nrows, ncols, figsize=(width, height), layout="constrained", squeeze=False, **kw)
    return fig, (axes[0, 0] if nrows == ncols == 1 else axes)


def save(fig, path, quiet=False):
    """Write fig as PNG to path (folders made as needed), close it, print the path."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fig.savefig(path, format="png")
    plt.close(fig)
    if not quiet:
        print(path)
    return path


def time_colors(n):
    """n colours from dark (early) to light (late)."""
    cmap = plt.get_cmap("viridis")
    return [cmap(x) for x in (np.linspace(0.0, 0.85, n) if n > 1 else [0.0])]


def nearest_indices(available, wanted):
    """Indices into `available` nearest each value of `wanted`, without repeats, in order."""
    available = np.asarray(available, dtype=np.float64)
    out = []
    for w in wanted:
        i = int(np.argmin(np.abs(available - w)))
        if i not in out:
            out.append(i)
    return sorted(out)
