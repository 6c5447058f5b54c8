//! @file The deck reader's YAML layer (src/core/deck_reader.cpp): the document read with its
//! duplicate-key check, where a key sits (for messages), and Section, the typed bounded getters
//! of one section that remember which keys were read. Private to src/.
#pragma once

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "cascade/config.hpp"
#include "cascade/error.hpp"

namespace cascade::deck {

//! A decimal number as written in a deck (12, -0.5, .5, 1e-3, nan, .inf); throws
//! std::invalid_argument for anything else (0x10) and std::out_of_range beyond a double.
double parse_number(const std::string& text);

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
  //! Messages about `key` name `as` at `line` instead, and those about other keys add
  //! " (NOTE)": an ensemble member checked as the deck it is names its entry of ensemble.vary.
  void alias(const std::string& key, const std::string& as, int line) { aliases_[key] = {as, line}; }
  void note(const std::string& note) { note_ = note; }
  std::string where(const std::string& key, int line) const {
    const std::string file = escaped(file_);
    std::string k = one_line(key, 200) + (note_.empty() ? "" : " (" + note_ + ")");
    if (const auto a = aliases_.find(key); a != aliases_.end()) {
      k = one_line(a->second.first, 200);
      line = a->second.second;
    } else if (overridden_.count(key)) {
      return fmt::format("{}: --set {}", file, k);
    }
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
  std::map<std::string, std::pair<std::string, int>> aliases_;
  std::string note_;
};


//! A check of the deck read: when not `ok`, the message "expected EXPECTED, found FOUND" for the
//! key `key` ("section.key"), at its line.
inline void check(bool ok, const Locator& loc, const Config& c, const std::string& key, const std::string& expected,
                  const std::string& found) {
  if (ok) return;
  const auto it = c.lines.find(key);
  loc.fail(key, it == c.lines.end() ? 0 : it->second, expected, found);
}

//! The line of a node (1-based), 0 when unknown.
int line_of(const YAML::Node& n);
//! A value as messages show it: 'text', a list, a mapping, nothing.
std::string describe(const YAML::Node& n);

//! What yaml-cpp's loader passes over in silence: a key given twice in one mapping (it keeps one
//! of them) and a second document (it reads the first). `path` names the key as messages do
//! (physics.nu, initial.vortices[1].x); `first_line` is 0 for a second document.
struct ShapeError {
  int line;
  int first_line;
  std::string path;
};

//! One YAML document as a node tree, refused (ShapeError) when a mapping holds a key twice or
//! a second document follows; syntax errors are YAML::ParserException.
YAML::Node load_one_document(const std::string& text);

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
    return got ? int_of(*got, path(key)) : def;
  }

  double get_double(const std::string& key, double def, bool allow_pi = false) {
    const auto got = take(key, false);
    return got ? double_of(*got, path(key), allow_pi) : def;
  }

  //! A scalar read as an integer key reads it; `where` names it in messages (section.key, or an
  //! item of a list: ensemble.vary.initial.seed[2]).
  int int_of(const YAML::Node& v, const std::string& where) const {
    const std::string s = v.Scalar();
    static const std::regex integer(R"(\s*[+-]?[0-9]+\s*)");
    if (!std::regex_match(s, integer)) loc_.fail(where, line_of(v), "an integer", describe(v));
    errno = 0;
    const long long x = std::strtoll(s.c_str(), nullptr, 10);
    if (errno == ERANGE || x > std::numeric_limits<int>::max() || x < std::numeric_limits<int>::min())
      loc_.fail(where, line_of(v), "an integer that fits in 32 bits", describe(v));
    return static_cast<int>(x);
  }

  //! A scalar read as a real key (`allow_pi`: a length) reads it, named `where` in messages.
  double double_of(const YAML::Node& v, const std::string& where, bool allow_pi) const {
    const std::string s = v.Scalar();
    try {
      return allow_pi ? parse_length(s) : parse_number(s);
    } catch (const std::out_of_range&) {
      loc_.fail(where, line_of(v), "a number within the range of a double (about 1.8e308)", describe(v));
    } catch (const std::exception&) {
      loc_.fail(where, line_of(v), allow_pi ? "a number or a multiple of pi (e.g. 2pi)" : "a number", describe(v));
    }
  }

  //! A mapping (ensemble.vary), or nothing when the key is absent.
  std::optional<YAML::Node> get_mapping(const std::string& key, const std::string& expected) {
    const auto got = value_of(key, false);
    if (got && !got->IsMap()) loc_.fail(path(key), line_of(*got), expected, describe(*got));
    return got;
  }

  const Locator& locator() const { return loc_; }

  //! Where a key of this section's mapping sits (ensemble.vary's "physics.nu"), for messages.
  void place(const std::string& key, int line) { lines_[key] = line; }

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
  std::vector<VortexConfig> get_vortices(const std::string& key) {
    const Locator& loc = loc_;
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

}  // namespace cascade::deck
