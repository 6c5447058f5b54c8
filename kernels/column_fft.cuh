//! @file The GPU step's passes over the columns (ky) of the kept kx columns, with the spectral
//! stage between them: with the row kernel (kernels/row_fft.cuh) the whole of a Basdevant
//! evaluation and stage in two kernels and no cuFFT (StepStrategy::RowsColumns,
//! src/backends/cuda/column_kernel_eval.cuh).
//!
//! Between the row kernel's passes, a and b hold the two fields with y in physical space and kx
//! in spectral space (the kept columns kx < kept alone). A block takes a tile of C adjacent
//! kept columns of both fields, every y, into shared memory (2C transforms of ny = 2^m points)
//! and runs, in place:
//!   - the forward transforms of the products' columns: the decimation-in-frequency stages of
//!     row_fft (exponent +1) on the conjugated values, whose conjugate is the forward transform
//!     (exponent -1), left in digit-reversed order (dif_frequency gives each position's ky);
//!   - at each position, a functor of the mode (ky, kx): the fused stage (FusedStage: the
//!     nonlinear term, forcing, integrating factor, the state S updated, the next stage's
//!     velocity spectra), with the energy budget's sums of S on the first stage of a step;
//!   - the inverse transforms back to y (the decimation-in-time stages of row_fft, exponent -1,
//!     on the conjugated spectra, conjugated again), stored over the tile's columns.
//! So the spectral state is read and written once a stage, with the products' and the next
//! inputs' columns, and nothing else moves through memory between the row kernel's launches.
//! Two more passes: the inputs of the state (velocity from S at each mode, then the inverse
//! transforms: after a restart, a diagnostic, a launch of the step on the device) and the
//! forward transforms alone (the products as half spectra for the transfer spectra).
//!
//! Shared memory: column c of field f (0: a, 1: b) at s + (f C + c) stride, its element y at
//! pad(y) (row_fft's padding, one element in 16); stride = padded_size(n) + 1, so that the
//! tile's columns fall on different banks. The phases are CASCADE_HD functions of (phase,
//! thread, threads) between barriers, so that the host runs them thread by thread in the tests
//! (tests/test_fft.cpp, ColumnFft) against direct transforms.
#pragma once

#include <cstddef>

#include "cascade/types.hpp"
#include "kernels/row_fft.cuh"

namespace cascade {
namespace column_fft {

template <class Real>
using Cx = Complex<Real>;

template <class Real>
CASCADE_HD inline Cx<Real> conj(Cx<Real> z) {
  return {z.re, -z.im};
}

//! What a pass that sums nothing adds up: nothing (whatever the functor returns is dropped).
struct NoSums {
  template <class T>
  CASCADE_HD NoSums operator+(const T&) const {
    return {};
  }
};

//! The shared memory a column of n points takes in a tile, in elements.
CASCADE_HD inline int column_stride(int n) { return row_fft::padded_size(n) + 1; }

//! What a pass over a tile does: the full stage (forward transforms, the functor, inverse
//! transforms), the inputs alone (the functor writes each mode, inverse transforms), or the
//! forward transforms alone (the functor reads each mode).
enum class ColumnPass { Stage, Inputs, Forward };

//! A tile: C adjacent columns from first_column of the two fields of one member, in a block's
//! shared memory.
template <class Real>
struct ColumnTile {
  int n;             //!< points of a column (ny), 2^m
  int m;
  int columns;       //!< C, a power of two
  int first_column;  //!< kx index of the tile's first column
  int valid;         //!< columns of the tile below kept (the last tile may have fewer than C)
  int ld;            //!< the fields' row length in global memory (nx/2 + 1)
  Cx<Real>* s;       //!< shared memory: 2 C columns of column_stride(n) elements
  const Cx<Real>* tw;  //!< exp(2 pi i k / n), k < n
  int rb = 4;          //!< log2 of the stages' radix (row_fft::first_stage_bits): 4, or 2

  CASCADE_HD Cx<Real>* column(int f, int c) const { return s + std::size_t(f * columns + c) * column_stride(n); }
  CASCADE_HD int stages() const { return row_fft::stages_before_last(m, rb) + 1; }

  //! The tile's columns of a and b (member's fields), conjugated, into shared memory; the
  //! columns past `valid` zero. Thread t of dt takes elements t, t + dt, ... with c fastest
  //! (adjacent threads read adjacent columns: C elements of a row in one transaction).
  CASCADE_HD void load(int t0, int dt, const Cx<Real>* a, const Cx<Real>* b) const {
    const int count = n * columns;
    constexpr int kInFlight = 4;  // loads a thread issues before it places the first
    for (int e0 = t0; e0 < count; e0 += kInFlight * dt) {
      Cx<Real> va[kInFlight], vb[kInFlight];
      CASCADE_UNROLL
      for (int u = 0; u < kInFlight; ++u) {
        const int e = e0 + u * dt, c = e & (columns - 1), y = e / columns;
        va[u] = vb[u] = Cx<Real>{Real(0), Real(0)};
        if (e < count && c < valid) {
          const std::size_t g = std::size_t(y) * std::size_t(ld) + std::size_t(first_column + c);
          va[u] = a[g];
          vb[u] = b[g];
        }
      }
      CASCADE_UNROLL
      for (int u = 0; u < kInFlight; ++u) {
        const int e = e0 + u * dt, c = e & (columns - 1), y = e / columns;
        if (e >= count) break;
        column(0, c)[row_fft::pad(y)] = conj(va[u]);
        column(1, c)[row_fft::pad(y)] = conj(vb[u]);
      }
    }
  }
  //! The tile back, conjugated, over the valid columns of a and b.
  CASCADE_HD void store(int t0, int dt, Cx<Real>* a, Cx<Real>* b) const {
    const int count = n * columns;
    for (int e = t0; e < count; e += dt) {
      const int c = e & (columns - 1), y = e / columns;
      if (c >= valid) continue;
      const std::size_t g = std::size_t(y) * std::size_t(ld) + std::size_t(first_column + c);
      a[g] = conj(column(0, c)[row_fft::pad(y)]);
      b[g] = conj(column(1, c)[row_fft::pad(y)]);
    }
  }
  //! Stage i of the decimation in frequency (kInverse: exponent +1, row_fft's inverse) or the
  //! decimation in time that undoes it, over all 2C columns: a column's butterflies on
  //! min(n/16, dt) threads, the columns spread over the groups of them.
  template <bool kDif>
  CASCADE_HD void stage(int i, int t0, int dt) const {
    const int per = (n >> rb) < dt ? (n >> rb) : dt;  // threads a column (n / 2^rb >= 1)
    const int groups = dt / per, g = t0 / per;
    if (g >= groups) return;
    const int bits = row_fft::stage_bits_of(m, i, rb), L = row_fft::stage_length_of(m, i, rb);
    for (int col = g; col < 2 * columns; col += groups)
      row_fft::stage<kDif>(bits, s + std::size_t(col) * column_stride(n), tw, n, n, L, t0 % per, per);
  }
  //! Each position of the valid columns after the decimation in frequency: fn(c, ky index, a, b)
  //! on the two fields' spectra there (conjugated back: the forward transforms' values; what fn
  //! leaves, conjugated, is what the decimation in time takes). Returns what fn returns, summed.
  //! Adjacent threads take adjacent columns of one position (one row of the state).
  template <class R, class Fn>
  CASCADE_HD R each_mode(int t0, int dt, const Fn& fn) const {
    R acc{};
    const int count = n * columns;
    for (int e = t0; e < count; e += dt) {
      const int c = e & (columns - 1), p = e / columns;
      if (c >= valid) continue;
      Cx<Real>& sa = column(0, c)[row_fft::pad(p)];
      Cx<Real>& sb = column(1, c)[row_fft::pad(p)];
      Cx<Real> va = conj(sa), vb = conj(sb);
      acc = acc + fn(c, row_fft::dif_frequency(m, p, rb), va, vb);
      sa = conj(va);
      sb = conj(vb);
    }
    return acc;
  }
};

//! A pass over a tile as phases between barriers (the kernel's body, and the host's emulation):
//!   Stage:   load, DIF stages, each mode (fn), DIT stages back, store;
//!   Inputs:  each mode (fn writes it), DIT stages, store;
//!   Forward: load, DIF stages, each mode (fn reads it).
//! fn(c, j, a, b) returns R (added up: the budget's sums), R{} where nothing is summed.
template <class Real, class R, class Fn>
struct ColumnPhases {
  ColumnTile<Real> tile;
  ColumnPass pass;
  Fn fn;

  CASCADE_HD int count() const {
    const int S = tile.stages();
    return pass == ColumnPass::Stage ? 2 * S + 3 : S + 2;
  }
  //! Phase p of thread t0 of dt; returns fn's sum over the modes it took (each_mode), else R{}.
  CASCADE_HD R run(int p, int t0, int dt, Cx<Real>* a, Cx<Real>* b) const {
    const int S = tile.stages();
    if (pass == ColumnPass::Inputs) {
      if (p == 0) return tile.template each_mode<R>(t0, dt, fn);
      if (p <= S) tile.template stage<false>(S - p, t0, dt);  // DIT: the last DIF stage's first
      else tile.store(t0, dt, a, b);
      return R{};
    }
    if (p == 0) {
      tile.load(t0, dt, a, b);
      return R{};
    }
    if (p <= S) {
      tile.template stage<true>(p - 1, t0, dt);
      return R{};
    }
    if (p == S + 1) return tile.template each_mode<R>(t0, dt, fn);
    if (p <= 2 * S + 1) tile.template stage<false>(2 * S + 1 - p, t0, dt);
    else tile.store(t0, dt, a, b);
    return R{};
  }
};

}  // namespace column_fft
}  // namespace cascade
