"""Readers for cascade's output, shared by the plotting scripts and the tests.

Needs numpy and h5py (Debian: python3-numpy python3-h5py). Layout (docs/output-format.md):

    RUN/deck.yaml                  the resolved deck
    RUN/diagnostics.csv, .h5       time series, one column a diagnostic: the CSV header names
                                   them, the HDF5 datasets give units and descriptions
    RUN/spectra.h5                 shell spectra E(k), Z(k) over time
    RUN/snapshots/snap_NNNNNN.h5   physical fields (1, ny, nx) with attributes time, step, dt
                                   (an ensemble's: (1, member, ny, nx), every file with member)
    RUN/snapshots.xmf              XDMF index of the snapshots (ParaView, VisIt)
    RUN/checkpoints/ckpt_NNNNNN.h5 exact spectral state /state/omega_hat (ny, nx/2+1, 2)

Example:

    import cascade_io
    d = cascade_io.read_diagnostics("output/decaying")
    s = cascade_io.read_snapshot(cascade_io.list_snapshots("output/decaying")[-1])
    print(d["t"][-1], d["E"][-1], s["vorticity"].shape, s["attrs"]["time"])

With xarray (Debian: python3-xarray python3-h5netcdf), open_run(run) gives the run as xarray
datasets: the files are netCDF-4 (named dimensions t, y, x, k with coordinates).
"""
import csv
import glob
import os
import re

import h5py
import numpy as np

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
    """A snapshot -> dict of fields (vorticity, streamfunction, u, v as present; (ny, nx), an
    ensemble's (member, ny, nx)), 'attrs' (time, step, dt, lx, ly, deck, ...) and 'units'. The
    files store a field as (t, y, x) with t of length 1 (before the netCDF layout: (y, x); an
    ensemble's (t, member, y, x)); this drops t."""
    out = {"attrs": {}, "units": {}}
    with h5py.File(path, "r") as f:
        out["attrs"] = _attrs(f)
        for name in ("vorticity", "streamfunction", "u", "v"):
            if name in f:
                values = f[name][...]
                out[name] = values[0] if values.ndim in (3, 4) and values.shape[0] == 1 else values
                out["units"][name] = _attrs(f[name]).get("units", "")
    return out


def _limit_names(description):
    """The names of cfl_limit's codes, from its dataset's description in diagnostics.h5
    ('what bound dt: 0 none, 1 cfl, ...'); {} when it does not list them."""
    listed = description.split(":", 1)[1] if ":" in description else ""
    return {int(code): name for code, name in re.findall(r"(\d+) (\w+)", listed)}


def read_diagnostics_schema(run_dir):
    """The diagnostics' columns as the run's files state them: a list of dicts name, units,
    description, dtype; in the order of diagnostics.csv's header (when there is one), with
    units, description and dtype from diagnostics.h5's datasets (when there is one). The
    files carry the schema (docs/output-format.md, Diagnostics); this reader repeats none."""
    csv_path = os.path.join(run_dir, "diagnostics.csv")
    h5_path = os.path.join(run_dir, "diagnostics.h5")
    names = None
    if os.path.isfile(csv_path):
        with open(csv_path, newline="") as f:
            names = next(csv.reader(f), [])
    found = {}
    if os.path.isfile(h5_path):
        with h5py.File(h5_path, "r") as f:
            for name in f.keys():
                if isinstance(f[name], h5py.Dataset):
                    a = _attrs(f[name])
                    found[name] = {"name": name, "units": a.get("units", ""),
                                   "description": a.get("description", ""), "dtype": f[name].dtype}
            if names is None:
                names = list(found)
    return [found.get(n, {"name": n, "units": "", "description": "", "dtype": None}) for n in names or []]


def _csv_column(values, dtype):
    """A CSV column as numpy: the dtype diagnostics.h5 gives it, where that fits the text;
    else float64 (integers where every value is one), or the strings as they are."""
    try:
        numbers = np.array(values, dtype=np.float64)
    except ValueError:
        return np.array(values)  # names (cfl_limit)
    if dtype is not None and np.issubdtype(dtype, np.integer) or \
            dtype is None and values and all(re.fullmatch(r"-?\d+", v) for v in values):
        return np.array(values, dtype=np.int64)
    return numbers


def read_diagnostics(run_dir, source="h5"):
    """The diagnostics time series as a dict of numpy arrays, one a column (cfl_limit as
    strings). source: 'h5' (diagnostics.h5, written at checkpoints and at the end) or 'csv'
    (diagnostics.csv, flushed row by row). The columns are those the file names. An
    ensemble's: from the .h5, every column (t, member) but t (t,); from the CSV, its long form
    as it is (a row a member at each time, the column 'member')."""
    if source == "csv":
        schema = {c["name"]: c["dtype"] for c in read_diagnostics_schema(run_dir)}
        with open(os.path.join(run_dir, "diagnostics.csv"), newline="") as f:
            rows = list(csv.DictReader(f))
        return {key: _csv_column([r[key] for r in rows], schema.get(key)) for key in (rows[0].keys() if rows else [])}
    with h5py.File(os.path.join(run_dir, "diagnostics.h5"), "r") as f:
        out = {name: f[name][...] for name in f.keys()}
        limits = _limit_names(_attrs(f["cfl_limit"]).get("description", "")) if "cfl_limit" in f else {}
    if "cfl_limit" in out:
        codes = np.asarray(out["cfl_limit"])  # an ensemble's: (t, member)
        out["cfl_limit"] = np.array([limits.get(int(c), "?") for c in codes.ravel()]).reshape(codes.shape)
    return out


def read_spectra(run_dir):
    """spectra.h5 -> dict: k (shell centres), t, step, E (time, k), Z (time, k), the fluxes
    Pi and Pi_Z (time, k) through k of energy and enstrophy, and dk. An ensemble's spectra are
    (time, member, k)."""
    with h5py.File(os.path.join(run_dir, "spectra.h5"), "r") as f:
        out = {name: f[name][...] for name in ("k", "t", "step", "E", "Z")}
        for name in ("Pi", "Pi_Z"):  # fluxes, in files written since they were added
            if name in f:
                out[name] = f[name][...]
        out["dk"] = float(f.attrs["dk"])
    return out


def read_checkpoint(path):
    """A checkpoint -> dict: omega_hat (complex, (ny, nx/2+1), the unnormalised DFT of omega;
    an ensemble's (member, ny, nx/2+1)), time, step, dt, nx, ny, precision, deck and the rest
    of the attributes."""
    with h5py.File(path, "r") as f:
        raw = f["state/omega_hat"][...]
        out = _attrs(f)
    out["omega_hat"] = raw[..., 0].astype(np.float64) + 1j * raw[..., 1].astype(np.float64)
    return out


def vorticity_from_checkpoint(path):
    """The physical vorticity (ny, nx) of a checkpoint's state (an ensemble's (member, ny, nx))."""
    c = read_checkpoint(path)
    return np.fft.irfft2(c["omega_hat"], s=(c["ny"], c["nx"]))


def checkpoint_checksum(omega_hat_raw, time, dt, step, budget_members=None):
    """The checksum cascade stores in a checkpoint ('fnv1a64w:...'): 64-bit FNV-1a over the
    state's bytes in 8-byte words (each step folding the high bits down), then over the
    doubles (time, dt, step), then, for an ensemble, over /budget/members (budget_members).
    omega_hat_raw: the dataset as stored ((ny, nx/2+1, 2); an ensemble's (member, ...))."""
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
    if budget_members is not None:
        h = fold(h, np.ascontiguousarray(budget_members, dtype="<f8").tobytes())
    return "fnv1a64w:%016x" % h


def open_run(run_dir):
    """The run as xarray datasets (needs xarray and h5netcdf; Debian: python3-xarray
    python3-h5netcdf): a dict with 'snapshots' (the fields over (t, y, x), every snapshot
    along t), 'diagnostics' (every column over t) and 'spectra' (E, Z, Pi, Pi_Z over (t, k)),
    an ensemble's with the dimension member after t ((t, member, y, x), (t, member),
    (t, member, k)),
    None where the run has no such file. The datasets are read into memory, the snapshots
    joined with xarray.concat; xarray.open_mfdataset(paths, engine="h5netcdf") opens them
    lazily instead but needs dask (Debian: python3-dask). Files written before the netCDF
    layout (no named dimensions) are refused by h5netcdf: read those with the read_*
    functions above."""
    import xarray as xr

    def load(path):
        return xr.load_dataset(path, engine="h5netcdf")

    def dataset(name):
        path = os.path.join(run_dir, name)
        return load(path) if os.path.isfile(path) else None

    paths = list_snapshots(run_dir)
    snapshots = xr.concat([load(p) for p in paths], dim="t", data_vars="minimal", coords="minimal",
                          combine_attrs="drop_conflicts") if paths else None
    return {"snapshots": snapshots, "diagnostics": dataset("diagnostics.h5"), "spectra": dataset("spectra.h5")}
