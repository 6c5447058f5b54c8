"""Readers for cascade's output, shared by the plotting scripts and the tests.

Needs numpy and h5py (Debian: python3-numpy python3-h5py). Layout (docs/output-format.md):

    RUN/deck.yaml                  the resolved deck
    RUN/diagnostics.csv, .h5       time series (step, t, dt, E, Z, P, max_u, cfl_limit, ...)
    RUN/spectra.h5                 shell spectra E(k), Z(k) over time
    RUN/snapshots/snap_NNNNNN.h5   physical fields (ny, nx) with attributes time, step, dt
    RUN/snapshots.xmf              XDMF index of the snapshots (ParaView, VisIt)
    RUN/checkpoints/ckpt_NNNNNN.h5 exact spectral state /state/omega_hat (ny, nx/2+1, 2)

Example:

    import cascade_io
    d = cascade_io.read_diagnostics("output/decaying")
    s = cascade_io.read_snapshot(cascade_io.list_snapshots("output/decaying")[-1])
    print(d["t"][-1], d["E"][-1], s["vorticity"].shape, s["attrs"]["time"])
"""
import csv
import glob
import os

import h5py
import numpy as np

CFL_LIMITS = ["none", "cfl", "dt_max", "growth", "output"]


def _attrs(obj):
    out = {}
    for key, value in obj.attrs.items():
        if isinstance(value, bytes):
            value = value.decode("utf-8")
        elif isinstance(value, np.generic):
            value = value.item()
        out[key] = value
    return out


def read_poisson(path):
    """poisson.h5 -> dict with arrays phi, rhs, exact (shape (ny, nx)) and the file attributes."""
    with h5py.File(path, "r") as f:
        return {
            "phi": np.asarray(f["phi"][...], dtype=np.float64),
            "rhs": np.asarray(f["rhs"][...], dtype=np.float64),
            "exact": np.asarray(f["exact"][...], dtype=np.float64),
            "attrs": _attrs(f),
            "units": {name: _attrs(f[name]).get("units", "") for name in ("phi", "rhs", "exact")},
        }


def list_snapshots(run_dir):
    """Paths of the run's snapshots, in order."""
    return sorted(glob.glob(os.path.join(run_dir, "snapshots", "snap_*.h5")))


def read_snapshot(path):
    """A snapshot -> dict of fields (vorticity, streamfunction, u, v as present; (ny, nx)),
    'attrs' (time, step, dt, lx, ly, deck, ...) and 'units'."""
    out = {"attrs": {}, "units": {}}
    with h5py.File(path, "r") as f:
        out["attrs"] = _attrs(f)
        for name in ("vorticity", "streamfunction", "u", "v"):
            if name in f:
                out[name] = f[name][...]
                out["units"][name] = _attrs(f[name]).get("units", "")
    return out


def read_diagnostics(run_dir, source="h5"):
    """The diagnostics time series as a dict of numpy arrays (cfl_limit as strings).
    source: 'h5' (diagnostics.h5, written at checkpoints and at the end) or 'csv'
    (diagnostics.csv, flushed row by row)."""
    if source == "csv":
        with open(os.path.join(run_dir, "diagnostics.csv"), newline="") as f:
            rows = list(csv.DictReader(f))
        out = {}
        for key in rows[0].keys() if rows else []:
            values = [r[key] for r in rows]
            out[key] = np.array(values) if key == "cfl_limit" else np.array(values, dtype=np.float64)
        if "step" in out:
            out["step"] = out["step"].astype(np.int64)
        return out
    with h5py.File(os.path.join(run_dir, "diagnostics.h5"), "r") as f:
        out = {name: f[name][...] for name in f.keys()}
    out["cfl_limit"] = np.array([CFL_LIMITS[c] if 0 <= c < len(CFL_LIMITS) else "?" for c in out["cfl_limit"]])
    return out


def read_spectra(run_dir):
    """spectra.h5 -> dict: k (shell centres), t, step, E (time, k), Z (time, k), the fluxes
    Pi and Pi_Z (time, k) through k of energy and enstrophy, and dk."""
    with h5py.File(os.path.join(run_dir, "spectra.h5"), "r") as f:
        out = {name: f[name][...] for name in ("k", "t", "step", "E", "Z")}
        for name in ("Pi", "Pi_Z"):  # fluxes, in files written since they were added
            if name in f:
                out[name] = f[name][...]
        out["dk"] = float(f.attrs["dk"])
    return out


def read_checkpoint(path):
    """A checkpoint -> dict: omega_hat (complex, (ny, nx/2+1), the unnormalised DFT of omega),
    time, step, dt, nx, ny, precision, deck and the rest of the attributes."""
    with h5py.File(path, "r") as f:
        raw = f["state/omega_hat"][...]
        out = _attrs(f)
    out["omega_hat"] = raw[..., 0].astype(np.float64) + 1j * raw[..., 1].astype(np.float64)
    return out


def vorticity_from_checkpoint(path):
    """The physical vorticity (ny, nx) of a checkpoint's state."""
    c = read_checkpoint(path)
    return np.fft.irfft2(c["omega_hat"], s=(c["ny"], c["nx"]))


def checkpoint_checksum(omega_hat_raw, time, dt, step):
    """The checksum cascade stores in a checkpoint ('fnv1a64w:...'): 64-bit FNV-1a over the
    state's bytes in 8-byte words (each step folding the high bits down), then over the
    doubles (time, dt, step). omega_hat_raw: the dataset as stored (ny, nx/2+1, 2)."""
    mask = (1 << 64) - 1
    prime = 0x100000001B3

    def fold(h, data):
        words = np.frombuffer(data[: len(data) // 8 * 8], dtype="<u8")
        for w in words.tolist():
            h = ((h ^ w) * prime) & mask
            h ^= h >> 29
        for b in data[len(data) // 8 * 8:]:
            h = ((h ^ b) * prime) & mask
        return h

    h = fold(0xCBF29CE484222325, np.ascontiguousarray(omega_hat_raw).tobytes())
    h = fold(h, np.array([time, dt, float(step)], dtype="<f8").tobytes())
    return "fnv1a64w:%016x" % h
