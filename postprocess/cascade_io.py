"""Readers for cascade's HDF5 output, shared by the plotting scripts and the tests.

Needs numpy and h5py (Debian: python3-numpy python3-h5py).
"""
import h5py
import numpy as np


def _attrs(obj):
    out = {}
    for key, value in obj.attrs.items():
        if isinstance(value, bytes):
            value = value.decode("utf-8")
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
