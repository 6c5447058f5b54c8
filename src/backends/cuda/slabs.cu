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
#include <utility>
#include <vector>

#include "cascade/parallel.hpp"
#include "backends/cuda/exec.cuh"
#include "backends/cuda/slab_exchange.hpp"

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

//! The chunk count of run.exchange_chunks: 0 picks this one (bounded by the smallest slab).
//! Measured best of K = 1, 2, 4, 8 at 16384^2 and 32768^2 on two NVLink H200s, 2026-11-24
//! (docs/parallel.md, scripts/slab-scaling).
constexpr int kAutoExchangeChunks = 4;

//! The executor of one MPI rank of a slab-decomposed run on GPUs, one GPU a rank: the slab of
//! Slab::of_rank, and 2D transforms made of batched 1D cuFFT transforms (x: R2C/C2R over this
//! rank's rows; y: C2C over its kx columns) around an NCCL all-to-all split into chunks and
//! overlapped with the transforms (docs/parallel.md): a forward transform runs the x transform
//! of row chunk c on the compute stream (stream_) straight into the send buffer while chunk
//! c - 1 travels on the communication stream (comm_stream_); an inverse one runs the y
//! transform and the packing of column chunk c while chunk c - 1 travels. Nothing waits on the
//! host. The loops and the device side of the reductions are CudaExec's; the ranks' results
//! are combined in rank order on the host.
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
  static constexpr bool kCanGraph = false;  //!< the CFL maximum is agreed between ranks from the host
  CudaSlabExec(const Grid& grid, int device, int chunks)
      : Base(grid, device, false), ranks_(parallel::size()), rank_(parallel::rank()), nx_(grid.nx) {
    require_slabs_fit(grid, ranks_);
    slab_ = Slab::of_rank(grid, rank_, ranks_);
    x_ = SlabExchange::make(grid.ny, grid.nxh(), ranks_, rank_, 1);
    const int limit = x_.max_chunks();
    if (chunks < 0 || chunks > limit)  // the same on every rank: each throws
      throw InputError("run.exchange_chunks: " + std::to_string(chunks) + " chunks, but the smallest slab of grid " +
                       std::to_string(grid.nx) + " x " + std::to_string(grid.ny) + " over " + std::to_string(ranks_) +
                       " ranks has " + std::to_string(limit) +
                       " rows or kx columns; expected an integer in [0, " + std::to_string(limit) + "] (0 = auto)");
    x_.chunks = chunks > 0 ? chunks : std::min(kAutoExchangeChunks, limit);
    const char* packed = std::getenv("CASCADE_SLAB_PACKED");  // tests: the path without strided x plans
    strided_ = !(packed && *packed && std::string(packed) != "0");
    if (!(strided_ && make_plans(true) == CUFFT_SUCCESS)) {
      const bool refused = strided_;
      destroy_plans();
      strided_ = false;
      CASCADE_CUFFT_CHECK(make_plans(false));
      if (refused && rank_ == 0)
        std::fprintf(stderr, "cascade: cuFFT refused the strided x plans of the slab exchange; "
                             "it packs the rows in a pass of its own\n");
    }
    this->work_bytes_ = std::max<std::size_t>(work_need_, 1);
    if (cudaMalloc(&this->d_work_, this->work_bytes_) != cudaSuccess) {
      cudaGetLastError();
      throw RunError("out of GPU memory for the FFT work area (" + std::to_string(this->work_bytes_) + " bytes)");
    }
    for (cufftHandle p : handles()) {
      CASCADE_CUFFT_CHECK(cufftSetWorkArea(p, this->d_work_));
      CASCADE_CUFFT_CHECK(cufftSetStream(p, this->stream_));
    }
    const std::size_t exchange_elems = std::max(x_.row_side_elems(), x_.col_side_elems());
    if (!strided_) rows_ = this->template alloc<Cplx>(x_.row_side_elems());
    send_ = this->template alloc<Cplx>(exchange_elems);
    recv_ = this->template alloc<Cplx>(exchange_elems);
    // NCCL: rank 0's id to everyone over MPI. NVLink multicast (NVLS) stays off: the shared
    // GPU hosts require it, and an all-to-all does not use it.
    ::setenv("NCCL_NVLS_ENABLE", "0", 1);
    CASCADE_CUDA_CHECK(cudaStreamCreateWithFlags(&comm_stream_, cudaStreamNonBlocking));
    CASCADE_CUDA_CHECK(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking));
    for (cudaEvent_t* e : {&ready_, &sent_, &copied_})
      CASCADE_CUDA_CHECK(cudaEventCreateWithFlags(e, cudaEventDisableTiming));
    ncclUniqueId id;
    if (rank_ == 0) CASCADE_NCCL_CHECK(ncclGetUniqueId(&id));
    parallel::broadcast(&id, sizeof(id), 0);
    CASCADE_NCCL_CHECK(ncclCommInitRank(&comm_, ranks_, id, rank_));
    // CASCADE_EXCHANGE_TIMING=1: time each transform and its chunks' exchanges with events,
    // read back a transform later (the host does not wait for the one in flight), and say on
    // exit what they took.
    const char* t = std::getenv("CASCADE_EXCHANGE_TIMING");
    if (t && *t && std::string(t) != "0")
      for (TimingSet& s : timing_) {
        s.ev.resize(2 + 2 * std::size_t(x_.chunks));
        for (cudaEvent_t& e : s.ev) CASCADE_CUDA_CHECK(cudaEventCreate(&e));
      }
  }
  ~CudaSlabExec() {
    if (timing() && stream_ok()) {
      for (TimingSet& s : timing_) collect(s);
      if (transforms_ > 0 && rank_ == 0)
        std::fprintf(stderr,
                     "cascade: rank 0: %ld transforms, the exchange in %d chunks: all-to-all %.3f ms each on average "
                     "(%.3f GB sent at %.1f GB/s while it ran), whole transform %.3f ms (%.3f s in all, exchange "
                     "%.3f s)\n",
                     transforms_, x_.chunks, exchange_ms_ / double(transforms_),
                     bytes_sent_ / 1e9 / double(transforms_),
                     exchange_ms_ > 0 ? bytes_sent_ / 1e6 / exchange_ms_ : 0.0, transform_ms_ / double(transforms_),
                     transform_ms_ / 1000, exchange_ms_ / 1000);
    }
    // Nothing of this executor's may still run on its streams when NCCL and the plans go.
    for (cudaStream_t st : {comm_stream_, side_})
      if (st) cudaStreamSynchronize(st);
    for (TimingSet& s : timing_)
      for (cudaEvent_t e : s.ev)
        if (e) cudaEventDestroy(e);
    for (cudaEvent_t e : {ready_, sent_, copied_})
      if (e) cudaEventDestroy(e);
    if (side_) cudaStreamDestroy(side_);
    if (comm_stream_) cudaStreamDestroy(comm_stream_);
    if (comm_) ncclCommDestroy(comm_);
    destroy_plans();
  }
  CudaSlabExec(const CudaSlabExec&) = delete;
  CudaSlabExec& operator=(const CudaSlabExec&) = delete;

  std::string description() const {
    int nccl = 0;
    ncclGetVersion(&nccl);
    return Base::description().substr(0, Base::description().size() - 1) + ", " + std::to_string(ranks_) +
           " ranks over NCCL " + std::to_string(nccl / 10000) + "." + std::to_string(nccl / 100 % 100) +
           ", exchange in " + std::to_string(x_.chunks) + " chunk" + (x_.chunks == 1 ? "" : "s") +
           (strided_ ? "" : " with packed rows") + ")";
  }
  Slab slab() const { return slab_; }
  //! The cuFFT work area and the exchange's buffers.
  std::size_t fft_work_bytes() const {
    return this->work_bytes_ + (rows_.size() + send_.size() + recv_.size()) * sizeof(Cplx);
  }

  void forward(const Real* d_in, Cplx* d_out) {
    timing_begin();
    for (int c = 0; c < x_.chunks; ++c) {
      const int r0 = x_.row_chunk_begin(rank_, c), rc = x_.row_chunk_rows(rank_, c);
      const Real* in = d_in + std::size_t(r0) * std::size_t(nx_);
      if (strided_) {  // straight into the chunk's region of the send buffer, [nxh][rc]
        CASCADE_CUFFT_CHECK(T::exec_r2c(plan(r2c_, rc), in, send_.data() + x_.fwd_chunk_offset(c)));
      } else {
        Cplx* rows = rows_.data() + std::size_t(r0) * std::size_t(x_.nxh);
        CASCADE_CUFFT_CHECK(T::exec_r2c(plan(r2c_, rc), in, rows));
        this->for_each(std::size_t(rc) * std::size_t(x_.nxh), RowsToExchange<Real>{x_, r0, rows, send_.data()});
      }
      send_chunk(c, /*forward=*/true);
    }
    wait_for_exchange();
    this->for_each(x_.col_side_elems(), ExchangeToColumns<Real>{x_, recv_.data(), d_out});
    CASCADE_CUFFT_CHECK(Z::exec(plan(c2c_, x_.cols), d_out, d_out, CUFFT_FORWARD));
    timing_end();
  }
  void inverse(Cplx* d_in, Real* d_out) {  // d_in is overwritten
    timing_begin();
    for (int c = 0; c < x_.chunks; ++c) {
      const int c0 = x_.col_chunk_begin(rank_, c), cc = x_.col_chunk_cols(rank_, c);
      Cplx* columns = d_in + std::size_t(c0) * std::size_t(x_.ny);
      CASCADE_CUFFT_CHECK(Z::exec(plan(c2c_, cc), columns, columns, CUFFT_INVERSE));
      this->for_each(std::size_t(cc) * std::size_t(x_.ny), ColumnsToExchange<Real>{x_, c0, cc, columns, send_.data()});
      send_chunk(c, /*forward=*/false);
    }
    wait_for_exchange();
    // The receive buffer is [nxh][rows] (istride rows, idist 1). cuFFT's out-of-place C2R may
    // overwrite its input: here the receive buffer, whose contents are not needed after it.
    if (strided_) {
      CASCADE_CUFFT_CHECK(T::exec_c2r(c2r_, recv_.data(), d_out));
    } else {
      this->for_each(x_.row_side_elems(), ExchangeToRows<Real>{x_, recv_.data(), rows_.data()});
      CASCADE_CUFFT_CHECK(T::exec_c2r(c2r_, rows_.data(), d_out));
    }
    timing_end();
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
  void budget_integrals(double* out) {
    Base::budget_integrals(out);
    parallel::sum_in_rank_order(out, 6);
  }
  void set_budget_integrals(const double* in) {
    const double zero[6] = {0, 0, 0, 0, 0, 0};
    Base::set_budget_integrals(parallel::root() ? in : zero);
  }

 private:
  using Plans = std::vector<std::pair<int, cufftHandle>>;  //!< batch count -> plan
  static cufftHandle plan(const Plans& plans, int batch) {
    for (const auto& p : plans)
      if (p.first == batch) return p.second;
    throw RunError("slab exchange: no cuFFT plan of batch " + std::to_string(batch));
  }
  //! The plans of every chunk size (balanced chunks: two sizes at most), sharing one work area
  //! (work_need_): x forward per row chunk, [rc][nx] -> the chunk's region [nxh][rc] when
  //! strided, else -> [rc][nxh]; x inverse over all rows, [nxh][rows] (strided) or [rows][nxh]
  //! -> [rows][nx]; y per column chunk and over all columns, [n][ny] in place.
  cufftResult make_plans(bool strided) {
    int nx = nx_, ny = x_.ny, nxh = x_.nxh;
    auto add = [&](Plans& plans, int batch, auto&& make) -> cufftResult {
      for (const auto& p : plans)
        if (p.first == batch) return CUFFT_SUCCESS;
      cufftHandle h = 0;
      cufftResult r = cufftCreate(&h);
      if (r != CUFFT_SUCCESS) return r;
      plans.emplace_back(batch, h);
      if ((r = cufftSetAutoAllocation(h, 0)) != CUFFT_SUCCESS) return r;
      std::size_t w = 0;
      if ((r = make(h, batch, &w)) != CUFFT_SUCCESS) return r;
      work_need_ = std::max(work_need_, w);
      return CUFFT_SUCCESS;
    };
    cufftResult r = CUFFT_SUCCESS;
    for (int c = 0; c < x_.chunks && r == CUFFT_SUCCESS; ++c)
      r = add(r2c_, x_.row_chunk_rows(rank_, c), [&](cufftHandle h, int rc, std::size_t* w) {
        return strided ? cufftMakePlanMany(h, 1, &nx, &nx, 1, nx, &nxh, rc, 1, T::r2c, rc, w)
                       : cufftMakePlanMany(h, 1, &nx, &nx, 1, nx, &nxh, 1, nxh, T::r2c, rc, w);
      });
    Plans inverse;
    if (r == CUFFT_SUCCESS)
      r = add(inverse, x_.rows, [&](cufftHandle h, int rows, std::size_t* w) {
        return strided ? cufftMakePlanMany(h, 1, &nx, &nxh, rows, 1, &nx, 1, nx, T::c2r, rows, w)
                       : cufftMakePlanMany(h, 1, &nx, &nxh, 1, nxh, &nx, 1, nx, T::c2r, rows, w);
      });
    if (!inverse.empty()) c2r_ = inverse.front().second;
    auto y = [&](cufftHandle h, int n, std::size_t* w) {
      return cufftMakePlanMany(h, 1, &ny, &ny, 1, ny, &ny, 1, ny, Z::type, n, w);
    };
    if (r == CUFFT_SUCCESS) r = add(c2c_, x_.cols, y);
    for (int c = 0; c < x_.chunks && r == CUFFT_SUCCESS; ++c) r = add(c2c_, x_.col_chunk_cols(rank_, c), y);
    return r;
  }
  std::vector<cufftHandle> handles() const {
    std::vector<cufftHandle> h;
    for (const Plans* p : {&r2c_, &c2c_})
      for (const auto& q : *p) h.push_back(q.second);
    if (c2r_) h.push_back(c2r_);
    return h;
  }
  void destroy_plans() {
    for (cufftHandle p : handles())
      if (p) cufftDestroy(p);
    r2c_.clear();
    c2c_.clear();
    c2r_ = 0;
    work_need_ = 0;
  }

  //! Chunk c of the all-to-all, once the compute stream has written it: every rank sends each
  //! other rank its block of the chunk and receives theirs (one NCCL group on comm_); the own
  //! block is a device copy on side_.
  void send_chunk(int c, bool forward) {
    CASCADE_CUDA_CHECK(cudaEventRecord(ready_, this->stream_));
    CASCADE_CUDA_CHECK(cudaStreamWaitEvent(comm_stream_, ready_, 0));
    CASCADE_CUDA_CHECK(cudaStreamWaitEvent(side_, ready_, 0));
    if (timing()) CASCADE_CUDA_CHECK(cudaEventRecord(timing_[set_].ev[2 + 2 * c], comm_stream_));
    CASCADE_NCCL_CHECK(ncclGroupStart());
    for (int r = 0; r < ranks_; ++r) {
      if (r == rank_) continue;
      const SlabExchange::Block b = x_.block(forward, c, r);
      if (b.send_n)
        CASCADE_NCCL_CHECK(ncclSend(send_.data() + b.send_off, 2 * b.send_n, Z::nccl, r, comm_, comm_stream_));
      if (b.recv_n)
        CASCADE_NCCL_CHECK(ncclRecv(recv_.data() + b.recv_off, 2 * b.recv_n, Z::nccl, r, comm_, comm_stream_));
      if (timing()) bytes_sent_ += double(b.send_n) * sizeof(Cplx);
    }
    CASCADE_NCCL_CHECK(ncclGroupEnd());
    if (timing()) CASCADE_CUDA_CHECK(cudaEventRecord(timing_[set_].ev[3 + 2 * c], comm_stream_));
    const SlabExchange::Block self = x_.block(forward, c, rank_);  // send_n == recv_n
    CASCADE_CUDA_CHECK(cudaMemcpyAsync(recv_.data() + self.recv_off, send_.data() + self.send_off,
                                       self.send_n * sizeof(Cplx), cudaMemcpyDeviceToDevice, side_));
  }
  //! The compute stream waits for every chunk's transfers and copies.
  void wait_for_exchange() {
    CASCADE_CUDA_CHECK(cudaEventRecord(sent_, comm_stream_));
    CASCADE_CUDA_CHECK(cudaEventRecord(copied_, side_));
    CASCADE_CUDA_CHECK(cudaStreamWaitEvent(this->stream_, sent_, 0));
    CASCADE_CUDA_CHECK(cudaStreamWaitEvent(this->stream_, copied_, 0));
  }

  // ---- CASCADE_EXCHANGE_TIMING: two sets of events, each read back when reused
  struct TimingSet {
    std::vector<cudaEvent_t> ev;  //!< begin, end (stream_), then each chunk's start and end (comm_)
    bool pending = false;
  };
  bool timing() const { return !timing_[0].ev.empty(); }
  bool stream_ok() const { return this->stream_ != nullptr; }
  void timing_begin() {
    if (!timing()) return;
    collect(timing_[set_]);
    CASCADE_CUDA_CHECK(cudaEventRecord(timing_[set_].ev[0], this->stream_));
  }
  void timing_end() {
    if (!timing()) return;
    CASCADE_CUDA_CHECK(cudaEventRecord(timing_[set_].ev[1], this->stream_));
    timing_[set_].pending = true;
    set_ ^= 1;
  }
  void collect(TimingSet& s) {
    if (!s.pending) return;
    s.pending = false;
    if (cudaEventSynchronize(s.ev[1]) != cudaSuccess) return;
    float ms = 0;
    if (cudaEventElapsedTime(&ms, s.ev[0], s.ev[1]) == cudaSuccess) transform_ms_ += ms;
    for (int c = 0; c < x_.chunks; ++c)
      if (cudaEventElapsedTime(&ms, s.ev[2 + 2 * c], s.ev[3 + 2 * c]) == cudaSuccess) exchange_ms_ += ms;
    ++transforms_;
  }

  int ranks_, rank_, nx_;
  Slab slab_;
  SlabExchange x_{};
  bool strided_ = true;  //!< the x plans read and write the exchange buffers themselves
  Plans r2c_, c2c_;
  cufftHandle c2r_ = 0;
  std::size_t work_need_ = 0;
  Buffer<Cplx> rows_, send_, recv_;  //!< rows_: only without strided x plans
  ncclComm_t comm_ = nullptr;
  cudaStream_t comm_stream_ = nullptr;  //!< NCCL's transfers
  cudaStream_t side_ = nullptr;         //!< the copies of the own blocks, beside them
  cudaEvent_t ready_ = nullptr, sent_ = nullptr, copied_ = nullptr;
  TimingSet timing_[2];
  int set_ = 0;
  double exchange_ms_ = 0, transform_ms_ = 0, bytes_sent_ = 0;
  long transforms_ = 0;
};
#endif  // CASCADE_HAVE_NCCL

}  // namespace

template <class Real>
std::unique_ptr<Backend<Real>> make_cuda_slab_backend(const Grid& grid, int exchange_chunks) {
#if defined(CASCADE_HAVE_NCCL)
  // One rank per GPU: the ranks on a machine take its GPUs in order.
  const int count = cuda_device_count();
  const int local = parallel::rank_on_this_node(), here = parallel::ranks_on_this_node();
  if (count > 0 && here > count)
    throw InputError("run.backend: cuda with " + std::to_string(here) + " MPI ranks on this machine but " +
                     std::to_string(count) + " GPU" + (count == 1 ? "" : "s") + ": start one rank per GPU");
  return std::make_unique<BackendImpl<Real, CudaSlabExec<Real>>>(grid, count > 0 ? local % count : 0, exchange_chunks);
#else
  (void)grid;
  (void)exchange_chunks;
  throw InputError("run.backend: cuda over several MPI ranks needs NCCL, which this cascade was built without");
#endif
}

template std::unique_ptr<Backend<float>> make_cuda_slab_backend<float>(const Grid&, int);
template std::unique_ptr<Backend<double>> make_cuda_slab_backend<double>(const Grid&, int);

}  // namespace cascade
