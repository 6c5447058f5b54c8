//! @file Deck reader: yaml-cpp -> typed sections (parse), defaults filled (derive), checks
//! with one message each (validate). Unknown sections and keys are errors.
#include "cascade/config.hpp"

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "cascade/error.hpp"

namespace cascade {
namespace {

//! YAML's spellings of the IEEE specials (.nan, .inf, -.inf) and the plain nan and inf, which
//! are accepted so that validation can name the value ("found nan") rather than its spelling.
bool special_number(const std::string& t, double& x) {
  static const std::regex special(R"(\s*([+-]?)(\.nan|\.NaN|\.NAN|nan|NaN|NAN|\.inf|\.Inf|\.INF|inf|Inf|INF)\s*)");
  std::smatch m;
  if (!std::regex_match(t, m, special)) return false;
  if (m[2].str().back() == 'n' || m[2].str().back() == 'N')  // nan, not inf
    x = std::numeric_limits<double>::quiet_NaN();
  else
    x = m[1].str() == "-" ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  return true;
}

//! A decimal number as written in a deck: 12, -0.5, .5, 1e-3 (not 0x10 or 0x1p-3, which
//! std::stod would take). A subnormal is kept; one beyond the range of a double is refused.
const char* const kDecimal = R"([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)";

double parse_number(const std::string& text) {
  double special = 0;
  if (special_number(text, special)) return special;
  static const std::regex decimal(std::string(R"(\s*)") + kDecimal + R"(\s*)");
  if (!std::regex_match(text, decimal)) throw std::invalid_argument(text);
  errno = 0;
  const double x = std::strtod(text.c_str(), nullptr);
  if (errno == ERANGE && std::isinf(x)) throw std::out_of_range(text);  // underflow is fine
  return x;
}

//! A file name in a message: quoted, escaped.
std::string quoted(const std::string& name) { return "'" + escaped(name) + "'"; }

constexpr int kMaxSide = 1 << 20;             // per dimension: beyond any single-node run
constexpr double kMaxPoints = 65536.0 * 65536.0;  // total points
constexpr double kMinLength = 1e-9, kMaxLength = 1e9;  // box lengths
constexpr int kMaxThreads = 4096;

//! Where a key sits, for messages: "FILE:LINE" or "FILE: --set" for overridden keys. The
//! file name is shown escaped; what follows it is cut when very long.
class Locator {
 public:
  explicit Locator(std::string file) : file_(std::move(file)) {}
  //! The key was given by `--set key=text`.
  void overridden(const std::string& key, const std::string& text) { overridden_[key] = text; }
  //! The text a key was given by --set, or null when it comes from the deck.
  const std::string* override_of(const std::string& key) const {
    const auto it = overridden_.find(key);
    return it == overridden_.end() ? nullptr : &it->second;
  }
  std::string where(const std::string& key, int line) const {
    const std::string file = escaped(file_), k = one_line(key, 200);
    if (overridden_.count(key)) return fmt::format("{}: --set {}", file, k);
    if (line > 0) return fmt::format("{}:{}: {}", file, line, k);
    return fmt::format("{}: {}", file, k);
  }
  [[noreturn]] void fail(const std::string& key, int line, const std::string& expected,
                         const std::string& found) const {
    throw InputError(where(key, line) + one_line(fmt::format(": expected {}, found {}", expected, found)));
  }
  const std::string& file() const { return file_; }

 private:
  std::string file_;
  std::map<std::string, std::string> overridden_;
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

//! What yaml-cpp's loader passes over in silence: a key given twice in one mapping (it keeps one
//! of them) and a second document (it reads the first). `path` names the key as messages do
//! (physics.nu, initial.vortices[1].x); `first_line` is 0 for a second document.
struct ShapeError {
  int line;
  int first_line;
  std::string path;
};

//! One pass over the parser's events, with a stack of the open mappings (the keys seen, with
//! their lines) and sequences (the index of the next item).
class ShapeCheck : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { node(mark, "~"); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    const auto it = anchored_.find(anchor);  // an alias used as a key stands for its scalar
    node(mark, it == anchored_.end() ? std::nullopt : std::optional<std::string>(it->second));
  }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                const std::string& value) override {
    if (anchor) anchored_[anchor] = value;
    node(mark, value);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    stack_.push_back(Frame{false, node(mark, std::nullopt), {}, "", true, 0});
  }
  void OnSequenceEnd() override { stack_.pop_back(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    stack_.push_back(Frame{true, node(mark, std::nullopt), {}, "", true, 0});
  }
  void OnMapEnd() override { stack_.pop_back(); }

 private:
  struct Frame {
    bool map;
    std::string path;
    std::map<std::string, int> keys;  // key -> its line
    std::string key;                  // the key whose value comes next
    bool expect_key;
    int index;  // of the next item of a sequence
  };

  //! A node begins (a scalar, or a collection about to be pushed): its path; a key is checked
  //! against the keys of its mapping. `scalar` is empty for a collection.
  std::string node(const YAML::Mark& mark, const std::optional<std::string>& scalar) {
    if (stack_.empty()) return "";
    Frame& f = stack_.back();
    const auto join = [&](const std::string& k) { return f.path.empty() ? k : f.path + "." + k; };
    if (!f.map) return f.path + "[" + std::to_string(f.index++) + "]";
    if (!f.expect_key) {
      f.expect_key = true;
      return join(f.key);
    }
    f.expect_key = false;
    f.key = scalar ? *scalar : "?";
    if (scalar) {
      const auto [it, fresh] = f.keys.emplace(*scalar, mark.line + 1);
      if (!fresh) throw ShapeError{mark.line + 1, it->second, join(*scalar)};
    }
    return join(f.key);
  }

  std::vector<Frame> stack_;
  std::map<YAML::anchor_t, std::string> anchored_;
};

//! One YAML document as a node tree, refused (ShapeError) when a mapping holds a key twice or
//! a second document follows; syntax errors are YAML::ParserException.
YAML::Node load_one_document(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  ShapeCheck first;
  if (!parser.HandleNextDocument(first)) return YAML::Node();
  struct Second : ShapeCheck {
    void OnDocumentStart(const YAML::Mark& mark) override { throw ShapeError{mark.line + 1, 0, ""}; }
  } second;
  parser.HandleNextDocument(second);
  return YAML::Load(text);
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
      return allow_pi ? parse_length(s) : parse_number(s);
    } catch (const std::out_of_range&) {
      loc_.fail(path(key), line_of(v), "a number within the range of a double (about 1.8e308)", describe(v));
    } catch (const std::exception&) {
      loc_.fail(path(key), line_of(v), allow_pi ? "a number or a multiple of pi (e.g. 2pi)" : "a number",
                describe(v));
    }
  }

  std::string get_choice(const std::string& key, const std::string& def,
                         const std::vector<std::string>& allowed) {
    const auto got = take(key, false, true);
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

  //! A string or a path: from --set, the text as given, byte for byte (not read as YAML).
  //! It must be UTF-8, as the resolved deck, a YAML file, is.
  std::string get_string(const std::string& key, const std::string& def) {
    const auto got = take(key, false, true);
    if (!got) return def;
    const YAML::Node& v = *got;
    if (v.Scalar().empty()) loc_.fail(path(key), line_of(v), "a non-empty string", "''");
    if (!is_utf8(v.Scalar())) loc_.fail(path(key), line_of(v), "UTF-8 text", describe(v));
    return v.Scalar();
  }

  //! A list of choices (a YAML sequence, or one value); duplicates removed, order kept.
  std::vector<std::string> get_list(const std::string& key, const std::vector<std::string>& def,
                                    const std::vector<std::string>& allowed) {
    const auto got = value_of(key, false);
    if (!got) return def;
    const YAML::Node& v = *got;
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
    std::vector<VortexConfig> out;
    const auto got = value_of(key, false);
    if (!got) return out;
    const YAML::Node& v = *got;
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
        if (val.IsNull()) loc.fail(kp, line_of(it->first), "a value", "nothing");
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
        } catch (const std::out_of_range&) {
          loc.fail(kp, line_of(val), "a number within the range of a double (about 1.8e308)", describe(val));
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

  //! The key's scalar node, or nothing when absent. `verbatim`: a string, which --set gives
  //! as written.
  std::optional<YAML::Node> take(const std::string& key, bool required, bool verbatim = false) {
    if (!present_ && required) {
      known(key);
      loc_.fail(path(key), 0, "a value", "nothing");
    }
    const auto v = value_of(key, verbatim);
    if (!v) {
      if (required) loc_.fail(path(key), line_of(node_), "a value", "nothing");
      return std::nullopt;
    }
    if (!v->IsScalar()) loc_.fail(path(key), line_of(*v), "a single value", describe(*v));
    return v;
  }

  //! The key's value, or nothing when the key is absent. A key that is there must have a
  //! value: `nu:`, `nu: ~` and `--set physics.nu=` are errors, not the default. A --set value
  //! is read as YAML (a number, a list), or with `verbatim` taken as the string it is.
  std::optional<YAML::Node> value_of(const std::string& key, bool verbatim) {
    known(key);
    if (!present_) return std::nullopt;
    const YAML::Node& cnode = node_;  // const access never inserts keys
    YAML::Node v = cnode[key];
    if (!v) return std::nullopt;
    if (const std::string* text = loc_.override_of(path(key))) {
      if (verbatim) v.reset(text->empty() ? YAML::Node() : YAML::Node(*text));
      else v.reset(override_value(*text, key));
    }
    const int line = key_line(key);
    lines_[path(key)] = line;
    if (v.IsNull()) loc_.fail(path(key), line, "a value", "nothing");
    return v;
  }

  //! A --set value read as YAML: one document, no key twice.
  YAML::Node override_value(const std::string& text, const std::string& key) const {
    const std::string where = loc_.where(path(key), 0);
    try {
      return load_one_document(text);
    } catch (const YAML::ParserException& e) {
      throw InputError(where + one_line(fmt::format(": cannot parse value '{}': {}", text, e.msg)));
    } catch (const ShapeError& e) {
      throw InputError(where + one_line(e.first_line ? fmt::format(": the value gives {} twice", e.path)
                                                     : std::string(": a second YAML document in the value")));
    }
  }

  //! The line of a key of this section (the line of a null value is where the next token is).
  int key_line(const std::string& key) const {
    for (auto it = node_.begin(); it != node_.end(); ++it)
      if (it->first.IsScalar() && it->first.Scalar() == key) return line_of(it->first);
    return line_of(node_);
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

//! `--set section.key=value`: the key is put in the tree with the value's text; the section's
//! getter reads that text as the key's type wants it (Section::value_of).
void apply_override(YAML::Node& root, const std::string& item, Locator& loc) {
  const auto eq = item.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError(one_line(fmt::format("--set: expected section.key=value, found '{}'", item)));
  const std::string path = item.substr(0, eq);
  const std::string value = item.substr(eq + 1);
  const auto dot = path.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == path.size() ||
      path.find('.', dot + 1) != std::string::npos)
    throw InputError(one_line(fmt::format("--set: expected section.key=value, found '{}'", item)));
  const std::string section = path.substr(0, dot), key = path.substr(dot + 1);
  if (!root[section] || root[section].IsNull()) root[section] = YAML::Node(YAML::NodeType::Map);
  if (!root[section].IsMap())
    throw InputError(one_line(fmt::format("--set {}: section '{}' is not a mapping", path, section)));
  root[section][key] = YAML::Node(value);
  loc.overridden(path, value);
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
  static const std::regex pi_expr(std::string(R"(\s*()") + kDecimal +
                                  R"()?\s*\*?\s*pi\s*(?:/\s*([0-9]+\.?[0-9]*)\s*)?)");
  std::smatch m;
  if (std::regex_match(text, m, pi_expr)) {
    const double a = m[1].matched ? parse_number(m[1].str()) : 1.0;
    const double b = m[2].matched ? parse_number(m[2].str()) : 1.0;
    if (b == 0) throw std::invalid_argument(text);
    if (std::isinf(a * M_PI / b)) throw std::out_of_range(text);
    return a * M_PI / b;
  }
  return parse_number(text);
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
    root = load_one_document(text);
  } catch (const YAML::ParserException& e) {
    throw InputError(fmt::format("{}:{}: YAML syntax error at column {}: {}", escaped(source), e.mark.line + 1,
                                 e.mark.column + 1, one_line(e.msg)));
  } catch (const ShapeError& e) {
    if (!e.first_line)
      throw InputError(fmt::format("{}:{}: a second YAML document in the deck (a deck is one document)",
                                   escaped(source), e.line));
    const bool section = e.path.find_first_of(".[") == std::string::npos;
    throw InputError(fmt::format("{}:{}: {}: duplicate {} (first at line {})", escaped(source), e.line,
                                 one_line(e.path, 200), section ? "section" : "key", e.first_line));
  }
  if (!root || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  if (!root.IsMap())
    throw InputError(fmt::format("{}:{}: deck: expected a mapping of sections (grid:, run:, ...), found {}",
                                 escaped(source), line_of(root), one_line(describe(root))));
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
    c.run.step_transforms = s.get_choice("step_transforms", c.run.step_transforms,
                                         {"auto", "plain", "plain-pairs", "pruned", "pruned-pairs", "rows", "complex-pairs"});
    c.run.fft_callbacks = s.get_choice("fft_callbacks", c.run.fft_callbacks, {"auto", "off", "store", "all"});
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
    // Values and names are escaped where messages are made; this is the net below them (its
    // cut is far above a file name's length and a 400-character value).
    throw InputError(one_line(e.what(), 16384));
  } catch (const YAML::Exception& e) {
    // A structure the reader did not expect (a mapping as a key, an alias loop, ...): still
    // one line naming the place.
    throw InputError(fmt::format("{}:{}: unexpected YAML structure at column {}: {}", escaped(source),
                                 e.mark.line + 1, e.mark.column + 1, one_line(e.msg)));
  }
}

//! A deck is a small text file; anything longer (/dev/zero, a data file given by mistake) is
//! refused after this many bytes rather than read until memory runs out. A deck that is not a
//! file (a pipe, a FIFO, a terminal) must have been written and closed within kDeckSeconds.
constexpr std::size_t kMaxDeckBytes = 4 << 20;
constexpr int kDeckSeconds = 10;

Config load_deck(const std::string& path, const std::vector<std::string>& overrides) {
  const auto fail = [&](const std::string& why) {
    throw InputError(fmt::format("cannot open deck {}: {}", quoted(path), why));
  };
  // O_NONBLOCK: opening a FIFO that no one writes to does not wait; poll() below does, boundedly.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) fail(std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail(std::strerror(errno));
  if (S_ISDIR(st.st_mode)) fail(std::strerror(EISDIR));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kDeckSeconds);
  std::string text;
  char buffer[1 << 16];
  for (;;) {
    // A regular file is always ready; a FIFO is not until a writer has written or left.
    pollfd p{fd, POLLIN, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    const int ready = ::poll(&p, 1, static_cast<int>(std::max<long long>(left.count(), 0)));
    if (ready == 0)
      throw InputError(fmt::format("cannot read deck {}: no end of text within {} s (a FIFO or terminal no one "
                                   "writes to?)", quoted(path), kDeckSeconds));
    const ssize_t got = ready < 0 ? -1 : ::read(fd, buffer, sizeof buffer);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got < 0) throw InputError(fmt::format("cannot read deck {}: {}", quoted(path), std::strerror(errno)));
    if (got == 0) break;
    text.append(buffer, static_cast<std::size_t>(got));
    if (text.size() > kMaxDeckBytes)
      throw InputError(fmt::format("cannot read deck {}: longer than {} MiB (a deck is a small YAML text file)",
                                   quoted(path), kMaxDeckBytes >> 20));
  }
  return parse_deck(text, path, overrides);
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
  if (!c.initial.path.empty()) out << YAML::Key << "path" << YAML::Value << YAML::DoubleQuoted << c.initial.path;
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
  out << YAML::Key << "step_transforms" << YAML::Value << c.run.step_transforms;
  out << YAML::Key << "fft_callbacks" << YAML::Value << c.run.fft_callbacks;
  out << YAML::EndMap;
  out << YAML::Key << "output" << YAML::Value << YAML::BeginMap;
  // Strings the user chose, always quoted: `null`, `~`, `#`, `123`, a newline read back as the
  // same string, here and by any YAML reader (the parser takes them as UTF-8, so they are).
  out << YAML::Key << "directory" << YAML::Value << YAML::DoubleQuoted << c.output.directory;
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
