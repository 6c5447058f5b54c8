//! @file StepGraph: the adaptive step recorded as a CUDA graph that chooses its own dt
//! (Backend::capture_step_graph, run_step_graph; docs/gpu-step.md).
//!
//!   [the inputs of the state] -> while (loop) { ([the evaluation] -> clock -> [the stages]) x S }
//!     -> the last step's budget
//!
//! The clock (step_clock_kernel, its last block's thread 0): from the CFL maximum the evaluation
//! left in device memory it applies the host's rule (include/cascade/step_clock.hpp: choose_dt,
//! verdict, take_step) and sets `loop` (another step after this one: it did not land on the
//! output time, fewer than max_steps were taken), so the host launches once for up to max_steps
//! steps and waits once, and no evaluation is made that no step uses. Its blocks, one a member,
//! first add up the budget's sums of the step before (its first stage's partials, weighted into
//! the integrals: DeferredBudget), which a step the host chose adds up in a kernel of their own
//! right after that stage: a launch a step less (the last step's in the launch's last kernel).
//! A step whose verdict is not Go is not taken: the clock says so (StepClock::go), its fused
//! stages leave everything as it is (Clocked), its sums are not added up (StepGraphState::pending)
//! and the loop ends; the host takes that step, and stops the run with its words.
//! The loop is a conditional node (CUDA 12.4 and later) whose body is recorded by stream
//! capture, cuFFT's kernels with it. (A conditional node around the stages instead cost some
//! 7 us a step at 256^2.) The step's own kernels are launched chained (chained.cuh).
//! S steps an iteration (steps_per_iteration; the loop's iteration costs some 3.6 us on an
//! H100): once the clock has ended the launch (StepGraphState::live), the steps left in the
//! iteration are not taken (go = 0), as a step whose verdict is not Go. Only where no kernel of
//! a step changes the state or the budget unless its clock says go: the stages' and the white
//! noise's kernels do not (Clocked), the evaluation's only transform the work fields.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <functional>
#include <string>

#include "cascade/error.hpp"
#include "cascade/step_clock.hpp"
#include "backends/cuda/chained.cuh"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/launch.cuh"

namespace cascade {

//! The budget's sums a recorded step leaves to the clock of the step after it (or the launch's
//! last kernel): its first stage's per-block partials, `count` a member, for the integrals.
struct DeferredBudget {
  const SpectralSums* partials = nullptr;  //!< none: the step has no budget sums
  int count = 0;
  double* integrals = nullptr;
  bool operator==(const DeferredBudget& o) const {
    return partials == o.partials && count == o.count && integrals == o.integrals;
  }
};

//! The clock of the step on the device and what a launch asks of it, in device memory.
struct StepGraphState {
  StepClock k;
  double t_output;
  long max_steps;
  long taken;  //!< steps taken in this launch
  int live;    //!< 1 until the clock ends the launch: later steps of the iteration are not taken
  DeferredBudget budget;
  int pending;        //!< 1: the last step was taken and its budget's sums are not yet added up
  unsigned blocks_done;  //!< the clock's blocks that have added up their member's sums
};

namespace step_graph_kernels {

//! Where the last step was taken, its budget's sums added up and weighted by its own weights
//! (s->k.weights, which this clock's step has not yet replaced) into the integrals: block
//! blockIdx.x, member blockIdx.x's, as budget_finish_kernel adds them up.
__device__ __forceinline__ void finish_deferred_budget(const StepGraphState* s) {
  const DeferredBudget b = s->budget;
  if (!b.partials || !s->pending) return;
  cuda_launch::finish_member_budget<cuda_launch::kBudgetThreads>(b.partials, b.count, BudgetWeights{}, &s->k.weights,
                                                                 b.integrals);
}

//! The clock after an evaluation (launched chained, a block of kBudgetThreads a member): the
//! budget's sums of the step before it (finish_deferred_budget), then, by the last block to have
//! added up its member's, take the step the CFL maximum allows (or mark it not taken: go = 0),
//! and say whether another follows it (`loop` and live: this one did not land on the output
//! time, and fewer than max_steps were taken). After the launch has ended (live 0: a later step
//! of the same iteration) it takes none, and reads no maximum, which no evaluation made.
//!
//! The sums are added up before the wait for the evaluation, while its last kernel runs: they read
//! what the step before wrote (its first stage's partials, its clock's weights, `pending`) and
//! write what only the next clock and the host read (the integrals). Every kernel of the chain
//! waits for the one before it before it lets the next be launched (chained.cuh), so when this
//! one starts, every kernel but the last has ended: the stage that wrote them is many back.
template <class Real>
__global__ void __launch_bounds__(cuda_launch::kBudgetThreads)
    step_clock_kernel(StepGraphState* s, const Real* max_rate, StepRule rule, cudaGraphConditionalHandle loop) {
  finish_deferred_budget(s);
  __syncthreads();  // every thread has read `pending`, which the step taken below rewrites
  cuda_launch::wait_for_previous();
  cuda_launch::let_next_launch();
  // the last block to be done takes the step, after every block has read the weights
  if (gridDim.x > 1 && !reduction_kernels::last_block_to_arrive(&s->blocks_done)) return;
  if (threadIdx.x != 0) return;
  s->blocks_done = 0;
  bool take = false;
  if (s->live && s->taken < s->max_steps && !(s->taken > 0 && s->k.lands)) {
    const double rate = double(*max_rate);
    const DtChoice c = choose_dt(rule.policy, rate, s->k.dt_prev, s->k.t, s->t_output);
    if (verdict(rule, c, rate, s->k.t) == StepVerdict::Go) {
      take_step(s->k, rule, c, rate, s->t_output);
      s->taken += 1;
      take = true;
    }
  }
  s->k.go = take ? 1 : 0;
  s->pending = take ? 1 : 0;
  const bool more = take && !s->k.lands && s->taken < s->max_steps;
  s->live = more ? 1 : 0;
  cudaGraphSetConditional(loop, more ? 1u : 0u);
}

//! The launch's last kernel (a block of kBudgetThreads a member): the budget's sums of its last
//! step, where it was taken.
__global__ inline void __launch_bounds__(cuda_launch::kBudgetThreads) step_budget_tail_kernel(const StepGraphState* s) {
  finish_deferred_budget(s);
}

//! The clock of a step the host chose (StepGraph::set_clock), by value.
__global__ inline void write_clock_kernel(StepGraphState* s, StepClock k) { s->k = k; }

}  // namespace step_graph_kernels

template <class Real>
class StepGraph {
 public:
  StepGraph() = default;
  StepGraph(const StepGraph&) = delete;
  StepGraph& operator=(const StepGraph&) = delete;
  ~StepGraph() {
    destroy();
    if (d_state_) cudaFree(d_state_);
    if (d_max_) cudaFree(d_max_);
    if (h_state_) cudaFreeHost(h_state_);
  }

  //! The clock the fused stages read their h-dependent numbers from, and the budget's last
  //! kernel its weights (device memory): the same kernels for a step the host chose and one
  //! the device chose, so that both give the same bits.
  const StepClock* clock() {
    allocate();
    return &d_state_->k;
  }
  const BudgetWeights* weights() { return &clock()->weights; }
  //! Where the CFL maximum goes while the step is being recorded (device memory).
  Real* max_slot() const { return d_max_; }
  bool recording() const { return recording_; }
  //! Whether the step's own kernels are launched chained (chained.cuh; the executor's choice).
  void set_chained(bool chained) { chained_ = chained; }

  //! A step the host chose: its clock to the device (by value, in stream order), unless the
  //! device holds it already (the stages of a step check their numbers against it: a caller
  //! that set none still steps right, at the cost of a copy).
  void set_clock(cudaStream_t stream, const StepClock& k) {
    allocate();
    step_graph_kernels::write_clock_kernel<<<1, 1, 0, stream>>>(d_state_, k);
    CASCADE_CUDA_CHECK(cudaPeekAtLastError());
    host_ = k;
    host_valid_ = true;
  }
  //! Stage i of a step the host chose, with these numbers (and, for the first, these budget
  //! weights): the device's clock made to hold them.
  void ensure_stage(cudaStream_t stream, int i, double h, double hb, double ha, const BudgetWeights* w) {
    StepClock k = host_valid_ ? host_ : StepClock{};
    const bool same = host_valid_ && k.go && k.h == h && k.hb[i] == hb && k.ha[i] == ha &&
                      (!w || (k.weights.d == w->d && k.weights.inj == w->inj && k.weights.f2 == w->f2));
    if (same) return;
    k.go = 1;
    k.h = h;
    k.hb[i] = hb;
    k.ha[i] = ha;
    if (w) k.weights = *w;
    set_clock(stream, k);
  }

  //! While recording: the budget's sums of a step, its first stage's partials, left to the next
  //! clock (DeferredBudget) rather than added up by a kernel of their own. The same for every
  //! step recorded (one place for a step's sums), else a RunError.
  void defer_budget(const SpectralSums* partials, int count, double* integrals) {
    const DeferredBudget b{partials, count, integrals};
    if (deferred_.partials && !(deferred_ == b)) throw RunError("StepGraph: a step's budget sums in two places");
    deferred_ = b;
  }

  //! Record the step on `stream` (see the file's comment) for `members` members (the clock's
  //! blocks); `inputs`, `evaluation` and `stages` queue their work on it, `steps_per_iteration`
  //! times the last two (see the file's comment). RunError where the device refuses the graph
  //! (nothing is left recorded then).
  void record(cudaStream_t stream, const StepRule& rule, const std::function<void()>& inputs,
              const std::function<void()>& evaluation, const std::function<void()>& stages,
              int steps_per_iteration, int members) {
    destroy();
    allocate();
    deferred_ = DeferredBudget{};
    CASCADE_CUDA_CHECK(cudaStreamSynchronize(stream));
    cudaGraph_t graph = nullptr;
    CASCADE_CUDA_CHECK(cudaGraphCreate(&graph, 0));
    recording_ = true;
    try {
      cudaGraphConditionalHandle loop;
      CASCADE_CUDA_CHECK(cudaGraphConditionalHandleCreate(&loop, graph, 1, cudaGraphCondAssignDefault));
      begin(stream, graph);
      inputs();
      cudaGraphNode_t while_node = nullptr;
      cudaGraph_t body = add_conditional(stream, loop, cudaGraphCondTypeWhile, &while_node);
      CASCADE_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
      begin(stream, body);
      const dim3 blocks(unsigned(std::max(1, members)));
      for (int i = 0; i < std::max(1, steps_per_iteration); ++i) {
        evaluation();
        cuda_launch::launch_chained(chained_, step_graph_kernels::step_clock_kernel<Real>, blocks,
                                    dim3(cuda_launch::kBudgetThreads), 0, stream, d_state_,
                                    static_cast<const Real*>(d_max_), rule, loop);
        stages();
      }
      CASCADE_CUDA_CHECK(cudaStreamEndCapture(stream, &body));
      if (deferred_.partials) {  // the last step's sums, after the loop
        CASCADE_CUDA_CHECK(cudaStreamBeginCaptureToGraph(stream, graph, &while_node, nullptr, 1,
                                                         cudaStreamCaptureModeThreadLocal));
        step_graph_kernels::step_budget_tail_kernel<<<blocks, cuda_launch::kBudgetThreads, 0, stream>>>(d_state_);
        CASCADE_CUDA_CHECK(cudaPeekAtLastError());
        CASCADE_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
      }
      CASCADE_CUDA_CHECK(cudaGraphInstantiate(&exec_, graph, 0));
    } catch (...) {
      recording_ = false;
      cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
      if (cudaStreamIsCapturing(stream, &status) == cudaSuccess && status != cudaStreamCaptureStatusNone) {
        cudaGraph_t left = nullptr;
        cudaStreamEndCapture(stream, &left);
      }
      cudaGraphDestroy(graph);  // and the bodies, which it owns
      exec_ = nullptr;
      deferred_ = DeferredBudget{};
      cudaGetLastError();  // what the failed capture left
      throw;
    }
    recording_ = false;
    graph_ = graph;
  }

  //! Up to max_steps steps from clock k (Backend::run_step_graph); waits for them.
  long run(cudaStream_t stream, StepClock& k, double t_output, long max_steps) {
    if (!exec_) throw RunError("run_step_graph: no step recorded");
    h_state_->k = k;
    h_state_->t_output = t_output;
    h_state_->max_steps = max_steps;
    h_state_->taken = 0;
    h_state_->live = 1;
    h_state_->budget = deferred_;
    h_state_->pending = 0;  // the host's steps added up their own
    h_state_->blocks_done = 0;
    CASCADE_CUDA_CHECK(cudaMemcpyAsync(d_state_, h_state_, sizeof(StepGraphState), cudaMemcpyHostToDevice, stream));
    CASCADE_CUDA_CHECK(cudaGraphLaunch(exec_, stream));
    CASCADE_CUDA_CHECK(cudaMemcpyAsync(h_state_, d_state_, sizeof(StepGraphState), cudaMemcpyDeviceToHost, stream));
    CASCADE_CUDA_CHECK(cudaStreamSynchronize(stream));
    k = h_state_->k;
    host_ = k;  // what the device's clock holds now
    host_valid_ = true;
    return h_state_->taken;
  }

  void destroy() {
    if (exec_) cudaGraphExecDestroy(exec_);
    if (graph_) cudaGraphDestroy(graph_);
    exec_ = nullptr;
    graph_ = nullptr;
  }

 private:
  static void begin(cudaStream_t stream, cudaGraph_t graph) {
    CASCADE_CUDA_CHECK(
        cudaStreamBeginCaptureToGraph(stream, graph, nullptr, nullptr, 0, cudaStreamCaptureModeThreadLocal));
  }
  //! A conditional node after everything captured on `stream` so far, which comes after it;
  //! returns its body (and the node, in *node).
  static cudaGraph_t add_conditional(cudaStream_t stream, cudaGraphConditionalHandle handle,
                                     cudaGraphConditionalNodeType type, cudaGraphNode_t* node) {
    cudaStreamCaptureStatus status;
    cudaGraph_t capturing = nullptr;
    const cudaGraphNode_t* deps = nullptr;
    std::size_t ndeps = 0;
    CASCADE_CUDA_CHECK(cudaStreamGetCaptureInfo(stream, &status, nullptr, &capturing, &deps, nullptr, &ndeps));
    cudaGraphNodeParams params = {};
    params.type = cudaGraphNodeTypeConditional;
    params.conditional.handle = handle;
    params.conditional.type = type;
    params.conditional.size = 1;
    CASCADE_CUDA_CHECK(cudaGraphAddNode(node, capturing, deps, nullptr, ndeps, &params));
    CASCADE_CUDA_CHECK(cudaStreamUpdateCaptureDependencies(stream, node, nullptr, 1, cudaStreamSetCaptureDependencies));
    return params.conditional.phGraph_out[0];
  }
  void allocate() {
    if (d_state_) return;
    CASCADE_CUDA_CHECK(cudaMalloc(&d_state_, sizeof(StepGraphState)));
    CASCADE_CUDA_CHECK(cudaMalloc(&d_max_, sizeof(Real)));
    CASCADE_CUDA_CHECK(cudaHostAlloc(&h_state_, sizeof(StepGraphState), cudaHostAllocDefault));
  }

  DeferredBudget deferred_;  //!< what the recorded step leaves to its clocks (defer_budget)
  StepClock host_;           //!< what the device's clock holds (host_valid_)
  bool host_valid_ = false;
  StepGraphState* d_state_ = nullptr;
  StepGraphState* h_state_ = nullptr;  //!< pinned: the launch's copies
  Real* d_max_ = nullptr;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  bool recording_ = false;
  bool chained_ = false;
};

}  // namespace cascade
