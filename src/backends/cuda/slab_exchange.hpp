//! @file SlabExchange: where every element of a GPU slab transform lies in the exchange buffers,
//! the all-to-all split into chunks (CudaSlabExec, src/backends/cuda/slabs.cu). Plain C++ with
//! CASCADE_HD members: the kernels decode their indices with it and tests/test_slab_exchange.cpp
//! simulates the exchange with it on the host.
//!
//! FFTW's block distribution (Slab::of_rank): rank s holds the rows [s br, s br + rows_s) and
//! the kx columns [r bc, r bc + cols_r). A forward transform splits this rank's rows into
//! `chunks` runs (split_begin: balanced, never empty while chunks <= rows); an inverse one
//! splits its columns the same way.
//!
//! Forward (rows -> columns):
//!  - send: chunk c of the rows, R0 = its first row and rc its count, is the region
//!    [nxh][rc] at nxh R0, which the x transform (R2C, ostride rc, odist 1) writes directly;
//!    the block for rank r is its columns, [cols_r][rc] at nxh R0 + i0_r rc: contiguous.
//!  - receive: the block from rank s, chunk c is [cols][rc_{s,c}] at cols (j0_s + R0_{s,c});
//!    the blocks tile the buffer in the order of the global rows; one pass (fwd_recv_index)
//!    gathers them into the columns [cols][ny].
//! Inverse (columns -> rows):
//!  - send: chunk c of the columns, C0 = its first local column and cc its count, is the region
//!    [ranks][cc][rows_r] at ny C0 (packed from the y-transformed columns by inv_send_index,
//!    which reads the chunk's columns contiguously); the block for rank r is at
//!    ny C0 + cc j0_r.
//!  - receive: the block from rank s, chunk c is [cc_{s,c}][rows] at rows (i0_s + C0_{s,c}),
//!    so that, whatever the chunks, the buffer is [nxh][rows]: element (row jj, column i) at
//!    rows i + jj, which the x transform (C2R, istride rows, idist 1) reads directly.
//! With one chunk the layouts are those of the exchange without chunks.
#pragma once

#include <cstddef>

#include "cascade/types.hpp"

namespace cascade {

//! The first index of part c of n indices split into k balanced parts: floor(c n / k). Parts
//! differ in size by at most one and none is empty while k <= n.
CASCADE_HD inline int split_begin(int n, int k, int c) { return int((long long)c * n / k); }
//! The part of index i (0 <= i < n): the largest c with split_begin(n, k, c) <= i.
CASCADE_HD inline int split_part(int n, int k, int i) { return int(((long long)(i + 1) * k - 1) / n); }

struct SlabExchange {
  int ny, nxh;
  int ranks;
  int br, bc;      //!< row and column block sizes
  int rank;        //!< this rank
  int rows, cols;  //!< this rank's
  int j0, i0;
  int chunks;      //!< K >= 1

  static SlabExchange make(int ny, int nxh, int ranks, int rank, int chunks) {
    SlabExchange x{};
    x.ny = ny;
    x.nxh = nxh;
    x.ranks = ranks;
    x.br = (ny + ranks - 1) / ranks;
    x.bc = (nxh + ranks - 1) / ranks;
    x.rank = rank;
    x.rows = x.rows_of(rank);
    x.cols = x.cols_of(rank);
    x.j0 = rank * x.br;
    x.i0 = rank * x.bc;
    x.chunks = chunks;
    return x;
  }
  CASCADE_HD int rows_of(int s) const { return ny - s * br < br ? ny - s * br : br; }
  CASCADE_HD int cols_of(int r) const { return nxh - r * bc < bc ? nxh - r * bc : bc; }
  //! The smallest slab's rows and columns (the last rank's): the most chunks every rank can take.
  int max_chunks() const {
    const int r = rows_of(ranks - 1), c = cols_of(ranks - 1);
    return r < c ? r : c;
  }

  // ---- row chunks (forward) of rank s: first row (local) and count
  CASCADE_HD int row_chunk_begin(int s, int c) const { return split_begin(rows_of(s), chunks, c); }
  CASCADE_HD int row_chunk_rows(int s, int c) const {
    return split_begin(rows_of(s), chunks, c + 1) - split_begin(rows_of(s), chunks, c);
  }
  // ---- column chunks (inverse) of rank s: first column (local) and count
  CASCADE_HD int col_chunk_begin(int s, int c) const { return split_begin(cols_of(s), chunks, c); }
  CASCADE_HD int col_chunk_cols(int s, int c) const {
    return split_begin(cols_of(s), chunks, c + 1) - split_begin(cols_of(s), chunks, c);
  }

  // ---- forward
  //! Where the x transform of this rank's chunk c writes its region ([nxh][rc]).
  CASCADE_HD std::size_t fwd_chunk_offset(int c) const {
    return std::size_t(nxh) * std::size_t(row_chunk_begin(rank, c));
  }
  //! Where the x transform puts (local row jj, column i): what the R2C plan's layout gives.
  CASCADE_HD std::size_t fwd_send_index(int jj, int i) const {
    const int c = split_part(rows, chunks, jj), r0 = row_chunk_begin(rank, c);
    return fwd_chunk_offset(c) + std::size_t(i) * std::size_t(row_chunk_rows(rank, c)) + std::size_t(jj - r0);
  }
  //! The block of chunk c for rank r: offset in the send buffer and element count.
  CASCADE_HD std::size_t fwd_send_offset(int c, int r) const {
    return fwd_chunk_offset(c) + std::size_t(r * bc) * std::size_t(row_chunk_rows(rank, c));
  }
  CASCADE_HD std::size_t fwd_send_count(int c, int r) const {
    return std::size_t(cols_of(r)) * std::size_t(row_chunk_rows(rank, c));
  }
  //! The block from rank s, chunk c: offset in the receive buffer and element count.
  CASCADE_HD std::size_t fwd_recv_offset(int s, int c) const {
    return std::size_t(cols) * std::size_t(s * br + row_chunk_begin(s, c));
  }
  CASCADE_HD std::size_t fwd_recv_count(int s, int c) const {
    return std::size_t(cols) * std::size_t(row_chunk_rows(s, c));
  }
  //! Where (local column cc, global row j) lies in the receive buffer (the unpacking pass).
  CASCADE_HD std::size_t fwd_recv_index(int cc, int j) const {
    const int s = j / br, jj = j - s * br, n = rows_of(s);
    const int c = split_part(n, chunks, jj);
    const int r0 = split_begin(n, chunks, c), rc = split_begin(n, chunks, c + 1) - r0;
    return std::size_t(cols) * std::size_t(s * br + r0) + std::size_t(cc) * std::size_t(rc) + std::size_t(jj - r0);
  }

  // ---- inverse
  //! The region of this rank's column chunk c in the send buffer ([ranks][cc][rows_r]).
  CASCADE_HD std::size_t inv_chunk_offset(int c) const {
    return std::size_t(ny) * std::size_t(col_chunk_begin(rank, c));
  }
  //! Where (element idx of column chunk c's columns [cc][ny], read in order) goes: the packing.
  CASCADE_HD std::size_t inv_send_index(int c0, int cc, std::size_t idx) const {
    const int dc = int(idx / std::size_t(ny)), j = int(idx - std::size_t(dc) * std::size_t(ny));
    const int r = j / br;
    return std::size_t(ny) * std::size_t(c0) + std::size_t(cc) * std::size_t(r * br) +
           std::size_t(dc) * std::size_t(rows_of(r)) + std::size_t(j - r * br);
  }
  CASCADE_HD std::size_t inv_send_offset(int c, int r) const {
    return inv_chunk_offset(c) + std::size_t(col_chunk_cols(rank, c)) * std::size_t(r * br);
  }
  CASCADE_HD std::size_t inv_send_count(int c, int r) const {
    return std::size_t(col_chunk_cols(rank, c)) * std::size_t(rows_of(r));
  }
  CASCADE_HD std::size_t inv_recv_offset(int s, int c) const {
    return std::size_t(rows) * std::size_t(s * bc + col_chunk_begin(s, c));
  }
  CASCADE_HD std::size_t inv_recv_count(int s, int c) const {
    return std::size_t(rows) * std::size_t(col_chunk_cols(s, c));
  }
  //! Where (local row jj, global column i) lies in the receive buffer: what the C2R plan reads.
  CASCADE_HD std::size_t inv_recv_index(int jj, int i) const {
    return std::size_t(rows) * std::size_t(i) + std::size_t(jj);
  }

  //! What this rank sends to and receives from rank `peer` in chunk c of a forward or an
  //! inverse transform (its own block when peer == rank: send_n == recv_n).
  struct Block {
    std::size_t send_off, send_n, recv_off, recv_n;
  };
  Block block(bool forward, int c, int peer) const {
    if (forward)
      return {fwd_send_offset(c, peer), fwd_send_count(c, peer), fwd_recv_offset(peer, c), fwd_recv_count(peer, c)};
    return {inv_send_offset(c, peer), inv_send_count(c, peer), inv_recv_offset(peer, c), inv_recv_count(peer, c)};
  }

  //! Buffer sizes: the row side holds rows nxh elements, the column side cols ny.
  CASCADE_HD std::size_t row_side_elems() const { return std::size_t(rows) * std::size_t(nxh); }
  CASCADE_HD std::size_t col_side_elems() const { return std::size_t(cols) * std::size_t(ny); }
};

//! The packing and unpacking passes of the exchange (layouts: SlabExchange). The column side
//! has one pass each way; the row side none, but where cuFFT refuses the strided x plans
//! (CudaSlabExec::strided_, src/backends/cuda/slabs.cu) a pass each way between those plans'
//! contiguous rows [rows][nxh] and the exchange.
//! exchange -> columns [cols][ny], after the last chunk of a forward transform.
template <class Real>
struct ExchangeToColumns {
  SlabExchange x;
  const Complex<Real>* buf;
  Complex<Real>* columns;
  CASCADE_HD void operator()(std::size_t idx) const {
    const int c = int(idx / std::size_t(x.ny)), j = int(idx - std::size_t(c) * std::size_t(x.ny));
    columns[idx] = buf[x.fwd_recv_index(c, j)];
  }
};
//! The columns [c0, c0 + cc) of [cols][ny] -> their chunk of the exchange (an inverse transform).
template <class Real>
struct ColumnsToExchange {
  SlabExchange x;
  int c0, cc;
  const Complex<Real>* columns;  //!< the chunk's first column
  Complex<Real>* buf;
  CASCADE_HD void operator()(std::size_t idx) const { buf[x.inv_send_index(c0, cc, idx)] = columns[idx]; }
};
//! Without strided x plans: the rows [r0, r0 + rc) of [rows][nxh] -> their chunk, and back.
template <class Real>
struct RowsToExchange {
  SlabExchange x;
  int r0;
  const Complex<Real>* rows;  //!< the chunk's first row
  Complex<Real>* buf;
  CASCADE_HD void operator()(std::size_t idx) const {
    const int jj = int(idx / std::size_t(x.nxh)), i = int(idx - std::size_t(jj) * std::size_t(x.nxh));
    buf[x.fwd_send_index(r0 + jj, i)] = rows[idx];
  }
};
template <class Real>
struct ExchangeToRows {
  SlabExchange x;
  const Complex<Real>* buf;
  Complex<Real>* rows;
  CASCADE_HD void operator()(std::size_t idx) const {
    const int jj = int(idx / std::size_t(x.nxh)), i = int(idx - std::size_t(jj) * std::size_t(x.nxh));
    rows[idx] = buf[x.inv_recv_index(jj, i)];
  }
};

}  // namespace cascade
