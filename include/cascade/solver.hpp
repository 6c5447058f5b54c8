//! @file Solver<Real>: the vorticity equation on one backend. State, nonlinear term, stepper,
//! time-step policy and diagnostics; no files and no printing (src/app/run.cpp does those).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cascade/backend.hpp"
#include "cascade/cfl.hpp"
#include "cascade/config.hpp"
#include "cascade/equation.hpp"
#include "cascade/error.hpp"
#include "cascade/stepper.hpp"

namespace cascade {

//! One row of diagnostics (docs/output-format.md, Diagnostics): domain means of the state at time t, and the
//! budget terms. In a row written at an output time the budget terms are means over the
//! interval since the previous row, accumulated exactly step by step (trapezoidal in time for
//! the damping, and for deterministic forcing; the injection of white-in-time forcing is the
//! energy its increment adds, Re<omega, F> + dt/2 |F|^2), so that
//! E(t_i) - E(t_{i-1}) = (t_i - t_{i-1}) (injection - dissipation) to the stepper's accuracy.
//! Elsewhere (the first row, progress lines) they are the instantaneous rates.
struct Diagnostics {
  long step = 0;
  double t = 0;
  double dt = 0;            //!< the step that ended at t (0 before the first)
  double energy = 0;        //!< E = 1/2 <|u|^2>
  double enstrophy = 0;     //!< Z = 1/2 <omega^2>
  double palinstrophy = 0;  //!< P = 1/2 <|grad omega|^2>
  double max_u = 0;         //!< max |u|
  std::string cfl_limit = "none";
  double injection = 0;     //!< dE/dt from the forcing
  double dissipation = 0;   //!< -dE/dt from D(k) = the three below
  double dissipation_nu = 0;     //!< -dE/dt by viscosity
  double dissipation_mu = 0;     //!< -dE/dt by friction
  double dissipation_alpha = 0;  //!< -dE/dt by hypoviscosity
  double injection_z = 0;        //!< dZ/dt from the forcing
  double dissipation_z = 0;      //!< -dZ/dt from D(k)
  double wall_per_step = 0;      //!< seconds per step over the interval (run.cpp)
};

//! The budget integrals of the current diagnostics interval (kept in checkpoints, so that a
//! restart continues the interval exactly).
struct BudgetState {
  static constexpr int kTerms = 6;  //!< diss_nu, diss_mu, diss_alpha, diss_z, inj, inj_z
  double integral[kTerms] = {0, 0, 0, 0, 0, 0};
  double interval = 0;  //!< time covered
  double last_dt = 0;   //!< the last step, whose end-of-step half is still to be added
  bool open = false;    //!< a step's end half is pending
};

//! What one adaptive step did.
struct StepReport {
  double dt = 0;
  DtLimit limit = DtLimit::DtMax;
  bool landed = false;  //!< ended exactly on the output time
  double cfl_rate = 0;  //!< max(|u|/dx + |v|/dy) at the start of the step
};

//! The run failed numerically (non-finite velocity, or a step below dt_min).
//! The vorticity of initial.type file, read and checked (even sizes, finite values) by
//! read_initial_field (output.hpp): a snapshot's /vorticity (physical, ny x nx) or a
//! checkpoint's spectral state (interleaved re, im).
struct InitialField {
  bool spectral = false;
  int nx = 0, ny = 0;
  std::vector<double> values;
};

struct BlowUp : RunError {
  using RunError::RunError;
};

template <class Real>
class Solver {
 public:
  using Cplx = Complex<Real>;

  //! Allocates the fields, then plans the step's transforms (Backend::prepare_step) as the
  //! deck asks (run.step_transforms, run.fft_callbacks), or as `request` asks where given
  //! (`cascade bench step`); the plan is made after the fields, as it weighs free memory.
  Solver(Backend<Real>& backend, const Config& config, std::optional<StepRequest> request = std::nullopt);

  // ---- state
  //! From the deck's `initial` and `forcing` sections; initial.type file takes its field from
  //! `file` (read_initial_field, in the output layer: the solver reads no files).
  void initialise(const InitialField* file = nullptr);
  void set_vorticity(const std::vector<Real>& omega);       //!< physical, ny x nx
  void set_vorticity_hat(const std::vector<Cplx>& omega_hat);  //!< unnormalised DFT
  void set_forcing(const std::vector<Real>& f);             //!< physical vorticity forcing
  std::vector<Real> vorticity();      //!< physical, ny x nx
  //! A physical field by name: vorticity, streamfunction, u, v (ny x nx).
  std::vector<Real> field(const std::string& name);
  //! Load a spectral state of another grid (src_nx x src_ny, interleaved re/im, unnormalised):
  //! modes present in both grids are copied (rescaled by the ratio of grid sizes), the others
  //! are zero; then the dealiasing mask is applied.
  void set_vorticity_hat_resized(const std::vector<double>& interleaved, int src_nx, int src_ny);
  std::vector<Cplx> vorticity_hat();  //!< the state, exactly
  //! The state itself, where the backend keeps it (device memory on a GPU), for readers that
  //! must not copy it to the host (the Python module's device views). Steps and set_* change it.
  const Buffer<Cplx>& state() const { return S_; }
  void set_time(double t, long step, double dt_prev);

  // ---- time stepping
  //! One step with dt from the policy, landing on t_output when it is within reach.
  //! Throws BlowUp (step, time, dt and max velocity in the message).
  StepReport step(double t_output);
  //! One step of a fixed size (convergence tests; the benchmark's row without the CFL
  //! maximum): no maximum is taken, so nothing waits for the device and no blow-up is seen.
  void step_fixed(double dt);

  // ---- diagnostics
  //! The state's integrals and the instantaneous budget rates at the current time.
  Diagnostics diagnose();
  //! diagnose(), with the budget terms replaced by their means over the interval since the last
  //! call (see Diagnostics); starts the next interval.
  Diagnostics diagnose_interval();
  //! The budget of the current interval (its integrals live on the backend: this waits for it).
  const BudgetState& budget();
  void set_budget(const BudgetState& b);
  //! The forcing of the current step (null: none).
  const Buffer<Cplx>* forcing() const { return forcing_hat_ ? &*forcing_hat_ : nullptr; }
  //! Shell spectra (densities: sum E dk = E), shells of width dk() centred on k: energy E(k),
  //! enstrophy Z(k), and the fluxes Pi(k), Pi_Z(k) through k of energy and enstrophy by the
  //! nonlinear term (Pi(k) = -sum of the transfer over shells <= k; Pi(k_max) = 0).
  struct Spectra {
    std::vector<double> energy, enstrophy, flux, flux_z;
  };
  Spectra spectra();
  double dk() const;
  std::vector<double> shell_centres() const;

  double time() const { return t_; }
  long steps() const { return step_; }
  double last_dt() const { return dt_prev_; }
  const IfRkTable& table() const { return table_; }
  const DtPolicy& policy() const { return policy_; }
  Backend<Real>& backend() { return b_; }
  //! Device memory the solver holds (state, registers, workspace), in bytes.
  std::size_t memory_bytes() const;
  //! The same, computed from the deck before anything is allocated.
  static std::size_t required_bytes(const Config& config);

 private:
  bool advective() const { return config_.grid.nonlinear == NonlinearForm::Advective; }
  void evaluation_inputs();
  Real evaluate_products(bool cfl = true);
  void advance(double h, const BudgetWeights& budget);
  BudgetWeights begin_step(double h);  //!< stochastic forcing for this step, and the budget's weights
  void normalise_energy(double energy);
  void load_file(const InitialField& field);
  void lamb_dipole();
  BudgetWeights budget_weights(double d_weight, bool white_noise_step, double h) const;

  enum class ForcingKind { None, Fixed, WhiteNoise };
  ForcingKind forcing_kind_ = ForcingKind::None;
  double ring_amp_ = 0;  //!< white noise: |F| = ring_amp_ |k| / sqrt(dt)
  BudgetState budget_;

  Backend<Real>& b_;
  Config config_;
  const IfRkTable& table_;
  LinearCoefficients lin_;
  DtPolicy policy_;

  Buffer<Cplx> S_, W_;              // registers: S = omega_hat between steps, W = omega_n (classic)
  Buffer<Cplx> a_hat_, b_hat_;      // workspace (both forms)
  Buffer<Cplx> c_hat_, d_hat_;      // workspace (advective form)
  Buffer<Real> u_, v_;              // physical workspace (both forms)
  Buffer<Real> wx_, wy_;            // physical workspace (advective form)
  std::optional<Buffer<Cplx>> forcing_hat_;

  double t_ = 0;
  double dt_prev_ = 0;
  long step_ = 0;
  bool inputs_ready_ = false;  //!< the work fields hold the evaluation inputs of S
};

}  // namespace cascade
