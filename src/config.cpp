//! @file Deck reader: yaml-cpp -> typed sections (parse), defaults filled (derive), checks
//! with one message each (validate). Unknown sections and keys are errors.
#include "cascade/config.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "cascade/error.hpp"

namespace cascade {
namespace {

//! YAML's spellings of the IEEE specials (.nan, .inf, -.inf), which std::stod does not read;
//! accepted so that validation can name the value ("found nan") rather than its spelling.
bool yaml_special(const std::string& t, double& x) {
  std::string s = t;
  s.erase(0, s.find_first_not_of(" \t"));
  s.erase(s.find_last_not_of(" \t") + 1);
  if (s == ".nan" || s == ".NaN" || s == ".NAN") x = std::numeric_limits<double>::quiet_NaN();
  else if (s == ".inf" || s == ".Inf" || s == ".INF" || s == "+.inf") x = std::numeric_limits<double>::infinity();
  else if (s == "-.inf" || s == "-.Inf" || s == "-.INF") x = -std::numeric_limits<double>::infinity();
  else return false;
  return true;
}

constexpr int kMaxSide = 1 << 20;             // per dimension: beyond any single-node run
constexpr double kMaxPoints = 65536.0 * 65536.0;  // total points
constexpr double kMinLength = 1e-9, kMaxLength = 1e9;  // box lengths
constexpr int kMaxThreads = 4096;

//! Where a key sits, for messages: "FILE:LINE" or "FILE: --set" for overridden keys.
class Locator {
 public:
  explicit Locator(std::string file) : file_(std::move(file)) {}
  void overridden(const std::string& key) { overridden_.insert(key); }
  std::string where(const std::string& key, int line) const {
    if (overridden_.count(key)) return fmt::format("{}: --set {}", file_, key);
    if (line > 0) return fmt::format("{}:{}: {}", file_, line, key);
    return fmt::format("{}: {}", file_, key);
  }
  [[noreturn]] void fail(const std::string& key, int line, const std::string& expected,
                         const std::string& found) const {
    throw InputError(one_line(fmt::format("{}: expected {}, found {}", where(key, line), expected, found)));
  }
  const std::string& file() const { return file_; }

 private:
  std::string file_;
  std::set<std::string> overridden_;
};

int line_of(const YAML::Node& n) {
  const YAML::Mark m = n.Mark();
  return m.line >= 0 ? m.line + 1 : 0;
}

std::string describe(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Null: return "nothing";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Scalar: return "'" + n.Scalar() + "'";
    default: return "an undefined value";
  }
}

//! One section of the deck: typed getters that remember which keys were read.
class Section {
 public:
  Section(const YAML::Node& root, const std::string& name, const Locator& loc,
          std::map<std::string, int>& lines, bool required)
      : name_(name), loc_(loc), lines_(lines) {
    const YAML::Node& croot = root;  // const access never inserts keys
    const YAML::Node n = croot[name];
    if (!n || n.IsNull()) {
      if (required) loc.fail(name, line_of(root), "a '" + name + ":' section", "nothing");
      present_ = false;
      return;
    }
    node_.reset(n);  // YAML::Node's operator= assigns content; reset() rebinds
    if (!node_.IsMap()) loc.fail(name, line_of(node_), "a mapping of keys", describe(node_));
    present_ = true;
  }

  int get_int(const std::string& key, int def, bool required = false) {
    const auto got = take(key, required);
    if (!got) return def;
    const YAML::Node& v = *got;
    const std::string s = v.Scalar();
    static const std::regex integer(R"(\s*[+-]?[0-9]+\s*)");
    if (!std::regex_match(s, integer)) loc_.fail(path(key), line_of(v), "an integer", describe(v));
    errno = 0;
    const long long x = std::strtoll(s.c_str(), nullptr, 10);
    if (errno == ERANGE || x > std::numeric_limits<int>::max() || x < std::numeric_limits<int>::min())
      loc_.fail(path(key), line_of(v), "an integer that fits in 32 bits", describe(v));
    return static_cast<int>(x);
  }

  double get_double(const std::string& key, double def, bool allow_pi = false) {
    const auto got = take(key, false);
    if (!got) return def;
    const YAML::Node& v = *got;
    const std::string s = v.Scalar();
    try {
      if (allow_pi) return parse_length(s);
      double special = 0;
      if (yaml_special(s, special)) return special;
      std::size_t used = 0;
      const double x = std::stod(s, &used);
      if (s.find_first_not_of(" \t", used) != std::string::npos) throw std::invalid_argument(s);
      return x;
    } catch (const std::exception&) {
      loc_.fail(path(key), line_of(v), allow_pi ? "a number or a multiple of pi (e.g. 2pi)" : "a number",
                describe(v));
    }
  }

  std::string get_choice(const std::string& key, const std::string& def,
                         const std::vector<std::string>& allowed) {
    const auto got = take(key, false);
    if (!got) return def;
    const YAML::Node& v = *got;
    const std::string s = v.Scalar();
    for (const auto& a : allowed)
      if (s == a) return s;
    std::string expected = "one of";
    for (std::size_t i = 0; i < allowed.size(); ++i)
      expected += (i ? (i + 1 == allowed.size() ? " or " : ", ") : " ") + allowed[i];
    loc_.fail(path(key), line_of(v), expected, describe(v));
  }

  std::string get_string(const std::string& key, const std::string& def) {
    const auto got = take(key, false);
    if (!got) return def;
    const YAML::Node& v = *got;
    if (v.Scalar().empty()) loc_.fail(path(key), line_of(v), "a non-empty string", "''");
    return v.Scalar();
  }

  //! A list of choices (a YAML sequence, or one value); duplicates removed, order kept.
  std::vector<std::string> get_list(const std::string& key, const std::vector<std::string>& def,
                                    const std::vector<std::string>& allowed) {
    known(key);
    if (!present_) return def;
    const YAML::Node& cnode = node_;
    YAML::Node v = cnode[key];
    if (!v || v.IsNull()) return def;
    lines_[path(key)] = line_of(v);
    std::vector<YAML::Node> items;
    if (v.IsSequence())
      for (const auto& item : v) items.push_back(item);
    else if (v.IsScalar())
      items.push_back(v);
    else
      loc_.fail(path(key), line_of(v), "a list of values", describe(v));
    std::string expected = "a list of";
    for (std::size_t i = 0; i < allowed.size(); ++i) expected += (i ? ", " : " ") + allowed[i];
    std::vector<std::string> out;
    for (const auto& item : items) {
      if (!item.IsScalar()) loc_.fail(path(key), line_of(item), expected, describe(item));
      const std::string s = item.Scalar();
      bool ok = false;
      for (const auto& a : allowed) ok = ok || a == s;
      if (!ok) loc_.fail(path(key), line_of(item), expected, describe(item));
      bool seen = false;
      for (const auto& o : out) seen = seen || o == s;
      if (!seen) out.push_back(s);
    }
    if (out.empty()) loc_.fail(path(key), line_of(v), expected, "an empty list");
    return out;
  }

  //! initial.vortices: a list of mappings {x, y, radius, circulation, profile}.
  std::vector<VortexConfig> get_vortices(const std::string& key, const Locator& loc) {
    known(key);
    std::vector<VortexConfig> out;
    if (!present_) return out;
    const YAML::Node& cnode = node_;
    YAML::Node v = cnode[key];
    if (!v || v.IsNull()) return out;
    lines_[path(key)] = line_of(v);
    if (!v.IsSequence()) loc.fail(path(key), line_of(v), "a list of vortices {x, y, radius, circulation, profile}", describe(v));
    int index = 0;
    for (const auto& item : v) {
      const std::string here = fmt::format("{}[{}]", path(key), index++);
      if (!item.IsMap()) loc.fail(here, line_of(item), "a mapping {x, y, radius, circulation, profile}", describe(item));
      VortexConfig vc;
      for (auto it = item.begin(); it != item.end(); ++it) {
        const std::string k = it->first.as<std::string>();
        const YAML::Node val = it->second;  // a copy: the iterator hands out a temporary
        const std::string kp = here + "." + k;
        if (!val.IsScalar()) loc.fail(kp, line_of(val), "a single value", describe(val));
        if (k == "profile") {
          if (val.Scalar() != "gaussian" && val.Scalar() != "lamb-oseen")
            loc.fail(kp, line_of(val), "one of gaussian or lamb-oseen", describe(val));
          vc.profile = val.Scalar();
          continue;
        }
        double x = 0;
        try {
          x = parse_length(val.Scalar());
        } catch (const std::exception&) {
          loc.fail(kp, line_of(val), "a number", describe(val));
        }
        if (k == "x") vc.x = x;
        else if (k == "y") vc.y = x;
        else if (k == "radius") vc.radius = x;
        else if (k == "circulation") vc.circulation = x;
        else loc.fail(kp, line_of(it->first), "a key of a vortex (x, y, radius, circulation, profile)",
                      "unknown key '" + k + "'");
        if (!std::isfinite(x) || (k == "radius" && x <= 0))
          loc.fail(kp, line_of(val), k == "radius" ? "a positive radius" : "a finite number", describe(val));
      }
      out.push_back(vc);
    }
    return out;
  }

  //! Every key must have been read by now: anything else is unknown.
  void finish() const {
    if (!present_) return;
    for (auto it = node_.begin(); it != node_.end(); ++it) {
      const std::string key = it->first.as<std::string>();
      if (!read_.count(key)) {
        std::string known;
        for (const auto& k : read_order_) known += (known.empty() ? "" : ", ") + k;
        loc_.fail(path(key), line_of(it->first), "a known key of '" + name_ + "' (" + known + ")",
                  "unknown key '" + key + "'");
      }
    }
  }

  //! Declare keys that exist (read or not), for the unknown-key message and for finish().
  void known(const std::string& key) {
    if (!read_.count(key)) read_order_.push_back(key);
    read_.insert(key);
  }

 private:
  std::string path(const std::string& key) const { return name_ + "." + key; }

  //! The key's scalar node, or nothing when absent (or null).
  std::optional<YAML::Node> take(const std::string& key, bool required) {
    known(key);
    if (!present_) {
      if (required) loc_.fail(path(key), 0, "a value", "nothing");
      return std::nullopt;
    }
    const YAML::Node& cnode = node_;
    YAML::Node v = cnode[key];
    if (!v || v.IsNull()) {
      if (required) loc_.fail(path(key), line_of(v ? v : node_), "a value", "nothing");
      return std::nullopt;
    }
    lines_[path(key)] = line_of(v);
    if (!v.IsScalar()) loc_.fail(path(key), line_of(v), "a single value", describe(v));
    return v;
  }

  std::string name_;
  const Locator& loc_;
  std::map<std::string, int>& lines_;
  YAML::Node node_;
  bool present_ = false;
  std::set<std::string> read_;
  std::vector<std::string> read_order_;
};

const std::vector<std::string> kSections = {"grid", "physics", "forcing", "initial", "time",
                                            "run", "output", "poisson"};

void apply_override(YAML::Node& root, const std::string& item, Locator& loc) {
  const auto eq = item.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError(fmt::format("--set: expected section.key=value, found '{}'", item));
  const std::string path = item.substr(0, eq);
  const std::string value = item.substr(eq + 1);
  const auto dot = path.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == path.size() ||
      path.find('.', dot + 1) != std::string::npos)
    throw InputError(fmt::format("--set: expected section.key=value, found '{}'", item));
  const std::string section = path.substr(0, dot), key = path.substr(dot + 1);
  YAML::Node v;
  try {
    v = YAML::Load(value);
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("--set {}: cannot parse value '{}': {}", path, value, e.msg));
  }
  if (!root[section] || root[section].IsNull()) root[section] = YAML::Node(YAML::NodeType::Map);
  if (!root[section].IsMap())
    throw InputError(fmt::format("--set {}: section '{}' is not a mapping", path, section));
  root[section][key] = v;
  loc.overridden(path);
}

void check(bool ok, const Locator& loc, const Config& c, const std::string& key,
           const std::string& expected, const std::string& found) {
  if (ok) return;
  auto it = c.lines.find(key);
  loc.fail(key, it == c.lines.end() ? 0 : it->second, expected, found);
}

std::string num(double x) { return fmt::format("{}", x); }

//! Small checks, one message each (CaNS sanity.f90 style).
void validate(const Config& c, const Locator& loc) {
  const GridConfig& g = c.grid;
  check(g.nx >= 4 && g.nx % 2 == 0 && g.nx <= kMaxSide, loc, c, "grid.nx",
        fmt::format("an even integer in [4, {}]", kMaxSide), std::to_string(g.nx));
  check(g.ny >= 4 && g.ny % 2 == 0 && g.ny <= kMaxSide, loc, c, "grid.ny",
        fmt::format("an even integer in [4, {}]", kMaxSide), std::to_string(g.ny));
  check(double(g.nx) * double(g.ny) <= kMaxPoints, loc, c, "grid.nx",
        "nx * ny <= 65536^2 points", fmt::format("{} x {}", g.nx, g.ny));
  check(std::isfinite(g.lx) && g.lx > 0, loc, c, "grid.lx", "a positive finite length", num(g.lx));
  check(std::isfinite(g.ly) && g.ly > 0, loc, c, "grid.ly", "a positive finite length", num(g.ly));
  // Wavenumbers, their powers (up to k^64) and the energy's 1/k^2 stay far inside double's range.
  check(g.lx >= kMinLength && g.lx <= kMaxLength, loc, c, "grid.lx",
        fmt::format("a length in [{:g}, {:g}]", kMinLength, kMaxLength), num(g.lx));
  check(g.ly >= kMinLength && g.ly <= kMaxLength, loc, c, "grid.ly",
        fmt::format("a length in [{:g}, {:g}]", kMinLength, kMaxLength), num(g.ly));
  {
    // Spectra are summed over shells 2 pi / max(lx, ly) wide: a box much longer than its grid is
    // fine would need more shells than a spectrum can hold.
    const double shells = c.make_grid().shell_count(), bound = 16.0 * std::max(g.nx, g.ny);
    check(shells <= bound, loc, c, g.ly > g.lx ? "grid.ly" : "grid.lx",
          fmt::format("a box whose spectra fit in 16 max(nx, ny) = {:g} shells of width 2pi/max(lx, ly) "
                      "(an aspect ratio lx/ly near nx/ny)", bound),
          fmt::format("{:g} x {:g}, which needs {:.3g} shells", g.lx, g.ly, shells));
  }
  check(c.run.device >= 0, loc, c, "run.device", "a device index >= 0", std::to_string(c.run.device));
  check(c.run.threads >= 0 && c.run.threads <= kMaxThreads, loc, c, "run.threads",
        fmt::format("a thread count in [0, {}] (0 = from the grid and the cores; more than the cores "
                    "available are not used)",
                    kMaxThreads),
        std::to_string(c.run.threads));
  auto nonneg = [&](double x, const char* key) {
    check(std::isfinite(x) && x >= 0, loc, c, key, "a finite value >= 0", num(x));
  };
  const PhysicsConfig& ph = c.physics;
  nonneg(ph.nu, "physics.nu");
  nonneg(ph.mu, "physics.mu");
  nonneg(ph.alpha, "physics.alpha");
  check(std::isfinite(ph.beta), loc, c, "physics.beta", "a finite number", num(ph.beta));
  check(ph.nu_order >= 1 && ph.nu_order <= 32, loc, c, "physics.nu_order", "an integer in [1, 32]",
        std::to_string(ph.nu_order));
  check(ph.alpha_order >= 1 && ph.alpha_order <= 32, loc, c, "physics.alpha_order", "an integer in [1, 32]",
        std::to_string(ph.alpha_order));
  const int band = (std::min(g.nx, g.ny) - 1) / 3;  // largest wavenumber index the 2/3 rule keeps
  const ForcingConfig& f = c.forcing;
  if (f.type == "kolmogorov") {
    check(std::isfinite(f.amplitude), loc, c, "forcing.amplitude", "a finite number", num(f.amplitude));
    check(f.wavenumber >= 1 && 3 * f.wavenumber < g.ny, loc, c, "forcing.wavenumber",
          fmt::format("an integer in [1, {}] (below ny/3: kept by the 2/3 rule)", (g.ny - 1) / 3),
          std::to_string(f.wavenumber));
  }
  if (f.type == "ring" || f.type == "ring-steady") {
    // The largest |k| the 2/3 rule keeps along both axes: a ring inside it is fully resolved.
    const double kmax = std::min(2 * M_PI / g.lx * ((g.nx - 1) / 3), 2 * M_PI / g.ly * ((g.ny - 1) / 3));
    check(std::isfinite(f.k_f) && f.k_f > 0, loc, c, "forcing.k_f", "a positive wavenumber", num(f.k_f));
    check(std::isfinite(f.dk) && f.dk > 0 && f.dk < f.k_f, loc, c, "forcing.dk", "a half-width in (0, k_f)",
          num(f.dk));
    check(f.k_f + f.dk <= kmax, loc, c, "forcing.k_f",
          fmt::format("a shell k_f + dk inside the dealiased band (<= {:.4g})", kmax), num(f.k_f));
    check(f.seed >= 0, loc, c, "forcing.seed", "an integer >= 0", std::to_string(f.seed));
    if (f.type == "ring")
      check(std::isfinite(f.epsilon) && f.epsilon > 0, loc, c, "forcing.epsilon", "a positive injection rate",
            num(f.epsilon));
    else
      check(std::isfinite(f.amplitude) && f.amplitude > 0, loc, c, "forcing.amplitude", "a positive rms force",
            num(f.amplitude));
  }
  const InitialConfig& ic = c.initial;
  if (ic.type == "gaussian" || ic.type == "lamb-dipole") {
    check(std::isfinite(ic.radius) && ic.radius > 0 && 2 * ic.radius < std::min(g.lx, g.ly), loc, c,
          "initial.radius", "a positive radius below half the box", num(ic.radius));
    check(std::isfinite(ic.amplitude) && std::isfinite(ic.speed), loc, c, "initial.amplitude",
          "finite amplitude and speed", num(ic.amplitude));
  }
  if (ic.type == "vortices")
    check(!ic.vortices.empty(), loc, c, "initial.vortices", "a non-empty list of vortices", "none");
  if (ic.type == "file")
    check(!ic.path.empty(), loc, c, "initial.path", "the path of a snapshot or checkpoint", "nothing");
  if (ic.type == "random") {
    check(ic.seed >= 0, loc, c, "initial.seed", "an integer >= 0", std::to_string(ic.seed));
    check(std::isfinite(ic.k0) && ic.k0 > 0, loc, c, "initial.k0", "a positive wavenumber", num(ic.k0));
    check(std::isfinite(ic.energy) && ic.energy > 0, loc, c, "initial.energy", "a positive energy",
          num(ic.energy));
  }
  if (ic.type == "taylor-green") {
    check(std::isfinite(ic.amplitude), loc, c, "initial.amplitude", "a finite number", num(ic.amplitude));
    check(ic.mode >= 1 && ic.mode <= band, loc, c, "initial.mode",
          fmt::format("an integer in [1, {}] (below min(nx, ny)/3)", band), std::to_string(ic.mode));
  }
  const TimeConfig& t = c.time;
  check(std::isfinite(t.t_end) && t.t_end > 0, loc, c, "time.t_end", "a positive finite time", num(t.t_end));
  check(std::isfinite(t.cfl) && t.cfl > 0 && t.cfl <= 5, loc, c, "time.cfl", "a number in (0, 5]", num(t.cfl));
  check(std::isfinite(t.dt_max) && t.dt_max > 0, loc, c, "time.dt_max", "a positive finite time step",
        num(t.dt_max));
  check(std::isfinite(t.dt_min) && t.dt_min >= 0 && t.dt_min < t.dt_max, loc, c, "time.dt_min",
        "a time step in [0, dt_max)", num(t.dt_min));
  nonneg(t.dt_initial, "time.dt_initial");
  check(t.dt_initial == 0 || t.dt_initial >= t.dt_min, loc, c, "time.dt_initial",
        fmt::format("0 (none) or a first step >= dt_min = {}", num(t.dt_min)), num(t.dt_initial));
  // A step of dt_max must still move t at t_end: beyond, t + dt rounds back to t.
  check(std::nextafter(t.t_end, HUGE_VAL) - t.t_end <= 1e-6 * t.dt_max, loc, c, "time.t_end",
        fmt::format("a time that steps of dt_max = {} can resolve (its rounding step <= dt_max / 1e6)",
                    num(t.dt_max)),
        num(t.t_end));
  check(std::isfinite(t.growth) && t.growth >= 1, loc, c, "time.growth", "a factor >= 1", num(t.growth));
  check(t.max_steps >= 0, loc, c, "time.max_steps", "a step count >= 0 (0 = no limit)",
        std::to_string(t.max_steps));
  check(std::isfinite(c.output.diagnostics_every) && c.output.diagnostics_every > 0, loc, c,
        "output.diagnostics_every", "a positive simulation time", num(c.output.diagnostics_every));
  nonneg(c.output.snapshot_every, "output.snapshot_every");
  nonneg(c.output.spectra_every, "output.spectra_every");
  nonneg(c.output.checkpoint_every, "output.checkpoint_every");
  nonneg(c.output.checkpoint_wall_seconds, "output.checkpoint_wall_seconds");
  check(c.output.keep_checkpoints >= 1, loc, c, "output.keep_checkpoints", "a count >= 1",
        std::to_string(c.output.keep_checkpoints));
  check(c.output.print_every >= 1, loc, c, "output.print_every", "a step count >= 1",
        std::to_string(c.output.print_every));
  const PoissonConfig& p = c.poisson;
  check(std::isfinite(p.sigma) && p.sigma > 0, loc, c, "poisson.sigma", "a positive finite width",
        num(p.sigma));
  check(std::isfinite(p.x0) && p.x0 >= 0 && p.x0 <= g.lx, loc, c, "poisson.x0",
        "a position in [0, lx]", num(p.x0));
  check(std::isfinite(p.y0) && p.y0 >= 0 && p.y0 <= g.ly, loc, c, "poisson.y0",
        "a position in [0, ly]", num(p.y0));
}

}  // namespace


double parse_length(const std::string& text) {
  double special = 0;
  if (yaml_special(text, special)) return special;
  static const std::regex pi_expr(
      R"(\s*([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)?\s*\*?\s*pi\s*(?:/\s*([0-9]+\.?[0-9]*)\s*)?)");
  std::smatch m;
  if (std::regex_match(text, m, pi_expr)) {
    const double a = m[1].matched ? std::stod(m[1].str()) : 1.0;
    const double b = m[2].matched ? std::stod(m[2].str()) : 1.0;
    if (b == 0) throw std::invalid_argument(text);
    return a * M_PI / b;
  }
  std::size_t used = 0;
  const double x = std::stod(text, &used);
  if (text.find_first_not_of(" \t", used) != std::string::npos) throw std::invalid_argument(text);
  return x;
}

namespace {
Config parse_deck_unguarded(const std::string& text, const std::string& source,
                            const std::vector<std::string>& overrides) {
  Locator loc(source);
  Config c;
  c.source = source;
  c.text = text;
  c.overrides = overrides;

  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw InputError(one_line(fmt::format("{}:{}: YAML syntax error at column {}: {}", source, e.mark.line + 1,
                                          e.mark.column + 1, e.msg)));
  }
  if (!root || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  if (!root.IsMap())
    throw InputError(fmt::format("{}:{}: deck: expected a mapping of sections (grid:, run:, ...), found {}",
                                 source, line_of(root), describe(root)));
  for (const auto& item : overrides) apply_override(root, item, loc);

  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string key = it->first.as<std::string>();
    bool ok = false;
    for (const auto& s : kSections) ok = ok || s == key;
    if (!ok)
      loc.fail(key, line_of(it->first),
               "a section name (grid, physics, forcing, initial, time, run, output, poisson)",
               "unknown section '" + key + "'");
  }

  // ---- parse (defaults are the struct initialisers)
  {
    Section s(root, "grid", loc, c.lines, true);
    c.grid.nx = s.get_int("nx", 0, true);
    c.grid.ny = s.get_int("ny", c.grid.nx);
    c.grid.lx = s.get_double("lx", c.grid.lx, true);
    c.grid.ly = s.get_double("ly", c.grid.lx, true);
    c.grid.dealias = s.get_choice("dealias", "two-thirds", {"two-thirds", "none"}) == "none"
                         ? Dealias::None
                         : Dealias::TwoThirds;
    c.grid.nonlinear = s.get_choice("nonlinear", "basdevant", {"basdevant", "advective"}) == "advective"
                           ? NonlinearForm::Advective
                           : NonlinearForm::Basdevant;
    s.finish();
  }
  {
    Section s(root, "physics", loc, c.lines, false);
    PhysicsConfig& p = c.physics;
    p.nu = s.get_double("nu", p.nu);
    p.nu_order = s.get_int("nu_order", p.nu_order);
    p.mu = s.get_double("mu", p.mu);
    p.alpha = s.get_double("alpha", p.alpha);
    p.alpha_order = s.get_int("alpha_order", p.alpha_order);
    p.beta = s.get_double("beta", p.beta);
    s.finish();
  }
  {
    Section s(root, "forcing", loc, c.lines, false);
    ForcingConfig& f = c.forcing;
    f.type = s.get_choice("type", f.type, {"none", "kolmogorov", "ring", "ring-steady"});
    f.amplitude = s.get_double("amplitude", f.amplitude);
    f.wavenumber = s.get_int("wavenumber", f.wavenumber);
    f.epsilon = s.get_double("epsilon", f.epsilon);
    f.k_f = s.get_double("k_f", f.k_f);
    f.dk = s.get_double("dk", f.dk);
    f.seed = s.get_int("seed", f.seed);
    s.finish();
  }
  {
    Section s(root, "initial", loc, c.lines, false);
    InitialConfig& i = c.initial;
    i.type = s.get_choice("type", i.type,
                          {"random", "taylor-green", "vortices", "gaussian", "lamb-dipole", "file", "zero"});
    i.seed = s.get_int("seed", i.seed);
    i.k0 = s.get_double("k0", i.k0);
    i.energy = s.get_double("energy", i.energy);
    i.amplitude = s.get_double("amplitude", i.amplitude);
    i.mode = s.get_int("mode", i.mode);
    i.x0 = s.get_double("x0", c.grid.lx / 2, true);
    i.y0 = s.get_double("y0", c.grid.ly / 2, true);
    i.radius = s.get_double("radius", i.radius, true);
    i.speed = s.get_double("speed", i.speed);
    i.vortices = s.get_vortices("vortices", loc);
    i.path = s.get_string("path", i.path);
    s.finish();
  }
  {
    Section s(root, "time", loc, c.lines, false);
    TimeConfig& t = c.time;
    t.t_end = s.get_double("t_end", t.t_end);
    t.cfl = s.get_double("cfl", t.cfl);
    t.dt_max = s.get_double("dt_max", t.dt_max);
    t.dt_min = s.get_double("dt_min", t.dt_min);
    t.dt_initial = s.get_double("dt_initial", t.dt_initial);
    t.growth = s.get_double("growth", t.growth);
    t.stepper = s.get_choice("stepper", t.stepper, {"rk4", "rk3"});
    t.max_steps = s.get_int("max_steps", int(t.max_steps));
    s.finish();
  }
  {
    Section s(root, "run", loc, c.lines, false);
    c.run.backend = s.get_choice("backend", c.run.backend, {"auto", "cuda", "cpu"});
    c.run.precision = s.get_choice("precision", "double", {"double", "single"}) == "single"
                          ? Precision::Single
                          : Precision::Double;
    c.run.device = s.get_int("device", c.run.device);
    c.run.threads = s.get_int("threads", c.run.threads);
    const std::string planning = s.get_choice("fft_planning", to_string(c.run.fft_planning), {"auto", "estimate", "measure"});
    c.run.fft_planning = planning == "measure"    ? FftPlanning::Measure
                         : planning == "estimate" ? FftPlanning::Estimate
                                                  : FftPlanning::Auto;
    s.finish();
  }
  {
    Section s(root, "output", loc, c.lines, false);
    c.output.directory = s.get_string("directory", c.output.directory);
    OutputConfig& o = c.output;
    o.diagnostics_every = s.get_double("diagnostics_every", o.diagnostics_every);
    o.snapshot_every = s.get_double("snapshot_every", o.snapshot_every);
    o.spectra_every = s.get_double("spectra_every", o.spectra_every);
    o.checkpoint_every = s.get_double("checkpoint_every", o.checkpoint_every);
    o.checkpoint_wall_seconds = s.get_double("checkpoint_wall_seconds", o.checkpoint_wall_seconds);
    o.keep_checkpoints = s.get_int("keep_checkpoints", o.keep_checkpoints);
    o.fields = s.get_list("fields", o.fields, {"vorticity", "streamfunction", "velocity"});
    o.print_every = s.get_int("print_every", o.print_every);
    s.finish();
  }
  {
    Section s(root, "poisson", loc, c.lines, false);
    c.poisson.rhs = s.get_choice("rhs", c.poisson.rhs, {"gaussian"});
    c.poisson.sigma = s.get_double("sigma", c.poisson.sigma, true);
    // ---- derive: the Gaussian sits at the box centre unless placed
    c.poisson.x0 = s.get_double("x0", c.grid.lx / 2, true);
    c.poisson.y0 = s.get_double("y0", c.grid.ly / 2, true);
    c.poisson.gauge = s.get_choice("gauge", c.poisson.gauge, {"corner", "zero-mean"});
    s.finish();
  }

  // ---- validate
  validate(c, loc);
  return c;
}
}  // namespace

Config parse_deck(const std::string& text, const std::string& source,
                  const std::vector<std::string>& overrides) {
  try {
    return parse_deck_unguarded(text, source, overrides);
  } catch (const InputError& e) {
    throw InputError(one_line(e.what()));  // a value shown in a message may span lines
  } catch (const YAML::Exception& e) {
    // A structure the reader did not expect (a mapping as a key, an alias loop, ...): still
    // one line naming the place.
    throw InputError(one_line(fmt::format("{}:{}: unexpected YAML structure at column {}: {}", source,
                                          e.mark.line + 1, e.mark.column + 1, e.msg)));
  }
}

Config load_deck(const std::string& path, const std::vector<std::string>& overrides) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("cannot open deck '{}': {}", path, std::strerror(errno)));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw InputError(fmt::format("cannot read deck '{}'", path));
  return parse_deck(ss.str(), path, overrides);
}

namespace {
//! Shortest text that reads back to the same double (0.1, not 0.10000000000000001).
std::string exact(double x) { return fmt::format("{}", x); }
}  // namespace

std::string resolved_yaml(const Config& c) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "grid" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "nx" << YAML::Value << c.grid.nx;
  out << YAML::Key << "ny" << YAML::Value << c.grid.ny;
  out << YAML::Key << "lx" << YAML::Value << exact(c.grid.lx);
  out << YAML::Key << "ly" << YAML::Value << exact(c.grid.ly);
  out << YAML::Key << "dealias" << YAML::Value
      << (c.grid.dealias == Dealias::None ? "none" : "two-thirds");
  out << YAML::Key << "nonlinear" << YAML::Value
      << (c.grid.nonlinear == NonlinearForm::Advective ? "advective" : "basdevant");
  out << YAML::EndMap;
  out << YAML::Key << "physics" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "nu" << YAML::Value << exact(c.physics.nu);
  out << YAML::Key << "nu_order" << YAML::Value << c.physics.nu_order;
  out << YAML::Key << "mu" << YAML::Value << exact(c.physics.mu);
  out << YAML::Key << "alpha" << YAML::Value << exact(c.physics.alpha);
  out << YAML::Key << "alpha_order" << YAML::Value << c.physics.alpha_order;
  out << YAML::Key << "beta" << YAML::Value << exact(c.physics.beta);
  out << YAML::EndMap;
  out << YAML::Key << "forcing" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "type" << YAML::Value << c.forcing.type;
  out << YAML::Key << "amplitude" << YAML::Value << exact(c.forcing.amplitude);
  out << YAML::Key << "wavenumber" << YAML::Value << c.forcing.wavenumber;
  out << YAML::Key << "epsilon" << YAML::Value << exact(c.forcing.epsilon);
  out << YAML::Key << "k_f" << YAML::Value << exact(c.forcing.k_f);
  out << YAML::Key << "dk" << YAML::Value << exact(c.forcing.dk);
  out << YAML::Key << "seed" << YAML::Value << c.forcing.seed;
  out << YAML::EndMap;
  out << YAML::Key << "initial" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "type" << YAML::Value << c.initial.type;
  out << YAML::Key << "seed" << YAML::Value << c.initial.seed;
  out << YAML::Key << "k0" << YAML::Value << exact(c.initial.k0);
  out << YAML::Key << "energy" << YAML::Value << exact(c.initial.energy);
  out << YAML::Key << "amplitude" << YAML::Value << exact(c.initial.amplitude);
  out << YAML::Key << "mode" << YAML::Value << c.initial.mode;
  out << YAML::Key << "x0" << YAML::Value << exact(c.initial.x0);
  out << YAML::Key << "y0" << YAML::Value << exact(c.initial.y0);
  out << YAML::Key << "radius" << YAML::Value << exact(c.initial.radius);
  out << YAML::Key << "speed" << YAML::Value << exact(c.initial.speed);
  out << YAML::Key << "vortices" << YAML::Value << YAML::BeginSeq;
  for (const auto& v : c.initial.vortices) {
    out << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "x" << YAML::Value << exact(v.x) << YAML::Key << "y" << YAML::Value << exact(v.y);
    out << YAML::Key << "radius" << YAML::Value << exact(v.radius);
    out << YAML::Key << "circulation" << YAML::Value << exact(v.circulation);
    out << YAML::Key << "profile" << YAML::Value << v.profile << YAML::EndMap;
  }
  out << YAML::EndSeq;
  if (!c.initial.path.empty()) out << YAML::Key << "path" << YAML::Value << c.initial.path;
  out << YAML::EndMap;
  out << YAML::Key << "time" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "t_end" << YAML::Value << exact(c.time.t_end);
  out << YAML::Key << "cfl" << YAML::Value << exact(c.time.cfl);
  out << YAML::Key << "dt_max" << YAML::Value << exact(c.time.dt_max);
  out << YAML::Key << "dt_min" << YAML::Value << exact(c.time.dt_min);
  out << YAML::Key << "dt_initial" << YAML::Value << exact(c.time.dt_initial);
  out << YAML::Key << "growth" << YAML::Value << exact(c.time.growth);
  out << YAML::Key << "stepper" << YAML::Value << c.time.stepper;
  out << YAML::Key << "max_steps" << YAML::Value << c.time.max_steps;
  out << YAML::EndMap;
  out << YAML::Key << "run" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "backend" << YAML::Value << c.run.backend;
  out << YAML::Key << "precision" << YAML::Value << to_string(c.run.precision);
  out << YAML::Key << "device" << YAML::Value << c.run.device;
  out << YAML::Key << "threads" << YAML::Value << c.run.threads;
  out << YAML::Key << "fft_planning" << YAML::Value << to_string(c.run.fft_planning);
  out << YAML::EndMap;
  out << YAML::Key << "output" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "directory" << YAML::Value << c.output.directory;
  out << YAML::Key << "diagnostics_every" << YAML::Value << exact(c.output.diagnostics_every);
  out << YAML::Key << "snapshot_every" << YAML::Value << exact(c.output.snapshot_every);
  out << YAML::Key << "spectra_every" << YAML::Value << exact(c.output.spectra_every);
  out << YAML::Key << "checkpoint_every" << YAML::Value << exact(c.output.checkpoint_every);
  out << YAML::Key << "checkpoint_wall_seconds" << YAML::Value << exact(c.output.checkpoint_wall_seconds);
  out << YAML::Key << "keep_checkpoints" << YAML::Value << c.output.keep_checkpoints;
  out << YAML::Key << "fields" << YAML::Value << YAML::Flow << c.output.fields;
  out << YAML::Key << "print_every" << YAML::Value << c.output.print_every;
  out << YAML::EndMap;
  out << YAML::Key << "poisson" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "rhs" << YAML::Value << c.poisson.rhs;
  out << YAML::Key << "sigma" << YAML::Value << exact(c.poisson.sigma);
  out << YAML::Key << "x0" << YAML::Value << exact(c.poisson.x0);
  out << YAML::Key << "y0" << YAML::Value << exact(c.poisson.y0);
  out << YAML::Key << "gauge" << YAML::Value << c.poisson.gauge;
  out << YAML::EndMap;
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace cascade
