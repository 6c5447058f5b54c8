//! @file `cascade bench step`: time steps of a turbulent field and, in the same run, the same
//! transforms alone (the floor) and the step's memory-traffic bound (its bytes, step_traffic, at
//! the copy bandwidth measured in the run); median over many steps after a warm-up.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cascade/backend.hpp"
#include "cascade/bench.hpp"
#include "cascade/config.hpp"
#include "cascade/error.hpp"
#include "cascade/solver.hpp"
#include "cascade/step_plan.hpp"
#include "app/bench_timing.hpp"

namespace cascade {
namespace {

using Clock = std::chrono::steady_clock;
using bench::median;

struct StepRow {
  std::string backend, precision, stepper, form;
  long n;
  double step_ms, floor_ms, steps_per_s;
  double traffic_bytes;   //!< what a step moves as its plan makes it (step_traffic); NaN: not modelled
  double traffic_ms;      //!< those bytes at the copy bandwidth
  double copy_gbps;       //!< the copy bandwidth (the backend's memory)
  double fixed_ms;        //!< the same step without the CFL maximum (fixed dt): no reduction, no wait
  double graph_ms;        //!< the step on the device (Solver::steps_toward, up to kGraphChunk a launch); NaN: none
  double device_gib;      //!< GPU memory in use during the run (all of it), 0 on the CPU
  double solver_bytes;    //!< fields the solver holds
  std::string where;      //!< the backend's description (threads, how the FFTs were planned)
  std::string fused;      //!< the step plan (describe(Backend::step_plan()))
};

//! What the CFL maximum adds to a step, in percent of the step without it.
double cfl_percent(const StepRow& r) { return 100.0 * (r.step_ms - r.fixed_ms) / r.fixed_ms; }

//! The most steps a launch of the step on the device.
constexpr long kGraphChunk = 64;

template <class Real>
StepRow bench_one(BackendKind kind, long n, const std::string& stepper, const std::string& form,
                  const std::string& forcing, int repeats, int device, FftPlanning planning, bool callbacks, const std::string& transforms,
                  const CopyBandwidth& copy) {
  // The step on the device recorded wherever it can run (auto leaves the largest grids to the
  // host): its column shows it at every size.
  const Config c = parse_deck(fmt::format("grid: {{nx: {0}, ny: {0}, nonlinear: {1}}}\n"
                                          "physics: {{nu: 1e-4, nu_order: 2}}\n"
                                          "initial: {{type: random, k0: 10, energy: 0.5, seed: 1}}\n"
                                          "time: {{stepper: {2}, cfl: 0.5}}\n"
                                          "run: {{step_graph: {3}}}\n{4}",
                                          n, form, stepper,
                                          kind == BackendKind::Cuda ? "on" : "off",
                                          bench::forcing_section(forcing, n)),
                              "bench step");
  auto b = make_backend<Real>(kind, c.make_grid(), device, 0, planning);
  // The step plan: auto (`callbacks`), or auto without pruning, the row kernel or callbacks:
  // cuFFT's plain 2D transforms with auto's batching, or complex pairs where auto takes them
  // once the fields are allocated (the CPU: the whole-field transforms).
  const bool basdevant = c.grid.nonlinear == NonlinearForm::Basdevant;
  // `--transforms`: the rows with the step's own transforms take the strategy named.
  StepRequest request = callbacks ? step_request_from(transforms, "auto") : StepRequest{};
  if (!callbacks) {
    const StepStrategy auto_choice = b->plan_for(request, basdevant).strategy;
    if (auto_choice == StepStrategy::Pruned || auto_choice == StepStrategy::Rows ||
        auto_choice == StepStrategy::RowsColumns || auto_choice == StepStrategy::CpuRows)
      request.transforms = StepRequest::Transforms::Plain;
    request.callbacks = StepRequest::Callbacks::Off;
  }
  auto solver = std::make_unique<Solver<Real>>(*b, c, request);
  Solver<Real>& s = *solver;
  s.initialise();
  for (int k = 0; k < 10; ++k) s.step(1e30);  // warm-up: plans, clocks, caches
  std::vector<double> steps;
  for (int k = 0; k < repeats; ++k) {
    b->synchronize();
    const auto t0 = Clock::now();
    s.step(1e30);
    b->synchronize();
    steps.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  // The CFL maximum's cost: the same steps at a fixed dt, which take no maximum and never wait
  // for the device inside the step (alternating with CFL steps, so that both see the same field).
  const double dt = s.last_dt();
  std::vector<double> fixed;
  for (int k = 0; k < repeats; ++k) {
    b->synchronize();
    const auto t0 = Clock::now();
    s.step_fixed(dt);
    b->synchronize();
    fixed.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    s.step(1e30);
  }
  // The step on the device, where it runs: many steps a launch, the host waiting once.
  std::vector<double> graphed;
  s.prepare_graph();
  if (s.graphed()) {
    // As many steps a launch as fill about 50 ms (as a run takes them), 2 to kGraphChunk.
    const long chunk = std::clamp(long(50.0 / median(steps)), 2L, kGraphChunk);
    s.steps_toward(1e30, chunk);  // warm-up
    for (int k = 0; k < repeats; ++k) {
      b->synchronize();
      const long before = s.steps();
      const auto t0 = Clock::now();
      s.steps_toward(1e30, chunk);
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      graphed.push_back(ms / double(std::max(1L, s.steps() - before)));
    }
  }
  // The floor: the same transforms with the same plans, alone.
  const std::vector<double> floor = bench::transforms_alone(*b, s.table().stages(), basdevant, std::max(repeats, 20));
  std::size_t used = 0, total = 0;
  b->device_memory(used, total);
  const StepTraffic traffic = bench::traffic_of(*b, s, basdevant);
  StepRow row{to_string(kind), to_string(precision_of<Real>()), stepper, form, n, median(steps), median(floor), 0,
              traffic.total(), bench::traffic_ms(traffic, copy), copy.gbps, median(fixed),
              graphed.empty() ? NAN : median(graphed), used / 1073741824.0, double(s.memory_bytes()), b->description(),
              describe(b->step_plan())};
  row.steps_per_s = 1000.0 / row.step_ms;
  return row;
}

}  // namespace

int run_step_bench(const BenchOptions& o) {
  std::vector<Precision> precisions = o.precisions;
  if (precisions.empty()) precisions = {Precision::Double};
  std::vector<BackendKind> kinds;
  const std::string why = cuda_unavailable_reason();
  if (why.empty()) kinds.push_back(BackendKind::Cuda);
  else fmt::print("{}: CPU rows only\n", why);
  if (!why.empty() || o.include_cpu) kinds.push_back(BackendKind::Cpu);
  std::vector<StepRow> rows;
  // The copy bandwidth of each backend's memory, on a buffer of four real fields of the largest
  // grid (256 MiB at least), well past the caches.
  long largest = 0;
  for (long n : o.sizes) largest = std::max(largest, n);
  std::vector<CopyBandwidth> copies;
  for (BackendKind k : kinds) {
    const long n = largest > 0 ? largest : k == BackendKind::Cuda ? 16384 : 512;
    const std::size_t field = std::size_t(n) * std::size_t(n) * sizeof(double);
    copies.push_back(bench::copy_bandwidth(k, o.device, 4 * field, o.repeats));
    fmt::print("copy bandwidth: {:.1f} GB/s ({}); traffic ms: a step's bytes at it\n", copies.back().gbps,
               copies.back().where);
  }
  fmt::print("{:<7} {:<7} {:<5} {:<10} {:>6} {:>10} {:>10} {:>10} {:>7} {:>10} {:>12} {:>8} {:>10} {:>7} {:>10} "
             "{:>9}  {}\n",
             "backend", "prec", "step", "form", "N", "steps/s", "ms/step", "floor ms", "ratio", "traffic ms",
             "step/traffic", "CFL %", "graph ms", "ratio", "bytes/pt", "GPU GiB", "fused");
  std::vector<bool> callbacks;  // the rows: with the step's own transforms, without, or both
  if (o.callbacks != "off") callbacks.push_back(true);
  if (o.callbacks != "on") callbacks.push_back(false);
  for (std::size_t kk = 0; kk < kinds.size(); ++kk) {
    const BackendKind k = kinds[kk];
    std::vector<long> sizes = o.sizes;
    if (sizes.empty())
      sizes = k == BackendKind::Cuda ? std::vector<long>{1024, 2048, 4096, 8192, 16384} : std::vector<long>{256, 512};
    for (Precision p : precisions)
      for (long n : sizes)
        for (bool cb : callbacks) {
          const CopyBandwidth& copy = copies[kk];
          const StepRow r = p == Precision::Single ? bench_one<float>(k, n, o.stepper, o.form, o.forcing, o.repeats, o.device,
                                                                      o.fft_planning, cb, o.transforms, copy)
                                                   : bench_one<double>(k, n, o.stepper, o.form, o.forcing, o.repeats, o.device,
                                                                       o.fft_planning, cb, o.transforms, copy);
          fmt::print("{:<7} {:<7} {:<5} {:<10} {:>6} {:>10.2f} {:>10.3f} {:>10.3f} {:>7.3f} {:>10.3f} {:>12.3f} {:>8.2f} "
                     "{:>10.4f} {:>7.3f} {:>10.1f} {:>9.2f}  {}\n",
                     r.backend, r.precision, r.stepper, r.form, r.n, r.steps_per_s, r.step_ms, r.floor_ms,
                     r.step_ms / r.floor_ms, r.traffic_ms, r.step_ms / r.traffic_ms, cfl_percent(r), r.graph_ms,
                     r.graph_ms / r.floor_ms, r.solver_bytes / (double(n) * double(n)), r.device_gib, r.fused);
          if (k == BackendKind::Cpu) fmt::print("        {}\n", r.where);  // threads, how the FFTs were planned
          std::fflush(stdout);
          rows.push_back(r);
        }
  }
  if (!o.csv.empty()) {
    std::ofstream csv(o.csv);
    if (!csv) throw InputError("--csv: cannot write '" + o.csv + "'");
    csv << "backend,precision,stepper,form,n,steps_per_s,ms_per_step,floor_ms,ratio,traffic_bytes,copy_gbps,"
           "traffic_ms,step_per_traffic,fixed_dt_ms,cfl_percent,graph_ms_per_step,solver_bytes_per_point,gpu_gib,"
           "fused\n";
    for (const StepRow& r : rows)
      csv << fmt::format("{},{},{},{},{},{:.4f},{:.5f},{:.5f},{:.4f},{:.0f},{:.1f},{:.5f},{:.4f},{:.5f},{:.3f},{:.5f},"
                         "{:.2f},{:.3f},\"{}\"\n",
                         r.backend, r.precision, r.stepper, r.form, r.n, r.steps_per_s, r.step_ms, r.floor_ms,
                         r.step_ms / r.floor_ms, r.traffic_bytes, r.copy_gbps, r.traffic_ms, r.step_ms / r.traffic_ms,
                         r.fixed_ms, cfl_percent(r), r.graph_ms,
                         r.solver_bytes / (double(r.n) * double(r.n)), r.device_gib, r.fused);
  }
  return 0;
}

}  // namespace cascade
