//! @file BackendImpl<Real, Exec>: every Backend operation written once over an executor.
//!
//! Exec supplies what differs between devices: allocation, copies, `for_each` (an OpenMP
//! loop or a kernel launch over a CASCADE_HD functor) and the FFT plans. Included by
//! backend_cpu.cpp (CpuExec) and src/backends/cuda/ (CudaExec), so that each instantiation is
//! compiled by the right compiler.
#pragma once

#include <cmath>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "cascade/backend.hpp"
#include "cascade/error.hpp"
#include "cascade/parallel.hpp"
#include "kernels/field_fill.cuh"
#include "kernels/ns_ops.cuh"
#include "kernels/pointwise_ops.cuh"
#include "kernels/reduction_ops.cuh"
#include "kernels/spectral_ops.cuh"

namespace cascade {

//! A grid split over `ranks` must give each at least one row and one kx column (InputError).
inline void require_slabs_fit(const Grid& grid, int ranks) {
  if (!Slab::fits(grid, ranks))
    throw InputError("grid " + std::to_string(grid.nx) + " x " + std::to_string(grid.ny) + ": too small for " +
                     std::to_string(ranks) +
                     " MPI ranks (each rank needs at least one row and one of the nx/2+1 kx columns); use fewer ranks");
}

template <class Real, class Exec>
class BackendImpl final : public Backend<Real> {
 public:
  using Cplx = Complex<Real>;

  template <class... Args>
  explicit BackendImpl(const Grid& grid, Args&&... args)
      : Backend<Real>(grid), exec_(grid, std::forward<Args>(args)...) {
    this->slab_ = exec_.slab();
    if (this->slab_.transposed) {  // every rank's slab, for the gathers
      slabs_.resize(std::size_t(parallel::size()));
      parallel::allgather(&this->slab_, sizeof(Slab), slabs_.data());
    }
  }

  //! This backend holds members [first, first + members()) of an ensemble of `batch` split over
  //! the MPI ranks (Slab::of_members; the factories call it once, right after construction).
  void hold_members(int first, int batch) {
    Slab& s = this->slab_;
    if (s.transposed || first < 0 || first + s.members > batch)
      throw RunError("hold_members: members [" + std::to_string(first) + ", " + std::to_string(first + s.members) +
                     ") of " + std::to_string(batch) + " on a backend of whole grids");
    s.first_member = first;
    s.batch = batch;
  }

  BackendKind kind() const override { return Exec::kKind; }
  std::string description() const override { return exec_.description(); }

  Buffer<Real> real_field() override { return exec_.template alloc<Real>(this->slab_.real_count(this->grid_)); }
  Buffer<Cplx> spectral_field() override {
    return exec_.template alloc<Cplx>(this->slab_.spectral_count(this->grid_));
  }
  void real_pair(Buffer<Real>& first, Buffer<Real>& second) override {
    make_pair(this->slab_.real_count(this->grid_), first, second);
  }
  void spectral_pair(Buffer<Cplx>& first, Buffer<Cplx>& second) override {
    make_pair(this->slab_.spectral_count(this->grid_), first, second);
  }
  void to_host(const Buffer<Real>& src, std::vector<Real>& dst) override {
    if (this->slab_.members_split()) return gather_members(src, this->grid_.size(), dst);
    if (!decomposed()) return copy_out(src, dst);
    check_real(src);
    std::vector<Real> mine;
    copy_out(src, mine);
    std::vector<std::size_t> counts;
    for (const Slab& s : slabs_) counts.push_back(s.real_count(this->grid_));
    dst.assign(parallel::root() ? this->grid_.size() : 0, Real(0));
    parallel::gatherv(mine.data(), sizeof(Real), counts, dst.data());  // the slabs are rows in rank order
  }
  void to_host(const Buffer<Cplx>& src, std::vector<Cplx>& dst) override {
    if (this->slab_.members_split()) return gather_members(src, this->grid_.spectral_size(), dst);
    if (!decomposed()) return copy_out(src, dst);
    check_spectral(src);
    const Grid& g = this->grid_;
    std::vector<Cplx> mine, columns(parallel::root() ? g.spectral_size() : 0);
    copy_out(src, mine);
    std::vector<std::size_t> counts;
    for (const Slab& s : slabs_) counts.push_back(s.spectral_count(g));
    parallel::gatherv(mine.data(), sizeof(Cplx), counts, columns.data());  // [i][j]: columns in rank order
    dst.clear();
    if (!parallel::root()) return;
    dst.resize(g.spectral_size());
    const std::size_t nxh = std::size_t(g.nxh()), ny = std::size_t(g.ny);
    for (std::size_t i = 0; i < nxh; ++i)
      for (std::size_t j = 0; j < ny; ++j) dst[j * nxh + i] = columns[i * ny + j];
  }
  void from_host(const std::vector<Real>& src, Buffer<Real>& dst) override {
    if (this->slab_.members_split()) return keep_members(src, this->grid_.size(), dst);
    if (!decomposed()) return copy_in(src, dst);
    check_real(dst);
    if (src.size() != this->grid_.size()) throw RunError("from_host: size mismatch");
    const std::size_t first = std::size_t(this->slab_.j0) * std::size_t(this->grid_.nx);
    exec_.copy_from_host(src.data() + first, dst.data(), dst.size());
  }
  void from_host(const std::vector<Cplx>& src, Buffer<Cplx>& dst) override {
    if (this->slab_.members_split()) return keep_members(src, this->grid_.spectral_size(), dst);
    if (!decomposed()) return copy_in(src, dst);
    check_spectral(dst);
    const Grid& g = this->grid_;
    if (src.size() != g.spectral_size()) throw RunError("from_host: size mismatch");
    const Slab& s = this->slab_;
    std::vector<Cplx> mine(dst.size());
    const std::size_t nxh = std::size_t(g.nxh()), ny = std::size_t(g.ny);
    for (std::size_t c = 0; c < std::size_t(s.cols); ++c)
      for (std::size_t j = 0; j < ny; ++j) mine[c * ny + j] = src[j * nxh + std::size_t(s.i0) + c];
    copy_in(mine, dst);
  }
  //! The value at a global index (ny x nx); in a decomposed run the rank holding it sends it.
  Real value_at(const Buffer<Real>& a, std::size_t index) override {
    check_real(a);
    if (index >= this->grid_.size()) throw RunError("value_at: index out of range");
    Real v = Real(0);
    if (!decomposed()) {
      exec_.copy_to_host(a.data() + index, &v, 1);
      return v;
    }
    const int row = int(index / std::size_t(this->grid_.nx));
    int owner = 0;
    for (std::size_t r = 0; r < slabs_.size(); ++r)
      if (row >= slabs_[r].j0 && row < slabs_[r].j0 + slabs_[r].rows) owner = int(r);
    if (owner == parallel::rank())
      exec_.copy_to_host(a.data() + (index - std::size_t(this->slab_.j0) * std::size_t(this->grid_.nx)), &v, 1);
    parallel::broadcast(&v, sizeof(v), owner);
    return v;
  }
  void synchronize() override { exec_.synchronize(); }
  void device_memory(std::size_t& used, std::size_t& total) const override { exec_.device_memory(used, total); }
  std::size_t fft_work_bytes() const override { return exec_.fft_work_bytes(); }

  void forward(const Buffer<Real>& in, Buffer<Cplx>& out_hat) override {
    check_whole(in);
    check_whole(out_hat);
    exec_.forward(in.data(), out_hat.data());
  }
  void inverse(Buffer<Cplx>& in_hat, Buffer<Real>& out) override {
    check_whole(in_hat);
    check_whole(out);
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

  void fill_modes(const FieldSpec<Real>& field, Buffer<Cplx>& out) override {
    check_spectral(out);
    std::visit(
        [&](const auto& spec) {
          using Spec = std::decay_t<decltype(spec)>;
          if constexpr (Spec::kSpectral) exec_.for_each(out.size(), FillModes<Real, Spec>{shape(), mask(), spec, out.data()});
          else throw RunError("fill_modes: the field is given at points (fill_points)");
        },
        field);
  }
  void set_step_forcing(const std::vector<FieldSpec<Real>>& bases, const std::vector<char>& at_rest) override {
    const std::size_t members = bases.size();
    if (members != std::size_t(this->slab_.members) || at_rest.size() != members)
      throw RunError("set_step_forcing: one base field and one at-rest mark for each of the buffers' " +
                     std::to_string(this->slab_.members) + " members");
    std::visit(
        [&](const auto& first) {
          using Spec = std::decay_t<decltype(first)>;
          if constexpr (Spec::kSpectral && HasAtStep<Spec>::value) {
            std::vector<MemberField<Spec>> each(members);
            for (std::size_t m = 0; m < members; ++m) {
              const Spec* base = std::get_if<Spec>(&bases[m]);
              if (!base) throw RunError("set_step_forcing: the members' base fields are of several kinds");
              each[m] = {*base, at_rest[m] != 0};
            }
            const std::size_t bytes = members * sizeof(MemberField<Spec>);
            // Rewritten in place when its size holds: a recorded step reads this memory.
            if (step_forcing_.size() != bytes) step_forcing_ = exec_.template alloc<unsigned char>(bytes);
            exec_.copy_from_host(reinterpret_cast<const unsigned char*>(each.data()), step_forcing_.data(), bytes);
            step_forcing_kind_ = first;
          } else {
            throw RunError("set_step_forcing: the field is not white noise (no at_step)");
          }
        },
        bases.at(0));
  }
  void step_forcing(Buffer<Cplx>& out, long step, double h) override {
    check_spectral(out);
    if (!step_forcing_kind_) throw RunError("step_forcing: no base fields (set_step_forcing)");
    std::visit(
        [&](const auto& kind) {
          using Spec = std::decay_t<decltype(kind)>;
          if constexpr (Spec::kSpectral && HasAtStep<Spec>::value) {
            const StepClock* clock = nullptr;
            if constexpr (Exec::kCanGraph) clock = exec_.step_clock();
            const auto* each = reinterpret_cast<const MemberField<Spec>*>(step_forcing_.data());
            exec_.for_each(out.size(), StepForcing<Real, Spec>{shape(), mask(), each,
                                                               out.size() / std::size_t(this->slab_.members),
                                                               out.data(), clock, step, h});
          }
        },
        *step_forcing_kind_);
  }
  void fill_points(const FieldSpec<Real>& field, Buffer<Real>& out, bool add) override {
    check_real(out);
    std::visit(
        [&](const auto& spec) {
          using Spec = std::decay_t<decltype(spec)>;
          if constexpr (!Spec::kSpectral) exec_.for_each(out.size(), FillPoints<Real, Spec>{physical(), spec, add, out.data()});
          else throw RunError("fill_points: the field is given at modes (fill_modes)");
        },
        field);
  }
  void add_constant(Buffer<Real>& a, Real c) override {
    check_real(a);
    exec_.for_each(a.size(), AddConstant<Real>{c, a.data()});
  }

  void velocity_hat(const Buffer<Cplx>& w, Buffer<Cplx>& u, Buffer<Cplx>& v) override {
    check_spectral(w, u, v);
    exec_.for_each(w.size(), VelocityFromVorticity<Real>{shape(), inv_n(), w.data(), u.data(), v.data()});
  }
  void velocity_inputs(const Buffer<Cplx>& w, Buffer<Cplx>& a, Buffer<Cplx>& b) override {
    if constexpr (Exec::kCanFuse) {
      if (exec_.has_columns()) {  // the column kernel's inverse passes: y in physical space
        check_whole(w);
        check_whole(a);
        check_whole(b);
        exec_.column_inputs(InputsOfColumns<Real>{shape(), mask(), inv_n(), w.data(), 0, 0}, a.data(), b.data());
        return;
      }
      if (packed(a, b)) {
        check_spectral(w, a, b);
        exec_.for_each(w.size(), PackedVelocity<Real>{shape(), inv_n(), w.data(), a.data()});
        return;
      }
    }
    velocity_hat(w, a, b);
  }
  void natural_products(Buffer<Cplx>& a, Buffer<Cplx>& b, Buffer<Real>& u, Buffer<Real>& v) override {
    if constexpr (Exec::kCanFuse) {
      if (exec_.has_columns()) {  // the columns' forward passes, from copies of a, b in u, v
        for (const Buffer<Cplx>* x : {&a, &b}) check_whole(*x);
        for (const Buffer<Real>* x : {&u, &v}) check_whole(*x);  // ny nx reals: ny ld complex numbers and more
        return exec_.column_forward(a.data(), b.data(), reinterpret_cast<Cplx*>(u.data()),
                                    reinterpret_cast<Cplx*>(v.data()));
      }
      if (packed(a, b) && paired(u, v)) {
        check_spectral(a, b);
        check_real(u);
        Cplx* const z = reinterpret_cast<Cplx*>(u.data());  // the pair u, v holds ny nx complex numbers
        exec_.for_each(u.size(), CopyComplex<Real>{a.data(), z});
        exec_.for_each(a.size(), UnpackPair<Real>{shape(), z, a.data(), b.data()});
      }
    }
  }
  void advective_inputs(const Buffer<Cplx>& w, Buffer<Cplx>& u, Buffer<Cplx>& v, Buffer<Cplx>& wx,
                        Buffer<Cplx>& wy) override {
    check_spectral(w, u, v);
    check_spectral(wx, wy);
    exec_.for_each(w.size(), AdvectiveInputs<Real>{shape(), inv_n(), w.data(), u.data(), v.data(),
                                                   wx.data(), wy.data()});
  }
  void basdevant_products(Buffer<Real>& u, Buffer<Real>& v, bool cfl) override {
    check_real(u);
    check_real(v);
    max_or_not(cfl, u.size(), BasdevantProducts<Real>{cfl_speed(), u.data(), v.data()});
  }
  void advective_product(const Buffer<Real>& u, const Buffer<Real>& v, Buffer<Real>& wx, const Buffer<Real>& wy,
                         bool cfl) override {
    check_real(u);
    check_real(v);
    check_real(wx);
    check_real(wy);
    max_or_not(cfl, u.size(), AdvectiveProduct<Real>{cfl_speed(), u.data(), v.data(), wx.data(), wy.data()});
  }
  void nonlinear_products(bool advective, bool cfl, Buffer<Cplx>& a, Buffer<Cplx>& b, Buffer<Cplx>* c,
                          Buffer<Cplx>* d, Buffer<Real>& u, Buffer<Real>& v, Buffer<Real>* wx,
                          Buffer<Real>* wy) override {
    check_whole(a);
    check_whole(b);
    check_whole(u);
    check_whole(v);
    if (advective) {
      if (!c || !d || !wx || !wy) throw RunError("nonlinear_products: the advective form needs four work fields");
      check_spectral(*c, *d);
      check_real(*wx);
      check_real(*wy);
    }
    if constexpr (Exec::kRowFused) {
      if (exec_.rows_fused()) return products_by_rows(advective, cfl, a, b, c, d);
    }
    if constexpr (Exec::kCanFuse) {  // the GPU's row kernel: Basdevant's form alone
      if (!advective && exec_.has_row_products()) return exec_.step_row_products(a.data(), b.data(), cfl, cfl_speed());
      if (!advective && packed(a, b) && paired(u, v)) {  // complex pairs: z = u + i v in u's and v's memory
        Cplx* const z = reinterpret_cast<Cplx*>(u.data());
        exec_.packed_inverse(a.data(), z);  // stores the products u v + i (v^2 - u^2) (a callback)
        if (cfl) exec_.for_each_max_async(u.size(), PackedProductsSpeed<Real>{cfl_speed(), z});
        exec_.packed_forward(z, a.data());
        return;
      }
    }
    step_inverse(a, b, u, v);
    if (!advective) {
      basdevant_products(u, v, cfl);
      step_forward(u, v, a, b);
      return;
    }
    step_inverse(*c, *d, *wx, *wy);
    advective_product(u, v, *wx, *wy, cfl);
    step_forward(*wx, a);
  }
  StepPlan plan_for(const StepRequest& request, bool basdevant) const override {
    StepProblem problem{this->grid_.nx, this->grid_.ny, precision_of<Real>(), basdevant,
                        this->grid_.dealias == Dealias::TwoThirds, {}, this->slab_.members};
    problem.device.kind = StepDevice::Kind::Slabs;
    if constexpr (Exec::kCanFuse) problem.device = exec_.step_device();
    if constexpr (Exec::kRowFused) problem.device.kind = StepDevice::Kind::Cpu;
    return plan_step(problem, request);
  }
  StepPlan prepare_step(const StepRequest& request, bool basdevant = true) override {
    if (prepared_) return plan_;
    plan_ = plan_for(request, basdevant);
    if constexpr (Exec::kCanFuse) plan_ = exec_.prepare_plan(plan_, shape(), mask());
    if constexpr (Exec::kRowFused) exec_.prepare_rows(plan_);
    prepared_ = true;
    return plan_;
  }
  StepPlan step_plan() const override { return plan_; }
  Real cfl_maximum() override {
    if (!this->slab_.members_split()) return exec_.max_result();  // a slab executor agrees its own
    // An ensemble split over ranks: every rank's members' maximum, combined as the slab
    // executors do (MaxOp: NaN anywhere is NaN everywhere), so that all keep one dt.
    const double mine = double(exec_.max_result());
    std::vector<double> all(std::size_t(parallel::size()));
    parallel::allgather(&mine, sizeof(double), all.data());
    const MaxOp<double> op;
    double result = MaxOp<double>::identity();
    for (double v : all) result = op(result, v);
    return Real(result);
  }
  void apply_mask(Buffer<Cplx>& a) override {
    check_spectral(a);
    exec_.for_each(a.size(), ApplyMask<Real>{shape(), mask(), a.data()});
  }
  void fused_stage(const LinearCoefficients& lin, const StageCoefficients& c, bool advective,
                   const Buffer<Cplx>* f, Buffer<Cplx>* w, bool save_w, Buffer<Cplx>& s, Buffer<Cplx>& a,
                   Buffer<Cplx>& b, Buffer<Cplx>* cc, Buffer<Cplx>* d, const BudgetWeights* budget) override {
    check_whole(s);
    check_whole(a);
    check_whole(b);
    if (f) check_whole(*f);
    if (w) check_whole(*w);
    if (advective && (!cc || !d)) throw RunError("fused_stage: the advective form needs four work fields");
    if (advective) check_spectral(*cc, *d);
    if (save_w && !w) throw RunError("fused_stage: save_w without w");
    const FusedStage<Real> stage{shape(), mask(), linear(lin), inv_n(), advective, Real(c.h), Real(c.dS), Real(c.hb),
                                 c.last, Real(c.d_final), Real(c.dW), Real(c.dK), Real(c.ha), save_w, skip_removed(),
                                 f ? f->data() : nullptr, w ? w->data() : nullptr, s.data(), a.data(), b.data(),
                                 advective ? cc->data() : nullptr, advective ? d->data() : nullptr};
    const SpectralSumsOfMode<Real> sums{shape(), linear(lin), s.data(), f ? f->data() : nullptr};
    const int i = c.stage;
    if constexpr (Exec::kCanGraph) {  // a step the host chose: its numbers in the device's clock
      if (!exec_.recording()) exec_.ensure_stage(i, c.h, c.hb, c.ha, budget);
    }
    if constexpr (Exec::kCanFuse) {
      if (!advective && exec_.has_columns()) {  // the columns' passes around the stage (column_fft.cuh)
        const StageOfColumns<Real> op{stage, sums, budget != nullptr, 0, 0};
        return exec_.column_stage(op, a.data(), b.data(), i, member_lin_.empty() ? nullptr : member_lin_.data());
      }
      if (!advective && packed(a, b)) {  // the products' transforms and the next inputs as complex pairs
        const PackedStage<Real> packed_stage{stage, sums, budget != nullptr};
        if (!member_lin_.empty())  // an ensemble whose members' coefficients differ
          return run_stage(s.size(), EachMember<PackedStage<Real>>{packed_stage, member_lin_.data()}, budget, i);
        return run_stage(s.size(), packed_stage, budget, i);
      }
    }
    if (!member_lin_.empty()) {  // an ensemble whose members' coefficients differ
      if (!budget) return run_stage(s.size(), EachMember<FusedStage<Real>>{stage, member_lin_.data()}, budget, i);
      return run_stage(s.size(), EachMember<FusedStageWithSums<Real>>{{stage, sums}, member_lin_.data()}, budget, i);
    }
    if (!budget) return run_stage(s.size(), stage, budget, i);
    run_stage(s.size(), FusedStageWithSums<Real>{stage, sums}, budget, i);
  }

  std::string step_graph_unavailable() const override {
    if (this->slab_.members_split()) return "the ensemble's CFL maximum is agreed between MPI ranks from the host";
    if constexpr (Exec::kCanGraph) return exec_.graph_unavailable();
    return std::string("the ") + to_string(Exec::kKind) + " backend steps from the host";
  }
  int capture_step_graph(const StepRule& rule, const std::function<void()>& inputs,
                         const std::function<void()>& evaluation, const std::function<void()>& stages) override {
    const std::string why = step_graph_unavailable();
    if (!why.empty()) throw RunError("capture_step_graph: " + why);
    if constexpr (Exec::kCanGraph) return exec_.capture_graph(rule, inputs, evaluation, stages);
    return 0;
  }
  long run_step_graph(StepClock& k, double t_output, long max_steps) override {
    if constexpr (Exec::kCanGraph) return exec_.run_graph(k, t_output, max_steps);
    throw RunError("run_step_graph: " + step_graph_unavailable());
  }
  void drop_step_graph() override {
    if constexpr (Exec::kCanGraph) exec_.drop_graph();
  }
  void set_step_clock(const StepClock& k) override {
    if constexpr (Exec::kCanGraph) exec_.set_clock(k);
  }
  void budget_integrals(double* out) override { exec_.budget_integrals(out); }
  void set_budget_integrals(const double* in) override { exec_.set_budget_integrals(in); }
  void set_member_coefficients(const std::vector<LinearCoefficients>& each) override {
    if (each.empty()) {
      member_lin_ = Buffer<LinearCoefficients>();
      return;
    }
    if (each.size() != std::size_t(this->slab_.members))
      throw RunError("set_member_coefficients: one set of coefficients a member");
    member_lin_ = exec_.template alloc<LinearCoefficients>(each.size());
    exec_.copy_from_host(each.data(), member_lin_.data(), each.size());
  }
  SpectralSums spectral_sums(const LinearCoefficients& lin, const Buffer<Cplx>& w,
                             const Buffer<Cplx>* f) override {
    check_spectral(w);
    if (f) check_spectral(*f);
    return exec_.transform_sum(w.size(), SpectralSumsOfMode<Real>{shape(), linear(lin), w.data(),
                                                                  f ? f->data() : nullptr});
  }
  Real max_speed(const Buffer<Real>& u, const Buffer<Real>& v) override {
    check_real(u);
    check_real(v);
    return exec_.for_each_max(u.size(), Speed<Real>{u.data(), v.data()});
  }
  Real max_rate(const Buffer<Real>& u, const Buffer<Real>& v) override {
    check_real(u);
    check_real(v);
    return exec_.for_each_max(u.size(), CflRate<Real>{cfl_speed(), u.data(), v.data()});
  }
  void streamfunction_hat(const Buffer<Cplx>& w, Buffer<Cplx>& psi) override {
    check_spectral(w);
    check_spectral(psi);
    // lap(psi) = -omega: the Poisson operation with the sign folded into its scale.
    exec_.for_each(w.size(), PoissonSolve<Real>{shape(), -inv_n(), w.data(), psi.data()});
  }
  void shell_spectra(const Buffer<Cplx>& w, bool advective, const Buffer<Cplx>* a, const Buffer<Cplx>* b,
                     double dk, int shells, std::vector<double> (&out)[4]) override {
    check_spectral(w);
    if (a) check_spectral(*a);
    if (b) check_spectral(*b);
    if (shells < 1 || !(dk > 0)) throw RunError("shell_spectra: need shells >= 1 and dk > 0");
    exec_.histogram4(w.size(),
                     ShellSpectrumOfMode<Real>{shape(), mask(), dk, w.data(), advective, a ? a->data() : nullptr,
                                               b ? b->data() : nullptr},
                     shells, out);
  }

 private:
  //! A fused stage over every index, adding the budget sums with `budget`'s weights or not.
  //! On a GPU its h-dependent numbers (stage i's) and the weights are the device clock's
  //! (Clocked): the same kernels whether the host chose the step (fused_stage put them there)
  //! or the device did (the step recorded as a graph).
  template <class Fn>
  void run_stage(std::size_t n, const Fn& f, const BudgetWeights* budget, int i) {
    if constexpr (Exec::kCanGraph) {
      const Clocked<Fn> clocked{f, exec_.step_clock(), i};
      if constexpr (std::is_void_v<decltype(f(std::size_t(0)))>) exec_.for_each(n, clocked);
      else if (budget) exec_.sum_into_budget(n, clocked, *budget, exec_.step_weights());
      else exec_.for_each(n, clocked);
    } else {
      if constexpr (std::is_void_v<decltype(f(std::size_t(0)))>) exec_.for_each(n, f);  // no sums to add
      else if (budget) exec_.sum_into_budget(n, f, *budget);
      else exec_.for_each(n, f);
    }
  }
  //! The functor over every index, starting its results' maximum (cfl_maximum) or not.
  template <class Fn>
  void max_or_not(bool with_max, std::size_t n, const Fn& f) {
    if (with_max) exec_.for_each_max_async(n, f);
    else exec_.for_each(n, f);
  }
  //! nonlinear_products row by row (StepStrategy::CpuRows): the functors of the products over
  //! one row at a time.
  void products_by_rows(bool advective, bool cfl, Buffer<Cplx>& a, Buffer<Cplx>& b, Buffer<Cplx>* c,
                        Buffer<Cplx>* d) {
    if constexpr (Exec::kRowFused) {
      const CflSpeed<Real> speed = cfl_speed();
      if (!advective) {
        Cplx* const in[2] = {a.data(), b.data()};
        const int out_rows[2] = {0, 1};  // u <- u v, v <- v^2 - u^2 (BasdevantProducts) into a, b
        exec_.products_by_rows(2, in, 2, out_rows, in, cfl,
                               [&](Real* const* r) { return BasdevantProducts<Real>{speed, r[0], r[1]}; });
        return;
      }
      Cplx* const in[4] = {a.data(), b.data(), c->data(), d->data()};
      Cplx* const out[1] = {a.data()};
      const int out_rows[1] = {2};  // omega_x <- -(u omega_x + v omega_y) (AdvectiveProduct) into a
      exec_.products_by_rows(4, in, 1, out_rows, out, cfl, [&](Real* const* r) {
        return AdvectiveProduct<Real>{speed, r[0], r[1], r[2], r[3]};
      });
    }
  }
  //! Whether the step's inverse transforms read the kept modes alone, so that the fused stage
  //! may leave the removed ones alone (prepare_step).
  bool skip_removed() const {
    if constexpr (Exec::kCanFuse) return exec_.fused_level() >= 2;
    return false;
  }
  //! The transforms of nonlinear_products: with the dealiasing folded in where made, and two
  //! fields in one batched transform where they are pairs (spectral_pair, real_pair).
  void step_inverse(Buffer<Cplx>& in1, Buffer<Cplx>& in2, Buffer<Real>& out1, Buffer<Real>& out2) {
    if constexpr (Exec::kCanFuse) {
      if (exec_.has_pairs() && paired(in1, in2) && paired(out1, out2))
        return exec_.step_inverse_pair(in1.data(), out1.data());
      exec_.step_inverse(in1.data(), out1.data());
      exec_.step_inverse(in2.data(), out2.data());
    } else {
      exec_.inverse(in1.data(), out1.data());
      exec_.inverse(in2.data(), out2.data());
    }
  }
  void step_forward(const Buffer<Real>& in1, const Buffer<Real>& in2, Buffer<Cplx>& out1, Buffer<Cplx>& out2) {
    if constexpr (Exec::kCanFuse) {
      if (exec_.has_pairs() && paired(in1, in2) && paired(out1, out2))
        return exec_.step_forward_pair(in1.data(), out1.data());
    }
    step_forward(in1, out1);
    step_forward(in2, out2);
  }
  void step_forward(const Buffer<Real>& in, Buffer<Cplx>& out) {
    if constexpr (Exec::kCanFuse) exec_.step_forward(in.data(), out.data());
    else exec_.forward(in.data(), out.data());
  }
  //! Whether a and b hold a complex pair's full layout between the step's operations (the
  //! GPU's choice, for pairs alone).
  bool packed(const Buffer<Cplx>& a, const Buffer<Cplx>& b) const {
    if constexpr (Exec::kCanFuse) return exec_.has_packed() && paired(a, b);
    return false;
  }
  //! Whether first and second were made a pair (make_pair records it in first).
  template <class T>
  static bool paired(const Buffer<T>& first, const Buffer<T>& second) {
    return first.pairs_with(second);
  }
  template <class T>
  void make_pair(std::size_t n, Buffer<T>& first, Buffer<T>& second) {
    Buffer<T> whole = exec_.template alloc<T>(2 * n);
    T* const data = whole.data();
    const MemorySpace space = whole.space();
    const typename Buffer<T>::Deleter deleter = whole.release();
    first = Buffer<T>(data, n, space, deleter);  // owns the allocation
    second = Buffer<T>(data + n, n, space, nullptr);  // a view: no deleter
    first.set_pair(second);
  }
  //! Whether this backend holds a slab of the grid (an MPI rank of a decomposed run).
  bool decomposed() const { return this->slab_.transposed; }
  SpectralShape<Real> shape() const {
    const Grid& g = this->grid_;
    const Slab& s = this->slab_;
    return {g.nx, g.ny, g.nxh(), Real(2 * M_PI / g.lx), Real(2 * M_PI / g.ly), 1.0 / g.nxh(),
            s.i0, s.transposed, 1.0 / g.ny};
  }
  PhysicalShape<Real> physical() const {
    const Grid& g = this->grid_;
    return {g.nx, g.ny, Real(g.dx()), Real(g.dy()), 1.0 / g.nx, this->slab_.j0, 1.0 / g.ny};
  }
  Real inv_n() const { return Real(1.0 / double(this->grid_.size())); }
  DealiasMask<Real> mask() const { return {this->grid_.dealias == Dealias::TwoThirds}; }
  CflSpeed<Real> cfl_speed() const {
    return {Real(1.0 / this->grid_.dx()), Real(1.0 / this->grid_.dy())};
  }
  static LinearOperator<Real> linear(const LinearCoefficients& c) { return {c}; }
  template <class... More>
  void check_spectral(const Buffer<Cplx>& a, const Buffer<Cplx>& b, const More&... more) const {
    check_spectral(a);
    check_spectral(b, more...);
  }

  //! A buffer of the backend's fields: every member's, or one member's (a member view, for the
  //! operations that go mode by mode or point by point).
  void check_real(const Buffer<Real>& b) const {
    if (b.size() != this->slab_.real_count(this->grid_) && b.size() != this->slab_.member_real_count(this->grid_))
      throw RunError("backend: real buffer of the wrong size");
  }
  void check_spectral(const Buffer<Cplx>& b) const {
    if (b.size() != this->slab_.spectral_count(this->grid_) &&
        b.size() != this->slab_.member_spectral_count(this->grid_))
      throw RunError("backend: spectral buffer of the wrong size");
  }
  //! Every member's field: the transforms and the step go over the whole batch.
  void check_whole(const Buffer<Real>& b) const {
    if (b.size() != this->slab_.real_count(this->grid_))
      throw RunError("backend: real buffer of the wrong size (the transforms take every member)");
  }
  void check_whole(const Buffer<Cplx>& b) const {
    if (b.size() != this->slab_.spectral_count(this->grid_))
      throw RunError("backend: spectral buffer of the wrong size (the transforms take every member)");
  }
  //! to_host of an ensemble split over ranks: a buffer of this rank's members is gathered on
  //! rank 0 (rank order is member order; elsewhere dst is empty); a member view is copied.
  template <class T>
  void gather_members(const Buffer<T>& src, std::size_t per_member, std::vector<T>& dst) {
    const Slab& s = this->slab_;
    if (src.size() != std::size_t(s.members) * per_member) {
      if (src.size() != per_member) throw RunError("to_host: buffer of the wrong size");
      return copy_out(src, dst);
    }
    std::vector<T> mine;
    copy_out(src, mine);
    std::vector<std::size_t> counts;
    for (int r = 0; r < parallel::size(); ++r)
      counts.push_back(std::size_t(Slab::of_members(this->grid_, s.batch, r, parallel::size()).members) * per_member);
    dst.assign(parallel::root() ? std::size_t(s.batch) * per_member : 0, T{});
    parallel::gatherv(mine.data(), sizeof(T), counts, dst.data());
  }
  //! from_host of an ensemble split over ranks: every member's fields (on every rank) into a
  //! buffer of this rank's members keeps its own; one member's field is copied as it is.
  template <class T>
  void keep_members(const std::vector<T>& src, std::size_t per_member, Buffer<T>& dst) {
    const Slab& s = this->slab_;
    if (src.size() != std::size_t(s.batch) * per_member) return copy_in(src, dst);
    if (dst.size() != std::size_t(s.members) * per_member) throw RunError("from_host: size mismatch");
    exec_.copy_from_host(src.data() + std::size_t(s.first_member) * per_member, dst.data(), dst.size());
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
  Buffer<LinearCoefficients> member_lin_;  //!< each member's coefficients (set_member_coefficients)
  Buffer<unsigned char> step_forcing_;            //!< each member's MemberField (set_step_forcing)
  std::optional<FieldSpec<Real>> step_forcing_kind_;  //!< their kind: the first member's
  std::vector<Slab> slabs_;  //!< every rank's slab (decomposed runs only)
  StepPlan plan_{StepStrategy::Plain, CallbackLevel::Off, false, "not made yet"};
  bool prepared_ = false;
};

}  // namespace cascade
