"""Check poisson.h5 independently of the C++ code: numpy's FFT solves the same problem."""
import sys

import numpy as np

import cascade_io


def main(path):
    f = cascade_io.read_poisson(path)
    phi, rhs, exact = f["phi"], f["rhs"], f["exact"]
    ny, nx = phi.shape
    lx = ly = 1.0
    sigma = float(f["attrs"]["sigma"])
    x = np.arange(nx) * lx / nx
    y = np.arange(ny) * ly / ny
    X, Y = np.meshgrid(x, y)
    s = (X - lx / 2) ** 2 + (Y - ly / 2) ** 2
    want_rhs = np.exp(-s / (2 * sigma**2)) * (s - 2 * sigma**2) / sigma**4
    assert np.allclose(rhs, want_rhs, rtol=0, atol=1e-9), "rhs differs from the formula"
    assert np.allclose(exact, np.exp(-s / (2 * sigma**2)), rtol=0, atol=1e-14), "exact differs"
    kx = 2 * np.pi * np.fft.rfftfreq(nx, lx / nx)
    ky = 2 * np.pi * np.fft.fftfreq(ny, ly / ny)
    k2 = kx[None, :] ** 2 + ky[:, None] ** 2
    k2[0, 0] = 1.0
    phi_hat = -np.fft.rfft2(want_rhs) / k2
    phi_hat[0, 0] = 0.0
    ref = np.fft.irfft2(phi_hat, s=(ny, nx))
    ref -= ref[0, 0]
    diff = np.abs(phi - ref).max()
    linf = np.abs(phi - exact).max()
    print(f"max |phi - numpy solution| = {diff:.3e}; L-inf error vs exact = {linf:.6e}")
    assert diff < 1e-12, "cascade and numpy solutions differ"
    assert abs(linf / 2.404194e-05 - 1) < 5e-4, "L-inf error differs from the reference"
    for key in ("deck", "version", "backend", "precision"):
        assert key in f["attrs"], f"missing provenance attribute {key}"
    print("poisson.h5 checks passed")


if __name__ == "__main__":
    main(sys.argv[1])
