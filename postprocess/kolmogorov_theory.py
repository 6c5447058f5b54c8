"""Linear stability of the Kolmogorov flow u = U0 sin(n y) in a periodic box (Meshalkin & Sinai
1961), as a numpy eigenvalue problem over the perturbation's Fourier modes.

cascade's Kolmogorov forcing is the body force chi sin(n y) in x with D(k) = nu k^2 + mu, so the
laminar state is U0 = chi / (nu n^2 + mu) (lengths with ly = 2 pi: k_f = n). A perturbation

    omega'(x, y) = sum_m w_m exp(i (a x + (b + m n) y)) + c.c.,    K_m^2 = a^2 + (b + m n)^2,

(a: its x wavenumber, b: its Floquet wavenumber, 0 <= b < n; in a 2 pi box both are integers)
obeys, linearised about the laminar state (omega = dv/dx - du/dy, v_m = -i a w_m / K_m^2),

    dw_m/dt = (U0 a / 2) [ (n^2/K_{m-1}^2 - 1) w_{m-1} - (n^2/K_{m+1}^2 - 1) w_{m+1} ]
              - (nu K_m^2 + mu) w_m,

a tridiagonal matrix for each (a, b); its eigenvalue of largest real part is the growth rate.
Friction only shifts every eigenvalue by -mu. The Reynolds number here is Meshalkin & Sinai's,
R = U0 / (nu n): for a -> 0 the critical R tends to sqrt(2); in a 2 pi box the longest
perturbation has a = 1, i.e. a/n = 1/n, and the flow is stable at every R for n = 1.

    python3 postprocess/kolmogorov_theory.py [--n 4] [--nu 0.1]
prints the critical R of every (a, b) with a < n, the critical mode and chi_c = R_c nu^2 n^3.
"""
import argparse
import sys

import numpy as np

DEFAULT_TERMS = 40  # modes m = -40..40: the eigenvalues are converged to round-off at R ~ 1-10


def stability_matrix(a, b, n, U0, nu, mu=0.0, terms=DEFAULT_TERMS):
    """The tridiagonal matrix of the linearised dynamics of the modes m = -terms..terms."""
    m = np.arange(-terms, terms + 1)
    q = b + m * n
    K2 = (a * a + q * q).astype(np.float64)
    if np.any(K2 == 0):
        raise ValueError("the mode (a, b) = (0, 0) is the mean, not a perturbation")
    A = np.diag(-(nu * K2 + mu)).astype(np.complex128)
    c = 0.5 * U0 * a
    g = n * n / K2 - 1.0
    i = np.arange(1, m.size)
    A[i, i - 1] += c * g[i - 1]
    A[i - 1, i] -= c * g[i]
    return A, q


def leading(a, b, n, U0, nu, mu=0.0, terms=DEFAULT_TERMS):
    """(eigenvalue of largest real part, its eigenvector w_m, the y wavenumbers q_m)."""
    A, q = stability_matrix(a, b, n, U0, nu, mu, terms)
    ev, vec = np.linalg.eig(A)
    j = int(np.argmax(ev.real))
    return complex(ev[j]), vec[:, j], q


def growth_rate(a, b, n, U0, nu, mu=0.0, terms=DEFAULT_TERMS):
    return leading(a, b, n, U0, nu, mu, terms)[0].real


def critical_R(a, b, n, terms=DEFAULT_TERMS, R_max=1e3):
    """The R = U0/(nu n) at which mode (a, b) turns unstable (mu = 0; growth rates scale with
    nu so take nu = 1), by bisection in log R; inf if stable up to R_max."""
    f = lambda R: growth_rate(a, b, n, R * n, 1.0, 0.0, terms)  # noqa: E731  U0 = R nu n
    lo, hi = 1e-3, R_max
    if f(hi) <= 0:
        return float("inf")
    for _ in range(200):
        mid = np.sqrt(lo * hi)
        if f(mid) > 0:
            hi = mid
        else:
            lo = mid
        if hi / lo - 1 < 1e-13:
            break
    return float(np.sqrt(lo * hi))


def critical_modes(n, terms=DEFAULT_TERMS):
    """[(R_c, a, b)] for every a < n (wider perturbations are stable) and 0 <= b < n, sorted."""
    out = []
    for a in range(1, n + 1):
        for b in range(n):
            out.append((critical_R(a, b, n, terms), a, b))
    out.sort()
    return out


def mode_field(a, b, n, U0, nu, nx, ny, amplitude, mu=0.0, terms=DEFAULT_TERMS):
    """The leading eigenmode of (a, b) as a real vorticity field (ny, nx) on [0, 2pi)^2, scaled
    so that its maximum is `amplitude`; also returns the eigenvalue. Components whose y
    wavenumber does not fit the grid's two-thirds band are dropped (they are below 1e-20)."""
    lam, w, q = leading(a, b, n, U0, nu, mu, terms)
    x = np.arange(nx) * 2 * np.pi / nx
    y = np.arange(ny) * 2 * np.pi / ny
    X, Y = np.meshgrid(x, y)
    field = np.zeros((ny, nx))
    keep = np.abs(q) < ny / 3
    for wm, qm in zip(w[keep], q[keep]):
        field += 2 * np.real(wm * np.exp(1j * (a * X + qm * Y)))
    return amplitude * field / np.abs(field).max(), lam


def main(argv=None):
    p = argparse.ArgumentParser(prog="kolmogorov_theory", description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=4, help="forcing wavenumber n (2 pi box; default 4)")
    p.add_argument("--nu", type=float, default=0.1, help="viscosity for chi_c = R_c nu^2 n^3 (default 0.1)")
    args = p.parse_args(argv)
    modes = critical_modes(args.n)
    print("# Kolmogorov flow sin(%d y) in a 2 pi box: critical R = U0/(nu n) per perturbation (a, b)" % args.n)
    for R, a, b in modes:
        print("a=%d b=%d R_c=%s" % (a, b, "%.6f" % R if np.isfinite(R) else "stable"))
    R, a, b = modes[0]
    print("critical mode (a, b) = (%d, %d): R_c = %.6f, chi_c = %.6f at nu = %g, sqrt(chi_c)/nu = %.4f"
          % (a, b, R, R * args.nu ** 2 * args.n ** 3, args.nu, np.sqrt(R * args.n ** 3)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
