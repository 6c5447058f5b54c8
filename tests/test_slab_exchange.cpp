//! @file The GPU slabs' exchange layout (src/backends/cuda/slab_exchange.hpp) on the host: the
//! all-to-all of a forward and an inverse transform simulated with plain arrays for 1 to 4
//! ranks and 1 to 5 chunks, uneven slabs and chunks; every element must land where the
//! transforms (the R2C plan's store, the C2R plan's load) and the one unpacking or packing pass
//! expect it, each buffer element written once, and each block's size agreed by both sides;
//! then whole transforms through the layouts with FFTW's plans in place of cuFFT's.
#include <fftw3.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "backends/cuda/slab_exchange.hpp"

using namespace cascade;

namespace {

//! A distinct value for each element (global row j, kx column i) of the grid's spectrum.
long tag(int j, int i, int nxh) { return long(j) * nxh + i; }

//! Copy n elements from src[from] to dst[to], each destination element once.
void move_block(const std::vector<long>& src, std::size_t from, std::vector<long>& dst, std::size_t to,
                std::size_t n, const std::string& what) {
  ASSERT_LE(from + n, src.size()) << what;
  ASSERT_LE(to + n, dst.size()) << what;
  for (std::size_t k = 0; k < n; ++k) {
    ASSERT_EQ(dst[to + k], -1) << what << ": element " << to + k << " received twice";
    dst[to + k] = src[from + k];
  }
}

struct Case {
  int ny, nxh, ranks, chunks;
  std::string name() const {
    return std::to_string(ny) + "x" + std::to_string(nxh) + ", " + std::to_string(ranks) + " ranks, " +
           std::to_string(chunks) + " chunks";
  }
};

//! The all-to-all of a forward or an inverse transform, chunk after chunk (SlabExchange::block,
//! as CudaSlabExec::send_chunk sends them): the blocks of a chunk tile its region of the send
//! buffer in rank order, both sides agree on each block's size, and every element of the
//! receive buffers arrives once.
void all_to_all(const std::vector<SlabExchange>& x, const std::vector<std::vector<long>>& send,
                std::vector<std::vector<long>>& recv, bool forward, const Case& k) {
  for (int c = 0; c < k.chunks; ++c)
    for (int s = 0; s < k.ranks; ++s) {
      std::size_t next = forward ? x[s].fwd_chunk_offset(c) : x[s].inv_chunk_offset(c);
      for (int r = 0; r < k.ranks; ++r) {
        const SlabExchange::Block out = x[s].block(forward, c, r), in = x[r].block(forward, c, s);
        ASSERT_EQ(out.send_off, next) << k.name();
        ASSERT_EQ(out.send_n, in.recv_n) << k.name();
        next += out.send_n;
        move_block(send[s], out.send_off, recv[r], in.recv_off, out.send_n, k.name());
      }
    }
  for (const auto& buf : recv)
    for (long v : buf) ASSERT_NE(v, -1) << k.name() << ": an element never received";
}

void forward(const Case& k) {
  const int R = k.ranks;
  std::vector<SlabExchange> x;
  for (int s = 0; s < R; ++s) x.push_back(SlabExchange::make(k.ny, k.nxh, R, s, k.chunks));
  // The x transforms' output, as the R2C plans of the chunks write it.
  std::vector<std::vector<long>> send(R), recv(R);
  for (int s = 0; s < R; ++s) {
    const SlabExchange& e = x[s];
    send[s].assign(e.row_side_elems(), -1);
    for (int c = 0; c < k.chunks; ++c) {
      const int r0 = e.row_chunk_begin(s, c), rc = e.row_chunk_rows(s, c);
      ASSERT_GT(rc, 0) << k.name();
      for (int jj = r0; jj < r0 + rc; ++jj)
        for (int i = 0; i < k.nxh; ++i) {
          // The plan of chunk c: batch rc from the chunk's first row, ostride rc, odist 1.
          const std::size_t at = e.fwd_chunk_offset(c) + std::size_t(i) * rc + std::size_t(jj - r0);
          ASSERT_EQ(e.fwd_send_index(jj, i), at) << k.name();
          ASSERT_LT(at, send[s].size()) << k.name();
          ASSERT_EQ(send[s][at], -1) << k.name();
          send[s][at] = tag(e.j0 + jj, i, k.nxh);
          if (k.chunks == 1) ASSERT_EQ(at, std::size_t(e.rows) * i + jj) << k.name();  // the layout without chunks
        }
    }
    recv[s].assign(e.col_side_elems(), -1);
  }
  all_to_all(x, send, recv, true, k);
  if (testing::Test::HasFatalFailure()) return;
  // The unpacking pass into the columns [cols][ny].
  for (int r = 0; r < R; ++r) {
    const SlabExchange& e = x[r];
    for (int cc = 0; cc < e.cols; ++cc)
      for (int j = 0; j < k.ny; ++j) {
        ASSERT_EQ(recv[r][e.fwd_recv_index(cc, j)], tag(j, e.i0 + cc, k.nxh)) << k.name() << " column " << cc
                                                                               << " row " << j;
        if (k.chunks == 1) {  // the layout without chunks
          const int s = j / e.br;
          ASSERT_EQ(e.fwd_recv_index(cc, j),
                    std::size_t(e.cols) * (s * e.br) + std::size_t(cc) * e.rows_of(s) + (j - s * e.br));
        }
      }
  }
}

void inverse(const Case& k) {
  const int R = k.ranks;
  std::vector<SlabExchange> x;
  for (int s = 0; s < R; ++s) x.push_back(SlabExchange::make(k.ny, k.nxh, R, s, k.chunks));
  std::vector<std::vector<long>> send(R), recv(R);
  for (int s = 0; s < R; ++s) {
    const SlabExchange& e = x[s];
    std::vector<long> columns(e.col_side_elems());  // [cols][ny]
    for (int cc = 0; cc < e.cols; ++cc)
      for (int j = 0; j < k.ny; ++j) columns[std::size_t(cc) * k.ny + j] = tag(j, e.i0 + cc, k.nxh);
    // The packing pass of each column chunk.
    send[s].assign(e.col_side_elems(), -1);
    for (int c = 0; c < k.chunks; ++c) {
      const int c0 = e.col_chunk_begin(s, c), n = e.col_chunk_cols(s, c);
      ASSERT_GT(n, 0) << k.name();
      for (std::size_t idx = 0; idx < std::size_t(n) * k.ny; ++idx) {
        const std::size_t at = e.inv_send_index(c0, n, idx);
        ASSERT_GE(at, e.inv_chunk_offset(c)) << k.name();
        ASSERT_LT(at, e.inv_chunk_offset(c) + std::size_t(n) * k.ny) << k.name();
        ASSERT_EQ(send[s][at], -1) << k.name();
        send[s][at] = columns[std::size_t(c0) * k.ny + idx];
      }
    }
    recv[s].assign(e.row_side_elems(), -1);
  }
  all_to_all(x, send, recv, false, k);
  if (testing::Test::HasFatalFailure()) return;
  // What the C2R plan reads (istride rows, idist 1): [nxh][rows] whatever the chunks.
  for (int r = 0; r < R; ++r) {
    const SlabExchange& e = x[r];
    for (int jj = 0; jj < e.rows; ++jj)
      for (int i = 0; i < k.nxh; ++i) {
        ASSERT_EQ(e.inv_recv_index(jj, i), std::size_t(e.rows) * i + jj);
        ASSERT_EQ(recv[r][e.inv_recv_index(jj, i)], tag(e.j0 + jj, i, k.nxh)) << k.name();
      }
  }
}

}  // namespace

TEST(SlabExchange, SplitIsBalancedAndFindsItsParts) {
  for (int n = 1; n <= 40; ++n)
    for (int k = 1; k <= n; ++k) {
      EXPECT_EQ(split_begin(n, k, 0), 0);
      EXPECT_EQ(split_begin(n, k, k), n);
      for (int c = 0; c < k; ++c) {
        const int size = split_begin(n, k, c + 1) - split_begin(n, k, c);
        EXPECT_TRUE(size == n / k || size == n / k + 1) << n << " " << k << " " << c;
        for (int i = split_begin(n, k, c); i < split_begin(n, k, c + 1); ++i) EXPECT_EQ(split_part(n, k, i), c);
      }
    }
  // No overflow at the largest slabs: 65536 rows in 65536 chunks.
  EXPECT_EQ(split_part(65536, 65536, 65535), 65535);
  EXPECT_EQ(split_begin(65536, 65535, 65535), 65536);
}

TEST(SlabExchange, ForwardAndInverseLandWhereExpected) {
  // Grids whose rows and kx columns split evenly and unevenly over the ranks: nxh = nx/2 + 1.
  const int shapes[][2] = {{36, 41}, {64, 49}, {16, 9}, {13, 7}};
  int cases = 0;
  for (const auto& sh : shapes)
    for (int ranks = 1; ranks <= 4; ++ranks)
      for (int chunks = 1; chunks <= 5; ++chunks) {
        const SlabExchange e = SlabExchange::make(sh[0], sh[1], ranks, 0, chunks);
        if (e.rows_of(ranks - 1) < 1 || e.cols_of(ranks - 1) < 1 || chunks > e.max_chunks()) continue;
        const Case k{sh[0], sh[1], ranks, chunks};
        forward(k);
        if (HasFatalFailure()) return;
        inverse(k);
        if (HasFatalFailure()) return;
        ++cases;
      }
  EXPECT_GE(cases, 60);
}

TEST(SlabExchange, MaxChunksIsTheSmallestSlab) {
  // 36 rows over 4 ranks: 9 each; 41 columns: 11, 11, 11, 8.
  EXPECT_EQ(SlabExchange::make(36, 41, 4, 0, 1).max_chunks(), 8);
  // 13 rows over 4 ranks: 4, 4, 4, 1.
  EXPECT_EQ(SlabExchange::make(13, 7, 4, 2, 1).max_chunks(), 1);
}

// ---- the whole transform through the layouts, every rank simulated in one process, with
// FFTW's advanced plans in place of cuFFT's (the same strides and distances) and the same
// packing functors: a forward and an inverse transform against FFTW's 2D transform.
namespace {

using Cx = Complex<double>;
fftw_complex* fc(Cx* p) { return reinterpret_cast<fftw_complex*>(p); }

//! The all-to-all of chunk c between the simulated ranks (send and receive buffers per rank),
//! block by block as CudaSlabExec::send_chunk does.
void exchange_chunk(const std::vector<SlabExchange>& x, std::vector<std::vector<Cx>>& send,
                    std::vector<std::vector<Cx>>& recv, bool forward, int c) {
  for (std::size_t s = 0; s < x.size(); ++s)
    for (std::size_t r = 0; r < x.size(); ++r) {
      const SlabExchange::Block out = x[s].block(forward, c, int(r)), in = x[r].block(forward, c, int(s));
      ASSERT_EQ(out.send_n, in.recv_n);
      ASSERT_LE(out.send_off + out.send_n, send[s].size());
      ASSERT_LE(in.recv_off + in.recv_n, recv[r].size());
      std::copy(send[s].begin() + long(out.send_off), send[s].begin() + long(out.send_off + out.send_n),
                recv[r].begin() + long(in.recv_off));
    }
}

void transform_through_layouts(int nx, int ny, int ranks, int chunks, bool strided) {
  const int nxh = nx / 2 + 1;
  if (chunks > SlabExchange::make(ny, nxh, ranks, 0, chunks).max_chunks()) return;  // refused by the backend
  const std::string what = std::to_string(nx) + "x" + std::to_string(ny) + ", " + std::to_string(ranks) +
                           " ranks, " + std::to_string(chunks) + " chunks" + (strided ? "" : ", packed rows");
  std::vector<double> f(std::size_t(nx) * ny), back(f.size());
  for (std::size_t k = 0; k < f.size(); ++k) f[k] = std::sin(0.37 * double(k)) + 0.1 * double(k % 7);
  std::vector<Cx> ref(std::size_t(nxh) * ny);
  std::vector<double> in = f;
  fftw_plan p2 = fftw_plan_dft_r2c_2d(ny, nx, in.data(), fc(ref.data()), FFTW_ESTIMATE);
  fftw_execute(p2);
  fftw_destroy_plan(p2);

  std::vector<SlabExchange> x;
  for (int s = 0; s < ranks; ++s) x.push_back(SlabExchange::make(ny, nxh, ranks, s, chunks));
  std::vector<std::vector<Cx>> send(ranks), recv(ranks), columns(ranks), rows(ranks);
  for (int s = 0; s < ranks; ++s) {
    const std::size_t n = std::max(x[s].row_side_elems(), x[s].col_side_elems());
    send[s].assign(n, Cx{0, 0});
    recv[s].assign(n, Cx{0, 0});
    columns[s].assign(x[s].col_side_elems(), Cx{0, 0});
    rows[s].assign(x[s].row_side_elems(), Cx{0, 0});
  }
  // Forward: the x transform of each row chunk into the send buffer, the chunk's all-to-all.
  for (int c = 0; c < chunks; ++c) {
    for (int s = 0; s < ranks; ++s) {
      const SlabExchange& e = x[s];
      const int r0 = e.row_chunk_begin(s, c), rc = e.row_chunk_rows(s, c);
      double* src = f.data() + std::size_t(e.j0 + r0) * nx;
      fftw_plan p;
      if (strided) {
        p = fftw_plan_many_dft_r2c(1, &nx, rc, src, &nx, 1, nx, fc(send[s].data() + e.fwd_chunk_offset(c)), &nxh, rc,
                                   1, FFTW_ESTIMATE);
        fftw_execute(p);
      } else {
        Cx* dst = rows[s].data() + std::size_t(r0) * nxh;
        p = fftw_plan_many_dft_r2c(1, &nx, rc, src, &nx, 1, nx, fc(dst), &nxh, 1, nxh, FFTW_ESTIMATE);
        fftw_execute(p);
        const RowsToExchange<double> pack{e, r0, dst, send[s].data()};
        for (std::size_t k = 0; k < std::size_t(rc) * nxh; ++k) pack(k);
      }
      fftw_destroy_plan(p);
    }
    exchange_chunk(x, send, recv, true, c);
    if (testing::Test::HasFatalFailure()) return;
  }
  for (int s = 0; s < ranks; ++s) {
    const SlabExchange& e = x[s];
    const ExchangeToColumns<double> unpack{e, recv[s].data(), columns[s].data()};
    for (std::size_t k = 0; k < e.col_side_elems(); ++k) unpack(k);
    fftw_plan p = fftw_plan_many_dft(1, &ny, e.cols, fc(columns[s].data()), &ny, 1, ny, fc(columns[s].data()), &ny, 1,
                                     ny, FFTW_FORWARD, FFTW_ESTIMATE);
    fftw_execute(p);
    fftw_destroy_plan(p);
    for (int cc = 0; cc < e.cols; ++cc)
      for (int j = 0; j < ny; ++j) {
        const Cx a = columns[s][std::size_t(cc) * ny + j], b = ref[std::size_t(j) * nxh + e.i0 + cc];
        ASSERT_NEAR(a.re, b.re, 1e-11) << what << " column " << e.i0 + cc << " row " << j;
        ASSERT_NEAR(a.im, b.im, 1e-11) << what << " column " << e.i0 + cc << " row " << j;
      }
  }
  // Inverse: the y transform and the packing of each column chunk, its all-to-all; then the x
  // transform of all the rows from the receive buffer.
  for (int s = 0; s < ranks; ++s) std::fill(recv[s].begin(), recv[s].end(), Cx{0, 0});
  for (int c = 0; c < chunks; ++c) {
    for (int s = 0; s < ranks; ++s) {
      const SlabExchange& e = x[s];
      const int c0 = e.col_chunk_begin(s, c), cc = e.col_chunk_cols(s, c);
      Cx* chunk = columns[s].data() + std::size_t(c0) * ny;
      fftw_plan p = fftw_plan_many_dft(1, &ny, cc, fc(chunk), &ny, 1, ny, fc(chunk), &ny, 1, ny, FFTW_BACKWARD,
                                       FFTW_ESTIMATE);
      fftw_execute(p);
      fftw_destroy_plan(p);
      const ColumnsToExchange<double> pack{e, c0, cc, chunk, send[s].data()};
      for (std::size_t k = 0; k < std::size_t(cc) * ny; ++k) pack(k);
    }
    exchange_chunk(x, send, recv, false, c);
    if (testing::Test::HasFatalFailure()) return;
  }
  for (int s = 0; s < ranks; ++s) {
    const SlabExchange& e = x[s];
    double* dst = back.data() + std::size_t(e.j0) * nx;
    fftw_plan p;
    if (strided) {
      p = fftw_plan_many_dft_c2r(1, &nx, e.rows, fc(recv[s].data()), &nxh, e.rows, 1, dst, &nx, 1, nx, FFTW_ESTIMATE);
    } else {
      const ExchangeToRows<double> unpack{e, recv[s].data(), rows[s].data()};
      for (std::size_t k = 0; k < e.row_side_elems(); ++k) unpack(k);
      p = fftw_plan_many_dft_c2r(1, &nx, e.rows, fc(rows[s].data()), &nxh, 1, nxh, dst, &nx, 1, nx, FFTW_ESTIMATE);
    }
    fftw_execute(p);
    fftw_destroy_plan(p);
  }
  const double scale = 1.0 / (double(nx) * ny);
  for (std::size_t k = 0; k < f.size(); ++k) ASSERT_NEAR(back[k] * scale, f[k], 1e-12) << what << " point " << k;
}

}  // namespace

TEST(SlabExchange, TransformsThroughTheLayoutsMatchFftw) {
  for (bool strided : {true, false})
    for (int ranks = 2; ranks <= 4; ++ranks)
      for (int chunks = 1; chunks <= 5; ++chunks) {
        // 36 rows and 41 kx columns (tests/test_mpi.cpp's grid), and a grid of odd sizes of slab.
        transform_through_layouts(80, 36, ranks, chunks, strided);
        if (HasFatalFailure()) return;
        if (chunks <= 3) transform_through_layouts(26, 22, ranks, chunks, strided);
        if (HasFatalFailure()) return;
      }
}
