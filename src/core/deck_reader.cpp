//! @file Deck reader, YAML layer: numbers and lengths as a deck writes them, the one-document
//! and duplicate-key check yaml-cpp does not make, and reading a deck file (bounded).
#include "core/deck_reader.hpp"

#include <yaml-cpp/eventhandler.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <sstream>

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

}  // namespace

namespace deck {

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

}  // namespace deck

double parse_length(const std::string& text) {
  static const std::regex pi_expr(std::string(R"(\s*()") + kDecimal +
                                  R"()?\s*\*?\s*pi\s*(?:/\s*([0-9]+\.?[0-9]*)\s*)?)");
  std::smatch m;
  if (std::regex_match(text, m, pi_expr)) {
    using deck::parse_number;
    const double a = m[1].matched ? parse_number(m[1].str()) : 1.0;
    const double b = m[2].matched ? parse_number(m[2].str()) : 1.0;
    if (b == 0) throw std::invalid_argument(text);
    if (std::isinf(a * M_PI / b)) throw std::out_of_range(text);
    return a * M_PI / b;
  }
  return deck::parse_number(text);
}

namespace {
//! A file name in a message: quoted, escaped.
std::string quoted(const std::string& name) { return "'" + escaped(name) + "'"; }
}  // namespace

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


}  // namespace cascade
