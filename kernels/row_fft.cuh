//! @file The GPU step's evaluation row by row: the passes over the rows of a Basdevant
//! evaluation's two inverse and two forward transforms and the products between them, in one
//! kernel that keeps a row in shared memory (CudaExec::products_by_rows).
//!
//! A pruned 2D transform (kernels/fft_callbacks.cuh) is a batched 1D pass over the kept
//! columns and one over the rows. Between the inverse transforms of u_hat, v_hat and the
//! forward ones of the products, everything is row-local: the rows' C2R passes, the products
//! u v and v^2 - u^2 (with the CFL maximum), and the rows' R2C passes. As separate passes they
//! move the real fields u, v, uv, v^2 - u^2 through memory four times; here a row of the two
//! spectra (kept columns) is read once and the row of the products' spectra written once.
//!
//! One row, length n = 2^m (16 <= n <= 8192 in shared memory, longer rows in parts: RowPhases;
//! a sixteenth as many threads as points, 32 at least; a quarter as many in radix 4, which the
//! kernels of constant size take for one field's rows of 128 and 256 points, an eighth in radix
//! 8, which they take for rows of 512, where a thread's chain of instructions is the step's
//! time):
//!   - the two real rows travel as one complex row z = u + i v: its spectrum is
//!     Z[k] = A[k] + i B[k], Z[n-k] = conj(A[k]) + i conj(B[k]) (A, B the half spectra; the
//!     imaginary parts of A[0], B[0] dropped, as a C2R transform does);
//!   - the inverse FFT is decimation in frequency (radix 16, the first stage radix 2, 4 or 8
//!     where m - 4 is not a multiple of 4; or radix 4, the first stage radix 2 where m is odd;
//!     or radix 8, the first stage radix 2 or 4 where m is not a multiple of 3),
//!     in place in shared memory, so that it leaves z in digit-reversed order; the products are
//!     pointwise and do not care;
//!   - the forward FFT of w = uv + i (v^2 - u^2) runs the same stages backwards (decimation in
//!     time, conjugate twiddles), from digit-reversed order back to natural order:
//!     P[k] = (W[k] + conj W[n-k]) / 2, Q[k] = (W[k] - conj W[n-k]) / 2i;
//!   - in rows of one part the load may be folded into the first inverse stage (RowPhases::fold:
//!     each butterfly gathers its points of Z from the half spectra), one phase fewer, and the
//!     store into the last forward stage (RowPhases::fold_store: the butterflies whose outputs
//!     are each other's W[n-k] in one thread, or in lanes that exchange them), one more;
//!   - the last inverse stage, the products and the first forward stage are one pass in
//!     registers (each thread holds 16, 8 or 4 consecutive points of z);
//!   - shared memory is padded by one element in 16 (element i at i + i/16), which keeps the
//!     accesses of every stage free of bank conflicts (4 wavefronts a warp for 16-byte elements);
//!     the butterflies and stages take the layout as a parameter (Padded, Swizzled).
//! The stages are CASCADE_HD functions of (row buffer, butterfly index), so that the host can
//! run the same arithmetic thread by thread (tests/test_fft.cpp, RowFft) against a plain DFT.
#pragma once

#include <cmath>
#include <cstddef>
#include <type_traits>
#include <vector>

#include "cascade/types.hpp"
#include "kernels/ns_terms.cuh"
#include "kernels/reduction_ops.cuh"

//! Full unrolling of the small loops on the device (the host compiler, for the tests, decides).
#if defined(__CUDA_ARCH__)
#define CASCADE_UNROLL _Pragma("unroll")
#else
#define CASCADE_UNROLL
#endif

namespace cascade {
namespace row_fft {

template <class Real>
using Cx = Complex<Real>;

template <class Real>
CASCADE_HD inline Cx<Real> add(Cx<Real> a, Cx<Real> b) {
  return {a.re + b.re, a.im + b.im};
}
template <class Real>
CASCADE_HD inline Cx<Real> sub(Cx<Real> a, Cx<Real> b) {
  return {a.re - b.re, a.im - b.im};
}
template <class Real>
CASCADE_HD inline Cx<Real> mul(Cx<Real> a, Cx<Real> b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
template <class Real>
CASCADE_HD inline Cx<Real> mul_conj(Cx<Real> a, Cx<Real> b) {  // a conj(b)
  return {a.re * b.re + a.im * b.im, a.im * b.re - a.re * b.im};
}

//! Layouts of a row (or a column) in shared memory: where element i lies (at) and the elements
//! a row of n takes (size). Padded: one element of padding in 16, i at i + i/16 (rows, and most
//! columns). Swizzled: no padding, i's lowest four bits XORed with the next four (a permutation
//! of each 16 elements), which keeps a stage's points on different banks as the padding does:
//! double precision's tiles of long columns, where it leaves L1 more of the multiprocessor's
//! memory (column_kernel_eval.cuh, ColumnLayout).
struct Padded {
  CASCADE_HD static int at(int i) { return i + (i >> 4); }
  CASCADE_HD static int size(int n) { return n + (n >> 4); }
};
struct Swizzled {
  CASCADE_HD static int at(int i) { return i ^ ((i >> 4) & 15); }
  CASCADE_HD static int size(int n) { return n; }
};

//! cos and sin of 2 pi m / 16, m = 0..7 (constants once m is: no table in memory).
CASCADE_HD inline double root16_cos(int m) {
  return m == 0 ? 1.0
         : m == 1 ? 0.92387953251128675613
         : m == 2 ? 0.70710678118654752440
         : m == 3 ? 0.38268343236508977173
         : m == 4 ? 0.0
         : m == 5 ? -0.38268343236508977173
         : m == 6 ? -0.70710678118654752440
                  : -0.92387953251128675613;
}
CASCADE_HD inline double root16_sin(int m) { return root16_cos(m < 4 ? 4 - m : m - 4); }

//! x * exp(SIGN 2 pi i m / 16), with the trivial factors exact.
template <int SIGN, class Real>
CASCADE_HD inline Cx<Real> rotate16(Cx<Real> x, int m) {
  if (m == 0) return x;
  if (m == 4) return SIGN > 0 ? Cx<Real>{-x.im, x.re} : Cx<Real>{x.im, -x.re};
  const Real c = Real(root16_cos(m)), s = Real(SIGN > 0 ? root16_sin(m) : -root16_sin(m));
  return {x.re * c - x.im * s, x.re * s + x.im * c};
}

template <int R>
constexpr int log2_of() {
  return R == 2 ? 1 : R == 4 ? 2 : R == 8 ? 3 : 4;
}

//! Bit reversal of q in [0, R).
template <int R>
CASCADE_HD constexpr int bit_reverse(int q) {
  int r = 0;
  CASCADE_UNROLL
  for (int b = 0; b < log2_of<R>(); ++b) r = (r << 1) | ((q >> b) & 1);
  return r;
}

//! The unnormalised DFT of R = 2, 4, 8 or 16 points in registers, exponent sign SIGN:
//! X[q] = sum_j x[j] exp(SIGN 2 pi i j q / R), left in bit-reversed order: X[q] in
//! x[bit_reverse<R>(q)] (every index a constant once the loops are unrolled).
template <int R, int SIGN, class Real>
CASCADE_HD inline void dft(Cx<Real> (&x)[R]) {
  CASCADE_UNROLL
  for (int st = 0; st < log2_of<R>(); ++st) {
    const int h = R >> (st + 1);  // butterflies of span h, twiddles of order 2h
    CASCADE_UNROLL
    for (int i = 0; i < R / 2; ++i) {
      const int lo = (i / h) * 2 * h + i % h, hi = lo + h;
      const Cx<Real> a = x[lo], b = x[hi];
      x[lo] = add(a, b);
      x[hi] = rotate16<SIGN>(sub(a, b), (i % h) * (16 / (2 * h)));
    }
  }
}

//! The radix-16 stages' sections of a twiddle table of n points (twiddle_table): after the n
//! entries tw[k] = exp(2 pi i k / n), one section a block length L = 2^l, 32 <= L <= n, holding
//! the factors w, w^4, w^8, w^12 (w = tw[n1 n / L]) of each of its M = L / 16 butterflies n1,
//! factor by factor: factor f of butterfly n1 at stage_section(n, l) + f M + n1. A warp's lanes,
//! consecutive butterflies, then read consecutive entries, where the flat table's w^4 lay 4 n / L
//! entries apart (ncu of single precision's 8192-point row kernel: 24 sectors a warp's load, an
//! L1 hit rate of 51%, 28% of the stall samples waiting for these loads).
//! Section l starts at n + sum_{5 <= j < l} 2^(j - 2).
CASCADE_HD constexpr int stage_section(int n, int l) { return n + (1 << (l - 2)) - 8; }
//! Entries of a table of n points, with the sections or without.
CASCADE_HD constexpr int twiddle_table_size(int n, bool sections) {
  return sections && n >= 32 ? n + n / 2 - 8 : n;  // the last section, n / 4 entries, at n + n / 4 - 8
}

//! A butterfly's own factors in a table with sections: factor f (w^(4f), w for f = 0) at
//! at[f * stride] (stride: the stage's butterflies a block, M); `at` null: none (the flat table).
template <class Real>
struct StageFactors {
  const Cx<Real>* at = nullptr;
  int stride = 0;
  CASCADE_HD explicit operator bool() const { return at != nullptr; }
  CASCADE_HD Cx<Real> operator[](int f) const { return at[f * stride]; }
};
//! The factors of butterfly n1 of a radix-R stage over blocks of 2^l points (M of them a block),
//! where the table has sections (`sections`) and the stage is of radix 16 with twiddles.
template <int R, class Real>
CASCADE_HD inline StageFactors<Real> stage_factors(const Cx<Real>* tw, int n, int l, int M, int n1, bool sections) {
  if (R != 16 || !sections || M < 2) return {};
  return {tw + stage_section(n, l) + n1, M};
}

//! x[q] *= exp(SIGN 2 pi i n1 q / L), q = 1..R-1, from the table tw[k] = exp(2 pi i k / n)
//! (n: the row's length, L divides it), step = n / L: the first factor from the table, the
//! three after every fourth by products. Every fourth: in double precision by squaring (w^4 =
//! (w^2)^2, w^8, w^12 = w^8 w^4; a product chain seven long at most, w^k off by some k ulps),
//! one load a butterfly where loading them took up to four (H100, a step 2-3% faster from 2048^2
//! to 8192^2 and 4% at 512^2: docs/performance.md, "The row kernel of large grids"); in single
//! precision from the table (squaring's error failed the row kernel's 4e-6 against the plain
//! transforms at 1024 points, and lost 128^2 ensembles 3%), or from the butterfly's section
//! (`f`, stage_factors), which holds the same values.
//! w1: the first factor, tw[n1 step mod n] (first_twiddle).
template <int R, int SIGN, class Real>
CASCADE_HD inline void twiddle(Cx<Real> (&x)[R], Cx<Real> w1, const Cx<Real>* tw, int n, int step, int n1,
                               StageFactors<Real> f = {}) {
  constexpr bool kSquare = sizeof(Real) == sizeof(double);
  const int mask = n - 1;
  Cx<Real> w2 = w1, w4 = w1, w8 = w1;
  if (kSquare && R > 4) {
    w2 = mul(w1, w1);
    w4 = mul(w2, w2);
  }
  if (kSquare && R > 8) w8 = mul(w4, w4);
  Cx<Real> w = w1;
CASCADE_UNROLL
  for (int q = 1; q < R; ++q) {
    if (q > 1 && q % 4 != 0) w = mul(w, w1);
    else if (q > 1 && kSquare) w = q == 4 ? w4 : q == 8 ? w8 : mul(w8, w4);
    else if (q > 1) w = f ? f[q / 4] : tw[(n1 * step * q) & mask];
    x[q] = SIGN > 0 ? mul(x[q], w) : mul_conj(x[q], w);
  }
}

//! The first twiddle factor of the butterfly at n1 of a stage over blocks of 2^l points (1
//! where M = 1: none), from its section where it has one (f). In double precision the butterflies ask for it before they gather their
//! points, so that the table's load (global memory) is on its way with theirs (a first stage of
//! radix 2, whose DFT is one addition, waited for it: ncu of the single 8192-point rows, 6.5% of
//! the row kernel's stall samples at its first use): 8192^2 0.8% faster a step, 4096^2 1%, 2048^2
//! 0.8%. In single precision, where the row kernels of 512 threads hold 64 registers, that of
//! 8192 points spilled and took 1% longer; there it is read where it is used (H200,
//! docs/performance.md, "The butterflies' first twiddle early").
template <class Real>
CASCADE_HD inline Cx<Real> first_twiddle(const Cx<Real>* tw, int n, int l, int M, int n1, StageFactors<Real> f = {}) {
  if (f) return f[0];
  return M > 1 ? tw[(n1 * (n >> l)) & (n - 1)] : Cx<Real>{Real(1), Real(0)};
}
template <class Real>
constexpr bool kTwiddleFirst = sizeof(Real) == sizeof(double);

//! The twiddle table of n points (a power of two), tw[k] = exp(2 pi i k / n) rounded from
//! double, with the radix-16 stages' sections after it (`sections`: stage_section) or not: on
//! the host, for the device's tables (device_twiddles) and the host's emulation alike. A
//! section's entries are copies of the entries the flat table's reads take.
template <class Real>
std::vector<Cx<Real>> twiddle_table(int n, bool sections) {
  std::vector<Cx<Real>> tw(std::size_t(twiddle_table_size(n, sections)));
  const double two_pi = 2 * 3.14159265358979323846;
  for (int k = 0; k < n; ++k) tw[k] = {Real(std::cos(two_pi * k / n)), Real(std::sin(two_pi * k / n))};
  if (twiddle_table_size(n, sections) == n) return tw;
  for (int l = 5; (1 << l) <= n; ++l) {
    const int M = 1 << (l - 4), step = n >> l, at = stage_section(n, l);
    for (int f = 0; f < 4; ++f)
      for (int n1 = 0; n1 < M; ++n1) tw[std::size_t(at + f * M + n1)] = tw[(n1 * step * (f ? 4 * f : 1)) & (n - 1)];
  }
  return tw;
}

//! Butterfly t of a decimation-in-frequency stage (exponent +1: the inverse transform) over
//! blocks of length L = 2^l = R M: gather x[b L + n1 + M j], DFT, twiddle, scatter to b L + n1 + M q.
//! Where butterfly t of a radix-R stage over blocks of length L = 2^l = R M starts: n1 = t mod M
//! within its block, base = its block's start + n1; its points are base + M j. The stages pass
//! l, not L: where the stage is known at run time only (the phase loops of the large rows and
//! columns), t / M and n / L were an integer division each (a reciprocal and some twenty
//! instructions) that the twiddle's load waited for (ncu, the 4096^2 double row kernel). As
//! shifts (H200, docs/performance.md): single 8192^2 2.0% faster a step, 8192^2 in double 0.6%,
//! 1024^2 and single 2048^2 1-2%; single 4096^2 2.2% slower (its row kernel now spills 36 bytes,
//! but two loads in flight, which spill none, were no faster).
template <int R>
struct ButterflyPlace {
  int M, n1, base;
  CASCADE_HD ButterflyPlace(int l, int t)
      : M(1 << (l - log2_of<R>())), n1(t & (M - 1)), base(((t >> (l - log2_of<R>())) << l) + n1) {}
};

//! in(i) gives point i (dif_butterfly: shared memory; the column kernel's first stage: the
//! field in global memory). `sections`: tw has the radix-16 stages' sections (twiddle_table),
//! from which those stages take their factors (stage_factors); the same values, the same bits.
template <int R, class Layout = Padded, class Real, class In>
CASCADE_HD inline void dif_butterfly_from(const In& in, Cx<Real>* s, const Cx<Real>* tw, int n, int l, int t,
                                          bool sections = false) {
  const ButterflyPlace<R> b(l, t);
  const int M = b.M, n1 = b.n1, base = b.base;
  const StageFactors<Real> f = stage_factors<R>(tw, n, l, M, n1, sections);
  Cx<Real> w1{};
  if constexpr (kTwiddleFirst<Real>) w1 = first_twiddle(tw, n, l, M, n1, f);
  Cx<Real> x[R];
CASCADE_UNROLL
  for (int j = 0; j < R; ++j) x[j] = in(base + M * j);
  dft<R, +1>(x);
  Cx<Real> y[R];
CASCADE_UNROLL
  for (int q = 0; q < R; ++q) y[q] = x[bit_reverse<R>(q)];
  if (M > 1) twiddle<R, +1>(y, kTwiddleFirst<Real> ? w1 : first_twiddle(tw, n, l, M, n1, f), tw, n, n >> l, n1, f);
CASCADE_UNROLL
  for (int q = 0; q < R; ++q) s[Layout::at(base + M * q)] = y[q];
}
template <int R, class Layout = Padded, class Real>
CASCADE_HD inline void dif_butterfly(Cx<Real>* s, const Cx<Real>* tw, int n, int l, int t, bool sections = false) {
  dif_butterfly_from<R, Layout>([s](int i) { return s[Layout::at(i)]; }, s, tw, n, l, t, sections);
}

//! Butterfly t of the decimation-in-time stage (exponent -1: the forward transform) that
//! undoes dif_butterfly's stage of the same L (times R): conjugate twiddles, then the DFT.
//! out(i, z) takes point i (dit_butterfly: shared memory; the column kernel's last stage: the
//! field in global memory).
template <int R, class Layout = Padded, class Real, class Out>
CASCADE_HD inline void dit_butterfly_to(const Cx<Real>* s, const Cx<Real>* tw, int n, int l, int t, const Out& out,
                                        bool sections = false) {
  const ButterflyPlace<R> b(l, t);
  const int M = b.M, n1 = b.n1, base = b.base;
  const StageFactors<Real> f = stage_factors<R>(tw, n, l, M, n1, sections);
  Cx<Real> w1{};
  if constexpr (kTwiddleFirst<Real>) w1 = first_twiddle(tw, n, l, M, n1, f);
  Cx<Real> x[R];
CASCADE_UNROLL
  for (int q = 0; q < R; ++q) x[q] = s[Layout::at(base + M * q)];
  if (M > 1) twiddle<R, -1>(x, kTwiddleFirst<Real> ? w1 : first_twiddle(tw, n, l, M, n1, f), tw, n, n >> l, n1, f);
  dft<R, -1>(x);
CASCADE_UNROLL
  for (int j = 0; j < R; ++j) out(base + M * j, x[bit_reverse<R>(j)]);
}
//! The butterfly's outputs in registers: y[j] the point at base + M j (dit_butterfly_to gives
//! them in that order; unrolled, the count is a constant at each).
template <int R, class Layout = Padded, class Real>
CASCADE_HD inline void dit_outputs(const Cx<Real>* s, const Cx<Real>* tw, int n, int l, int t, Cx<Real> (&y)[R],
                                   bool sections = false) {
  int j = 0;
  dit_butterfly_to<R, Layout>(s, tw, n, l, t, [&](int, Cx<Real> z) { y[j++] = z; }, sections);
}
template <int R, class Layout = Padded, class Real>
CASCADE_HD inline void dit_butterfly(Cx<Real>* s, const Cx<Real>* tw, int n, int l, int t, bool sections = false) {
  dit_butterfly_to<R, Layout>(s, tw, n, l, t, [s](int i, Cx<Real> z) { s[Layout::at(i)] = z; }, sections);
}

template <bool kInverse, int R, class Layout = Padded, class Real>
CASCADE_HD inline void butterfly(Cx<Real>* s, const Cx<Real>* tw, int n, int l, int t, bool sections = false) {
  if constexpr (kInverse) dif_butterfly<R, Layout>(s, tw, n, l, t, sections);
  else dit_butterfly<R, Layout>(s, tw, n, l, t, sections);
}

//! A transform of 2^m points is made of stages of radix 2^rb (rb = 4, radix 16, but for the
//! kernels of constant size, which may take radix 4 or 8: more threads a transform, a shorter
//! chain a thread), the first of a smaller radix where m - rb is not a multiple of rb, the last of
//! them the pass in registers (middle).
//! The radix (as log2) of the first stage of a transform of 2^m points (0: none of its own).
CASCADE_HD constexpr int first_stage_bits(int m, int rb = 4) { return (m - rb) % rb; }
//! The stages of a transform of 2^m points before its last (radix 2^rb) one.
CASCADE_HD constexpr int stages_before_last(int m, int rb = 4) {
  return (first_stage_bits(m, rb) ? 1 : 0) + (m - rb) / rb;
}
//! Decimation-in-frequency stage i of a transform of 2^m points (i = stages_before_last(m):
//! the last): its radix as log2, and the length of the blocks it works on (and its log2).
CASCADE_HD inline int stage_bits_of(int m, int i, int rb = 4) {
  const int b0 = first_stage_bits(m, rb);
  return (b0 && i == 0) ? b0 : rb;
}
CASCADE_HD inline int stage_log2_length_of(int m, int i, int rb = 4) {
  const int b0 = first_stage_bits(m, rb);
  return (b0 && i > 0) ? m - b0 - rb * (i - 1) : m - rb * i;
}
CASCADE_HD inline int stage_length_of(int m, int i, int rb = 4) { return 1 << stage_log2_length_of(m, i, rb); }
//! The phases of a row's part of 2^m points in stages of radix 2^rb (RowPhases): the load, the
//! inverse stages before the middle, the middle, the forward stages and the spill or store; the
//! load and the first inverse stage one phase where `fold` asks for it and there is such a stage,
//! the last forward stage and the store one phase where `fold_store` does.
CASCADE_HD constexpr int part_phases_of(int m, int rb, bool fold, bool fold_store = false) {
  const int stages = stages_before_last(m, rb);
  return 2 * stages + 3 - (stages > 0 ? int(fold) + int(fold_store) : 0);
}
//! Where all the decimation-in-frequency stages of a transform of 2^m points leave its
//! coefficients: the frequency at position p. Stage i splits each block into 2^bits blocks of
//! one residue each (q, the digit of p at that stage), so that p = sum q_i M_i holds frequency
//! k = q_0 + R_0 q_1 + R_0 R_1 q_2 + ... (mixed-radix digit reversal). Every length is a power
//! of two, so the digits are shifts and masks: q_i sits below bit m - (the bits of stages 0..i)
//! of p and goes to bit (the bits of stages 0..i-1) of k. (Written with divisions by M_i, it took
//! 18.9 million of the 129 million warp instructions of the 4096^2 double column kernel, ncu.)
//! The loop runs a constant count of steps, unrolled, those past the stages skipped, and goes
//! on where a transform has more stages (none that the kernels take): where m and rb are
//! constants (the column kernels of a constant length) the skipped steps are compiled away. A
//! loop to the stages stayed a loop where they were a constant (the 8192^2 single quads' column
//! kernel: three rounds of nine instructions at each position, of 610; ncu).
CASCADE_HD inline int dif_frequency(int m, int p, int rb = 4) {
  int k = 0, done = 0;  // done: the bits of the stages so far, this one's included
  const int stages = stages_before_last(m, rb) + 1;
  const auto digit = [&](int i) {
    const int bits = stage_bits_of(m, i, rb);
    done += bits;
    k |= ((p >> (m - done)) & ((1 << bits) - 1)) << (done - bits);
  };
  constexpr int kUnrolled = 6;
CASCADE_UNROLL
  for (int i = 0; i < kUnrolled; ++i)
    if (i < stages) digit(i);
  for (int i = kUnrolled; i < stages; ++i) digit(i);
  return k;
}

//! f(std::integral_constant<int, R>{}) for the radix R = 2^bits (bits 1..3; 16 otherwise): a
//! stage's radix, known at run time, made a constant for its butterflies.
template <class F>
CASCADE_HD_INLINE void with_radix(int bits, const F& f) {
  switch (bits) {
    case 1: return f(std::integral_constant<int, 2>{});
    case 2: return f(std::integral_constant<int, 4>{});
    case 3: return f(std::integral_constant<int, 8>{});
    default: return f(std::integral_constant<int, 16>{});
  }
}

//! Dispatch a stage of radix 2^bits (1..4) over blocks of 2^l points of a transform of `len`
//! points over the butterflies t0, t0 + dt, ... < len / R (twiddles from the table of nt: tw,
//! twiddle; `sections`: its radix-16 stages' sections too, stage_factors).
template <bool kInverse, class Layout = Padded, class Real>
CASCADE_HD inline void stage(int bits, Cx<Real>* s, const Cx<Real>* tw, int nt, int len, int l, int t0, int dt,
                             bool sections = false) {
  const int count = len >> bits;
  with_radix(bits, [&](auto r) {
    for (int t = t0; t < count; t += dt) butterfly<kInverse, decltype(r)::value, Layout>(s, tw, nt, l, t, sections);
  });
}

//! The middle pass, butterfly t (R = 16, 8 or 4 consecutive points): the last inverse stage,
//! Basdevant's products of z = u + i v into w = u v + i (v^2 - u^2), and the first forward
//! stage. Returns the largest CFL speed of the R points (NaN-propagating).
template <int R, class Real>
CASCADE_HD inline Real middle(Cx<Real>* s, int t, CflSpeed<Real> speed) {
  const int base = R * t;
  Cx<Real> x[R];
CASCADE_UNROLL
  for (int j = 0; j < R; ++j) x[j] = s[Padded::at(base + j)];
  dft<R, +1>(x);  // bit-reversed order: the products do not mind
  const MaxOp<Real> op;
  Real rate = MaxOp<Real>::identity();
CASCADE_UNROLL
  for (int j = 0; j < R; ++j) {
    const Real u = x[j].re, v = x[j].im;
    rate = op(rate, speed(u, v));
    basdevant_products(u, v, x[j].re, x[j].im);
  }
  // Back to the order the DIT pass reads: point q of the block was x[bit_reverse(q)].
  Cx<Real> y[R];
CASCADE_UNROLL
  for (int q = 0; q < R; ++q) y[q] = x[bit_reverse<R>(q)];
  dft<R, -1>(y);
CASCADE_UNROLL
  for (int j = 0; j < R; ++j) s[Padded::at(base + j)] = y[bit_reverse<R>(j)];
  return rate;
}
//! The middle pass over the butterflies t0, t0 + dt, ... of a transform of len points whose
//! stages are of radix 2^rb (4, 3 or 2).
template <class Real>
CASCADE_HD inline Real middle_pass(int rb, Cx<Real>* s, int len, int t0, int dt, CflSpeed<Real> speed) {
  Real rate = MaxOp<Real>::identity();
  const MaxOp<Real> op;
  if (rb == 2) {
    for (int t = t0; t < len / 4; t += dt) rate = op(rate, middle<4>(s, t, speed));
  } else if (rb == 3) {
    for (int t = t0; t < len / 8; t += dt) rate = op(rate, middle<8>(s, t, speed));
  } else {
    for (int t = t0; t < len / 16; t += dt) rate = op(rate, middle<16>(s, t, speed));
  }
  return rate;
}

//! Load phase, column k (0 <= k < kept): A[k], B[k] placed in Z[k] and Z[n-k]. The columns
//! kept..n-kept of Z are zero (zero_gap).
//! Z[k] = A + i B and Z[n-k] = conj(A) + i conj(B) for the column k > 0 of the half spectra.
template <class Real>
CASCADE_HD inline Cx<Real> z_positive(Cx<Real> A, Cx<Real> B) {
  return {A.re - B.im, A.im + B.re};
}
template <class Real>
CASCADE_HD inline Cx<Real> z_negative(Cx<Real> A, Cx<Real> B) {
  return {A.re + B.im, B.re - A.im};
}
template <class Real>
CASCADE_HD inline void place_column(Cx<Real>* s, Cx<Real> A, Cx<Real> B, int n, int k) {
  if (k == 0) {
    s[Padded::at(0)] = {A.re, B.re};
    return;
  }
  s[Padded::at(k)] = z_positive(A, B);
  s[Padded::at(n - k)] = z_negative(A, B);
}
template <class Real>
CASCADE_HD inline void zero_gap(Cx<Real>* s, int kept, int i) {
  s[Padded::at(kept + i)] = {Real(0), Real(0)};
}

//! A spectrum value of the row z = u + i v: Z[k] from the half spectra A, B (kept columns).
template <class Real>
CASCADE_HD inline Cx<Real> z_spectrum(const Cx<Real>* a_row, const Cx<Real>* b_row, int n, int kept, int k) {
  if (k == 0) return {a_row[0].re, b_row[0].re};
  if (k < kept) return z_positive(a_row[k], b_row[k]);
  if (k > n - kept) return z_negative(a_row[n - k], b_row[n - k]);
  return {Real(0), Real(0)};
}

//! One row, all phases, as thread t0 of dt runs them with a barrier after each: the kernel's
//! body (row_products_kernel), and the host's emulation of it (tests/test_fft.cpp).
//!
//! A row longer than the transform shared memory holds (2^m points, split = n / 2^m > 1) is
//! done in `split` parts: the first inverse stage, of radix split over the whole row, is
//! folded into the loads (part q of the digit-reversed order, y_q[j] = sum_r Z[j + r M]
//! exp(2 pi i q (j + r M) / n), M = 2^m, from the row's spectra in global memory, read once a
//! part), so that each part is an inverse transform of M points, the products, and the forward
//! transform back; the parts but the last wait in `spill` (global memory, the block's own; it
//! stays in L2), and the last forward stage, radix split again, is folded into the stores:
//! W[k] = sum_q exp(-2 pi i q k / n) w_q[k mod M].
//! A row of two parts may instead go over a pair of blocks (a cluster of two on the GPU, run_pair),
//! block q doing part q at the same time as its partner: no spill, and the store, after both
//! parts are done, takes half of the columns each, reading the other part from the partner's
//! shared memory (distributed shared memory).
template <class Real>
struct RowPhases {
  int n;      //!< points in a row, a power of two
  int m;      //!< log2 of the points of the transform in shared memory (n, or n / split)
  int kept;   //!< kept columns (kx < kept)
  Cx<Real>* s;
  const Cx<Real>* tw;  //!< exp(2 pi i k / n), k < n (twiddle_table), and the sections where stage_table
  CflSpeed<Real> speed;
  Cx<Real>* spill;  //!< split > 1: (split - 1) 2^m elements, the block's own
  int rb = 4;       //!< log2 of the stages' radix (first_stage_bits): 4, 3 or 2 (rows of one part)
  int flight = 4;   //!< columns a thread loads before placing them (4 or 2: rows of one part)
  //! Rows of one part with an inverse stage before the middle: the load folded into the first
  //! inverse stage (load_first_stage), one phase fewer.
  bool fold = false;
  //! Rows of one part with an inverse stage before the middle: the store folded into the last
  //! forward stage (last_stage_store), one phase fewer.
  bool fold_store = false;
  //! tw has the radix-16 stages' sections after its n entries (twiddle_table), and the stages
  //! take their factors there (stage_factors): the same values, read a warp's lanes' in a row.
  bool stage_table = false;

  CASCADE_HD int split() const { return n >> m; }
  CASCADE_HD int inverse_stages() const { return stages_before_last(m, rb); }
  //! Whether a stage can take the load or the store: rows of one part with an inverse stage
  //! before the middle.
  CASCADE_HD bool can_fold() const { return split() == 1 && inverse_stages() > 0; }
  //! Whether the load is folded into the first inverse stage (fold, where it can be).
  CASCADE_HD bool folded() const { return fold && can_fold(); }
  //! Whether the store is folded into the last forward stage (fold_store, where it can be).
  CASCADE_HD bool store_folded() const { return fold_store && can_fold(); }
  //! Phases of a part (part_phases_of): all parts but the last end in the spill; the last
  //! part's spill is the store, once.
  CASCADE_HD int part_phases() const { return part_phases_of(m, rb, folded(), store_folded()); }
  CASCADE_HD int count() const { return split() * part_phases(); }

  //! Phase `p` of this thread; returns the CFL speed it saw (the middle phases) or -inf.
  CASCADE_HD Real run(int p, int t0, int dt, const Cx<Real>* a_in, const Cx<Real>* b_in, Cx<Real>* a_out,
                      Cx<Real>* b_out) const {
    const int S = split(), len = 1 << m, a = inverse_stages();
    if (p == count() - 1) {
      if (store_folded()) last_stage_store(t0, dt, a_out, b_out);
      else store(t0, dt, a_out, b_out);
      return MaxOp<Real>::identity();
    }
    const int q = p / part_phases(), r0 = p % part_phases();
    if (r0 == 0) {
      if (folded()) load_first_stage(t0, dt, a_in, b_in);
      else load(q, t0, dt, a_in, b_in);
      return MaxOp<Real>::identity();
    }
    const int r = r0 + (folded() ? 1 : 0);  // the phases after as unfolded
    if (r <= a) {  // inverse stage r - 1
      stage<true>(stage_bits(r - 1), s, tw, n, len, stage_log2_length(r - 1), t0, dt, stage_table);
    } else if (r == a + 1) {
      return middle_pass(rb, s, len, t0, dt, speed);
    } else if (r <= 2 * a + 1) {  // forward stages: each undoes inverse stage 2a + 1 - r
      stage<false>(stage_bits(2 * a + 1 - r), s, tw, n, len, stage_log2_length(2 * a + 1 - r), t0, dt, stage_table);
    } else if (q < S - 1) {  // the part waits in the spill area
      for (int j = t0; j < len; j += dt) spill[q * len + j] = s[Padded::at(j)];
    }
    return MaxOp<Real>::identity();
  }
  //! Phase `p` of part `part` of a row of two parts over a pair of blocks, the partner's shared
  //! memory at `partner`: part_phases() of them, run()'s phases of that part between the load by
  //! pairs of positions (load_halves) and the store of half the columns (pair_store), which takes
  //! the spill's place. Its kernel (row_pair_kernel) calls it alone; run() stays the one-part
  //! and in-turn kernels' (docs/performance.md, "Columns of 16384 points over quads, rows over
  //! pairs of blocks").
  CASCADE_HD Real run_pair(int p, int part, const Cx<Real>* partner, int t0, int dt, const Cx<Real>* a_in,
                           const Cx<Real>* b_in, Cx<Real>* a_out, Cx<Real>* b_out) const {
    const int len = 1 << m, a = inverse_stages();
    if (p == 0) load_halves(part, t0, dt, a_in, b_in);
    else if (p <= a) stage<true>(stage_bits(p - 1), s, tw, n, len, stage_log2_length(p - 1), t0, dt, stage_table);
    else if (p == a + 1) return middle_pass(rb, s, len, t0, dt, speed);
    else if (p <= 2 * a + 1)
      stage<false>(stage_bits(2 * a + 1 - p), s, tw, n, len, stage_log2_length(2 * a + 1 - p), t0, dt, stage_table);
    else pair_store(part, partner, t0, dt, a_out, b_out);
    return MaxOp<Real>::identity();
  }

 private:
  //! Inverse stage i (before the middle): its radix as log2, and its block length.
  CASCADE_HD int stage_bits(int i) const { return stage_bits_of(m, i, rb); }
  CASCADE_HD int stage_log2_length(int i) const { return stage_log2_length_of(m, i, rb); }
  CASCADE_HD void load(int q, int t0, int dt, const Cx<Real>* a_in, const Cx<Real>* b_in) const {
    if (split() == 1) {
      if (flight == 2) load_columns<2>(t0, dt, a_in, b_in);
      else load_columns<4>(t0, dt, a_in, b_in);
      for (int i = t0; i < n - 2 * kept + 1; i += dt) zero_gap(s, kept, i);
      return;
    }
    const int len = 1 << m;
    for (int j = t0; j < len; j += dt) {
      Cx<Real> y{Real(0), Real(0)};
      for (int r = 0; r < split(); ++r) {
        const int k = j + r * len;
        if (k >= kept && k <= n - kept) continue;  // removed: zero
        y = add(y, mul(z_spectrum(a_in, b_in, n, kept, k), tw[(q * k) & (n - 1)]));
      }
      s[Padded::at(j)] = y;
    }
  }
  //! The load of part q of a row of two parts: y_q[j] = (Z[j] + (-1)^q Z[j + M]) w^(q j), w =
  //! exp(2 pi i / n), M = 2^m, for the positions j and M - j at once from the columns j and M - j
  //! (Z[j + M] = Z[n - (M - j)]), each read once (w^(q (M - j)) = -conj(w^(q j)) for q = 1); a
  //! thread's reads of F positions asked for before the first is placed.
  CASCADE_HD void load_halves(int q, int t0, int dt, const Cx<Real>* a_in, const Cx<Real>* b_in) const {
    constexpr int F = 2;
    const int len = 1 << m;
    const Cx<Real> zero{Real(0), Real(0)};
    for (int j0 = t0; j0 <= len / 2; j0 += F * dt) {
      Cx<Real> Aj[F], Bj[F], Ai[F], Bi[F];
      CASCADE_UNROLL
      for (int u = 0; u < F; ++u) {
        // i = M - j; j = 0: none (i = M, whose Z[M] and Z[n] the rule removes).
        const int j = j0 + u * dt, i = len - j;
        const bool has_j = j <= len / 2 && j < kept, has_i = j > 0 && j <= len / 2 && i < kept;
        Aj[u] = has_j ? a_in[j] : zero, Bj[u] = has_j ? b_in[j] : zero;
        Ai[u] = has_i ? a_in[i] : zero, Bi[u] = has_i ? b_in[i] : zero;
      }
      CASCADE_UNROLL
      for (int u = 0; u < F; ++u) {
        const int j = j0 + u * dt, i = len - j;
        if (j > len / 2) break;
        const Cx<Real> zj = j == 0 ? Cx<Real>{Aj[u].re, Bj[u].re} : z_positive(Aj[u], Bj[u]);
        const Cx<Real> zjm = z_negative(Ai[u], Bi[u]);
        const Cx<Real> w = q ? tw[j] : Cx<Real>{Real(1), Real(0)};
        s[Padded::at(j)] = mul(q ? sub(zj, zjm) : add(zj, zjm), w);
        if (j > 0) {
          const Cx<Real> zi = z_positive(Ai[u], Bi[u]), zim = z_negative(Aj[u], Bj[u]);  // Z[M - j], Z[n - j]
          s[Padded::at(i)] = q ? mul(sub(zi, zim), Cx<Real>{-w.re, w.im}) : add(zi, zim);
        }
      }
    }
  }
  //! The load folded into the first inverse stage (rows of one part): each butterfly gathers
  //! its points of Z from the half spectra (z_spectrum; the removed columns as zero, not read)
  //! and leaves its outputs in shared memory, as the stage does after load() placed them.
  CASCADE_HD void load_first_stage(int t0, int dt, const Cx<Real>* a_in, const Cx<Real>* b_in) const {
    with_radix(stage_bits(0), [&](auto r) {
      constexpr int R = decltype(r)::value;
      for (int t = t0; t < n / R; t += dt)
        dif_butterfly_from<R>([&](int k) { return z_spectrum(a_in, b_in, n, kept, k); }, s, tw, n, m, t,
                                    stage_table);
    });
  }
  //! The kept columns of a row of one part into shared memory: F columns' loads in flight a
  //! thread before the first is placed.
  template <int F>
  CASCADE_HD void load_columns(int t0, int dt, const Cx<Real>* a_in, const Cx<Real>* b_in) const {
    for (int k0 = t0; k0 < kept; k0 += F * dt) {
      Cx<Real> A[F], B[F];
      CASCADE_UNROLL
      for (int u = 0; u < F; ++u) {
        const int k = k0 + u * dt;
        if (k < kept) {
          A[u] = a_in[k];
          B[u] = b_in[k];
        }
      }
      CASCADE_UNROLL
      for (int u = 0; u < F; ++u)
        if (k0 + u * dt < kept) place_column(s, A[u], B[u], n, k0 + u * dt);
    }
  }
  //! W[k] for the store: the part in shared memory (the last) and the spilled ones.
  CASCADE_HD Cx<Real> spectrum(int k) const {
    const int len = 1 << m, S = split();
    if (S == 1) return s[Padded::at(k)];
    const int j = k & (len - 1);
    Cx<Real> w = mul_conj(s[Padded::at(j)], tw[((S - 1) * k) & (n - 1)]);
    for (int q = 0; q < S - 1; ++q) w = add(w, mul_conj(spill[q * len + j], tw[(q * k) & (n - 1)]));
    return w;
  }
  //! The products' half spectra at column k from W[k] (w) and W[n - k] (r).
  CASCADE_HD static void put(Cx<Real>* a_out, Cx<Real>* b_out, int k, Cx<Real> w, Cx<Real> r) {
    const Real half = Real(0.5);
    a_out[k] = {half * (w.re + r.re), half * (w.im - r.im)};
    b_out[k] = {half * (w.im + r.im), half * (r.re - w.re)};
  }
  CASCADE_HD void store(int t0, int dt, Cx<Real>* a_out, Cx<Real>* b_out) const {
    for (int k = t0; k < kept; k += dt) put(a_out, b_out, k, spectrum(k), spectrum((n - k) & (n - 1)));
  }
  //! The store of a row over a pair of blocks: block q takes the columns k = q dt + t0 + 2 dt i,
  //! W[k] = w_0[k] + conj(w^k) w_1[k] and W[n - k] = w_0[M - k] + w^k w_1[M - k] (k < kept < M;
  //! w_1 or w_0 the partner's).
  CASCADE_HD void pair_store(int part, const Cx<Real>* partner, int t0, int dt, Cx<Real>* a_out,
                             Cx<Real>* b_out) const {
    const int len = 1 << m;
    const Cx<Real>* s0 = part == 0 ? s : partner;
    const Cx<Real>* s1 = part == 1 ? s : partner;
    for (int k = part * dt + t0; k < kept; k += 2 * dt) {
      const int j = Padded::at(k), i = Padded::at((len - k) & (len - 1));
      const Cx<Real> w = tw[k], w0 = s0[j], w1 = s1[j], r0 = s0[i], r1 = s1[i];
      put(a_out, b_out, k, add(w0, mul_conj(w1, w)), add(r0, mul(r1, w)));
    }
  }
  //! The store folded into the last forward stage (rows of one part; the decimation in time that
  //! undoes the first inverse stage, radix R over the whole row, M = n / R butterflies):
  //! butterfly t leaves W[t + M j] (j < R), whose partners W[n - t - M j] are the outputs R - 1 - j
  //! of butterfly M - t (butterflies 0 and M/2 each its own partner), stored from registers, no
  //! pass of W through shared memory: the same arithmetic (the same bits) as the stage and the
  //! store apart. Where R is below the stages' radix 2^rb, a thread takes the pair t, M - t
  //! (item 0 the butterflies 0 and M/2), which hold no more points than a butterfly of the other
  //! stages; where it is 2^rb and there is a thread a butterfly (dt = M, as in every kernel that
  //! folds), each thread its butterfly and the partner's outputs from the thread that holds them
  //! (exchanged_partners).
  CASCADE_HD void last_stage_store(int t0, int dt, Cx<Real>* a_out, Cx<Real>* b_out) const {
    with_radix(stage_bits(0), [&](auto r) {
      constexpr int R = decltype(r)::value;
      const int M = n / R, half = M / 2;
      if (R == (1 << rb) && dt == M) {  // else (fewer threads than butterflies) as pairs below
        exchanged_partners<R>(t0, a_out, b_out);
        return;
      }
      for (int i = t0; i < half; i += dt) {
        const int A = i, B = i == 0 ? half : M - i;
        Cx<Real> ya[R], yb[R];
        dit_outputs<R>(s, tw, n, m, A, ya, stage_table);
        dit_outputs<R>(s, tw, n, m, B, yb, stage_table);
CASCADE_UNROLL
        for (int j = 0; j < R; ++j) {
          const int ka = A + M * j, kb = B + M * j;
          if (ka < kept) put(a_out, b_out, ka, ya[j], i == 0 ? ya[(R - j) % R] : yb[R - 1 - j]);
          if (kb < kept) put(a_out, b_out, kb, yb[j], i == 0 ? yb[R - 1 - j] : ya[R - 1 - j]);
        }
      }
    });
  }
  //! last_stage_store with a butterfly a thread (t0 < M = n / R): the threads of a row are laid
  //! out so that the partner of each butterfly t is held h lanes away (h = min(M/2, 16): in each
  //! group of 2h lanes the first h take t = u, the others M - u, u = 0 there taking M/2), and the
  //! outputs it needs come by a shuffle within the row's threads; on the host, which runs the
  //! threads one after the other, the thread computes its partner's butterfly itself.
  template <int R>
  CASCADE_HD_INLINE void exchanged_partners(int t0, Cx<Real>* a_out, Cx<Real>* b_out) const {
    const int M = n / R, h = M / 2 < 16 ? M / 2 : 16;
    const int u = (t0 / (2 * h)) * h + t0 % h;
    const int t = t0 % (2 * h) < h ? u : u == 0 ? M / 2 : M - u;
    Cx<Real> y[R];
    dit_outputs<R>(s, tw, n, m, t, y, stage_table);
#ifdef __CUDA_ARCH__
    // The row's lanes (M of them from a multiple of M, or the warp), which all get here.
    const int width = M < 32 ? M : 32;
    const unsigned lanes = width == 32 ? 0xffffffffu : ((1u << width) - 1) << (threadIdx.x & 31 & ~(width - 1));
#else
    Cx<Real> mine[R];  // the partner's outputs, as its thread computes them
    dit_outputs<R>(s, tw, n, m, t == 0 || t == M / 2 ? t : M - t, mine, stage_table);
#endif
CASCADE_UNROLL
    for (int j = 0; j < R; ++j) {
      if (M * j >= kept) break;
#ifdef __CUDA_ARCH__
      const Cx<Real> v = {__shfl_xor_sync(lanes, y[R - 1 - j].re, h, width),
                          __shfl_xor_sync(lanes, y[R - 1 - j].im, h, width)};
#else
      const Cx<Real> v = mine[R - 1 - j];
#endif
      const int k = t + M * j;
      if (k < kept) put(a_out, b_out, k, y[j], t == 0 ? y[(R - j) % R] : t == M / 2 ? y[R - 1 - j] : v);
    }
  }
};

}  // namespace row_fft
}  // namespace cascade
