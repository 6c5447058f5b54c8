//! @file The diagnostics schema (one table: name, unit, description, how a row holds it) and the
//! log it drives: diagnostics.csv (header and rows), diagnostics.h5 (a dataset a column, with
//! its unit and description) and a restart's re-reading of the CSV by its header's names.
#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "cascade/error.hpp"
#include "cascade/io.hpp"
#include "cascade/output.hpp"
#include "io/output_files.hpp"

namespace cascade {

namespace {

//! The names of what bound a step, by their code in diagnostics.h5 (DtLimit's order, after
//! "none" for the first row).
const char* const kLimits[] = {"none", "cfl", "dt_max", "growth", "output"};
constexpr int kLimitCount = sizeof(kLimits) / sizeof(kLimits[0]);

long long limit_code(const std::string& name) {
  for (int k = 0; k < kLimitCount; ++k)
    if (name == kLimits[k]) return k;
  return -1;
}

//! Columns added after runs had been written without them: a restart of such a run reads its
//! rows with NaN there (not recorded), and writes them anew with the column. Any other missing
//! column is refused.
bool added_later(const std::string& name) { return name == "cfl"; }

std::string limit_description() {
  std::string s = "what bound dt:";
  for (int k = 0; k < kLimitCount; ++k) s += fmt::format("{} {} {}", k ? "," : "", k, kLimits[k]);
  return s;
}

using Col = DiagnosticsColumn;
using Type = DiagnosticsColumn::Type;
#define CASCADE_ROW_VALUE(expr) [](DiagnosticsRow& r) -> double& { return expr; }

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string item;
  while (std::getline(ss, item, sep)) out.push_back(item);
  if (!line.empty() && line.back() == sep) out.emplace_back();
  return out;
}

//! A whole cell as a number; false when any of it is not one.
bool parse_number(const std::string& text, double& value) {
  try {
    std::size_t used = 0;
    value = std::stod(text, &used);
    return used == text.size();
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

const std::vector<DiagnosticsColumn>& diagnostics_schema() {
  // The contract of docs/output-format.md (Diagnostics): diagnostics.csv's columns in this
  // order, and diagnostics.h5's datasets of the same names with these units and descriptions.
  static const std::vector<DiagnosticsColumn> schema = {
      {"step", "1", "time step number", Type::Step, "{}", nullptr},
      {"t", "time", "simulation time", Type::Real, "{}", CASCADE_ROW_VALUE(r.d.t)},
      {"dt", "time", "the step that ended at t (0 at the start)", Type::Real, "{}", CASCADE_ROW_VALUE(r.d.dt)},
      {"E", "length^2/time^2", "energy 1/2 <|u|^2>", Type::Real, "{}", CASCADE_ROW_VALUE(r.d.energy)},
      {"Z", "1/time^2", "enstrophy 1/2 <omega^2>", Type::Real, "{}", CASCADE_ROW_VALUE(r.d.enstrophy)},
      {"P", "1/(length^2 time^2)", "palinstrophy 1/2 <|grad omega|^2>", Type::Real, "{}",
       CASCADE_ROW_VALUE(r.d.palinstrophy)},
      {"max_u", "length/time", "max |u|", Type::Real, "{}", CASCADE_ROW_VALUE(r.d.max_u)},
      {"cfl", "1",
       "the CFL number of the step that ended at t, as the row's run or member sees it: dt * max over the "
       "grid of (|u|/dx + |v|/dy) of its state at t (0 at the start)",
       Type::Real, "{}", CASCADE_ROW_VALUE(r.d.cfl)},
      {"cfl_limit", "1", limit_description(), Type::Limit, "{}", nullptr},
      {"injection", "length^2/time^3", "dE/dt from the forcing (mean over the interval since the previous row)",
       Type::Real, "{}", CASCADE_ROW_VALUE(r.d.injection)},
      {"dissipation", "length^2/time^3", "-dE/dt from D(k) (mean over the interval since the previous row)",
       Type::Real, "{}", CASCADE_ROW_VALUE(r.d.dissipation)},
      {"wall_seconds", "s", "wall time since the run (or restart) began", Type::Real, "{:.3f}",
       CASCADE_ROW_VALUE(r.wall)},
      {"dissipation_nu", "length^2/time^3", "-dE/dt by viscosity nu k^2p", Type::Real, "{}",
       CASCADE_ROW_VALUE(r.d.dissipation_nu)},
      {"dissipation_mu", "length^2/time^3", "-dE/dt by friction mu", Type::Real, "{}",
       CASCADE_ROW_VALUE(r.d.dissipation_mu)},
      {"dissipation_alpha", "length^2/time^3", "-dE/dt by hypoviscosity alpha k^-2q", Type::Real, "{}",
       CASCADE_ROW_VALUE(r.d.dissipation_alpha)},
      {"injection_Z", "1/time^3", "dZ/dt from the forcing", Type::Real, "{}", CASCADE_ROW_VALUE(r.d.injection_z)},
      {"dissipation_Z", "1/time^3", "-dZ/dt from D(k)", Type::Real, "{}", CASCADE_ROW_VALUE(r.d.dissipation_z)},
      {"wall_per_step", "s", "wall seconds per step over the interval", Type::Real, "{:.6g}",
       CASCADE_ROW_VALUE(r.d.wall_per_step)},
  };
  return schema;
}
#undef CASCADE_ROW_VALUE

const std::vector<DiagnosticsColumn>& diagnostics_schema(int members) {
  static const std::vector<DiagnosticsColumn> ensemble = [] {
    std::vector<DiagnosticsColumn> s = diagnostics_schema();
    s.insert(s.begin() + 2, {"member", "1", "ensemble member (its deck: seeds + member, ensemble.vary's values)",
                             Type::Member, "{}", nullptr});
    return s;
  }();
  return members > 1 ? ensemble : diagnostics_schema();
}

std::string diagnostics_csv_header(int members) {
  std::string s;
  for (const auto& c : diagnostics_schema(members)) s += (s.empty() ? "" : ",") + c.name;
  return s;
}

std::string diagnostics_csv_line(const Diagnostics& d, double wall, int members, int member) {
  DiagnosticsRow r{d, wall, {}, member};
  std::string s;
  for (const auto& c : diagnostics_schema(members)) {
    if (!s.empty()) s += ',';
    switch (c.type) {
      case Type::Step: s += fmt::format("{}", r.d.step); break;
      case Type::Member: s += fmt::format("{}", r.member); break;
      case Type::Limit: s += r.d.cfl_limit; break;
      case Type::Real: s += fmt::format(fmt::runtime(c.csv_format), c.value(r)); break;
    }
  }
  return s;
}

DiagnosticsLog::DiagnosticsLog(const std::string& dir, bool restart, double t_keep, int members)
    : csv_path_(dir + "/diagnostics.csv"), h5_path_(dir + "/diagnostics.h5"), members_(members) {
  if (!restart || !output_files::exists(csv_path_)) return;
  // Keep the rows up to the checkpoint's time; the restarted run appends the rest. The
  // columns are found by the header's names.
  const auto& schema = diagnostics_schema(members);
  std::ifstream in(csv_path_);
  std::string line;
  std::getline(in, line);
  // Rows under this version's header are kept as written; under another order of the same
  // columns (other columns are dropped), or an older header without a column added since
  // (added_later: NaN there), they are written anew in this one's.
  const bool ours = line == diagnostics_csv_header(members);
  const std::vector<std::string> header = split(line, ',');
  for (const auto& name : header)
    if (name == "member" && members == 1)
      throw InputError(csv_path_ + ": its rows are an ensemble's (column 'member') but the run has one member");
  std::vector<std::size_t> at(schema.size());
  for (std::size_t c = 0; c < schema.size(); ++c) {
    std::size_t k = 0;
    while (k < header.size() && header[k] != schema[c].name) ++k;
    if (k == header.size() && !added_later(schema[c].name))
      throw InputError(fmt::format("{}: its header has no column '{}' (docs/output-format.md, Diagnostics)",
                                   csv_path_, schema[c].name));
    at[c] = k;  // header.size(): not in the file
  }
  while (std::getline(in, line)) {
    const auto f = split(line, ',');
    DiagnosticsRow r;
    if (f.size() != header.size())
      throw InputError(fmt::format("{}: malformed row '{}' ({} cells, the header names {})", csv_path_, line,
                                   f.size(), header.size()));
    bool ok = true;
    std::size_t c = 0;
    for (; ok && c < schema.size(); ++c) {
      if (at[c] == header.size()) {  // a column added since the file was written (a Real)
        schema[c].value(r) = std::numeric_limits<double>::quiet_NaN();
        continue;
      }
      const std::string& cell = f[at[c]];
      double x = 0;
      switch (schema[c].type) {
        case Type::Step:
          ok = !cell.empty() && cell.find_first_not_of("0123456789") == std::string::npos && cell.size() < 16;
          if (ok) r.d.step = std::stol(cell);
          break;
        case Type::Member:
          // Member after member at each time: the row's place says which it must be.
          ok = cell == std::to_string(pending_.size() % std::size_t(members));
          r.member = ok ? std::stoi(cell) : 0;
          break;
        case Type::Limit:
          ok = limit_code(cell) >= 0;
          r.d.cfl_limit = cell;
          break;
        case Type::Real:
          ok = parse_number(cell, x);
          schema[c].value(r) = x;
          break;
      }
    }
    if (!ok)
      throw InputError(fmt::format("{}: malformed row '{}' (column {})", csv_path_, line, schema[c - 1].name));
    if (r.d.t > t_keep) break;
    r.text = ours ? line : diagnostics_csv_line(r.d, r.wall, members, r.member);
    pending_.push_back(r);
  }
}

void DiagnosticsLog::start() {
  std::string text = diagnostics_csv_header(members_) + "\n";
  for (const auto& r : pending_) text += r.text + "\n";
  write_text_atomically(csv_path_, text);
  csv_ = std::fopen(csv_path_.c_str(), "a");
  if (!csv_) throw RunError("cannot append to '" + csv_path_ + "': " + std::strerror(errno));
}

DiagnosticsLog::~DiagnosticsLog() {
  if (csv_) std::fclose(csv_);
}

void DiagnosticsLog::append(const Diagnostics& d, double wall, int member) {
  DiagnosticsRow r{d, wall, diagnostics_csv_line(d, wall, members_, member), member};
  if (std::fputs((r.text + "\n").c_str(), csv_) < 0 || std::fflush(csv_) != 0)
    throw RunError("cannot write to '" + csv_path_ + "': " + std::strerror(errno));
  pending_.push_back(std::move(r));
}

std::function<void()> DiagnosticsLog::h5_task(const Config& config, const std::string& backend) {
  // A column's values: integers (the step, the code of cfl_limit) or doubles.
  struct Series {
    std::vector<long long> counts;
    std::vector<double> reals;
  };
  // An ensemble's rows come member after member at each time: every column is (t, member),
  // but t itself, the coordinate, and member, a dimension of its own.
  const int members = members_;
  const auto& schema = diagnostics_schema(members);
  std::vector<Series> series(schema.size());
  for (auto& r : pending_)
    for (std::size_t c = 0; c < schema.size(); ++c) switch (schema[c].type) {
        case Type::Step: series[c].counts.push_back(r.d.step); break;
        case Type::Member: break;
        case Type::Limit: series[c].counts.push_back(limit_code(r.d.cfl_limit)); break;
        case Type::Real:
          if (schema[c].name != "t" || r.member == 0) series[c].reals.push_back(schema[c].value(r));
          break;
      }
  pending_.clear();
  pending_.shrink_to_fit();
  const H5Writer::Mode mode = fresh_ ? H5Writer::Mode::Create : H5Writer::Mode::Append;
  fresh_ = false;
  return [=, path = h5_path_, series = std::move(series)] {
    H5Writer f(path, mode);
    write_provenance(f, config, backend);
    if (members > 1 && mode == H5Writer::Mode::Create) write_member_coordinate(f, "/member", members);
    const std::uint64_t cols = std::uint64_t(members);
    for (std::size_t c = 0; c < schema.size(); ++c) {
      const DiagnosticsColumn& col = schema[c];
      if (col.type == Type::Member) continue;
      if (col.type == Type::Real)
        f.append_series("/" + col.name, series[c].reals, col.name == "t" ? 1 : cols, col.unit, col.description);
      else
        f.append_series("/" + col.name, series[c].counts, cols, col.unit, col.description);
    }
    // netCDF dimensions: every column over t, the coordinate variable (and member).
    f.coordinate("/t");
    for (const auto& col : schema)
      if (col.name != "t" && col.type != Type::Member)
        f.dimensions("/" + col.name, members > 1 ? std::vector<std::string>{"/t", "/member"}
                                                 : std::vector<std::string>{"/t"});
    f.close();
  };
}

}  // namespace cascade
