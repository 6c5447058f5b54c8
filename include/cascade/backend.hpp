//! @file Backend<Real>: FFT plans, buffers and the spectral/pointwise operations of one device.
//!
//! Two implementations share every operation (kernels/*_ops.cuh functors): the CPU backend
//! (FFTW, OpenMP) and the CUDA backend (cuFFT, one-line kernels). Nothing else branches on
//! the device: physics code calls these virtuals. Transforms are unnormalised; the
//! operations that feed an inverse transform take the 1/(nx ny) factor (see spectral_ops.cuh).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cascade/buffer.hpp"
#include "cascade/grid.hpp"
#include "cascade/types.hpp"

namespace cascade {

struct RunConfig;

template <class Real>
class Backend {
 public:
  using Cplx = Complex<Real>;

  explicit Backend(const Grid& grid) : grid_(grid) {}
  virtual ~Backend() = default;
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  const Grid& grid() const { return grid_; }
  virtual BackendKind kind() const = 0;
  //! e.g. "cpu (FFTW 3.3.10, 2 threads)" or "cuda (NVIDIA H100 80GB HBM3, device 0)".
  virtual std::string description() const = 0;

  // ---- buffers and copies
  virtual Buffer<Real> real_field() = 0;  //!< ny * nx reals, zeroed
  virtual Buffer<Cplx> spectral_field() = 0;  //!< ny * (nx/2+1) complex, zeroed
  virtual void to_host(const Buffer<Real>& src, std::vector<Real>& dst) = 0;
  virtual void to_host(const Buffer<Cplx>& src, std::vector<Cplx>& dst) = 0;
  virtual void from_host(const std::vector<Real>& src, Buffer<Real>& dst) = 0;
  virtual void from_host(const std::vector<Cplx>& src, Buffer<Cplx>& dst) = 0;
  virtual Real value_at(const Buffer<Real>& a, std::size_t index) = 0;
  virtual void synchronize() = 0;  //!< wait for queued work (timing, host reads)

  // ---- transforms (unnormalised)
  //! Forward real-to-complex 2D transform; `in` is preserved.
  virtual void forward(const Buffer<Real>& in, Buffer<Cplx>& out_hat) = 0;
  //! Inverse complex-to-real 2D transform; `in_hat` is overwritten (as FFTW and cuFFT do).
  virtual void inverse(Buffer<Cplx>& in_hat, Buffer<Real>& out) = 0;

  // ---- spectral operations
  //! phi_hat = -r_hat / k^2 / (nx ny), k = 0 mode zero.
  virtual void poisson_solve(const Buffer<Cplx>& r_hat, Buffer<Cplx>& phi_hat) = 0;
  //! out_hat = (i kx)^ox (i ky)^oy in_hat / (nx ny); odd orders zero that Nyquist mode.
  virtual void derivative(const Buffer<Cplx>& in_hat, Buffer<Cplx>& out_hat, int ox, int oy) = 0;
  //! out_hat = a * in_hat (in place allowed).
  virtual void scale(const Buffer<Cplx>& in_hat, Buffer<Cplx>& out_hat, Real a) = 0;

  // ---- pointwise operations
  //! rhs = lap(exp(-s/(2 sigma^2))), exact = exp(-s/(2 sigma^2)) (exact may be null).
  virtual void gaussian_poisson_problem(Real sigma, Real x0, Real y0, Buffer<Real>& rhs,
                                        Buffer<Real>* exact) = 0;
  virtual void add_constant(Buffer<Real>& a, Real c) = 0;

 protected:
  Grid grid_;
};

//! Why the CUDA backend cannot be used here ("" when it can): not built, or no device.
std::string cuda_unavailable_reason();

//! Resolve `auto` to cuda or cpu; `why` receives the reason for the choice.
BackendKind resolve_backend(const std::string& requested, std::string& why);

//! Build a backend for the grid. `device` selects the GPU, `threads` the CPU threads (0 = all).
template <class Real>
std::unique_ptr<Backend<Real>> make_backend(BackendKind kind, const Grid& grid, int device = 0,
                                            int threads = 0);

#if defined(CASCADE_HAVE_CUDA)
template <class Real>
std::unique_ptr<Backend<Real>> make_cuda_backend(const Grid& grid, int device);
int cuda_device_count(std::string* error = nullptr);

struct CudaDeviceInfo {
  int index;
  std::string name;
  int major, minor;
  int multiprocessors;
  std::size_t total_memory, free_memory, l2_bytes;
};
std::vector<CudaDeviceInfo> cuda_devices();
#endif
template <class Real>
std::unique_ptr<Backend<Real>> make_cpu_backend(const Grid& grid, int threads);

}  // namespace cascade
