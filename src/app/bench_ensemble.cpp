//! @file `cascade bench ensemble`: steps of an ensemble (ensemble.members fields of one grid in
//! one batch) against, in the same run, the batched transforms alone (the floor) and the step's
//! memory-traffic bound (its bytes, step_traffic, at the copy bandwidth measured in the run);
//! member-steps a second, median over many steps after a warm-up.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "cascade/backend.hpp"
#include "cascade/bench.hpp"
#include "cascade/config.hpp"
#include "cascade/error.hpp"
#include "cascade/solver.hpp"
#include "app/bench_timing.hpp"

namespace cascade {
namespace {

using Clock = std::chrono::steady_clock;
using bench::median;

struct EnsembleRow {
  std::string backend, precision;
  long n;
  int members;
  double step_ms, floor_ms;
  double traffic_bytes;  //!< what a step of all the members moves (step_traffic); NaN: not modelled
  double traffic_ms;     //!< those bytes at the copy bandwidth
  double copy_gbps;      //!< the copy bandwidth (the backend's memory)
  double device_gib;  //!< GPU memory in use during the run (all of it), 0 on the CPU
  double bytes_per_member;
  std::string plan;
};

//! `callbacks`: the auto plan; else the same without cuFFT callbacks.
template <class Real>
EnsembleRow bench_one(BackendKind kind, long n, int members, const BenchOptions& o, bool callbacks,
                      const CopyBandwidth& copy) {
  // Decaying turbulence (or forced: --forcing), each member its own random field (initial.seed +
  // member) and white noise (forcing.seed + member).
  const Config c = parse_deck(fmt::format("grid: {{nx: {0}, ny: {0}, nonlinear: {1}}}\n"
                                          "physics: {{nu: 1e-4, nu_order: 2}}\n"
                                          "initial: {{type: random, k0: 10, energy: 0.5, seed: 1}}\n"
                                          "time: {{stepper: {2}, cfl: 0.5}}\n"
                                          "ensemble: {{members: {3}}}\n{4}",
                                          n, o.form, o.stepper, members, bench::forcing_section(o.forcing, n)),
                              "bench ensemble");
  const std::size_t need = Solver<Real>::required_bytes(c);
  auto b = make_backend<Real>(kind, c.make_grid(), o.device, 0, o.fft_planning, 0, members);
  if (kind == BackendKind::Cuda) {  // as a run says before it allocates
    std::size_t used = 0, total = 0;
    b->device_memory(used, total);
    if (need + b->fft_work_bytes() > total - used)
      throw InputError(fmt::format("{} members of {}^2 need {:.2f} GiB of GPU memory; {:.2f} GiB are free", members, n,
                                   double(need + b->fft_work_bytes()) / 1073741824.0,
                                   double(total - used) / 1073741824.0));
  }
  StepRequest request = step_request_from(o.transforms, callbacks ? "auto" : "off");
  Solver<Real> s(*b, c, request);
  s.initialise();
  for (int k = 0; k < 10; ++k) s.step(1e30);  // warm-up: plans, clocks, caches
  std::vector<double> steps;
  for (int k = 0; k < o.repeats; ++k) {
    b->synchronize();
    const auto t0 = Clock::now();
    s.step(1e30);
    b->synchronize();
    steps.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  // The floor: the step's transforms of every member, batched, alone.
  const bool basdevant = c.grid.nonlinear == NonlinearForm::Basdevant;
  const std::vector<double> floor = bench::transforms_alone(*b, s.table().stages(), basdevant, std::max(o.repeats, 20));
  std::size_t used = 0, total = 0;
  b->device_memory(used, total);
  const StepTraffic traffic = bench::traffic_of(*b, s, basdevant);
  return {to_string(kind), to_string(precision_of<Real>()), n, members, median(steps), median(floor), traffic.total(),
          bench::traffic_ms(traffic, copy), copy.gbps, used / 1073741824.0, double(s.memory_bytes()) / members,
          describe(b->step_plan())};
}

}  // namespace

int run_ensemble_bench(const BenchOptions& o) {
  std::vector<Precision> precisions = o.precisions;
  if (precisions.empty()) precisions = {Precision::Double};
  const std::string why = cuda_unavailable_reason();
  std::vector<BackendKind> kinds;
  if (why.empty()) kinds.push_back(BackendKind::Cuda);
  else fmt::print("{}: CPU rows only\n", why);
  if (!why.empty() || o.include_cpu) kinds.push_back(BackendKind::Cpu);
  std::vector<long> sizes = o.sizes.empty() ? std::vector<long>{256} : o.sizes;
  std::vector<int> counts = o.members.empty() ? std::vector<int>{1, 16, 64, 256} : o.members;
  // The copy bandwidth of each backend's memory, on a buffer of four real fields of the largest
  // batch (256 MiB at least), well past the caches.
  std::size_t largest = 0;
  for (long n : sizes)
    for (int m : counts) largest = std::max(largest, std::size_t(n) * std::size_t(n) * std::size_t(m));
  largest *= sizeof(double);
  std::vector<CopyBandwidth> copies;
  for (BackendKind k : kinds) {
    copies.push_back(bench::copy_bandwidth(k, o.device, 4 * largest, o.repeats));
    fmt::print("copy bandwidth: {:.1f} GB/s ({}); traffic ms: a step's bytes at it\n", copies.back().gbps,
               copies.back().where);
  }
  fmt::print("{:<7} {:<7} {:>6} {:>8} {:>14} {:>10} {:>10} {:>7} {:>10} {:>12} {:>12} {:>9}  {}\n", "backend", "prec",
             "N", "members", "member-steps/s", "ms/step", "floor ms", "ratio", "traffic ms", "step/traffic",
             "MiB/member", "GPU GiB", "plan");
  std::vector<bool> callbacks;  // the rows: the auto plan, without callbacks, or both
  if (o.callbacks != "off") callbacks.push_back(true);
  if (o.callbacks != "on") callbacks.push_back(false);
  std::vector<EnsembleRow> rows;
  for (std::size_t kk = 0; kk < kinds.size(); ++kk)
    for (Precision p : precisions)
      for (long n : sizes)
        for (int members : counts)
          for (bool cb : callbacks) {
            const BackendKind k = kinds[kk];
            if (!cb && k == BackendKind::Cpu) continue;  // the CPU has none
            const EnsembleRow r = p == Precision::Single ? bench_one<float>(k, n, members, o, cb, copies[kk])
                                                         : bench_one<double>(k, n, members, o, cb, copies[kk]);
            fmt::print("{:<7} {:<7} {:>6} {:>8} {:>14.0f} {:>10.3f} {:>10.3f} {:>7.3f} {:>10.3f} {:>12.3f} {:>12.2f} "
                       "{:>9.2f}  {}\n",
                       r.backend, r.precision, r.n, r.members, 1000.0 * r.members / r.step_ms, r.step_ms, r.floor_ms,
                       r.step_ms / r.floor_ms, r.traffic_ms, r.step_ms / r.traffic_ms, r.bytes_per_member / 1048576.0,
                       r.device_gib, r.plan);
            std::fflush(stdout);
            rows.push_back(r);
          }
  if (!o.csv.empty()) {
    std::ofstream csv(o.csv);
    if (!csv) throw InputError("--csv: cannot write '" + o.csv + "'");
    csv << "backend,precision,n,members,member_steps_per_s,ms_per_step,floor_ms,ratio,traffic_bytes,copy_gbps,"
           "traffic_ms,step_per_traffic,bytes_per_member,gpu_gib,plan\n";
    for (const EnsembleRow& r : rows)
      csv << fmt::format("{},{},{},{},{:.1f},{:.5f},{:.5f},{:.4f},{:.0f},{:.1f},{:.5f},{:.4f},{:.0f},{:.3f},\"{}\"\n",
                         r.backend, r.precision, r.n, r.members, 1000.0 * r.members / r.step_ms, r.step_ms, r.floor_ms,
                         r.step_ms / r.floor_ms, r.traffic_bytes, r.copy_gbps, r.traffic_ms, r.step_ms / r.traffic_ms,
                         r.bytes_per_member, r.device_gib, r.plan);
  }
  return 0;
}

}  // namespace cascade
