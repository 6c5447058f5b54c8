//! @file cascade's command line (CLI11): subcommands, and exceptions mapped to exit codes
//! (0 done, 1 run failed, 2 bad input or usage; `cascade run` also 3, stopped by a signal with a
//! checkpoint written, and 128 + N, stopped by signal N before anything was computed).
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "cascade/backend.hpp"
#include "cascade/bench.hpp"
#include "cascade/config.hpp"
#include "cascade/error.hpp"
#include "cascade/info.hpp"
#include "cascade/io.hpp"
#include "cascade/output.hpp"
#include "cascade/parallel.hpp"
#include "cascade/poisson.hpp"
#include "cascade/run.hpp"
#include "cascade/version.hpp"

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

constexpr int kExitOk = 0;
constexpr int kExitRunFailed = 1;
constexpr int kExitBadInput = 2;

cascade::Config load(const std::string& deck, const std::vector<std::string>& sets,
                     const std::string& output) {
  std::vector<std::string> overrides = sets;
  if (!output.empty()) overrides.push_back("output.directory=" + output);
  return cascade::load_deck(deck, overrides);
}

int run(int argc, char** argv) {
  CLI::App app{"cascade: pseudo-spectral solver for two-dimensional turbulence"};
  app.set_version_flag("--version", std::string(cascade::kVersion) + " (" + cascade::kGitRevision + ")");
  app.require_subcommand(1);

  std::string deck, backend, output;
  std::vector<std::string> sets;

  cascade::RunOptions run_opts;
  auto* run_cmd = app.add_subcommand("run", "run a deck, or continue a run from a checkpoint, to time.t_end");
  run_cmd->add_option("deck", run_opts.deck, "YAML deck (not with --restart: the deck is in the checkpoint)");
  run_cmd->add_option("--restart", run_opts.restart, "continue from this checkpoint, in its run's directory");
  run_cmd->add_option("--backend", run_opts.backend, "auto | cuda | cpu (overrides run.backend)")
      ->check(CLI::IsMember({"auto", "cuda", "cpu"}));
  run_cmd->add_option("--set", run_opts.overrides, "override a deck key: section.key=value (repeatable)");
  run_cmd->add_option("--output", run_opts.output, "output directory (overrides output.directory)");
  run_cmd->add_flag("--overwrite", run_opts.overwrite, "replace another run's output in the output directory");
  run_cmd->add_flag("--quiet,-q", run_opts.quiet, "print only the summary and errors (log.txt has everything)");
  run_cmd->add_flag("--verbose,-v", run_opts.verbose, "keep every periodic progress line on screen");

  auto* poisson = app.add_subcommand("poisson", "solve the spectral Poisson problem alone (writes poisson.h5)");
  poisson->add_option("deck", deck, "YAML deck")->required();
  poisson->add_option("--backend", backend, "auto | cuda | cpu (overrides run.backend)")
      ->check(CLI::IsMember({"auto", "cuda", "cpu"}));
  poisson->add_option("--set", sets, "override a deck key: section.key=value (repeatable)");
  poisson->add_option("--output", output, "output directory (overrides output.directory)");

  auto* check = app.add_subcommand(
      "check", "validate a deck and print it resolved (defaults filled in), or verify a checkpoint (.h5)");
  auto* check_deck = check->add_option("deck", deck, "YAML deck, or a checkpoint to verify (seal, checksum, deck)");
  check->add_option("--set", sets, "override a deck key: section.key=value (repeatable)");
  bool keys = false;
  check->add_flag("--keys", keys, "print the key reference of every section (input/README.md's tables) and stop")
      ->excludes(check_deck);

  std::vector<std::string> seal_files;
  auto* seal = app.add_subcommand("seal", "renew the seal of cascade files edited on purpose (e.g. with h5py)");
  seal->add_option("files", seal_files, "HDF5 files cascade wrote")->required();

  std::string extract_from, extract_output;
  int extract_member = -1;
  auto* extract = app.add_subcommand("extract", "take one member out of an ensemble's checkpoint as a single run's");
  extract->add_option("checkpoint", extract_from, "an ensemble's checkpoint (.h5)")->required();
  extract->add_option("--member", extract_member, "the member, 0 to ensemble.members - 1")->required();
  extract->add_option("--output", extract_output, "the checkpoint to write (a new file)")->required();

  app.add_subcommand("info", "build, backends, devices, memory");

  cascade::BenchOptions bench_opts;
  std::string bench_what = "reduction";
  std::vector<std::string> bench_precisions;
  auto* bench = app.add_subcommand("bench", "benchmarks: reduction | fft | step | ensemble");
  bench->add_option("what", bench_what, "reduction (default) | fft | step | ensemble")
      ->check(CLI::IsMember({"reduction", "fft", "step", "ensemble"}));
  bench->add_option("--stepper", bench_opts.stepper, "step, ensemble: rk4 | rk3")->check(CLI::IsMember({"rk4", "rk3"}));
  bench->add_option("--form", bench_opts.form, "step, ensemble: basdevant | advective")
      ->check(CLI::IsMember({"basdevant", "advective"}));
  bench->add_option("--members", bench_opts.members, "ensemble: members stepped together; repeatable (default 1 16 64 256)")
      ->check(CLI::Range(1, 65535));
  bench->add_option("--transforms", bench_opts.transforms,
                    "step, ensemble: the step's transforms, as run.step_transforms (default auto; with --callbacks "
                    "on, the rows named so)")
      ->check(CLI::IsMember({"auto", "plain", "plain-pairs", "pruned", "pruned-pairs", "rows", "complex-pairs",
                             "rows-columns"}));
  bench->add_option("--forcing", bench_opts.forcing,
                    "step, ensemble: none (default: decaying) | ring (white noise, drawn each step) | kolmogorov")
      ->check(CLI::IsMember({"none", "ring", "kolmogorov"}));
  bench->add_flag("--cpu", bench_opts.include_cpu, "step, ensemble: CPU rows too when a GPU is present");
  bench->add_option("--callbacks", bench_opts.callbacks,
                    "step, ensemble: the step's own transforms (the step plan: GPU pruned, row kernel, cuFFT callbacks; "
                    "CPU row by row): on (default: the auto plan) | off (auto without pruning, the row "
                    "kernel or callbacks: the plain 2D transforms, or complex pairs where auto takes them) | both")
      ->check(CLI::IsMember({"on", "off", "both"}));
  bench->add_option("--n", bench_opts.sizes, "grid side N (fields N x N); repeatable");
  bench->add_option("--precision", bench_precisions, "single | double (default both)")
      ->check(CLI::IsMember({"single", "double"}));
  bench->add_option("--repeats", bench_opts.repeats, "timed runs per row (median reported)")
      ->check(CLI::Range(3, 100000));
  bench->add_option("--csv", bench_opts.csv, "also write the table as CSV to this file");
  bench->add_option("--device", bench_opts.device, "CUDA device index")->check(CLI::NonNegativeNumber);
  std::string bench_planning = "auto";
  bench->add_option("--fft-planning", bench_planning, "fft, step: CPU FFTW plans, as run.fft_planning (default auto)")
      ->check(CLI::IsMember({"auto", "estimate", "measure"}));

  // An unknown first word is named in the message (CLI11 would only say a command is missing).
  if (argc > 1 && argv[1][0] != '-') {
    const std::string first = argv[1];
    bool known = false;
    for (const auto* sub : app.get_subcommands({})) known = known || sub->get_name() == first;
    if (!known)
      throw cascade::InputError("unknown command '" + first +
                                "'; the commands are run, poisson, check, seal, info, bench, extract");
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --version
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "cascade: error: %s (see cascade --help)\n", cascade::one_line(e.what()).c_str());
    return kExitBadInput;
  }

  if (check->parsed() && keys) {
    std::fputs(cascade::deck_key_reference().c_str(), stdout);
    return kExitOk;
  }
  if (check->parsed() && deck.empty()) {  // as CLI11 says it of a required argument
    std::fputs("cascade: error: deck is required (see cascade --help)\n", stderr);
    return kExitBadInput;
  }
  if (run_cmd->parsed()) {
    if (run_opts.deck.empty() == run_opts.restart.empty())
      throw cascade::InputError("run: give a deck, or --restart CHECKPOINT (not both)");
    return cascade::run_command(run_opts);
  }
  if (poisson->parsed()) return cascade::run_poisson_command(load(deck, sets, output), backend);
  if (check->parsed() && (ends_with(deck, ".h5") || cascade::is_hdf5_file(deck))) {
    if (!sets.empty()) throw cascade::InputError("check: --set applies to decks, not to checkpoints");
    const cascade::CheckpointFile c = cascade::read_checkpoint(deck, {});
    fmt::print("{}: a good checkpoint (seal and state checksum verified): {} x {} {}, step {}, t = {}, "
               "dt = {}, stepper {}\n",
               deck, c.nx, c.ny, cascade::to_string(c.precision), c.meta.step,
               c.meta.time, c.meta.dt, c.meta.stepper);
    if (c.members > 1) fmt::print("an ensemble of {} members (cascade extract takes one out)\n", c.members);
    return kExitOk;
  }
  if (seal->parsed()) {
    // Every file is checked before any is touched: a bad argument leaves all of them as they were.
    for (const auto& f : seal_files) cascade::check_resealable(f);
    for (const auto& f : seal_files) {
      cascade::reseal(f);
      fmt::print("{}: sealed\n", f);
    }
    return kExitOk;
  }
  if (check->parsed()) {
    const cascade::Config c = load(deck, sets, "");
    cascade::check_run_inputs(c);
    std::fputs(("# cascade " + std::string(cascade::kVersion) + ": resolved deck of " + deck + "\n").c_str(), stdout);
    std::fputs(cascade::resolved_yaml(c).c_str(), stdout);
    return kExitOk;
  }
  if (extract->parsed()) {
    cascade::extract_member(extract_from, extract_member, extract_output);
    fmt::print("{}: member {} of {}, a single run's checkpoint; continue it with: cascade run --restart {} --output "
               "DIR\n",
               extract_output, extract_member, extract_from, extract_output);
    return kExitOk;
  }
  if (app.got_subcommand("info")) return cascade::run_info();
  if (bench->parsed()) {
    if (cascade::parallel::size() > 1)
      throw cascade::InputError("bench: runs as one process; start it without mpirun (cascade run runs over MPI)");
    bench_opts.what = bench_what;
    bench_opts.fft_planning = bench_planning == "measure"    ? cascade::FftPlanning::Measure
                              : bench_planning == "estimate" ? cascade::FftPlanning::Estimate
                                                             : cascade::FftPlanning::Auto;
    for (const auto& p : bench_precisions)
      bench_opts.precisions.push_back(p == "single" ? cascade::Precision::Single : cascade::Precision::Double);
    for (long n : bench_opts.sizes)
      if (n < 4 || n > 65536) throw cascade::InputError(fmt::format("--n: expected a side in [4, 65536], found {}", n));
    if (bench_what == "step") return cascade::run_step_bench(bench_opts);
    if (bench_what == "ensemble") return cascade::run_ensemble_bench(bench_opts);
    return bench_what == "fft" ? cascade::run_fft_bench(bench_opts) : cascade::run_reduction_bench(bench_opts);
  }
  return kExitBadInput;
}

}  // namespace

//! The end of a failed run. Alone, the code is main's exit status. Over MPI every rank ends:
//! rank 0 says why (the others only what rank 0 cannot know: their own run failures), and
//! MPI_Abort ends the job with the code, so that no rank waits in a collective for one that
//! has stopped (a deck error stops them all alike; a full disk on rank 0 stops rank 0 alone).
int fail(int code, const char* prefix, const char* what) {
  const bool quiet_rank = !cascade::parallel::root() && code == kExitBadInput;  // rank 0 says the same
  if (!quiet_rank) {
    const std::string rank =
        cascade::parallel::size() > 1 ? fmt::format(" (rank {})", cascade::parallel::rank()) : std::string();
    std::fprintf(stderr, "cascade: %s%s: %s\n", prefix, rank.c_str(), cascade::one_line(what).c_str());
    std::fflush(stderr);
  }
  if (cascade::parallel::size() > 1) {
    if (!cascade::parallel::root()) std::this_thread::sleep_for(std::chrono::milliseconds(500));  // rank 0 first
    cascade::parallel::abort_all(code);
  }
  cascade::parallel::finalize();
  return code;
}

int main(int argc, char** argv) {
  // A file-size limit (ulimit -f) must make writes fail with an error, not kill the run.
  std::signal(SIGXFSZ, SIG_IGN);
  cascade::parallel::init(argc, argv);
  bool report = false;
  const std::string problem = cascade::parallel::launch_problem(report);
  if (!problem.empty()) {
    if (report) std::fprintf(stderr, "cascade: error: %s\n", cascade::one_line(problem).c_str());
    cascade::parallel::finalize();
    return kExitBadInput;
  }
  int code = kExitOk;
  // No OpenMP team larger than the cores (OMP_NUM_THREADS=100000 would fail to start threads).
  cascade::cap_openmp_threads();  // `cascade run` logs what it capped
  try {
    code = run(argc, argv);
  } catch (const cascade::InputError& e) {
    return fail(kExitBadInput, "error", e.what());
  } catch (const cascade::RunError& e) {
    return fail(kExitRunFailed, "run failed", e.what());
  } catch (const std::bad_alloc&) {
    return fail(kExitRunFailed, "run failed", "out of host memory");
  } catch (const std::exception& e) {
    return fail(kExitRunFailed, "run failed", e.what());
  }
  cascade::parallel::finalize();
  return code;
}
