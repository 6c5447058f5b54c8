//! @file The vorticity equation's per-mode and per-point operations, written once as
//! CASCADE_HD functors and applied by both backends.
//!
//!   d(omega)/dt = L omega + N(omega) + F,   omega = -lap(psi), u = psi_y, v = -psi_x
//!   L(k) = -D(k) + i beta kx / k^2,  D(k) = nu k^(2p) + mu + alpha k^(-2q)
//!   N = -u.grad(omega), evaluated in advective form or in Basdevant's (1983) form
//!       u.grad(omega) = (dxx - dyy)(uv) + dxy(v^2 - u^2)
//! (-beta v = i beta kx psi_hat = i beta kx omega_hat / k^2 is linear and goes into L, so
//! Rossby waves are integrated exactly with the viscous decay.)
//!
//! Storage: omega_hat is the unnormalised DFT of omega (FFTW/cuFFT convention); operations
//! that feed an inverse transform take the factor scale = 1/(nx ny). The state is kept
//! dealiased: every nonlinear term and forcing passes through the mask.
//!
//! The operations, by topic: ns_terms.cuh (mask, L, velocity, products), ns_stage.cuh (the
//! fused IF-RK stage and the budget sums), complex_pairs.cuh (the evaluation as complex
//! pairs), ns_fields.cuh (shell spectra, speed); the fields the equation is given (forcings,
//! initial conditions) are include/cascade/fields/, filled by field_fill.cuh.
#pragma once

#include "kernels/complex_pairs.cuh"
#include "kernels/ns_fields.cuh"
#include "kernels/ns_stage.cuh"
#include "kernels/ns_terms.cuh"
