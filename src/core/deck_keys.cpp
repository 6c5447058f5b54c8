//! @file The deck's keys, declared once: one row a key {section, key, member, default, checks,
//! doc}, read by the parser (src/core/config.cpp), the resolved deck (below) and the key reference
//! that input/README.md holds (`cascade check --keys`; tests/check_docs.py keeps them equal).
//! Defaults are the member initialisers of include/cascade/config.hpp, but where a row derives
//! one from keys read before it (ny from nx). Checks that join keys are in src/config.cpp.
#include "core/deck_keys.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "core/deck_reader.hpp"
#include "core/deck_types.hpp"
#include "core/ensemble.hpp"

namespace cascade::deck {
namespace {

//! A default taken from keys read before this one.
using Derived = std::function<double(const Config&)>;

//! Shortest text that reads back to the same double (0.1, not 0.10000000000000001).
std::string exact(double x) { return fmt::format("{}", x); }

KeyCheck at_least(double lo, std::string expected) {
  return {[lo](double x) { return x >= lo; }, std::move(expected)};
}
KeyCheck above(double lo, std::string expected) {
  return {[lo](double x) { return x > lo; }, std::move(expected)};
}
KeyCheck within(double lo, double hi, std::string expected) {
  return {[lo, hi](double x) { return x >= lo && x <= hi; }, std::move(expected)};
}
const KeyCheck kFinite{[](double) { return true; }, "a finite number"};
const KeyCheck kNonNegative = at_least(0, "a finite value >= 0");
const KeyCheck kEvenSide{[](double x) { return x >= 4 && std::fmod(x, 2) == 0 && x <= kMaxSide; },
                         fmt::format("an even integer in [4, {}]", kMaxSide)};
const KeyCheck kSeed = at_least(0, "an integer >= 0");
const std::vector<KeyCheck> kBoxLength = {
    above(0, "a positive finite length"),
    // Wavenumbers, their powers (up to k^64) and the energy's 1/k^2 stay far inside double's range.
    within(kMinLength, kMaxLength, fmt::format("a length in [{:g}, {:g}]", kMinLength, kMaxLength))};

//! Words in backquotes: `a`, `b`, `c`.
std::string quoted_words(const std::vector<std::string>& words) {
  std::string s;
  for (const auto& w : words) s += (s.empty() ? "`" : ", `") + w + "`";
  return s;
}

//! The rows of one section, whose values live in Config::*sec.
template <class S>
class Rows {
 public:
  Rows(std::vector<DeckKey>& out, const char* section, S Config::*sec) : out_(out), section_(section), sec_(sec) {}

  //! An integer key (int or long members; read as 32 bits).
  template <class T>
  Rows& integer(const char* key, T S::*m, std::vector<KeyCheck> checks, KeyDoc doc, Derived def = {},
                bool required = false) {
    numeric(key, m, std::move(checks), std::move(doc), [=](Section& s, const Config& c, T v) {
      return s.get_int(key, def ? static_cast<int>(def(c)) : static_cast<int>(v), required);
    });
    out_.back().integer = true;
    return *this;
  }

  //! A real key; `pi`: a length, which may be written as a multiple of pi.
  Rows& real(const char* key, double S::*m, std::vector<KeyCheck> checks, KeyDoc doc, Derived def = {},
             bool pi = false) {
    numeric(key, m, std::move(checks), std::move(doc), [=](Section& s, const Config& c, double v) {
      return s.get_double(key, def ? def(c) : v, pi);
    });
    out_.back().length = pi;
    return *this;
  }
  Rows& length(const char* key, double S::*m, std::vector<KeyCheck> checks, KeyDoc doc, Derived def = {}) {
    return real(key, m, std::move(checks), std::move(doc), std::move(def), true);
  }

  //! One of a fixed set of words, kept as the word.
  Rows& choice(const char* key, std::string S::*m, std::vector<std::string> words, KeyDoc doc) {
    const auto sec = sec_;
    DeckKey& k = add(key, {}, std::move(doc));
    k.words = words;
    k.read = [=](Section& s, Config& c) {
      std::string& v = (c.*sec).*m;
      v = s.get_choice(key, v, words);
    };
    k.dump = [=](YAML::Emitter& e, const Config& c) { e << YAML::Key << key << YAML::Value << (c.*sec).*m; };
    k.text = [=](const Config& c) { return (c.*sec).*m; };
    return *this;
  }

  //! One of a fixed set of words, kept as an enum value.
  template <class E>
  Rows& choice(const char* key, E S::*m, std::vector<std::pair<std::string, E>> words, KeyDoc doc) {
    const auto sec = sec_;
    DeckKey& k = add(key, {}, std::move(doc));
    for (const auto& w : words) k.words.push_back(w.first);
    const auto word_of = [words](E v) {
      for (const auto& w : words)
        if (w.second == v) return w.first;
      return std::string();
    };
    k.read = [=, names = k.words](Section& s, Config& c) {
      E& v = (c.*sec).*m;
      const std::string word = s.get_choice(key, word_of(v), names);
      for (const auto& w : words)
        if (w.first == word) v = w.second;
    };
    k.dump = [=](YAML::Emitter& e, const Config& c) {
      e << YAML::Key << key << YAML::Value << word_of((c.*sec).*m);
    };
    k.text = [=](const Config& c) { return word_of((c.*sec).*m); };
    return *this;
  }

  //! A string the user chose (a path): taken as written, always quoted in the resolved deck so
  //! that `null`, `~`, `#`, `123` or a new line read back as the same string, here and by any
  //! YAML reader. An empty one (no value) is left out.
  Rows& string(const char* key, std::string S::*m, KeyDoc doc) {
    const auto sec = sec_;
    DeckKey& k = add(key, {}, std::move(doc));
    k.read = [=](Section& s, Config& c) {
      std::string& v = (c.*sec).*m;
      v = s.get_string(key, v);
    };
    k.dump = [=](YAML::Emitter& e, const Config& c) {
      const std::string& v = (c.*sec).*m;
      if (!v.empty()) e << YAML::Key << key << YAML::Value << YAML::DoubleQuoted << v;
    };
    k.text = [=](const Config& c) { return (c.*sec).*m; };
    return *this;
  }

  //! A list of words (or one word).
  Rows& list(const char* key, std::vector<std::string> S::*m, std::vector<std::string> words, KeyDoc doc) {
    const auto sec = sec_;
    DeckKey& k = add(key, {}, std::move(doc));
    k.words = words;
    k.read = [=](Section& s, Config& c) {
      auto& v = (c.*sec).*m;
      v = s.get_list(key, v, words);
    };
    k.dump = [=](YAML::Emitter& e, const Config& c) {
      e << YAML::Key << key << YAML::Value << YAML::Flow << (c.*sec).*m;
    };
    k.text = [=](const Config& c) { return fmt::format("[{}]", fmt::join((c.*sec).*m, ", ")); };
    return *this;
  }

  //! ensemble.vary: "section.key" -> a list of numbers, one a member (src/core/ensemble.cpp reads it).
  Rows& vary(const char* key, KeyDoc doc) {
    DeckKey& k = add(key, {}, std::move(doc));
    k.read = [=](Section& s, Config& c) { c.ensemble.vary = read_vary(s, key); };
    k.dump = [=](YAML::Emitter& out, const Config& c) {
      if (c.ensemble.vary.empty()) return;
      out << YAML::Key << key << YAML::Value << YAML::BeginMap;
      for (const auto& [path, values] : c.ensemble.vary) {
        const DeckKey* row = find_key(path);
        const bool integer = row && row->integer;  // written as one: 1e+09 would not read back
        out << YAML::Key << path << YAML::Value << YAML::Flow << YAML::BeginSeq;
        for (const double x : values) out << (integer ? fmt::format("{}", static_cast<long long>(x)) : exact(x));
        out << YAML::EndSeq;
      }
      out << YAML::EndMap;
    };
    k.text = [](const Config& c) {
      std::string keys;
      for (const auto& entry : c.ensemble.vary) keys += (keys.empty() ? "" : ", ") + entry.first;
      return keys.empty() ? std::string("nothing") : keys;
    };
    return *this;
  }

  //! initial.vortices: a list of mappings {x, y, radius, circulation, profile}.
  Rows& vortices(const char* key, std::vector<VortexConfig> S::*m, KeyDoc doc) {
    const auto sec = sec_;
    DeckKey& k = add(key, {}, std::move(doc));
    k.read = [=](Section& s, Config& c) { (c.*sec).*m = s.get_vortices(key); };
    k.dump = [=](YAML::Emitter& out, const Config& c) {
      out << YAML::Key << key << YAML::Value << YAML::BeginSeq;
      for (const auto& v : (c.*sec).*m) {
        out << YAML::Flow << YAML::BeginMap;
        out << YAML::Key << "x" << YAML::Value << exact(v.x) << YAML::Key << "y" << YAML::Value << exact(v.y);
        out << YAML::Key << "radius" << YAML::Value << exact(v.radius);
        out << YAML::Key << "circulation" << YAML::Value << exact(v.circulation);
        out << YAML::Key << "profile" << YAML::Value << v.profile << YAML::EndMap;
      }
      out << YAML::EndSeq;
    };
    k.text = [=](const Config& c) { return fmt::format("{} vortices", ((c.*sec).*m).size()); };
    return *this;
  }

 private:
  //! A number, read by `get(section, config, default)`; a real one is written back exactly.
  template <class T, class Get>
  Rows& numeric(const char* key, T S::*m, std::vector<KeyCheck> checks, KeyDoc doc, Get get) {
    const auto sec = sec_;
    DeckKey& k = add(key, std::move(checks), std::move(doc));
    k.read = [=](Section& s, Config& c) {
      T& v = (c.*sec).*m;
      v = get(s, c, v);
    };
    k.dump = [=](YAML::Emitter& e, const Config& c) {
      e << YAML::Key << key << YAML::Value;
      if constexpr (std::is_floating_point_v<T>)
        e << exact((c.*sec).*m);
      else
        e << (c.*sec).*m;
    };
    k.text = [=](const Config& c) { return fmt::format("{}", (c.*sec).*m); };
    k.number = [=](const Config& c) { return static_cast<double>((c.*sec).*m); };
    k.assign = [=](Config& c, double x) { (c.*sec).*m = static_cast<T>(x); };
    return *this;
  }

  DeckKey& add(const char* key, std::vector<KeyCheck> checks, KeyDoc doc) {
    DeckKey k;
    k.section = section_;
    k.name = key;
    k.checks = std::move(checks);
    k.doc = std::move(doc);
    out_.push_back(std::move(k));
    return out_.back();
  }

  std::vector<DeckKey>& out_;
  const char* section_;
  S Config::*sec_;
};

std::vector<DeckKey> make_table() {
  std::vector<DeckKey> t;
  const auto half_lx = [](const Config& c) { return c.grid.lx / 2; };
  const auto half_ly = [](const Config& c) { return c.grid.ly / 2; };

  Rows<GridConfig>(t, "grid", &Config::grid)
      .integer("nx", &GridConfig::nx, {kEvenSide}, {"grid points in x", "–", "required", "even integer, 4 to 2^20"},
               {}, true)
      .integer("ny", &GridConfig::ny, {kEvenSide},
               {"grid points in y", "–", "`nx`", "even integer, 4 to 2^20; nx·ny ≤ 65536²"},
               [](const Config& c) { return c.grid.nx; })
      .length("lx", &GridConfig::lx, kBoxLength, {"box length in x", "length", "`2pi`", "positive, finite"})
      .length("ly", &GridConfig::ly, kBoxLength, {"box length in y", "length", "`lx`", "positive, finite"},
              [](const Config& c) { return c.grid.lx; })
      .choice("dealias", &GridConfig::dealias, {{"two-thirds", Dealias::TwoThirds}, {"none", Dealias::None}},
              {"dealiasing rule of the nonlinear term", "–", "",
               "`two-thirds` (keeps \\|m\\| < nx/3 and \\|n\\| < ny/3, strictly: where N is a multiple of 3 the mode "
               "N/3 would alias), `none` (keeps every mode but the Nyquist row and column)"})
      .choice("nonlinear", &GridConfig::nonlinear,
              {{"basdevant", NonlinearForm::Basdevant}, {"advective", NonlinearForm::Advective}},
              {"how u·grad(omega) is evaluated", "–", "",
               "`basdevant` ((dxx − dyy)(uv) + dxy(v² − u²): 2 inverse + 2 forward transforms a stage), `advective` "
               "(4 inverse + 1 forward); they agree to round-off"});

  const KeyCheck order = within(1, 32, "an integer in [1, 32]");
  Rows<PhysicsConfig>(t, "physics", &Config::physics)
      .real("nu", &PhysicsConfig::nu, {kNonNegative},
            {"viscosity (hyperviscosity for nu_order > 1)", "length^(2p)/time", "", "≥ 0"})
      .integer("nu_order", &PhysicsConfig::nu_order, {order},
               {"p: order of the viscous term, D ⊃ nu k^(2p)", "–", "", "integer 1 to 32"})
      .real("mu", &PhysicsConfig::mu, {kNonNegative}, {"linear (Ekman) friction", "1/time", "", "≥ 0"})
      .real("alpha", &PhysicsConfig::alpha, {kNonNegative},
            {"hypoviscosity, D ⊃ alpha k^(−2q): removes energy at large scales", "length^(−2q)/time", "", "≥ 0"})
      .integer("alpha_order", &PhysicsConfig::alpha_order, {order},
               {"q: order of the hypoviscous term", "–", "", "integer 1 to 32"})
      .real("beta", &PhysicsConfig::beta, {kFinite},
            {"beta-plane parameter, the term −beta v (Rossby waves, integrated exactly)", "1/(length·time)", "",
             "finite"});

  // The forcing's types, with the checks of their keys: src/deck_types.cpp.
  Rows<ForcingConfig>(t, "forcing", &Config::forcing)
      .choice("type", &ForcingConfig::type, type_names(forcing_types()),
              {"the forcing F", "–", "", type_docs(forcing_types(), "; ")})
      .real("amplitude", &ForcingConfig::amplitude, {},
            {"kolmogorov: chi; ring-steady: the rms force ⟨\\|f\\|²⟩^½", "length/time²", "",
             "kolmogorov: finite; ring-steady: > 0"})
      .integer("wavenumber", &ForcingConfig::wavenumber, {},
               {"kolmogorov: n_f, with k_f = 2 pi n_f / ly", "–", "", "integer ≥ 1, below ny/3"})
      .real("epsilon", &ForcingConfig::epsilon, {}, {"ring: mean energy injection rate", "length²/time³", "", "> 0"})
      .real("k_f", &ForcingConfig::k_f, {},
            {"ring, ring-steady: centre of the forced shell", "1/length", "",
             "> 0, with k_f + dk inside the dealiased band"})
      .real("dk", &ForcingConfig::dk, {}, {"ring, ring-steady: half-width of the shell", "1/length", "", "(0, k_f)"})
      .integer("seed", &ForcingConfig::seed, {kSeed}, {"ring, ring-steady: random phases", "–", "", "integer ≥ 0"});

  // The initial condition's types, with the checks of their keys: src/deck_types.cpp.
  Rows<InitialConfig>(t, "initial", &Config::initial)
      .choice("type", &InitialConfig::type, type_names(initial_types()),
              {"the initial vorticity", "–", "", type_docs(initial_types(), ", ")})
      .integer("seed", &InitialConfig::seed, {kSeed},
               {"random phases (the same field on every backend and precision)", "–", "", "integer ≥ 0"})
      .real("k0", &InitialConfig::k0, {}, {"peak wavenumber of the random field", "1/length", "", "> 0"})
      .real("energy", &InitialConfig::energy, {},
            {"energy E = ½⟨\\|u\\|²⟩ of the random field", "length²/time²", "", "> 0"})
      .real("amplitude", &InitialConfig::amplitude, {},
            {"taylor-green: A; gaussian: peak vorticity", "–", "", "finite"})
      .integer("mode", &InitialConfig::mode, {},
               {"m of the Taylor–Green field", "–", "", "integer ≥ 1, below min(nx, ny)/3"})
      .length("x0", &InitialConfig::x0, {}, {"centre (gaussian, lamb-dipole)", "length", "box centre", "", true},
              half_lx)
      .length("y0", &InitialConfig::y0, {}, {}, half_ly)
      .length("radius", &InitialConfig::radius, {},
              {"gaussian: sigma; lamb-dipole: a", "length", "", "> 0, below half the box"})
      .real("speed", &InitialConfig::speed, {}, {"lamb-dipole: U", "length/time", "", "finite"})
      .vortices("vortices", &InitialConfig::vortices,
                {"a list of `{x, y, radius, circulation, profile}`; profile `gaussian` (omega = Gamma/(2 pi r²) "
                 "exp(−ρ²/(2r²))) or `lamb-oseen` (Gamma/(pi a²) exp(−ρ²/a²)); summed with their nearest periodic "
                 "images; the mean is removed",
                 "length, length²/time", "–", "radius > 0"})
      .string("path", &InitialConfig::path,
              {"file: a snapshot (`/vorticity`) or a checkpoint (`/state/omega_hat`, checksum verified)", "–", "–",
               "a readable file"});

  Rows<TimeConfig>(t, "time", &Config::time)
      .real("t_end", &TimeConfig::t_end, {above(0, "a positive finite time")}, {"end time", "time", "", "> 0"})
      .real("cfl", &TimeConfig::cfl, {{[](double x) { return x > 0 && x <= 5; }, "a number in (0, 5]"}},
            {"CFL number: dt × max(\\|u\\|/dx + \\|v\\|/dy). The fastest resolved mode at the fastest point is "
             "stable below about 1.35 (rk4) and 0.8 (rk3); turbulent runs often tolerate more",
             "–", "", "(0, 5]"})
      .real("dt_max", &TimeConfig::dt_max, {above(0, "a positive finite time step")},
            {"largest step", "time", "", "> 0"})
      .real("dt_min", &TimeConfig::dt_min, {},
            {"smallest step before the run is declared failed", "time", "", "[0, dt_max)"})
      .real("dt_initial", &TimeConfig::dt_initial, {kNonNegative},
            {"bound on the first step (0: none beyond cfl and dt_max)", "time", "", "≥ 0"})
      .real("growth", &TimeConfig::growth, {at_least(1, "a factor >= 1")},
            {"largest ratio of a step to the one before", "–", "", "≥ 1"})
      .choice("stepper", &TimeConfig::stepper, {"rk4", "rk3"},
              {"time integrator (integrating factor for D(k) and beta)", "–", "",
               "`rk4` (classic RK4, 3 spectral registers), `rk3` (Wray's low-storage RK3, 2 registers: for the "
               "largest grids)"})
      .integer("max_steps", &TimeConfig::max_steps, {at_least(0, "a step count >= 0 (0 = no limit)")},
               {"stop after this many steps", "–", "`0` (no limit)", "integer ≥ 0"});

  Rows<RunConfig>(t, "run", &Config::run)
      .choice("backend", &RunConfig::backend, {"auto", "cuda", "cpu"},
              {"where to compute", "", "",
               "`auto` (CUDA when a device is present, else CPU; the choice and its reason are printed), `cuda`, "
               "`cpu`"})
      .choice("precision", &RunConfig::precision, {{"double", Precision::Double}, {"single", Precision::Single}},
              {"floating-point precision of fields and transforms", "", "", ""})
      .integer("device", &RunConfig::device, {at_least(0, "a device index >= 0")},
               {"CUDA device index", "", "", "integer ≥ 0"})
      .integer("threads", &RunConfig::threads,
               {within(0, kMaxThreads,
                       fmt::format("a thread count in [0, {}] (0 = from the grid and the cores; more than the cores "
                                   "available are not used)",
                                   kMaxThreads))},
               {"CPU threads for FFTW and the loops", "",
                "`0`: one per 16384 grid points, up to all cores (or OMP_NUM_THREADS)", "integer ≥ 0"})
      .choice("fft_planning", &RunConfig::fft_planning,
              {{"auto", FftPlanning::Auto}, {"estimate", FftPlanning::Estimate}, {"measure", FftPlanning::Measure}},
              {"how the CPU backend plans its FFTW transforms (the CUDA backend ignores it)", "",
               "`auto`: `measure` from 512² grid points on, `estimate` below",
               "`auto`; `estimate` (FFTW_ESTIMATE: instant, and the same plans, so the same bits, on every "
               "machine); `measure` (FFTW_MEASURE: plans timed on this machine, 20–50% faster transforms at 1024² "
               "and up; the choice is kept in a wisdom file beside the executable, so it is made once per machine: "
               "[docs/performance.md](../docs/performance.md#cpu-backend))"})
      .choice("step_transforms", &RunConfig::step_transforms, kStepTransforms,
              {"how a step's nonlinear term runs its transforms ([docs/gpu-step.md](../docs/gpu-step.md)); written "
               "to `deck.yaml` and checkpoints, so a restart plans the same way",
               "",
               "`auto`: by size, precision, form and device from the tuning table of `src/core/step_plan.cpp`, as "
               "measured fastest (printed on the log's `step transforms:` line)",
               "`auto`; `plain` (cuFFT's or FFTW's 2D transforms, a field at a time); `plain-pairs` (two fields in "
               "one batched cuFFT plan); `pruned`, `pruned-pairs` (cuda: rows, then the kept columns alone; needs "
               "`dealias: two-thirds`); `rows` (cuda: the row kernel between pruned passes, needs `nonlinear: "
               "basdevant`, `dealias: two-thirds` and nx a power of two from 16 to 65536; cpu: the evaluation row "
               "by row, needs `dealias: two-thirds`); `complex-pairs` (cuda: u + i v through one complex transform "
               "each way, needs `nonlinear: basdevant`); `rows-columns` (cuda: the row kernel and a column kernel with the "
               "stage inside, no cuFFT; needs `nonlinear: basdevant`, `dealias: two-thirds`, nx and ny powers of two "
               "from 16, ny up to 16384 on an H100, 4096 in double and 8192 in single before compute capability "
               "9.0). A choice the run cannot make is refused (exit 2)"})
      .choice("fft_callbacks", &RunConfig::fft_callbacks, kFftCallbacks,
              {"cuFFT callbacks folding the dealiasing into the step's transforms (cuda on one GPU)", "",
               "`auto`: the tuning table's level for the strategy",
               "`auto`; `off`; `store` (the forward transforms store the kept modes alone); `all` (and the inverse "
               "ones load them alone). `store` and `all` are refused on the cpu backend and over MPI ranks"})
      .choice("step_graph", &RunConfig::step_graph, kStepGraph,
              {"whether the step runs on the device as a CUDA graph that chooses its own dt from the CFL maximum "
               "(cuda on one GPU; [docs/gpu-step.md](../docs/gpu-step.md#the-step-on-the-device)): the host "
               "launches once for many steps and never waits for the maximum. The same steps, bit for bit",
               "",
               "`auto`: on wherever it can run (cuda, one process; white noise is drawn on the device) up to 4096² points a "
               "step (every ensemble member's), where it pays",
               "`auto`; `on` (refused, exit 2, where it cannot run); `off` (the host chooses each dt and launches "
               "each step)"})
      .integer("exchange_chunks", &RunConfig::exchange_chunks,
               {at_least(0, "a chunk count >= 0 (0 = auto)")},
               {"cuda over MPI ranks: the chunks each transform's all-to-all is split into, each sent while the "
                "next is transformed ([docs/parallel.md](../docs/parallel.md)); the results do not depend on it "
                "beyond round-off. Other backends ignore it",
                "", "`0`: auto, 4 (or the smallest slab's rows or kx columns, when fewer)",
                "integer ≥ 0, at most the rows and the kx columns of each rank's slab (checked when the run starts)"});

  const std::string every = "simulation time between ";
  Rows<OutputConfig>(t, "output", &Config::output)
      .string("directory", &OutputConfig::directory,
              {"where output files go (created if missing). A new run refuses a directory that holds another run's "
               "output unless given `--overwrite`; `--restart` continues the run in its own directory",
               "", "", "a writable path"})
      .real("diagnostics_every", &OutputConfig::diagnostics_every, {above(0, "a positive simulation time")},
            {every + "rows of diagnostics.csv/.h5", "", "", "> 0"})
      .real("snapshot_every", &OutputConfig::snapshot_every, {kNonNegative},
            {every + "snapshots (snapshots/snap_NNNNNN.h5, indexed in snapshots.xmf)", "", "", "≥ 0 (0: none)"})
      .real("spectra_every", &OutputConfig::spectra_every, {kNonNegative},
            {every + "shell spectra (spectra.h5)", "", "", "≥ 0 (0: none)"})
      .real("checkpoint_every", &OutputConfig::checkpoint_every, {kNonNegative},
            {every + "checkpoints", "", "",
             "≥ 0 (0: none; a checkpoint is still written at the end, on SIGINT/SIGTERM and every "
             "`checkpoint_wall_seconds`)"})
      .real("checkpoint_wall_seconds", &OutputConfig::checkpoint_wall_seconds, {kNonNegative},
            {"wall-clock seconds between checkpoints", "", "", "≥ 0 (0: none)"})
      .integer("keep_checkpoints", &OutputConfig::keep_checkpoints, {at_least(1, "a count >= 1")},
               {"how many of the newest checkpoints are kept; older ones are removed", "", "", "integer ≥ 1"})
      .list("fields", &OutputConfig::fields, {"vorticity", "streamfunction", "velocity"},
            {"fields in each snapshot", "", "", "a list of `vorticity`, `streamfunction`, `velocity` (u and v)"})
      .integer("print_every", &OutputConfig::print_every, {at_least(1, "a step count >= 1")},
               {"steps between progress lines", "", "", "integer ≥ 1"});

  // poisson.x0 and y0 lie within the box: src/config.cpp.
  Rows<PoissonConfig>(t, "poisson", &Config::poisson)
      .choice("rhs", &PoissonConfig::rhs, {"gaussian"}, {"right-hand side", "–", "", ""})
      .length("sigma", &PoissonConfig::sigma, {above(0, "a positive finite width")},
              {"width of the Gaussian", "length", "", "positive"})
      .length("x0", &PoissonConfig::x0, {}, {"centre of the Gaussian", "length", "`lx/2`, `ly/2`", "within the box", true},
              half_lx)
      .length("y0", &PoissonConfig::y0, {}, {}, half_ly)
      .choice("gauge", &PoissonConfig::gauge, {"corner", "zero-mean"},
              {"how the free constant of phi is fixed", "–", "",
               "`corner` (phi(0,0) = 0, as NVIDIA's example), `zero-mean` (mean of phi = 0; compared with exact − "
               "mean(exact))"});

  // Which keys may vary and the checks of the members: src/core/ensemble.cpp.
  Rows<EnsembleConfig>(t, "ensemble", &Config::ensemble)
      .integer("members", &EnsembleConfig::members, {within(1, kMaxMembers, fmt::format("an integer in [1, {}]", kMaxMembers))},
               {"realisations of the deck stepped together as one batch; member b has initial.seed + b and "
                "forcing.seed + b, and the values of `vary`",
                "", "`1` (a single run)", fmt::format("integer 1 to {}", kMaxMembers)})
      .choice("on_blowup", &EnsembleConfig::on_blowup, {"stop", "drop"},
              {"what the batch does when a member blows up (its velocity is not finite, or it drives dt below "
               "`time.dt_min`)",
               "", "", "`stop` (the run stops, as a single run does), `drop` (the member is set to rest and left "
               "out; its outputs are NaN from then on; the others go on)"})
      .vary("vary", {"keys whose value differs between members: `section.key: [one value a member]` "
                     "([below](#what-may-vary))",
                     "", "none",
                     "a list of `members` values for any of " + quoted_words(vary_keys()) +
                         ", each passing that key's checks"});
  return t;
}

}  // namespace

const std::vector<DeckKey>& deck_keys() {
  static const std::vector<DeckKey> table = [] {
    std::vector<DeckKey> t = make_table();
    // A forcing or initial type reads keys of its own section.
    const auto known = [&t](const std::string& section, const std::string& key) {
      return std::any_of(t.begin(), t.end(), [&](const DeckKey& k) { return k.section == section && k.name == key; });
    };
    for (const auto& [section, types] : {std::pair{"forcing", &forcing_types()}, std::pair{"initial", &initial_types()}})
      for (const DeckType& type : *types)
        for (const auto& key : type.keys)
          if (!known(section, key))
            throw std::logic_error(fmt::format("{}.type {} reads {}, not a key of its section", section, type.name, key));
    return t;
  }();
  return table;
}

const DeckKey* find_key(const std::string& path) {
  for (const auto& k : deck_keys())
    if (k.path() == path) return &k;
  return nullptr;
}

const std::vector<std::string>& deck_sections() {
  static const std::vector<std::string> sections = [] {
    std::vector<std::string> s;
    for (const auto& k : deck_keys())
      if (s.empty() || s.back() != k.section) s.push_back(k.section);
    return s;
  }();
  return sections;
}

}  // namespace cascade::deck

namespace cascade {

std::string resolved_yaml(const Config& c) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  for (const auto& section : deck::deck_sections()) {
    out << YAML::Key << section << YAML::Value << YAML::BeginMap;
    for (const auto& k : deck::deck_keys())
      if (k.section == section) k.dump(out, c);
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

std::string deck_key_reference() {
  const Config defaults;
  std::string md;
  const auto row = [&md](const std::vector<std::string>& cells) {
    md += "|";
    for (const auto& cell : cells) md += cell.empty() ? " |" : " " + cell + " |";
    md += "\n";
  };
  for (const auto& section : deck::deck_sections()) {
    bool units = false;
    for (const auto& k : deck::deck_keys()) units = units || (k.section == section && !k.doc.units.empty());
    md += fmt::format("{}## {}\n\n", md.empty() ? "" : "\n", section);
    md += units ? "| key | meaning | units | default | allowed |\n|---|---|---|---|---|\n"
                : "| key | meaning | default | allowed |\n|---|---|---|---|\n";
    std::string joined;  // the names of a row shared with the keys before
    const deck::DeckKey* first = nullptr;
    for (const auto& k : deck::deck_keys()) {
      if (k.section != section) continue;
      joined += (joined.empty() ? "`" : ", `") + k.name + "`";
      if (!first) first = &k;
      if (k.doc.joins_next) continue;
      const deck::KeyDoc& d = first->doc;
      std::vector<std::string> cells = {joined, d.meaning};
      if (units) cells.push_back(d.units);
      cells.push_back(d.default_text.empty() ? "`" + first->text(defaults) + "`" : d.default_text);
      cells.push_back(d.allowed.empty() && !first->words.empty() ? deck::quoted_words(first->words) : d.allowed);
      row(cells);
      joined.clear();
      first = nullptr;
    }
  }
  return md;
}

}  // namespace cascade
