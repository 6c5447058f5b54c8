//! @file The step plan: how a step's nonlinear evaluation runs its transforms, chosen once, as
//! a value, by a pure function of the grid, the precision, the form, the device and the deck's
//! request (`run.step_transforms`, `run.fft_callbacks`), from a tuning table of measurements
//! (src/core/step_plan.cpp). The backends carry the plan out (docs/gpu-step.md).
#pragma once

#include <cstddef>
#include <string>

#include "cascade/types.hpp"

namespace cascade {

//! The evaluation strategies (docs/gpu-step.md).
enum class StepStrategy {
  Plain,         //!< the whole-grid 2D transforms (cuFFT's or FFTW's), a field at a time or batched
  Pruned,        //!< GPU: rows, then the kept columns alone (a third of them skipped), as 1D passes
  Rows,          //!< GPU: pruned columns around the row kernel (kernels/row_fft.cuh): Basdevant alone
  ComplexPairs,  //!< GPU: u + i v through one complex 2D transform each way: Basdevant alone
  RowsColumns,   //!< GPU: the row kernel and the column kernel (the stage in it), no cuFFT: Basdevant alone
  CpuRows,       //!< CPU: the kept columns, then each row's transforms and products in cache
  Slabs,         //!< several MPI ranks: the slab transforms around an all-to-all, nothing else
};
//! cuFFT callbacks folded into the step's transforms (kernels/fft_callbacks.cuh).
enum class CallbackLevel {
  Off,    //!< none
  Store,  //!< the forward transforms store the kept modes alone
  All,    //!< and the inverse transforms load them alone (the fused stage leaves the others)
};

//! What a deck asks for: `run.step_transforms` (auto or one strategy; plain and pruned with or
//! without batched pairs) and `run.fft_callbacks` (auto or a level). Each field left at Auto is
//! taken from the tuning table; batching Auto with a named strategy is the table's batching for
//! it at this size (the deck names it with the strategy; `cascade bench step` leaves it auto).
struct StepRequest {
  enum class Transforms { Auto, Plain, Pruned, Rows, ComplexPairs, RowsColumns };
  enum class Batching { Auto, Off, On };
  enum class Callbacks { Auto, Off, Store, All };
  Transforms transforms = Transforms::Auto;
  Batching batching = Batching::Auto;
  Callbacks callbacks = Callbacks::Auto;
};

//! The plan: a strategy, its callback level, whether two fields go through one batched plan,
//! and why (the run log's `step transforms:` line).
struct StepPlan {
  StepStrategy strategy = StepStrategy::Plain;
  CallbackLevel callbacks = CallbackLevel::Off;
  bool batched = false;  //!< two fields in one plan (Plain, Pruned)
  std::string why;       //!< "auto: <the tuning row>" or "run.step_transforms: ..."; not compared
  bool operator==(const StepPlan& o) const {
    return strategy == o.strategy && callbacks == o.callbacks && batched == o.batched;
  }
  bool operator!=(const StepPlan& o) const { return !(*this == o); }
  //! Whether the backend makes transforms of its own (anything but the plain ones unbatched
  //! without callbacks, or the slabs).
  bool fused() const {
    return strategy != StepStrategy::Slabs && (strategy != StepStrategy::Plain || batched || callbacks != CallbackLevel::Off);
  }
};

//! What plan_step needs to know of the device it plans for; the CUDA backend fills the GPU's.
struct StepDevice {
  enum class Kind { Cpu, Cuda, Slabs } kind = Kind::Cpu;
  std::size_t row_shared_bytes = 0;    //!< CUDA: shared memory the row kernel needs a block
  std::size_t column_shared_bytes = 0;  //!< CUDA: the column kernel's least (a column; in pairs a field's, quads half)
  bool column_pairs = false;            //!< CUDA: the column kernel can split a tile over a pair of blocks (clusters)
  std::size_t shared_optin_bytes = 0;  //!< CUDA: the most a block may have (sharedMemPerBlockOptin)
  std::size_t free_bytes = 0;          //!< CUDA: free device memory now
  std::size_t work_bytes = 0;          //!< CUDA: the plain plans' work area
  std::size_t complex_work_bytes = 0;  //!< CUDA: a complex 2D plan's estimated work area; 0: no estimate
};

//! The problem a step plan is made for.
struct StepProblem {
  int nx = 0, ny = 0;
  Precision precision = Precision::Double;
  bool basdevant = true;   //!< the nonlinear form (false: advective)
  bool two_thirds = true;  //!< the dealiasing (false: none)
  StepDevice device;
  //! The fields of an ensemble, transformed as one batch: plain transforms alone, chosen by the
  //! table as for a grid of that many times the points.
  int members = 1;
};

//! The plan for a problem and a request: auto reads the tuning table (src/core/step_plan.cpp); a
//! named strategy or level is taken as asked. A request the problem cannot run (rows in the
//! advective form, pruning without the 2/3 rule, callbacks on the CPU...) throws InputError,
//! one line naming the key.
StepPlan plan_step(const StepProblem& problem, const StepRequest& request);

//! The bytes one step moves to and from device memory as a plan carries it out, by kind of pass
//! (docs/performance.md, "The memory-traffic bound"); NaN where the plan is not modelled. Each
//! pass is counted as reading and writing what it must once: a lower bound of its own traffic,
//! whatever it keeps in cache. A step's time at the measured copy bandwidth is its bound.
struct StepTraffic {
  double transforms = 0;  //!< the FFT passes (cuFFT's 2D, pruned, the column passes around the row kernel)
  double products = 0;    //!< the product kernel, or the row kernel (row transforms and products in one)
  double cfl = 0;         //!< a pass of the CFL maximum's own (complex pairs); elsewhere it rides on the products
  double stages = 0;      //!< the fused spectral stages
  double budget = 0;      //!< the budget sums: they read what the first stage reads, so 0
  double total() const { return transforms + products + cfl + stages + budget; }
};

//! The memory traffic of one step of `stages` stages of the plan's strategy, all members of the
//! problem (StepProblem::members) together; `classic_registers`: the stepper keeps omega_n in a
//! third register W (classic RK4; IfRkTable::low_storage false). No forcing is counted (a
//! forced run's stages read F once a kept mode besides). Batched pairs move the same bytes. A
//! pure function of its arguments: Plain, Pruned, Rows and ComplexPairs are modelled (in the
//! forms they can run); the others (CpuRows, Slabs) give NaN, "not modelled".
StepTraffic step_traffic(const StepProblem& problem, const StepPlan& plan, int stages, bool classic_registers);

std::string to_string(StepStrategy s);
std::string to_string(CallbackLevel c);
//! The deck value of a strategy and batching: "plain-pairs" and the like.
std::string to_string(StepRequest::Transforms t, StepRequest::Batching b);
std::string to_string(StepRequest::Callbacks c);
//! The request of the deck values of `run.step_transforms` ("auto", "plain", "plain-pairs",
//! "pruned", "pruned-pairs", "rows", "complex-pairs", "rows-columns") and `run.fft_callbacks` ("auto", "off",
//! "store", "all"); InputError on anything else.
StepRequest step_request_from(const std::string& transforms, const std::string& callbacks);
//! The run log's description: e.g. "pruned, batched pairs, callbacks off (auto: ...)".
std::string describe(const StepPlan& plan);

}  // namespace cascade
