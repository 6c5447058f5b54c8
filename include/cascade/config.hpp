//! @file The deck: typed, validated sections read from YAML (parse -> derive -> validate).
//!
//! Defaults live in the member initialisers below and nowhere else. Every key is documented
//! in input/README.md. A bad deck raises InputError with one line:
//!   FILE:LINE: section.key: expected WHAT, found WHAT
#pragma once

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "cascade/grid.hpp"
#include "cascade/types.hpp"

namespace cascade {

struct GridConfig {
  int nx = 0;              //!< required
  int ny = 0;              //!< default: nx
  double lx = 2 * M_PI;    //!< box length in x
  double ly = 0;           //!< default: lx
  Dealias dealias = Dealias::TwoThirds;
};

struct RunConfig {
  std::string backend = "auto";  //!< auto | cuda | cpu
  Precision precision = Precision::Double;
  int device = 0;   //!< CUDA device index
  int threads = 0;  //!< CPU threads, 0 = all (OpenMP default)
};

struct OutputConfig {
  std::string directory = "output";
};

struct PoissonConfig {
  std::string rhs = "gaussian";
  double sigma = 0.1;  //!< Gaussian width (length units)
  double x0 = -1;      //!< centre; default lx/2 (derived)
  double y0 = -1;      //!< centre; default ly/2 (derived)
  std::string gauge = "corner";  //!< corner: phi(0,0) = 0 | zero-mean: <phi> = 0
};

struct Config {
  std::string source;  //!< the deck's path, as given
  std::string text;    //!< the deck's text, as read (stored in every output file)
  GridConfig grid;
  RunConfig run;
  OutputConfig output;
  PoissonConfig poisson;
  std::vector<std::string> overrides;  //!< --set key.path=value, in order
  std::map<std::string, int> lines;    //!< "section.key" -> line in the deck (1-based)

  Grid make_grid() const { return Grid(grid.nx, grid.ny, grid.lx, grid.ly, grid.dealias); }
};

//! Read, derive and validate a deck file; overrides are "section.key=value" (YAML value).
Config load_deck(const std::string& path, const std::vector<std::string>& overrides = {});
//! The same from text already in memory; `source` names it in messages.
Config parse_deck(const std::string& text, const std::string& source,
                  const std::vector<std::string>& overrides = {});
//! The resolved deck (every key, defaults filled in) as YAML.
std::string resolved_yaml(const Config& config);

//! "2pi", "pi/2", "0.5*pi", "1.25" -> value; throws std::invalid_argument otherwise.
double parse_length(const std::string& text);

}  // namespace cascade
