//! @file BackendImpl<Real, Exec>: every Backend operation written once over an executor.
//!
//! Exec supplies what differs between devices: allocation, copies, `for_each` (an OpenMP
//! loop or a kernel launch over a CASCADE_HD functor) and the FFT plans. Included by
//! backend_cpu.cpp (CpuExec) and backend_cuda.cu (CudaExec), so that each instantiation is
//! compiled by the right compiler.
#pragma once

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "cascade/backend.hpp"
#include "cascade/error.hpp"
#include "kernels/pointwise_ops.cuh"
#include "kernels/spectral_ops.cuh"

namespace cascade {

template <class Real, class Exec>
class BackendImpl final : public Backend<Real> {
 public:
  using Cplx = Complex<Real>;

  template <class... Args>
  explicit BackendImpl(const Grid& grid, Args&&... args)
      : Backend<Real>(grid), exec_(grid, std::forward<Args>(args)...) {}

  BackendKind kind() const override { return Exec::kKind; }
  std::string description() const override { return exec_.description(); }

  Buffer<Real> real_field() override { return exec_.template alloc<Real>(this->grid_.size()); }
  Buffer<Cplx> spectral_field() override {
    return exec_.template alloc<Cplx>(this->grid_.spectral_size());
  }
  void to_host(const Buffer<Real>& src, std::vector<Real>& dst) override { copy_out(src, dst); }
  void to_host(const Buffer<Cplx>& src, std::vector<Cplx>& dst) override { copy_out(src, dst); }
  void from_host(const std::vector<Real>& src, Buffer<Real>& dst) override { copy_in(src, dst); }
  void from_host(const std::vector<Cplx>& src, Buffer<Cplx>& dst) override { copy_in(src, dst); }
  Real value_at(const Buffer<Real>& a, std::size_t index) override {
    if (index >= a.size()) throw RunError("value_at: index out of range");
    Real v;
    exec_.copy_to_host(a.data() + index, &v, 1);
    return v;
  }
  void synchronize() override { exec_.synchronize(); }

  void forward(const Buffer<Real>& in, Buffer<Cplx>& out_hat) override {
    check_real(in);
    check_spectral(out_hat);
    exec_.forward(in.data(), out_hat.data());
  }
  void inverse(Buffer<Cplx>& in_hat, Buffer<Real>& out) override {
    check_spectral(in_hat);
    check_real(out);
    exec_.inverse(in_hat.data(), out.data());
  }

  void poisson_solve(const Buffer<Cplx>& r_hat, Buffer<Cplx>& phi_hat) override {
    check_spectral(r_hat);
    check_spectral(phi_hat);
    exec_.for_each(r_hat.size(),
                   PoissonSolve<Real>{shape(), inv_n(), r_hat.data(), phi_hat.data()});
  }
  void derivative(const Buffer<Cplx>& in_hat, Buffer<Cplx>& out_hat, int ox, int oy) override {
    check_spectral(in_hat);
    check_spectral(out_hat);
    if (ox < 0 || oy < 0) throw RunError("derivative: negative order");
    exec_.for_each(in_hat.size(),
                   Derivative<Real>{shape(), ox, oy, inv_n(), in_hat.data(), out_hat.data()});
  }
  void scale(const Buffer<Cplx>& in_hat, Buffer<Cplx>& out_hat, Real a) override {
    check_spectral(in_hat);
    check_spectral(out_hat);
    exec_.for_each(in_hat.size(), ScaleSpectral<Real>{a, in_hat.data(), out_hat.data()});
  }

  void gaussian_poisson_problem(Real sigma, Real x0, Real y0, Buffer<Real>& rhs,
                                Buffer<Real>* exact) override {
    check_real(rhs);
    if (exact) check_real(*exact);
    exec_.for_each(rhs.size(), GaussianPoissonProblem<Real>{physical(), sigma, x0, y0, rhs.data(),
                                                           exact ? exact->data() : nullptr});
  }
  void add_constant(Buffer<Real>& a, Real c) override {
    check_real(a);
    exec_.for_each(a.size(), AddConstant<Real>{c, a.data()});
  }

 private:
  SpectralShape<Real> shape() const {
    const Grid& g = this->grid_;
    return {g.nx, g.ny, g.nxh(), Real(2 * M_PI / g.lx), Real(2 * M_PI / g.ly)};
  }
  PhysicalShape<Real> physical() const {
    const Grid& g = this->grid_;
    return {g.nx, g.ny, Real(g.dx()), Real(g.dy())};
  }
  Real inv_n() const { return Real(1.0 / double(this->grid_.size())); }

  void check_real(const Buffer<Real>& b) const {
    if (b.size() != this->grid_.size()) throw RunError("backend: real buffer of the wrong size");
  }
  void check_spectral(const Buffer<Cplx>& b) const {
    if (b.size() != this->grid_.spectral_size())
      throw RunError("backend: spectral buffer of the wrong size");
  }
  template <class T>
  void copy_out(const Buffer<T>& src, std::vector<T>& dst) {
    dst.resize(src.size());
    exec_.copy_to_host(src.data(), dst.data(), src.size());
  }
  template <class T>
  void copy_in(const std::vector<T>& src, Buffer<T>& dst) {
    if (src.size() != dst.size()) throw RunError("from_host: size mismatch");
    exec_.copy_from_host(src.data(), dst.data(), src.size());
  }

  Exec exec_;
};

}  // namespace cascade
