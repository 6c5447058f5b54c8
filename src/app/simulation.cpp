//! @file The run loop (simulation.hpp): step to the next output time, write what is due, report
//! progress, until a stop criterion holds; and the progress display.
#include "cascade/simulation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "cascade/parallel.hpp"

namespace cascade {

std::string hms(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--:--:--";
  const long s = static_cast<long>(seconds + 0.5);
  return fmt::format("{}:{:02d}:{:02d}", s / 3600, int(s / 60 % 60), int(s % 60));
}

// ---------------------------------------------------------------- progress

Progress::Progress(Console& console, double t_start, double t_end, long print_every, long step)
    : console_(console),
      t_start_(t_start),
      t_end_(t_end),
      print_every_(print_every),
      print_step_(step),
      print_clock_(SimClock::now()),
      live_clock_(SimClock::now()),
      print_t_(t_start) {}

void Progress::start(long step, double t) {
  t_start_ = print_t_ = t;
  print_step_ = step;
  print_clock_ = live_clock_ = SimClock::now();
}

bool Progress::wants_live() const {
  // On a terminal the line is refreshed about four times a second.
  return console_.terminal() && console_.level() != Console::Level::Quiet &&
         std::chrono::duration<double>(SimClock::now() - live_clock_).count() > 0.25;
}

bool Progress::wants_print(long step, double t) const { return step - print_step_ >= print_every_ || t >= t_end_; }

void Progress::report(const Diagnostics& x, const char* limit, bool periodic, long step, double t) {
  const double secs = std::chrono::duration<double>(SimClock::now() - print_clock_).count();
  const double steps_per_s = secs > 0 ? double(step - print_step_) / secs : 0.0;
  const double t_per_s = secs > 0 ? (t - print_t_) / secs : 0.0;
  const double frac = (x.t - t_start_) / std::max(t_end_ - t_start_, 1e-300);
  const double eta = t_per_s > 0 ? (t_end_ - x.t) / t_per_s : NAN;
  console_.progress(fmt::format("[{:5.1f}%] step {:>8}  t {:<10.5g} dt {:<9.3g} ({:<6}) E {:<11.5g} Z {:<11.5g} "
                                "max|u| {:<9.4g} {:>8.1f} steps/s  ETA {}",
                                100 * frac, x.step, x.t, x.dt, limit, x.energy, x.enstrophy, x.max_u, steps_per_s,
                                hms(eta)),
                    periodic);
  live_clock_ = SimClock::now();
  if (periodic) {
    print_step_ = step;
    print_clock_ = SimClock::now();
    print_t_ = t;
  }
}

// ---------------------------------------------------------------- the loop

template <class Real>
Simulation<Real>::Simulation(Solver<Real>& solver, const Config& config, Console& console,
                             std::function<int()> signal)
    : solver_(solver),
      config_(config),
      console_(console),
      signal_(std::move(signal)),
      start_(SimClock::now()),
      first_step_(solver.steps()),
      progress_(console, solver.time(), config.time.t_end, config.output.print_every, solver.steps()) {}

template <class Real>
void Simulation<Real>::flush() {
  for (auto& h : handlers_) h->flush();
}

template <class Real>
bool Simulation<Real>::stop() {
  if (reason_.kind == StopReason::Signal) return true;
  if (config_.time.max_steps > 0 && steps_taken() >= config_.time.max_steps) {
    console_.info(fmt::format("stopping at time.max_steps = {}", config_.time.max_steps));
    reason_.kind = StopReason::MaxSteps;
    return true;
  }
  return solver_.time() >= config_.time.t_end;
}

//! One step towards the earliest output time, and what the clocks and signals say after it.
template <class Real>
Moment<Real> Simulation<Real>::step() {
  double next = config_.time.t_end;
  for (const auto& h : handlers_) next = std::min(next, h->schedule.next);
  // Where the device chooses the steps (Solver::graphed), many in one launch: up to the next
  // periodic line and time.max_steps, and about kChunkSeconds of them.
  long chunk = 1;
  if (solver_.graphed()) {
    chunk = std::min(chunk_, progress_.steps_to_print(solver_.steps()));
    if (config_.time.max_steps > 0) chunk = std::min(chunk, config_.time.max_steps - steps_taken());
  }
  const long before = solver_.steps();
  const auto began = SimClock::now();
  const StepReport last = solver_.steps_toward(next, std::max(1L, chunk));
  if (solver_.graphed() && solver_.steps() - before >= chunk) {  // the whole chunk: how long it took
    const double per_step = std::chrono::duration<double>(SimClock::now() - began).count() / double(chunk);
    chunk_ = std::clamp(per_step > 0 ? long(kChunkSeconds / per_step) : kChunkSteps, 2L, kChunkSteps);
  }
  if (!last.dropped.empty()) {  // ensemble.on_blowup: drop
    int left = 0;
    for (int g = 0; g < solver_.members(); ++g) left += solver_.dropped(g) ? 0 : 1;
    for (std::size_t k = 0; k < last.dropped.size(); ++k)
      console_.always(fmt::format("ensemble member {} (of {}) dropped at step {}, t = {:.9g}: {}; it is at rest and "
                                  "NaN in every output from here; {} member{} go on",
                                  last.dropped[k], solver_.members(), solver_.steps(), solver_.time() - last.dt,
                                  last.dropped_why[k], left, left == 1 ? "" : "s"));
  }
  Moment<Real> m = moment();
  m.dt = last.dt;
  m.limit = to_string(last.limit);
  const bool root = parallel::root();
  const double now = wall();
  int agreed[3] = {root && progress_.wants_live(), 0, signal_()};
  for (const auto& h : handlers_) agreed[1] = agreed[1] || (root && h->schedule.wall_due(now));
  // What the clock and the signals say can differ between ranks: rank 0's clock decides, a
  // signal on any rank stops them all, at the same step.
  if (parallel::size() > 1) parallel::agree_max(agreed, 3);
  live_ = agreed[0] != 0;
  m.wall_due = agreed[1] != 0;
  if (agreed[2]) reason_ = {StopReason::Signal, agreed[2]};
  return m;
}

template <class Real>
StopReason Simulation<Real>::run(bool fresh) {
  if (fresh) {
    Moment<Real> m = moment();
    for (auto& h : handlers_) h->initial(m);
  }
  for (auto& h : handlers_) h->schedule.start(solver_.time());
  progress_.start(solver_.steps(), solver_.time());
  while (!stop()) {
    Moment<Real> m = step();
    const double t = solver_.time();
    for (auto& h : handlers_)
      if (h->due(m)) h->write(m);
    const bool periodic = progress_.wants_print(solver_.steps(), t);
    if (periodic || live_) {
      Diagnostics d = m.row ? *m.row : solver_.diagnose();
      d.set_dt(m.dt);
      d.cfl_limit = m.limit;
      progress_.report(d, m.limit, periodic, solver_.steps(), t);
    }
    for (auto& h : handlers_)
      if (h->schedule.due(t)) h->schedule.start(t);
  }
  Moment<Real> m = moment();
  m.final = true;
  for (auto& h : handlers_) h->final(m);
  return reason_;
}

template class Simulation<float>;
template class Simulation<double>;

}  // namespace cascade
