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
//!     the first stage's butterflies read their points from global memory (the load);
//!   - at each position, a functor of the mode (ky, kx): the fused stage (FusedStage: the
//!     nonlinear term, forcing, integrating factor, the state S updated, the next stage's
//!     velocity spectra), with the energy budget's sums of S on the first stage of a step;
//!   - the inverse transforms back to y (the decimation-in-time stages of row_fft, exponent -1,
//!     on the conjugated spectra, conjugated again), the last stage's butterflies storing
//!     their points over the tile's columns.
//! So the spectral state is read and written once a stage, with the products' and the next
//! inputs' columns, and nothing else moves through memory between the row kernel's launches.
//! Two more passes: the inputs of the state (velocity from S at each mode, then the inverse
//! transforms: after a restart, a diagnostic, a launch of the step on the device) and the
//! forward transforms alone (the products as half spectra for the transfer spectra).
//!
//! Shared memory: column c of field f (0: a, 1: b) at s + (f C + c) stride, its element y at
//! Layout::at(y) (row_fft's layouts: padded, one element in 16, or swizzled); stride =
//! Layout::size(n) + 1, so that the tile's columns fall on different banks. On compute
//! capability 9.0 and later, for long columns (ny from 2048, and wherever a column of both
//! fields would not fit a block), a tile is split over a pair of blocks, a cluster of two: each
//! holds one field's columns and transforms them, and the phase of each mode reads and writes
//! the other field in its partner's shared memory. Where a field's column fills a block (8192
//! points in double), a tile of two columns is split over four, by field and the parity of y:
//! each block transforms its field's even or odd points, and the phase of each mode joins the
//! halves (each_mode_quad), so that every row is read and written 32 bytes at a time, a whole
//! sector, not 16. The phases are CASCADE_HD functions of
//! (phase, thread, threads) between barriers, so that the host runs them thread by thread in the
//! tests (tests/test_fft.cpp, ColumnFft) against direct transforms.
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

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

//! log2 of a power of two (the tile's columns, the threads of a column): divisions by such a
//! number read at run time become shifts (one instruction where a division takes some twenty:
//! `ncu` of the 4096^2 double column kernel counted more integer than FP64 instructions).
CASCADE_HD_INLINE int log2_of(int pow2) {
#ifdef __CUDA_ARCH__
  return __popc(pow2 - 1);
#else
  return __builtin_popcount(unsigned(pow2 - 1));
#endif
}

//! The shared memory a column of n points takes in a tile, in elements, in a layout of
//! row_fft's (Padded, Swizzled).
template <class Layout = row_fft::Padded>
CASCADE_HD inline int column_stride(int n) {
  return Layout::size(n) + 1;
}

//! Whether a functor of each_mode asks for what it reads at a mode ahead of its arithmetic
//! (Fn::ahead(c, j), whose value it then takes as fn(c, j, a, b, ahead)).
//! type: what ahead returns.
template <class Fn, class = void>
struct ReadsAhead : std::false_type {};
template <class Fn>
struct ReadsAhead<Fn, std::void_t<decltype(std::declval<const Fn&>().ahead(0, 0))>> : std::true_type {
  using type = decltype(std::declval<const Fn&>().ahead(0, 0));
};

//! What each_mode_quad holds of fn's reads at modes k and k + n before the position's values in
//! shared memory are read: both where they are asked for early (kEarly) of a functor that reads
//! ahead, else nothing (an empty object, which the compiler drops).
template <class Fn, bool kEarly, bool = kEarly && ReadsAhead<Fn>::value>
struct QuadReads {
  CASCADE_HD_INLINE QuadReads(const Fn&, int, int, int) {}
};
template <class Fn, bool kEarly>
struct QuadReads<Fn, kEarly, true> {
  typename ReadsAhead<Fn>::type lo, hi;
  CASCADE_HD_INLINE QuadReads(const Fn& fn, int c, int k, int n) : lo(fn.ahead(c, k)), hi(fn.ahead(c, k + n)) {}
};

//! g(fn) for the phase of each mode, or, where fn has shapes (a `shape` and with_shape:
//! StageOfColumns), g of fn as compiled for the shape it has.
template <class Fn, class = void>
struct HasShapes : std::false_type {};
template <class Fn>
struct HasShapes<Fn, std::void_t<decltype(std::declval<const Fn&>().shape)>> : std::true_type {};
template <class Fn, class G>
CASCADE_HD_INLINE auto as_shaped(const Fn& fn, const G& g) {
  if constexpr (HasShapes<Fn>::value) return fn.with_shape(g);
  else return g(fn);
}

//! What a pass over a tile does: the full stage (forward transforms, the functor, inverse
//! transforms), the inputs alone (the functor writes each mode, inverse transforms), or the
//! forward transforms alone (the functor reads each mode).
enum class ColumnPass { Stage, Inputs, Forward };

//! A tile: C adjacent columns from first_column of the two fields of one member, in a block's
//! shared memory, each column in the layout Layout (row_fft's Padded or Swizzled).
template <class Real, class Layout = row_fft::Padded>
struct ColumnTile {
  int n;             //!< points of a column (ny), 2^m
  int m;
  int columns;       //!< C, a power of two
  int first_column;  //!< kx index of the tile's first column
  int valid;         //!< columns of the tile below kept (the last tile may have fewer than C)
  int ld;            //!< the fields' row length in global memory (nx/2 + 1)
  Cx<Real>* s;       //!< shared memory: 2 C columns (C in a pair) of column_stride<Layout>(n) elements
  const Cx<Real>* tw;  //!< exp(2 pi i k / n), k < n
  int rb = 4;          //!< log2 of the stages' radix (row_fft::first_stage_bits): 4, 3 or 2
  //! -1: both fields' columns in s. 0 or 1: s holds this field's C columns alone and `partner`
  //! (the shared memory of the other block of a pair, a cluster of two on the GPU) the other
  //! field's; each block transforms its own, and each takes half of the positions in the phase
  //! of each mode, reading and writing both fields there.
  int field = -1;
  Cx<Real>* partner = nullptr;
  //! A quad (a cluster of four, ColumnPhases kQuad): the tile's columns of 2n points split by the
  //! parity of y, block field + 2 parity holding field `field`'s points y = 2t + parity, t < n,
  //! and transforming them (n points); quad[r] the shared memory of block r (this one's too),
  //! tw_join the factors that join the halves at each mode, by position (join_twiddles).
  int parity = -1;
  Cx<Real>* quad[4] = {nullptr, nullptr, nullptr, nullptr};
  const Cx<Real>* tw_join = nullptr;

  //! The fields whose columns s holds: 2, or 1 in a pair.
  CASCADE_HD int held() const { return field < 0 ? 2 : 1; }
  CASCADE_HD Cx<Real>* column(int f, int c) const {
    if (field < 0) return s + std::size_t(f * columns + c) * column_stride<Layout>(n);
    return (f == field ? s : partner) + std::size_t(c) * column_stride<Layout>(n);
  }
  //! The same tile in another layout.
  template <class To>
  CASCADE_HD ColumnTile<Real, To> in_layout() const {
    return {n, m, columns, first_column, valid, ld, s, tw, rb, field, partner, parity,
            {quad[0], quad[1], quad[2], quad[3]}, tw_join};
  }
  CASCADE_HD int stages() const { return row_fft::stages_before_last(m, rb) + 1; }

  //! Stage i of the decimation in frequency (kInverse: exponent +1, row_fft's inverse) or the
  //! decimation in time that undoes it, over the held() C columns in s: a column's butterflies on
  //! min(n / 2^rb, dt) threads (one a butterfly), the columns spread over the groups of them.
  //! dt, the threads, a power of two (as every pass's).
  template <bool kDif>
  CASCADE_HD_INLINE void stage(int i, int t0, int dt) const {
    const int per = (n >> rb) < dt ? (n >> rb) : dt;  // threads a column (n / 2^rb >= 1)
    const int per_bits = log2_of(per), groups = dt >> per_bits, g = t0 >> per_bits;
    if (g >= groups) return;
    const int bits = row_fft::stage_bits_of(m, i, rb), l = row_fft::stage_log2_length_of(m, i, rb);
    for (int col = g; col < held() * columns; col += groups)
      row_fft::stage<kDif, Layout>(bits, s + std::size_t(col) * column_stride<Layout>(n), tw, n, n, l, t0 & (per - 1),
                                   per);
  }
  //! The load folded into the first stage of the decimation in frequency (blocks of n): each
  //! butterfly gathers its points from the field in global memory, conjugated, and leaves its
  //! outputs in shared memory. The items (butterfly, field, column) go column fastest, so that
  //! adjacent threads read adjacent columns of a row. The columns past `valid` are left as they
  //! are: no pass reads them.
  CASCADE_HD_INLINE void load_first_stage(int t0, int dt, const Cx<Real>* a, const Cx<Real>* b) const {
    row_fft::with_radix(row_fft::stage_bits_of(m, 0, rb),
                        [&](auto r) { load_first_stage<decltype(r)::value>(t0, dt, a, b); });
  }
  //! The store folded into the last stage of the decimation in time (the one that undoes the
  //! first above): its outputs, conjugated, over the valid columns of a and b.
  CASCADE_HD_INLINE void last_stage_store(int t0, int dt, Cx<Real>* a, Cx<Real>* b) const {
    row_fft::with_radix(row_fft::stage_bits_of(m, 0, rb),
                        [&](auto r) { last_stage_store<decltype(r)::value>(t0, dt, a, b); });
  }
  template <int R>
  CASCADE_HD_INLINE void load_first_stage(int t0, int dt, const Cx<Real>* a, const Cx<Real>* b) const {
    const int fields = held() * columns, count = fields * (n / R);
    const int column_bits = log2_of(columns), field_bits = log2_of(fields);
    for (int e = t0; e < count; e += dt) {
      const int f = field < 0 ? (e & (fields - 1)) >> column_bits : field, c = e & (columns - 1);
      if (c >= valid) continue;
      const Cx<Real>* g = (f ? b : a) + first_column + c;
      const std::size_t row = std::size_t(ld);
      row_fft::dif_butterfly_from<R, Layout>([g, row](int y) { return conj(g[std::size_t(y) * row]); }, column(f, c),
                                             tw, n, m, e >> field_bits);
    }
  }
  template <int R>
  CASCADE_HD_INLINE void last_stage_store(int t0, int dt, Cx<Real>* a, Cx<Real>* b) const {
    const int fields = held() * columns, count = fields * (n / R);
    const int column_bits = log2_of(columns), field_bits = log2_of(fields);
    for (int e = t0; e < count; e += dt) {
      const int f = field < 0 ? (e & (fields - 1)) >> column_bits : field, c = e & (columns - 1);
      if (c >= valid) continue;
      Cx<Real>* g = (f ? b : a) + first_column + c;
      const std::size_t row = std::size_t(ld);
      row_fft::dit_butterfly_to<R, Layout>(column(f, c), tw, n, m, e >> field_bits,
                                           [g, row](int y, Cx<Real> z) { g[std::size_t(y) * row] = conj(z); });
    }
  }

  //! Each position of the valid columns after the decimation in frequency: fn(c, ky index, a, b)
  //! on the two fields' spectra there (conjugated back: the forward transforms' values; what fn
  //! leaves, conjugated, is what the decimation in time takes). Returns what fn returns, summed.
  //! Adjacent threads take adjacent columns of one position (one row of the state). In a pair,
  //! field 0's block takes the first half of the positions, field 1's the second.
  //! A functor with ahead(c, j) (ReadsAhead: StageOfColumns) has what it reads from memory at
  //! a position asked for one position of the thread early, and takes it as a fifth argument:
  //! each thread's reads then wait for memory once, not at each of its positions (ncu, 4096^2
  //! double: the first use of S took 11% of the column kernel's stall samples). The fields'
  //! values read that early too (in a pair one of them is the partner's, 6% of the samples)
  //! held more registers: 2048^2 in double 2-3% faster, 128^2 x 1024 in single 4% slower, the
  //! rest even (H200), so they are read where they are used. kAhead false: such a functor's
  //! reads asked for at the position itself (fn.ahead(c, j) there), in kernels where reading
  //! ahead spilled registers (cuda_launch::ColumnShape::ahead).
  template <class R, bool kAhead = true, class Fn>
  CASCADE_HD_INLINE R each_mode(int t0, int dt, const Fn& fn) const {
    R acc{};
    // dt is a multiple of the tile's columns (a block's threads, 256 or 512, against at most 32
    // columns), so that a thread keeps one column c at all its positions p, t0's plus steps of
    // dp, up to the block's end: what fn does with c alone is done once a thread.
    const int column_bits = log2_of(columns), c = t0 & (columns - 1);
    if (c >= valid) return acc;
    const int positions = field < 0 ? n : n / 2, first = field < 0 ? 0 : field * positions;
    const int dp = dt >> column_bits, end = first + positions;
    int p = first + (t0 >> column_bits);
    Cx<Real>* const col_a = column(0, c);
    Cx<Real>* const col_b = column(1, c);
    // fn at position p (ky index j), given the fields' values a, b there.
    const auto at = [&](int p, int j, Cx<Real> a, Cx<Real> b, const auto&... ahead) {
      Cx<Real> va = conj(a), vb = conj(b);
      acc = acc + fn(c, j, va, vb, ahead...);
      col_a[Layout::at(p)] = conj(va);
      col_b[Layout::at(p)] = conj(vb);
    };
    if constexpr (!ReadsAhead<Fn>::value) {
      for (; p < end; p += dp) at(p, row_fft::dif_frequency(m, p, rb), col_a[Layout::at(p)], col_b[Layout::at(p)]);
    } else if constexpr (!kAhead) {
      for (; p < end; p += dp) {
        const int j = row_fft::dif_frequency(m, p, rb);
        at(p, j, col_a[Layout::at(p)], col_b[Layout::at(p)], fn.ahead(c, j));
      }
    } else {
      // What a position holds once read: its ky index, fn's reads.
      struct Read {
        int j = 0;
        typename ReadsAhead<Fn>::type got{};
      };
      const auto read = [&](int p) {
        Read r;
        r.j = row_fft::dif_frequency(m, p, rb);
        r.got = fn.ahead(c, r.j);
        return r;
      };
      Read next = p < end ? read(p) : Read{};
      for (; p < end; p += dp) {
        const Read here = next;
        if (p + dp < end) next = read(p + dp);
        at(p, here.j, col_a[Layout::at(p)], col_b[Layout::at(p)], here.got);
      }
    }
    return acc;
  }

  //! The phase of each mode of a quad: at position p of the half transforms (index k < n) the
  //! four blocks hold, conjugated, E and O, the transforms of each field's even and odd points;
  //! X[k] = E + w O and X[k + n] = E - w O (w = exp(-2 pi i k / 2n); on the conjugated values
  //! its conjugate, tw_join[p]) are the column's modes k and k + n, fn takes both, and
  //! E' = Y[k] + Y[k + n], O' = (Y[k] - Y[k + n]) / w go back for the inverse transforms of the
  //! halves. Each block takes a quarter of the positions, three of its four values in the other
  //! blocks' shared memory. fn's reads at both modes (ReadsAhead) are asked for at the position:
  //! before its values in shared memory are read (kAhead, QuadReads), or after they are joined.
  //! One position of the thread early, as each_mode asks, measured slower (ColumnShape::ahead).
  template <class R, bool kAhead = true, class Fn>
  CASCADE_HD_INLINE R each_mode_quad(int t0, int dt, const Fn& fn) const {
    R acc{};
    const int column_bits = log2_of(columns), c = t0 & (columns - 1);
    if (c >= valid) return acc;
    const int share = n / 4, first = (field + 2 * parity) * share, end = first + share, dp = dt >> column_bits;
    const std::size_t at_c = std::size_t(c) * column_stride<Layout>(n);
    Cx<Real>* const ea = quad[0] + at_c;
    Cx<Real>* const eb = quad[1] + at_c;
    Cx<Real>* const oa = quad[2] + at_c;
    Cx<Real>* const ob = quad[3] + at_c;
    for (int p = first + (t0 >> column_bits); p < end; p += dp) {
      const int k = row_fft::dif_frequency(m, p, rb), i = Layout::at(p);
      const QuadReads<Fn, kAhead> early(fn, c, k, n);
      const Cx<Real> w = tw_join[p];
      const Cx<Real> wa = row_fft::mul(w, oa[i]), wb = row_fft::mul(w, ob[i]);
      const Cx<Real> xa = ea[i], xb = eb[i];
      Cx<Real> la = conj(row_fft::add(xa, wa)), lb = conj(row_fft::add(xb, wb));
      Cx<Real> ha = conj(row_fft::sub(xa, wa)), hb = conj(row_fft::sub(xb, wb));
      if constexpr (ReadsAhead<Fn>::value && kAhead) {
        acc = acc + fn(c, k, la, lb, early.lo);
        acc = acc + fn(c, k + n, ha, hb, early.hi);
      } else if constexpr (ReadsAhead<Fn>::value) {
        const auto lo = fn.ahead(c, k), hi = fn.ahead(c, k + n);
        acc = acc + fn(c, k, la, lb, lo);
        acc = acc + fn(c, k + n, ha, hb, hi);
      } else {
        acc = acc + fn(c, k, la, lb);
        acc = acc + fn(c, k + n, ha, hb);
      }
      la = conj(la), lb = conj(lb), ha = conj(ha), hb = conj(hb);
      ea[i] = row_fft::add(la, ha);
      eb[i] = row_fft::add(lb, hb);
      oa[i] = row_fft::mul_conj(row_fft::sub(la, ha), w);
      ob[i] = row_fft::mul_conj(row_fft::sub(lb, hb), w);
    }
    return acc;
  }
};

//! A quad's join factors by position (ColumnTile::tw_join): entry p of the half columns of n =
//! 2^m points in stages of radix 2^rb holds tw_full[k], k = row_fft::dif_frequency(m, p, rb),
//! tw_full the table exp(2 pi i j / 2n), j < 2n. A warp's lanes take consecutive positions, whose
//! frequencies are digit-reversed, so that from tw_full a warp's read took eight sectors, and
//! the multiply waiting for it held 13.6% of the single 8192^2 stage kernel's stall samples
//! (ncu, H200); by position it takes one or two.
template <class Real>
std::vector<Cx<Real>> join_twiddles(int m, int rb, const std::vector<Cx<Real>>& tw_full) {
  std::vector<Cx<Real>> join(std::size_t(1) << m);
  for (int p = 0; p < (1 << m); ++p) join[std::size_t(p)] = tw_full[std::size_t(row_fft::dif_frequency(m, p, rb))];
  return join;
}

//! A pass over a tile as phases between barriers (the kernel's body, and the host's emulation),
//! the load folded into the first stage of the decimation in frequency and the store into the
//! last of the decimation in time (S stages, S >= 1):
//!   Stage:   load + DIF 0, DIF 1..S-1, each mode (fn), DIT S-1..1, DIT 0 + store;
//!   Inputs:  each mode (fn writes it), DIT S-1..1, DIT 0 + store;
//!   Forward: load + DIF 0, DIF 1..S-1, each mode (fn reads it).
//! fn(c, j, a, b) returns R (added up: the budget's sums), R{} where nothing is summed.
//! kAhead: a functor that reads ahead (ReadsAhead) is asked early: one position early
//! (each_mode), before the position's shared memory (each_mode_quad).
//! kQuad: the tile over a quad of blocks (ColumnTile::parity), the phase of each mode
//! each_mode_quad. kShaped: the phase of each mode compiled for each shape of fn's (as_shaped).
template <class Real, class R, class Fn, class Layout = row_fft::Padded, bool kAhead = true, bool kQuad = false,
          bool kShaped = false>
struct ColumnPhases {
  ColumnTile<Real, Layout> tile;
  ColumnPass pass;
  Fn fn;

  //! The phases of a pass over columns of S stages.
  CASCADE_HD static constexpr int phases(ColumnPass pass, int S) {
    return pass == ColumnPass::Stage ? 2 * S + 1 : S + 1;
  }
  //! The phase of each mode: the only one whose fn is called, and so the only one that sums.
  CASCADE_HD static constexpr int mode_phase(ColumnPass pass, int S) {
    return pass == ColumnPass::Inputs ? 0 : S;
  }
  CASCADE_HD int count() const { return phases(pass, tile.stages()); }
  CASCADE_HD int mode_phase() const { return mode_phase(pass, tile.stages()); }

  //! Phase p of thread t0 of dt; returns fn's sum over the modes it took (mode_phase), else R{}.
  CASCADE_HD_INLINE R run(int p, int t0, int dt, Cx<Real>* a, Cx<Real>* b) const {
    const int S = tile.stages();
    if (pass != ColumnPass::Inputs) {
      if (p == 0) {
        tile.load_first_stage(t0, dt, a, b);
        return R{};
      }
      if (p < S) {
        tile.template stage<true>(p, t0, dt);
        return R{};
      }
      if (p == S) return modes(t0, dt);
      p -= S;  // as in the Inputs pass from here
    } else if (p == 0) {
      return modes(t0, dt);
    }
    if (p < S) tile.template stage<false>(S - p, t0, dt);  // DIT S-1 first
    else tile.last_stage_store(t0, dt, a, b);
    return R{};
  }

 private:
  //! The phase of each mode; kShaped: fn compiled for each of its shapes (as_shaped).
  CASCADE_HD_INLINE R modes(int t0, int dt) const {
    const auto phase = [&](const auto& f) {
      if constexpr (kQuad) return tile.template each_mode_quad<R, kAhead>(t0, dt, f);
      else return tile.template each_mode<R, kAhead>(t0, dt, f);
    };
    if constexpr (kShaped) return as_shaped(fn, phase);
    else return phase(fn);
  }
};

}  // namespace column_fft
}  // namespace cascade
