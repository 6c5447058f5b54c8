//! @file Backend<Real>: FFT plans, buffers and the spectral/pointwise operations of one device.
//!
//! Two implementations share every operation (kernels/*_ops.cuh functors): the CPU backend
//! (FFTW, OpenMP) and the CUDA backend (cuFFT, one-line kernels). Nothing else branches on
//! the device: physics code calls these virtuals. Transforms are unnormalised; the
//! operations that feed an inverse transform take the 1/(nx ny) factor (see spectral_ops.cuh).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cascade/buffer.hpp"
#include "cascade/coefficients.hpp"
#include "cascade/fields.hpp"
#include "cascade/grid.hpp"
#include "cascade/step_clock.hpp"
#include "cascade/step_plan.hpp"
#include "cascade/types.hpp"

namespace cascade {

struct RunConfig;

template <class Real>
class Backend {
 public:
  using Cplx = Complex<Real>;

  explicit Backend(const Grid& grid) : grid_(grid), slab_(Slab::whole(grid)) {}
  virtual ~Backend() = default;
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  const Grid& grid() const { return grid_; }
  //! The part of the grid this backend holds: all of it, or a rank's slab (MPI). Buffers hold
  //! the slab; to_host/from_host give and take whole fields in the layouts of grid.hpp. In a
  //! decomposed run both are collective: to_host gathers the field on rank 0 (the other ranks
  //! get an empty vector: only rank 0 writes files), from_host takes the whole field on every
  //! rank and keeps its slab.
  const Slab& slab() const { return slab_; }
  //! The fields every buffer holds, one after the other: the members of an ensemble, stepped
  //! as one batch (1: a single run). The transforms and the step's operations (forward,
  //! inverse, nonlinear_products, fused_stage) go over all of them; the operations mode by mode
  //! or point by point also take one member's field (member_view), and the reductions
  //! (spectral_sums, max_speed, shell_spectra) are then that member's; to_host/from_host copy
  //! what the buffer holds.
  //!
  //! An ensemble split over MPI ranks (Slab::of_members, slab().members_split()): this rank
  //! holds members [slab().first_member, + members()) of the run's slab().batch, whole grids,
  //! and its operations, transforms and reductions are its own members' alone, with two
  //! exceptions, both collective: cfl_maximum() is the maximum over every rank's members (NaN
  //! anywhere is NaN everywhere), and to_host/from_host of a buffer of its members give and take
  //! the whole batch: to_host gathers every rank's members on rank 0 in member order (the other
  //! ranks get an empty vector), from_host takes every member's field on every rank and keeps
  //! its own. A member view (or one member's field from the host) is copied as it is.
  int members() const { return slab_.members; }
  //! Member m's field in `whole` (a buffer of every member's): a view, which must not outlive it.
  template <class T>
  Buffer<T> member_view(const Buffer<T>& whole, int m) const {
    const std::size_t n = whole.size() / std::size_t(slab_.members);
    return Buffer<T>(const_cast<T*>(whole.data()) + std::size_t(m) * n, n, whole.space(), nullptr);
  }
  virtual BackendKind kind() const = 0;
  //! e.g. "cpu (FFTW 3.3.10, 2 threads)" or "cuda (NVIDIA H100 80GB HBM3, device 0)".
  virtual std::string description() const = 0;

  // ---- buffers and copies
  virtual Buffer<Real> real_field() = 0;  //!< ny * nx reals (of the slab), zeroed
  virtual Buffer<Cplx> spectral_field() = 0;  //!< ny * (nx/2+1) complex (of the slab), zeroed
  //! Two fields in one allocation, the second right after the first (which owns it; the
  //! second is a view and must not outlive it): the GPU transforms such a pair with one
  //! batched plan (prepare_step).
  virtual void real_pair(Buffer<Real>& first, Buffer<Real>& second) = 0;
  virtual void spectral_pair(Buffer<Cplx>& first, Buffer<Cplx>& second) = 0;
  virtual void to_host(const Buffer<Real>& src, std::vector<Real>& dst) = 0;
  virtual void to_host(const Buffer<Cplx>& src, std::vector<Cplx>& dst) = 0;
  virtual void from_host(const std::vector<Real>& src, Buffer<Real>& dst) = 0;
  virtual void from_host(const std::vector<Cplx>& src, Buffer<Cplx>& dst) = 0;
  virtual Real value_at(const Buffer<Real>& a, std::size_t index) = 0;
  virtual void synchronize() = 0;  //!< wait for queued work (timing, host reads)
  //! Device memory in use on this backend's GPU (all processes), and its total; 0, 0 on the CPU.
  virtual void device_memory(std::size_t& used, std::size_t& total) const = 0;
  //! Bytes of the FFT plans' work area (shared by both directions; 0 on the CPU).
  virtual std::size_t fft_work_bytes() const = 0;

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

  // ---- fields (include/cascade/fields.hpp)
  //! out_hat = the field at every mode the dealiasing keeps, zero elsewhere (k = 0 as the field
  //! gives it). RunError for a field given at points.
  virtual void fill_modes(const FieldSpec<Real>& field, Buffer<Cplx>& out_hat) = 0;
  //! out = the field at every point, or out + the field with `add` (summed in double). RunError
  //! for a field given at modes.
  virtual void fill_points(const FieldSpec<Real>& field, Buffer<Real>& out, bool add = false) = 0;
  //! White noise (kernels/field_fill.cuh, StepForcing): each member's base field (one a member
  //! of the buffers, all of one kind with at_step; none where at_rest marks it), kept for
  //! step_forcing. Called again when a member is dropped: the same memory, rewritten, which a
  //! recorded step reads. RunError for fields without at_step, of several kinds, or too few.
  virtual void set_step_forcing(const std::vector<FieldSpec<Real>>& bases, const std::vector<char>& at_rest) = 0;
  //! out_hat = the draw of the step the step's clock takes (set_step_clock, or the step on the
  //! device's own), every member's; where the backend has no clock, of step `step` and size h.
  virtual void step_forcing(Buffer<Cplx>& out_hat, long step, double h) = 0;
  virtual void add_constant(Buffer<Real>& a, Real c) = 0;

  // ---- the vorticity equation (kernels/ns_ops.cuh); the state omega_hat is kept dealiased
  //! u_hat, v_hat from omega_hat, scaled by 1/(nx ny) for the inverse transform.
  virtual void velocity_hat(const Buffer<Cplx>& omega_hat, Buffer<Cplx>& u_hat, Buffer<Cplx>& v_hat) = 0;
  //! The inputs of a Basdevant evaluation of omega_hat into the pair a, b (spectral_pair), in
  //! the layout nonlinear_products takes: velocity_hat's, or, where the step runs as complex
  //! pairs (prepare_step), the full spectrum of u + i v in a's and b's memory, or, as rows and
  //! columns, velocity_hat's kept columns transformed back along y (the column kernel's).
  virtual void velocity_inputs(const Buffer<Cplx>& omega_hat, Buffer<Cplx>& a, Buffer<Cplx>& b) = 0;
  //! After nonlinear_products on the pairs a, b and u, v: a <- (u v)_hat, b <- (v^2 - u^2)_hat
  //! as half spectra (shell_spectra reads them so). Where the step runs as complex pairs they
  //! are unpacked (u, v serve as scratch), as rows and columns their kept columns transformed
  //! along y; elsewhere they are so already and nothing is done.
  virtual void natural_products(Buffer<Cplx>& a, Buffer<Cplx>& b, Buffer<Real>& u, Buffer<Real>& v) = 0;
  //! u_hat, v_hat, (omega_x)_hat, (omega_y)_hat, scaled by 1/(nx ny).
  virtual void advective_inputs(const Buffer<Cplx>& omega_hat, Buffer<Cplx>& u_hat, Buffer<Cplx>& v_hat,
                                Buffer<Cplx>& wx_hat, Buffer<Cplx>& wy_hat) = 0;
  //! In place u <- u v, v <- v^2 - u^2; with `cfl`, the same pass also takes the CFL maximum
  //! max(|u|/dx + |v|/dy) of the input (NaN if any value is NaN), which cfl_maximum() returns;
  //! without (the later stages of a step), no maximum is taken.
  virtual void basdevant_products(Buffer<Real>& u, Buffer<Real>& v, bool cfl) = 0;
  //! wx <- -(u wx + v wy); the CFL maximum as basdevant_products.
  virtual void advective_product(const Buffer<Real>& u, const Buffer<Real>& v, Buffer<Real>& wx,
                                 const Buffer<Real>& wy, bool cfl) = 0;
  //! One nonlinear evaluation of the inputs in the work fields (left by velocity_hat,
  //! advective_inputs or fused_stage): their inverse transforms into u, v (wx, wy), the
  //! products (basdevant_products, advective_product, with the CFL maximum when `cfl`), and the
  //! products' forward transforms: Basdevant a <- (u v)_hat, b <- (v^2 - u^2)_hat; advective
  //! a <- (-(u wx + v wy))_hat (c, d, wx, wy only then). On return a (and b) are defined at the
  //! modes the dealiasing keeps, which is all fused_stage and shell_spectra read; the inputs
  //! and u, v (wx, wy) are left unspecified. Where the fused transforms are made
  //! (prepare_step), these transforms do the dealiasing. Where the step runs as
  //! complex pairs and a, b and u, v are pairs, a and b hold the inputs and the products in
  //! the full layout of a complex pair instead (ns_ops.cuh PackedLayout; velocity_inputs,
  //! fused_stage and natural_products know it).
  virtual void nonlinear_products(bool advective, bool cfl, Buffer<Cplx>& a, Buffer<Cplx>& b, Buffer<Cplx>* c,
                                  Buffer<Cplx>* d, Buffer<Real>& u, Buffer<Real>& v, Buffer<Real>* wx,
                                  Buffer<Real>* wy) = 0;
  //! Plan the step's transforms once (plan_step over this device's facts, include/cascade/
  //! step_plan.hpp; `basdevant`: the form the solver runs) and make what the plan needs; the
  //! plan carried out. Strategies (docs/gpu-step.md): on one GPU the plain 2D transforms, pruned
  //! ones (rows, then the kept columns alone under the 2/3 rule), the row kernel between pruned
  //! passes over the columns (Basdevant's form; kernels/row_fft.cuh), or complex pairs (u + i v
  //! through one complex transform each way, the inverse storing the products); batched pairs
  //! (two fields in one plan, where u, v and a, b are pairs: spectral_pair, real_pair); rows and
  //! columns (the row kernel, and a column kernel with fused_stage inside: no cuFFT); cuFFT
  //! callbacks folding the dealiasing in (kernels/fft_callbacks.cuh: the forward transforms of
  //! nonlinear_products store the kept modes alone; at level all its inverse transforms load
  //! them alone too, and fused_stage leaves the removed modes of the inputs alone). On the CPU
  //! (one process), under the 2/3 rule, nonlinear_products may run row by row: the passes over
  //! the kept columns, then each row's transforms and products in cache. Results differ from
  //! the plain transforms' at round-off only. Where cuFFT refuses the plans the plain
  //! transforms run, and the plan returned says so. InputError where the request cannot run.
  virtual StepPlan prepare_step(const StepRequest& request, bool basdevant = true) = 0;
  //! The plan prepare_step would make of a request now, made of nothing (plan_step alone).
  virtual StepPlan plan_for(const StepRequest& request, bool basdevant) const = 0;
  //! The plan prepare_step carried out (before it: plain, why "not made yet"). A backend plans
  //! once: later calls of prepare_step return this plan.
  virtual StepPlan step_plan() const = 0;
  //! The CFL maximum of the last product pass that took one. On the GPU this waits for that
  //! number alone: work queued after the pass (the forward transforms) keeps the device busy.
  virtual Real cfl_maximum() = 0;
  //! Zero the modes the dealiasing rule removes, and k = 0.
  virtual void apply_mask(Buffer<Cplx>& a_hat) = 0;
  //! One stage of an integrating-factor RK step fused with the spectral work around it
  //! (ns_ops.cuh FusedStage): a, b (, c, d) hold the transforms of the products on entry and
  //! the next evaluation's inputs on return. w is null for low-storage tables; save_w copies
  //! S into it first (the first stage of a classic step); c, d only in advective form. S must
  //! be dealiased (zero where the mask removes modes): those modes of S and w are left as they
  //! are, and the inputs are written zero there (or left alone: prepare_step). With
  //! `budget`, the same pass adds the budget rates of S (as it was on entry) and the forcing
  //! to the backend's budget integrals (accumulate_budget), on the device, with no host sync.
  virtual void fused_stage(const LinearCoefficients& lin, const StageCoefficients& coef, bool advective,
                           const Buffer<Cplx>* forcing_hat, Buffer<Cplx>* w, bool save_w, Buffer<Cplx>& s,
                           Buffer<Cplx>& a, Buffer<Cplx>& b, Buffer<Cplx>* c, Buffer<Cplx>* d,
                           const BudgetWeights* budget = nullptr) = 0;

  // ---- the step on the device (Solver::steps_toward; docs/gpu-step.md)
  //! "" where this backend can record the step and run it on the device, choosing each dt there
  //! (a CUDA graph); else why not.
  virtual std::string step_graph_unavailable() const = 0;
  //! Record the step once: `inputs` queues the inputs of an evaluation of the state,
  //! `evaluation` the evaluation (nonlinear_products with the CFL maximum), `stages` the stages
  //! of one step. The backend repeats the evaluation, its clock (take_step over `rule`,
  //! include/cascade/step_clock.hpp) and, where the clock takes the step, the stages; the fused
  //! stages recorded read their h-dependent numbers (coef.stage's) and the budget's weights
  //! from the clock. What is recorded holds the buffers it was given and must be recorded
  //! again if they change. Returns the steps an iteration of the recorded loop (one, or several
  //! where a step is small: the steps after the launch's end are not taken). RunError where the
  //! device refuses it.
  virtual int capture_step_graph(const StepRule& rule, const std::function<void()>& inputs,
                                 const std::function<void()>& evaluation, const std::function<void()>& stages) = 0;
  //! Run the recorded step from clock `k`: up to max_steps steps toward t_output, ending after
  //! one that lands on it or before one whose verdict is not Go (nothing of that one is done);
  //! waits for them. k becomes the clock after the last step taken (and that step's numbers).
  //! Returns the steps taken.
  virtual long run_step_graph(StepClock& k, double t_output, long max_steps) = 0;
  virtual void drop_step_graph() = 0;
  //! The clock of a step the host chose (take_step), before its stages: where the fused stages
  //! read their h-dependent numbers from the device (a GPU: the same kernels as the recorded
  //! step), they are put there once for the step; fused_stage checks them and puts any that
  //! differ, so that a caller that sets none still steps right. Elsewhere nothing.
  virtual void set_step_clock(const StepClock& k) = 0;

  //! The budget integrals fused_stage accumulates (BudgetState::integral), six a member, member
  //! after member: read (waits for the device) and set.
  virtual void budget_integrals(double* out) = 0;
  virtual void set_budget_integrals(const double* in) = 0;
  //! Each member's own linear coefficients, where an ensemble's members differ in them
  //! (ensemble.vary): fused_stage then takes member m's at member m's modes (ns_stage.cuh
  //! EachMember) instead of the ones it is given. Empty: all take the ones given. (A member's
  //! spectral_sums take its view and its coefficients.)
  virtual void set_member_coefficients(const std::vector<LinearCoefficients>& each) = 0;
  //! Energy, enstrophy, palinstrophy, dissipation, injection sums (before 1/(nx ny)^2).
  virtual SpectralSums spectral_sums(const LinearCoefficients& lin, const Buffer<Cplx>& omega_hat,
                                     const Buffer<Cplx>* forcing_hat) = 0;
  //! max sqrt(u^2 + v^2).
  virtual Real max_speed(const Buffer<Real>& u, const Buffer<Real>& v) = 0;
  //! max |u|/dx + |v|/dy: the CFL rate of the step's maximum (CflSpeed), whose dt times it is the
  //! CFL number (the diagnostics' cfl).
  virtual Real max_rate(const Buffer<Real>& u, const Buffer<Real>& v) = 0;
  //! psi_hat = omega_hat / k^2, scaled by 1/(nx ny) for the inverse transform.
  virtual void streamfunction_hat(const Buffer<Cplx>& omega_hat, Buffer<Cplx>& psi_hat) = 0;
  //! Shell sums (shells of width dk centred on s dk, before the 1/(nx ny)^2 factor) of the
  //! energy, enstrophy and, when a is given, of the energy and enstrophy transfer by the
  //! nonlinear term formed from a, b (the transforms of the products, as in fused_stage):
  //! out[0..3], each resized to `shells`.
  virtual void shell_spectra(const Buffer<Cplx>& omega_hat, bool advective, const Buffer<Cplx>* a,
                             const Buffer<Cplx>* b, double dk, int shells, std::vector<double> (&out)[4]) = 0;

 protected:
  Grid grid_;
  Slab slab_;
};

//! Why the CUDA backend cannot be used here ("" when it can): not built, or no device.
std::string cuda_unavailable_reason();

//! Whether this build can split a grid over MPI ranks on this kind of backend (FFTW's MPI
//! library for the CPU, NCCL for GPUs).
bool slabs_built(BackendKind kind);

//! Resolve `auto` to cuda or cpu; `why` receives the reason for the choice. Over several MPI
//! ranks, auto picks cuda only where the build has NCCL, unless the run is an ensemble of
//! `members` > 1 (split by members: no slabs, no NCCL).
BackendKind resolve_backend(const std::string& requested, std::string& why, int members = 1);

//! Build a backend for the grid. `device` selects the GPU, `threads` the CPU threads (0 = all),
//! `planning` how the CPU backend plans its transforms (estimate here: instant and the same plan
//! everywhere; run.fft_planning's default is auto), `exchange_chunks` the chunks of a GPU slab
//! run's all-to-all (run.exchange_chunks; 0 = auto; ignored elsewhere), `members` the fields of
//! an ensemble every buffer holds (ensemble.members). Over R > 1 MPI ranks an ensemble is split
//! by members (Slab::of_members: each rank a whole-grid backend of its own block, on the GPU
//! the ranks of a machine taking its GPUs in order, round robin where there are more ranks than
//! GPUs, `device` ignored); fewer members than ranks is an InputError. A single run over MPI
//! is split into slabs.
template <class Real>
std::unique_ptr<Backend<Real>> make_backend(BackendKind kind, const Grid& grid, int device = 0,
                                            int threads = 0, FftPlanning planning = FftPlanning::Estimate,
                                            int exchange_chunks = 0, int members = 1);

//! The FFTW wisdom file of a precision: in $CASCADE_FFTW_WISDOM (a directory) when set, else
//! beside the cascade executable; "" when CASCADE_FFTW_WISDOM is set empty or to `none` (no file
//! is read or written). Only measured plans use it.
std::string fftw_wisdom_file(Precision precision);

#if defined(CASCADE_HAVE_CUDA)
//! `first_member`, `batch`: this backend holds members [first_member, first_member + members)
//! of an ensemble of `batch` split over MPI ranks (Slab::of_members; batch 0: not split).
template <class Real>
std::unique_ptr<Backend<Real>> make_cuda_backend(const Grid& grid, int device, int members = 1, int first_member = 0,
                                                 int batch = 0);
//! This MPI rank's slab of a decomposed GPU run, on the rank's GPU (the ranks of a machine take
//! its GPUs in order; every rank calls it), its all-to-all in `exchange_chunks` chunks (0 =
//! auto; more than the smallest slab's rows or kx columns is an InputError). InputError when
//! built without NCCL.
template <class Real>
std::unique_ptr<Backend<Real>> make_cuda_slab_backend(const Grid& grid, int exchange_chunks = 0);
//! The CUDA devices present; where none, `error` says why ("no NVIDIA driver or GPU found", ...).
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
//! The cores this process may run on (its CPU affinity), at least 1.
int cpu_cores_available();
//! OpenMP's default team (OMP_NUM_THREADS) capped at the cores available, so that no parallel
//! region asks for more threads than the machine can start; returns a note when it capped.
std::string cap_openmp_threads();

//! `first_member`, `batch` as make_cuda_backend's.
template <class Real>
std::unique_ptr<Backend<Real>> make_cpu_backend(const Grid& grid, int threads,
                                                FftPlanning planning = FftPlanning::Estimate, int members = 1,
                                                int first_member = 0, int batch = 0);
//! This MPI rank's slab of a decomposed CPU run (every rank calls it: the plans are made
//! together). RunError when built without MPI.
template <class Real>
std::unique_ptr<Backend<Real>> make_mpi_cpu_backend(const Grid& grid, int threads, FftPlanning planning);

}  // namespace cascade
