//! @file The deck: typed, validated sections read from YAML (parse -> derive -> validate).
//!
//! Defaults live in the member initialisers below; a default derived from other keys (ny from
//! nx), and each key's reading, checks, resolved form and documentation, in the deck's table of
//! keys (src/core/deck_keys.cpp), which input/README.md's key reference is made from. A bad deck
//! raises InputError with one line:
//!   FILE:LINE: section.key: expected WHAT, found WHAT
#pragma once

#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cascade/coefficients.hpp"
#include "cascade/grid.hpp"
#include "cascade/types.hpp"

namespace cascade {

enum class NonlinearForm { Basdevant, Advective };

struct GridConfig {
  int nx = 0;              //!< required
  int ny = 0;              //!< default: nx
  double lx = 2 * M_PI;    //!< box length in x
  double ly = 0;           //!< default: lx
  Dealias dealias = Dealias::TwoThirds;
  NonlinearForm nonlinear = NonlinearForm::Basdevant;  //!< how u.grad(omega) is evaluated
};

//! The `physics` section: the linear operator's coefficients (coefficients.hpp), read as they are.
using PhysicsConfig = LinearCoefficients;

struct ForcingConfig {
  std::string type = "none";  //!< one of src/core/deck_types.cpp's forcing types
  double amplitude = 1;       //!< kolmogorov: chi; ring-steady: rms force <|f|^2>^(1/2)
  int wavenumber = 4;         //!< kolmogorov: n_f, k_f = 2 pi n_f / ly
  double epsilon = 1;         //!< ring: mean energy injection rate
  double k_f = 10;            //!< ring, ring-steady: shell centre |k| (1/length)
  double dk = 1;              //!< ring, ring-steady: shell half-width, |k| - k_f| < dk
  int seed = 1;               //!< ring, ring-steady: random numbers keyed by (seed, step, mode)
};

//! One vortex of initial.type vortices.
struct VortexConfig {
  double x = 0, y = 0;      //!< centre
  double radius = 0.1;      //!< gaussian: sigma; lamb-oseen: core radius a
  double circulation = 1;   //!< Gamma, the integral of its vorticity
  std::string profile = "gaussian";  //!< gaussian: Gamma/(2 pi sigma^2) exp(-r^2/(2 sigma^2));
                                     //!< lamb-oseen: Gamma/(pi a^2) exp(-r^2/a^2)
};

struct InitialConfig {
  std::string type = "random";  //!< one of src/core/deck_types.cpp's initial types
  int seed = 1;                 //!< random: phases
  double k0 = 6;                //!< random: peak wavenumber of E(k)
  double energy = 0.5;          //!< random: total energy E = 1/2 <|u|^2>
  double amplitude = 1;         //!< taylor-green: psi amplitude; gaussian: peak vorticity
  int mode = 1;                 //!< taylor-green: m
  double x0 = -1, y0 = -1;      //!< gaussian, lamb-dipole: centre (default: box centre)
  double radius = 0.5;          //!< gaussian: sigma; lamb-dipole: radius a
  double speed = 1;             //!< lamb-dipole: translation speed U (along +x)
  std::vector<VortexConfig> vortices;  //!< vortices
  std::string path;             //!< file: a snapshot or checkpoint (resized when the grid differs)
};

struct TimeConfig {
  double t_end = 1;
  double cfl = 0.5;        //!< dt <= cfl / max(|u|/dx + |v|/dy)
  double dt_max = 0.1;
  double dt_min = 1e-10;
  double dt_initial = 0;   //!< bound on the first step; 0 = none beyond cfl and dt_max
  double growth = 1.1;     //!< dt <= growth * previous dt
  std::string stepper = "rk4";  //!< rk4 | rk3
  long max_steps = 0;      //!< stop after this many steps; 0 = no limit
};

//! run.step_transforms: how the step's transforms are evaluated (docs/gpu-step.md); auto picks
//! from the measured tuning table. The deck's table (src/core/deck_keys.cpp) reads its words here.
inline const std::vector<std::string> kStepTransforms = {"auto",         "plain", "plain-pairs",   "pruned",
                                                         "pruned-pairs", "rows",  "complex-pairs", "rows-columns"};
//! run.fft_callbacks: which cuFFT callbacks the step's transforms use; auto picks as above.
inline const std::vector<std::string> kFftCallbacks = {"auto", "off", "store", "all"};
//! run.step_graph: whether a GPU run's step is recorded as a CUDA graph that chooses its own dt.
inline const std::vector<std::string> kStepGraph = {"auto", "on", "off"};

struct RunConfig {
  std::string backend = "auto";  //!< auto | cuda | cpu
  Precision precision = Precision::Double;
  int device = 0;   //!< CUDA device index
  int threads = 0;  //!< CPU threads; 0 = one per 16384 points, up to OpenMP's maximum
  FftPlanning fft_planning = FftPlanning::Auto;  //!< CPU FFTW plans: auto | estimate | measure
  std::string step_transforms = "auto";  //!< one of kStepTransforms; recorded so a restart chooses alike
  std::string fft_callbacks = "auto";    //!< one of kFftCallbacks
  std::string step_graph = "auto";       //!< one of kStepGraph
  int exchange_chunks = 0;  //!< GPU slabs: the all-to-all in this many chunks; 0 = auto
};

struct OutputConfig {
  std::string directory = "output";
  double diagnostics_every = 0.1;  //!< simulation time between rows of diagnostics.csv/.h5
  double snapshot_every = 1.0;     //!< simulation time between snapshots; 0 = none
  double spectra_every = 1.0;      //!< simulation time between spectra; 0 = none
  double checkpoint_every = 0;     //!< simulation time between checkpoints; 0 = none
  double checkpoint_wall_seconds = 3600;  //!< wall time between checkpoints; 0 = none
  int keep_checkpoints = 2;        //!< newest checkpoints kept (older ones are removed)
  std::vector<std::string> fields = {"vorticity"};  //!< vorticity, streamfunction, velocity
  int print_every = 100;           //!< steps between progress lines
};

struct PoissonConfig {
  std::string rhs = "gaussian";
  double sigma = 0.1;  //!< Gaussian width (length units)
  double x0 = -1;      //!< centre; default lx/2 (derived)
  double y0 = -1;      //!< centre; default ly/2 (derived)
  std::string gauge = "corner";  //!< corner: phi(0,0) = 0 | zero-mean: <phi> = 0
};

//! The `ensemble` section: `members` realisations of one deck stepped together (one batch).
//! Which keys may vary, and why the others may not: src/core/ensemble.cpp.
struct EnsembleConfig {
  int members = 1;                 //!< 1: a single run (today's)
  std::string on_blowup = "stop";  //!< stop | drop (docs/ensembles.md)
  //! ensemble.vary: "section.key" -> its value for each member (members entries), in the deck's order.
  std::vector<std::pair<std::string, std::vector<double>>> vary;
};

struct Config {
  std::string source;  //!< the deck's path, as given
  std::string text;    //!< the deck's text, as read (stored in every output file)
  GridConfig grid;
  PhysicsConfig physics;
  ForcingConfig forcing;
  InitialConfig initial;
  TimeConfig time;
  RunConfig run;
  OutputConfig output;
  PoissonConfig poisson;
  EnsembleConfig ensemble;
  std::vector<std::string> overrides;  //!< --set key.path=value, in order
  std::map<std::string, int> lines;    //!< "section.key" -> line in the deck (1-based)
  std::string run_id;  //!< the run's identity (not a deck key): set by `cascade run`, kept in its files

  Grid make_grid() const { return Grid(grid.nx, grid.ny, grid.lx, grid.ly, grid.dealias); }
};

//! The key reference of input/README.md (`cascade check --keys`): one Markdown table a section,
//! made from the deck's table of keys (src/core/deck_keys.cpp).
std::string deck_key_reference();

//! Read, derive and validate a deck file; overrides are "section.key=value" (YAML value).
Config load_deck(const std::string& path, const std::vector<std::string>& overrides = {});
//! The same from text already in memory; `source` names it in messages.
Config parse_deck(const std::string& text, const std::string& source,
                  const std::vector<std::string>& overrides = {});
//! The resolved deck (every key, defaults filled in) as YAML.
std::string resolved_yaml(const Config& config);

//! Member b's own deck (0 <= b < members): members = 1 and no vary; initial.seed + b and
//! forcing.seed + b (unless ensemble.vary lists that seed: then its b-th value); every key
//! ensemble.vary lists set to its b-th value. Member 0 of a deck without vary is the deck itself
//! (bit for bit the same Config apart from the ensemble section). Throws std::out_of_range for a
//! b outside [0, members) or a vary list shorter than members (a deck read by parse_deck has neither).
Config member_config(const Config& config, int b);

//! "2pi", "pi/2", "0.5*pi", "1.25" -> value; throws std::invalid_argument otherwise.
double parse_length(const std::string& text);

}  // namespace cascade
