//! @file CudaSlabExec: one MPI rank of a slab-decomposed run on GPUs, one GPU a rank, its 2D
//! transforms batched 1D cuFFT passes around an NCCL all-to-all; make_cuda_slab_backend.
#include <cuda_runtime.h>
#include <cufft.h>
#if defined(CASCADE_HAVE_NCCL)
#include <nccl.h>
#endif

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cascade/parallel.hpp"
#include "backends/cuda/exec.cuh"

namespace cascade {
namespace {

#if defined(CASCADE_HAVE_NCCL)
// ---------------------------------------------------------------- slabs over GPUs (NCCL)

#define CASCADE_NCCL_CHECK(call)                                                                         \
  do {                                                                                                   \
    const ncclResult_t rc_ = (call);                                                                     \
    if (rc_ != ncclSuccess) fail_call("NCCL", #call, ncclGetErrorString(rc_), __FILE__, __LINE__);       \
  } while (0)

template <class Real>
struct CufftC2C;
template <>
struct CufftC2C<double> {
  static constexpr cufftType type = CUFFT_Z2Z;
  static constexpr ncclDataType_t nccl = ncclDouble;
  static cufftResult exec(cufftHandle p, Complex<double>* in, Complex<double>* out, int dir) {
    return cufftExecZ2Z(p, reinterpret_cast<cufftDoubleComplex*>(in), reinterpret_cast<cufftDoubleComplex*>(out), dir);
  }
};
template <>
struct CufftC2C<float> {
  static constexpr cufftType type = CUFFT_C2C;
  static constexpr ncclDataType_t nccl = ncclFloat;
  static cufftResult exec(cufftHandle p, Complex<float>* in, Complex<float>* out, int dir) {
    return cufftExecC2C(p, reinterpret_cast<cufftComplex*>(in), reinterpret_cast<cufftComplex*>(out), dir);
  }
};

//! The layout of the exchange between the rows of the x transforms ([rows][nxh] on each rank)
//! and the columns of the y transforms ([cols][ny]): in the exchange buffer, the block for (or
//! from) rank r of a rank holding `rows` rows is [cols_r][rows] at offset rows * i0_r, and the
//! block from (or for) rank s of a rank holding `cols` columns is [cols][rows_s] at cols * j0_s.
//! FFTW's block distribution (Slab::of_rank): rank = index / block.
template <class Real>
struct SlabExchange {
  int ny, nxh;
  int br, bc;      //!< row and column block sizes
  int rows, cols;  //!< this rank's
  int j0, i0;
  CASCADE_HD int row_rank(int j) const { return j / br; }
  CASCADE_HD int col_rank(int i) const { return i / bc; }
  CASCADE_HD int rows_of(int s) const { return ny - s * br < br ? ny - s * br : br; }
  CASCADE_HD int cols_of(int r) const { return nxh - r * bc < bc ? nxh - r * bc : bc; }
  //! Where element (row jj of mine, column i) of the x-transformed rows goes to / comes from.
  CASCADE_HD std::size_t row_side(int jj, int i) const {
    const int r = col_rank(i);
    return std::size_t(rows) * std::size_t(r * bc) + std::size_t(i - r * bc) * std::size_t(rows) + std::size_t(jj);
  }
  //! Where element (column c of mine, row j) of the y-transformed columns comes from / goes to.
  CASCADE_HD std::size_t col_side(int c, int j) const {
    const int s = row_rank(j);
    return std::size_t(cols) * std::size_t(s * br) + std::size_t(c) * std::size_t(rows_of(s)) + std::size_t(j - s * br);
  }
};

//! rows [rows][nxh] -> exchange buffer (before the all-to-all of a forward transform), and back.
template <class Real>
struct RowsToExchange {
  SlabExchange<Real> x;
  const Complex<Real>* rows;
  Complex<Real>* buf;
  CASCADE_HD void operator()(std::size_t idx) const {
    const int jj = int(idx / std::size_t(x.nxh)), i = int(idx - std::size_t(jj) * std::size_t(x.nxh));
    buf[x.row_side(jj, i)] = rows[idx];
  }
};
template <class Real>
struct ExchangeToRows {
  SlabExchange<Real> x;
  const Complex<Real>* buf;
  Complex<Real>* rows;
  CASCADE_HD void operator()(std::size_t idx) const {
    const int jj = int(idx / std::size_t(x.nxh)), i = int(idx - std::size_t(jj) * std::size_t(x.nxh));
    rows[idx] = buf[x.row_side(jj, i)];
  }
};
//! exchange buffer -> columns [cols][ny] (after the all-to-all of a forward transform), and back.
template <class Real>
struct ExchangeToColumns {
  SlabExchange<Real> x;
  const Complex<Real>* buf;
  Complex<Real>* columns;
  CASCADE_HD void operator()(std::size_t idx) const {
    const int c = int(idx / std::size_t(x.ny)), j = int(idx - std::size_t(c) * std::size_t(x.ny));
    columns[idx] = buf[x.col_side(c, j)];
  }
};
template <class Real>
struct ColumnsToExchange {
  SlabExchange<Real> x;
  const Complex<Real>* columns;
  Complex<Real>* buf;
  CASCADE_HD void operator()(std::size_t idx) const {
    const int c = int(idx / std::size_t(x.ny)), j = int(idx - std::size_t(c) * std::size_t(x.ny));
    buf[x.col_side(c, j)] = columns[idx];
  }
};

//! The executor of one MPI rank of a slab-decomposed run on GPUs, one GPU a rank: the slab of
//! Slab::of_rank, and 2D transforms made of batched 1D cuFFT transforms (x: R2C/C2R over this
//! rank's rows; y: C2C over its kx columns) around one NCCL all-to-all (grouped send/receive
//! pairs on the backend's stream: nothing waits on the host). The loops and the device side of
//! the reductions are CudaExec's; the ranks' results are combined in rank order on the host.
template <class Real>
class CudaSlabExec : public CudaExec<Real> {
  using Base = CudaExec<Real>;
  using T = CufftTypes<Real>;
  using Z = CufftC2C<Real>;
  using Cplx = Complex<Real>;

 public:
  //! The slab transforms are batched 1D plans around an exchange: no fused transforms (the
  //! callbacks' offsets would be those of the 1D plans, not modes).
  static constexpr bool kCanFuse = false;
  CudaSlabExec(const Grid& grid, int device)
      : Base(grid, device, false), ranks_(parallel::size()), rank_(parallel::rank()) {
    require_slabs_fit(grid, ranks_);
    slab_ = Slab::of_rank(grid, rank_, ranks_);
    x_ = SlabExchange<Real>{grid.ny, grid.nxh(), (grid.ny + ranks_ - 1) / ranks_, (grid.nxh() + ranks_ - 1) / ranks_,
                            slab_.rows, slab_.cols, slab_.j0, slab_.i0};
    // Batched 1D plans sharing one work area: x over this rank's rows, y over its columns.
    int nx = grid.nx, ny = grid.ny, nxh = grid.nxh();
    std::size_t w[3] = {0, 0, 0};
    for (cufftHandle* p : {&x_forward_, &x_inverse_, &y_plan_}) {
      CASCADE_CUFFT_CHECK(cufftCreate(p));
      CASCADE_CUFFT_CHECK(cufftSetAutoAllocation(*p, 0));
    }
    CASCADE_CUFFT_CHECK(cufftMakePlanMany(x_forward_, 1, &nx, &nx, 1, nx, &nxh, 1, nxh, T::r2c, slab_.rows, &w[0]));
    CASCADE_CUFFT_CHECK(cufftMakePlanMany(x_inverse_, 1, &nx, &nxh, 1, nxh, &nx, 1, nx, T::c2r, slab_.rows, &w[1]));
    CASCADE_CUFFT_CHECK(cufftMakePlanMany(y_plan_, 1, &ny, &ny, 1, ny, &ny, 1, ny, Z::type, slab_.cols, &w[2]));
    this->work_bytes_ = std::max<std::size_t>({w[0], w[1], w[2], std::size_t(1)});
    if (cudaMalloc(&this->d_work_, this->work_bytes_) != cudaSuccess) {
      cudaGetLastError();
      throw RunError("out of GPU memory for the FFT work area (" + std::to_string(this->work_bytes_) + " bytes)");
    }
    for (cufftHandle p : {x_forward_, x_inverse_, y_plan_}) {
      CASCADE_CUFFT_CHECK(cufftSetWorkArea(p, this->d_work_));
      CASCADE_CUFFT_CHECK(cufftSetStream(p, this->stream_));
    }
    const std::size_t row_elems = std::size_t(slab_.rows) * std::size_t(nxh);
    const std::size_t col_elems = std::size_t(slab_.cols) * std::size_t(ny);
    exchange_elems_ = std::max(row_elems, col_elems);
    rows_ = this->template alloc<Cplx>(row_elems);
    send_ = this->template alloc<Cplx>(exchange_elems_);
    recv_ = this->template alloc<Cplx>(exchange_elems_);
    // NCCL: rank 0's id to everyone over MPI. NVLink multicast (NVLS) stays off: the shared
    // GPU hosts require it, and an all-to-all does not use it.
    ::setenv("NCCL_NVLS_ENABLE", "0", 1);
    CASCADE_CUDA_CHECK(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking));
    CASCADE_CUDA_CHECK(cudaEventCreateWithFlags(&packed_, cudaEventDisableTiming));
    CASCADE_CUDA_CHECK(cudaEventCreateWithFlags(&copied_, cudaEventDisableTiming));
    ncclUniqueId id;
    if (rank_ == 0) CASCADE_NCCL_CHECK(ncclGetUniqueId(&id));
    parallel::broadcast(&id, sizeof(id), 0);
    CASCADE_NCCL_CHECK(ncclCommInitRank(&comm_, ranks_, id, rank_));
    // CASCADE_EXCHANGE_TIMING=1: time each all-to-all with events (the host waits for each, so
    // the run slows a little) and say on exit what they took.
    const char* t = std::getenv("CASCADE_EXCHANGE_TIMING");
    if (t && *t && std::string(t) != "0") {
      CASCADE_CUDA_CHECK(cudaEventCreate(&t0_));
      CASCADE_CUDA_CHECK(cudaEventCreate(&t1_));
    }
  }
  ~CudaSlabExec() {
    if (t0_ && exchanges_ > 0 && rank_ == 0)
      std::fprintf(stderr, "cascade: rank 0: %ld all-to-all exchanges, %.3f ms each on average (%.3f s in all)\n",
                   exchanges_, exchange_ms_ / double(exchanges_), exchange_ms_ / 1000);
    if (t0_) cudaEventDestroy(t0_);
    if (t1_) cudaEventDestroy(t1_);
    if (packed_) cudaEventDestroy(packed_);
    if (copied_) cudaEventDestroy(copied_);
    if (side_) cudaStreamDestroy(side_);
    if (comm_) ncclCommDestroy(comm_);
    for (cufftHandle p : {x_forward_, x_inverse_, y_plan_})
      if (p) cufftDestroy(p);
  }
  CudaSlabExec(const CudaSlabExec&) = delete;
  CudaSlabExec& operator=(const CudaSlabExec&) = delete;

  std::string description() const {
    int nccl = 0;
    ncclGetVersion(&nccl);
    return Base::description().substr(0, Base::description().size() - 1) + ", " + std::to_string(ranks_) +
           " ranks over NCCL " + std::to_string(nccl / 10000) + "." + std::to_string(nccl / 100 % 100) + ")";
  }
  Slab slab() const { return slab_; }
  //! The cuFFT work area and the exchange's three buffers.
  std::size_t fft_work_bytes() const {
    return this->work_bytes_ + (rows_.size() + send_.size() + recv_.size()) * sizeof(Cplx);
  }

  void forward(const Real* d_in, Cplx* d_out) {
    CASCADE_CUFFT_CHECK(T::exec_r2c(x_forward_, d_in, rows_.data()));
    this->for_each(rows_.size(), RowsToExchange<Real>{x_, rows_.data(), send_.data()});
    all_to_all(/*to_columns=*/true);
    const std::size_t n = std::size_t(slab_.cols) * std::size_t(x_.ny);
    this->for_each(n, ExchangeToColumns<Real>{x_, recv_.data(), d_out});
    CASCADE_CUFFT_CHECK(Z::exec(y_plan_, d_out, d_out, CUFFT_FORWARD));
  }
  void inverse(Cplx* d_in, Real* d_out) {
    CASCADE_CUFFT_CHECK(Z::exec(y_plan_, d_in, d_in, CUFFT_INVERSE));  // d_in may be overwritten
    const std::size_t n = std::size_t(slab_.cols) * std::size_t(x_.ny);
    this->for_each(n, ColumnsToExchange<Real>{x_, d_in, send_.data()});
    all_to_all(/*to_columns=*/false);
    this->for_each(rows_.size(), ExchangeToRows<Real>{x_, recv_.data(), rows_.data()});
    CASCADE_CUFFT_CHECK(T::exec_c2r(x_inverse_, rows_.data(), d_out));
  }

  // ---- reductions: this GPU's (CudaExec), then every rank's, combined in rank order
  Real max_result() const {
    const double mine = double(Base::max_result());
    std::vector<double> all(static_cast<std::size_t>(ranks_));
    parallel::allgather(&mine, sizeof(double), all.data());
    const MaxOp<double> op;
    double result = MaxOp<double>::identity();
    for (double v : all) result = op(result, v);
    return Real(result);
  }
  template <class Fn>
  Real for_each_max(std::size_t n, const Fn& f) {
    this->for_each_max_async(n, f);
    return max_result();
  }
  template <class Fn>
  auto transform_sum(std::size_t n, const Fn& f) -> decltype(f(std::size_t(0))) {
    using R = decltype(f(std::size_t(0)));
    const R mine = Base::transform_sum(n, f);
    std::vector<R> all(static_cast<std::size_t>(ranks_));
    parallel::allgather(&mine, sizeof(R), all.data());
    R result{};
    for (const R& p : all) result = result + p;
    return result;
  }
  template <class Fn>
  void histogram4(std::size_t n, const Fn& f, int bins, std::vector<double> (&out)[4]) {
    Base::histogram4(n, f, bins, out);
    for (auto& h : out) parallel::sum_in_rank_order(h.data(), bins);
  }
  void budget_integrals(double (&out)[6]) {
    Base::budget_integrals(out);
    parallel::sum_in_rank_order(out, 6);
  }
  void set_budget_integrals(const double (&in)[6]) {
    const double zero[6] = {0, 0, 0, 0, 0, 0};
    Base::set_budget_integrals(parallel::root() ? in : zero);
  }

 private:
  //! The transpose: every rank sends each other rank its block of send_ and receives theirs
  //! into recv_ (to_columns: rows -> columns, a forward transform; else back).
  void all_to_all(bool to_columns) {
    if (t0_) CASCADE_CUDA_CHECK(cudaEventRecord(t0_, this->stream_));
    const Cplx* self_src = nullptr;  // set in the loop (every rank has a block of its own)
    Cplx* self_dst = nullptr;
    std::size_t self_n = 0;
    CASCADE_NCCL_CHECK(ncclGroupStart());
    for (int r = 0; r < ranks_; ++r) {
      // Blocks on the row side: [cols_r][rows] at rows * i0_r; on the column side:
      // [cols][rows_r] at cols * j0_r.
      const std::size_t row_off = std::size_t(slab_.rows) * std::size_t(r * x_.bc);
      const std::size_t row_n = std::size_t(slab_.rows) * std::size_t(x_.cols_of(r));
      const std::size_t col_off = std::size_t(slab_.cols) * std::size_t(r * x_.br);
      const std::size_t col_n = std::size_t(slab_.cols) * std::size_t(x_.rows_of(r));
      const std::size_t send_off = to_columns ? row_off : col_off, send_n = to_columns ? row_n : col_n;
      const std::size_t recv_off = to_columns ? col_off : row_off, recv_n = to_columns ? col_n : row_n;
      if (r == rank_) {  // this rank's own block: a copy on the GPU, not through NCCL
        self_src = send_.data() + send_off;
        self_dst = recv_.data() + recv_off;
        self_n = send_n;
        continue;
      }
      CASCADE_NCCL_CHECK(ncclSend(send_.data() + send_off, 2 * send_n, Z::nccl, r, comm_, this->stream_));
      CASCADE_NCCL_CHECK(ncclRecv(recv_.data() + recv_off, 2 * recv_n, Z::nccl, r, comm_, this->stream_));
    }
    // The own block is copied on a second stream while NCCL moves the others.
    CASCADE_CUDA_CHECK(cudaEventRecord(packed_, this->stream_));
    CASCADE_CUDA_CHECK(cudaStreamWaitEvent(side_, packed_, 0));
    CASCADE_CUDA_CHECK(cudaMemcpyAsync(self_dst, self_src, self_n * sizeof(Cplx), cudaMemcpyDeviceToDevice, side_));
    CASCADE_CUDA_CHECK(cudaEventRecord(copied_, side_));
    CASCADE_NCCL_CHECK(ncclGroupEnd());
    CASCADE_CUDA_CHECK(cudaStreamWaitEvent(this->stream_, copied_, 0));
    if (t0_) {
      CASCADE_CUDA_CHECK(cudaEventRecord(t1_, this->stream_));
      CASCADE_CUDA_CHECK(cudaEventSynchronize(t1_));
      float ms = 0;
      CASCADE_CUDA_CHECK(cudaEventElapsedTime(&ms, t0_, t1_));
      exchange_ms_ += ms;
      ++exchanges_;
    }
  }

  int ranks_, rank_;
  Slab slab_;
  SlabExchange<Real> x_{};
  cufftHandle x_forward_ = 0, x_inverse_ = 0, y_plan_ = 0;
  std::size_t exchange_elems_ = 0;
  Buffer<Cplx> rows_, send_, recv_;
  ncclComm_t comm_ = nullptr;
  cudaStream_t side_ = nullptr;  //!< the copy of the own block, beside NCCL's transfers
  cudaEvent_t packed_ = nullptr, copied_ = nullptr;
  cudaEvent_t t0_ = nullptr, t1_ = nullptr;  //!< CASCADE_EXCHANGE_TIMING
  double exchange_ms_ = 0;
  long exchanges_ = 0;
};
#endif  // CASCADE_HAVE_NCCL

}  // namespace

template <class Real>
std::unique_ptr<Backend<Real>> make_cuda_slab_backend(const Grid& grid) {
#if defined(CASCADE_HAVE_NCCL)
  // One rank per GPU: the ranks on a machine take its GPUs in order.
  const int count = cuda_device_count();
  const int local = parallel::rank_on_this_node(), here = parallel::ranks_on_this_node();
  if (count > 0 && here > count)
    throw InputError("run.backend: cuda with " + std::to_string(here) + " MPI ranks on this machine but " +
                     std::to_string(count) + " GPU" + (count == 1 ? "" : "s") + ": start one rank per GPU");
  return std::make_unique<BackendImpl<Real, CudaSlabExec<Real>>>(grid, count > 0 ? local % count : 0);
#else
  (void)grid;
  throw InputError("run.backend: cuda over several MPI ranks needs NCCL, which this cascade was built without");
#endif
}

template std::unique_ptr<Backend<float>> make_cuda_slab_backend<float>(const Grid&);
template std::unique_ptr<Backend<double>> make_cuda_slab_backend<double>(const Grid&);

}  // namespace cascade
