//! @file Solver<Real>: the vorticity equation on one backend. State, nonlinear term, stepper,
//! time-step policy and diagnostics; no files and no printing (src/app/run.cpp does those).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cascade/backend.hpp"
#include "cascade/cfl.hpp"
#include "cascade/config.hpp"
#include "cascade/coefficients.hpp"
#include "cascade/diagnostics.hpp"
#include "cascade/equation.hpp"
#include "cascade/fields.hpp"
#include "cascade/error.hpp"
#include "cascade/step_clock.hpp"
#include "cascade/stepper.hpp"

namespace cascade {

//! What one adaptive step did.
struct StepReport {
  double dt = 0;
  DtLimit limit = DtLimit::DtMax;
  bool landed = false;  //!< ended exactly on the output time
  double cfl_rate = 0;  //!< max(|u|/dx + |v|/dy) at the start of the step
  //! An ensemble with ensemble.on_blowup: drop: the members dropped at the start of this step
  //! (the run's indices), and why, one reason a member.
  std::vector<int> dropped;
  std::vector<std::string> dropped_why;
};

//! The run failed numerically (non-finite velocity, or a step below dt_min).
struct BlowUp : RunError {
  using RunError::RunError;
};

//! An ensemble (ensemble.members > 1; the backend holds that many fields a buffer): every member
//! is stepped in the same transforms and kernels, with one dt for all (the CFL maximum over the
//! members, so that they stay in lockstep and write at the same times). Member m is the deck of
//! member_config(config, m): its own initial field, forcing and linear coefficients. The state
//! and the fields (vorticity(), field(), vorticity_hat(), set_vorticity_hat()) hold every
//! member's, one after the other; the diagnostics and spectra are each member's (the *_members
//! functions; diagnose(), diagnose_interval() and spectra() are member 0's).
//!
//! Split over MPI ranks (Backend::members, Slab::of_members), the solver of each rank steps its
//! block of members [first_member(), + local_members()) of members(), its member m being the
//! run's member first_member() + m (member_config). The one dt comes from the CFL maximum the
//! backend agrees over the ranks; a blow-up is agreed too (every rank throws, naming the run's
//! members). What the output reads is the whole batch's: vorticity(), field() and
//! vorticity_hat() gather it on rank 0 (others: empty), set_vorticity_hat() takes every
//! member's on every rank; the *_members diagnostics and spectra and budget() are every
//! member's on every rank (gathered, then broadcast), set_budget() takes every member's. So all
//! of those are collective: every rank calls them together.
template <class Real>
class Solver {
 public:
  using Cplx = Complex<Real>;

  //! Allocates the fields, then plans the step's transforms (Backend::prepare_step) as the
  //! deck asks (run.step_transforms, run.fft_callbacks), or as `request` asks where given
  //! (`cascade bench step`); the plan is made after the fields, as it weighs free memory.
  Solver(Backend<Real>& backend, const Config& config, std::optional<StepRequest> request = std::nullopt);

  //! Whether the run's member g was dropped (ensemble.on_blowup: drop): set to rest and left
  //! out; its diagnostics, spectra and fields are NaN from then on, and so is its state in
  //! vorticity_hat() (a checkpoint), which set_vorticity_hat() recognises.
  bool dropped(int g) const { return !dropped_.empty() && dropped_[std::size_t(g)] != 0; }
  //! The members stepped together (the run's, on every rank together; 1: a single run).
  int members() const { return batch_; }
  //! This rank's members: [first_member(), first_member() + local_members()) (all of them in
  //! one process).
  int local_members() const { return members_; }
  int first_member() const { return first_; }

  // ---- state
  //! From the deck's `initial` section (src/physics/initial.hpp) and the equation's forcing;
  //! initial.type file takes its field from `file` (read_initial_field, in the output layer: the
  //! solver reads no files). Time, step and budget start at zero.
  void initialise(const InitialField* file = nullptr);
  void set_vorticity(const std::vector<Real>& omega);       //!< physical, ny x nx
  //! The sum of fields (include/cascade/fields.hpp), all given at points or one given at modes,
  //! dealiased (no fields: zero).
  void set_vorticity(const std::vector<FieldSpec<Real>>& terms);
  //! Rescale the state to the total energy E = 1/2 <|u|^2> (InputError where it has none).
  void scale_to_energy(double energy);
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
  //! Up to `max_steps` steps toward t_output, stopping after one that lands on it: each the
  //! step step() would take, to the bit. Where the step runs on the device (graphed(): a CUDA
  //! graph, recorded on the first call), the device chooses each dt itself from the CFL maximum
  //! (include/cascade/step_clock.hpp) and the host waits once, for all of them; a step that
  //! cannot be taken (a blow-up, dt below dt_min) is left undone there and taken by step(),
  //! which stops the run (or drops members) as it does. Elsewhere: one step(). Returns the last
  //! step's report; steps() tells how many were taken.
  StepReport steps_toward(double t_output, long max_steps);
  //! Whether steps_toward runs on the device (run.step_graph), and the run log's words for it.
  bool graphed() const { return graph_ != Graph::Off; }
  //! Record the step on the device now (steps_toward does on its first call) where it runs
  //! there; where the device refuses the graph, run.step_graph: auto steps from the host (the
  //! note says why), `on` throws RunError.
  void prepare_graph();
  const std::string& graph_note() const { return graph_note_; }
  //! Steps an iteration of the recorded loop (Backend::capture_step_graph); 0 before recording.
  int graph_iteration_steps() const { return graph_iteration_steps_; }
  //! One step of a fixed size (convergence tests; the benchmark's row without the CFL
  //! maximum): no maximum is taken, so nothing waits for the device and no blow-up is seen.
  void step_fixed(double dt);

  // ---- diagnostics
  //! The state's integrals and the instantaneous budget rates at the current time.
  Diagnostics diagnose() { return diagnose_members()[0]; }
  //! diagnose(), with the budget terms replaced by their means over the interval since the last
  //! call (see Diagnostics); starts the next interval.
  Diagnostics diagnose_interval() { return diagnose_interval_members()[0]; }
  //! The same, of each member.
  std::vector<Diagnostics> diagnose_members();
  std::vector<Diagnostics> diagnose_interval_members();
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
  Spectra spectra() { return spectra_members()[0]; }
  std::vector<Spectra> spectra_members();  //!< each member's
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
  //! The same, computed from the deck before anything is allocated; `members` > 0: for that
  //! many of the ensemble's members (a rank's share), else for all.
  static std::size_t required_bytes(const Config& config, int members = 0);

 private:
  //! Member m's part of a buffer of every member's.
  template <class T>
  Buffer<T> member(const Buffer<T>& whole, int m) const {
    return b_.member_view(whole, m);
  }
  //! Member m's linear coefficients (the deck's for a single run).
  const LinearCoefficients& linear_of(int m) const { return member_eq_.empty() ? lin_ : member_eq_[m].linear; }
  //! An ensemble's initial fields: each member's deck, its fields set in its part of the state
  //! (set_vorticity and the others act on member target_ meanwhile); those given at points
  //! go through one transform of every member at the end.
  void initialise_members(const InitialField* file);
  void finish_members();
  //! The members whose velocity is not finite (a blow-up's message; agreed over the ranks).
  std::string blown_members();
  //! Which member drives the batch's dt (a time step below dt_min: the member of the largest
  //! max|u|, agreed over the ranks); "" for a single run.
  std::string fastest_member();
  //! Each member's max|u| (the velocity from the state), every member's on every rank.
  std::vector<double> member_speeds();
  //! ensemble.on_blowup: drop, at the start of a step whose CFL rate is not finite or gives a
  //! dt below dt_min: drop the members whose velocity is not finite, or the fastest, until the
  //! rest can step (never the last one: then the step stops as a single run does); `rate` is
  //! taken again without them. The members dropped go to `report`.
  void drop_members(double& rate, double t_output, StepReport& report);
  void drop_member(int g);
  //! NaN in the parts of `v` (`per` values a member, every member's) of the dropped members.
  template <class T>
  void mark_dropped(std::vector<T>& v, std::size_t per) const;
  void mark_dropped(std::vector<Diagnostics>& rows) const;  //!< the numbers of a dropped member's row
  void mark_dropped(std::vector<Spectra>& all) const;
  std::vector<Real> field_values(const std::string& name);
  //! Member m's (of this rank) six budget integrals, as budget() last read them.
  double* integrals(int m) {
    return batch_ == 1 ? budget_.integral
                       : budget_.members.data() + std::size_t(BudgetState::kTerms) * std::size_t(first_ + m);
  }
  //! Rows of this rank's members (`per` doubles a member), every member's on every rank: the
  //! ranks' blocks in member order (gathered on rank 0, then broadcast). Unchanged in one process.
  std::vector<double> all_members(const std::vector<double>& mine, std::size_t per) const;
  std::vector<Diagnostics> all_members(const std::vector<Diagnostics>& mine) const;
  //! Whether the run's members are split over MPI ranks.
  bool split() const { return members_ < batch_; }
  //! The diagnostics of this rank's members (diagnose_members before the gather).
  std::vector<Diagnostics> diagnose_local();
  bool advective() const { return eq_.advective(); }
  //! The field `f` into `out`, dealiased: one given at points goes through u_ and a transform.
  void fill_spectral(const FieldSpec<Real>& f, Buffer<Cplx>& out);
  void draw_forcing();
  void set_step_forcing();
  void evaluation_inputs();
  //! The products of the inputs in the work fields (Backend::nonlinear_products), the CFL
  //! maximum taken on the way where `cfl`; evaluate_products also reads it (a wait).
  void queue_products(bool cfl);
  Real evaluate_products(bool cfl = true);
  //! The step the clock `k` has taken (take_step): the white-noise forcing of step k.step - 1,
  //! then the stages.
  void advance(const StepClock& k);
  //! The stages of a step of size h; the first adds the budget rates of the start state with
  //! `budget`'s weights.
  void stages(double h, const BudgetWeights& budget);
  //! The solver's clock (time, step, the budget's interval) as a StepClock, and back.
  StepClock clock() const;
  void set_clock(const StepClock& k);
  void set_forcing_kind(ForcingKind kind);

  StepRule rule_;  //!< the policy, the table's factors, the forcing's kind (set_forcing_kind)
  BudgetState budget_;
  //! The step on the device: not used, to be recorded, recorded.
  enum class Graph { Off, Pending, Ready };
  //! run.step_graph: auto records it up to this many points a step (every member's).
  static constexpr double kGraphAutoPoints = 4096.0 * 4096.0;
  Graph graph_ = Graph::Off;
  bool graph_required_ = false;  //!< run.step_graph: on
  std::string graph_note_;
  int graph_iteration_steps_ = 0;

  Backend<Real>& b_;
  Config config_;
  Equation eq_;
  int members_ = 1;                  //!< this rank's members
  int first_ = 0;                    //!< the run's index of this rank's member 0
  int batch_ = 1;                    //!< the run's members (every rank's)
  std::vector<Equation> member_eq_;  //!< each member's of this rank (ensembles alone)
  int target_ = -1;                  //!< the member whose initial field is being set (-1: none)
  bool drop_ = false;                //!< ensemble.on_blowup: drop
  std::vector<char> dropped_;        //!< the run's members dropped (every member's; empty: none yet)
  bool pending_forward_ = false;     //!< members' fields given at points wait in u_ for one transform
  const IfRkTable& table_;
  const LinearCoefficients& lin_ = eq_.linear;
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
