//! @file Deck reader: defaults, pi lengths, overrides, the resolved deck, and one-line errors
//! that name file, line and key.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cascade/config.hpp"
#include "cascade/forcing.hpp"
#include "cascade/type_table.hpp"
#include "core/deck_keys.hpp"
#include "core/deck_types.hpp"
#include "core/ensemble.hpp"
#include "physics/initial.hpp"
#include "cascade/error.hpp"

namespace cascade {
namespace {

std::string error_of(const std::string& text, const std::vector<std::string>& sets = {}) {
  try {
    parse_deck(text, "deck.yaml", sets);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Config, DefaultsAndDerivedValues) {
  const Config c = parse_deck("grid: {nx: 64}\n", "deck.yaml");
  EXPECT_EQ(c.grid.nx, 64);
  EXPECT_EQ(c.grid.ny, 64);
  EXPECT_DOUBLE_EQ(c.grid.lx, 2 * M_PI);
  EXPECT_DOUBLE_EQ(c.grid.ly, 2 * M_PI);
  EXPECT_EQ(c.grid.dealias, Dealias::TwoThirds);
  EXPECT_EQ(c.run.backend, "auto");
  EXPECT_EQ(c.run.precision, Precision::Double);
  EXPECT_DOUBLE_EQ(c.poisson.x0, M_PI);
  EXPECT_EQ(c.poisson.gauge, "corner");
  EXPECT_EQ(c.output.directory, "output");
}

TEST(Config, LengthsAcceptMultiplesOfPi) {
  EXPECT_DOUBLE_EQ(parse_length("2pi"), 2 * M_PI);
  EXPECT_DOUBLE_EQ(parse_length("2*pi"), 2 * M_PI);
  EXPECT_DOUBLE_EQ(parse_length("pi"), M_PI);
  EXPECT_DOUBLE_EQ(parse_length("pi/2"), M_PI / 2);
  EXPECT_DOUBLE_EQ(parse_length("0.5 pi"), M_PI / 2);
  EXPECT_DOUBLE_EQ(parse_length("1.25"), 1.25);
  EXPECT_THROW(parse_length("2pie"), std::invalid_argument);
  EXPECT_THROW(parse_length("abc"), std::invalid_argument);
  const Config c = parse_deck("grid: {nx: 32, ny: 16, lx: 4pi, ly: 1.5}\n", "d");
  EXPECT_DOUBLE_EQ(c.grid.lx, 4 * M_PI);
  EXPECT_DOUBLE_EQ(c.grid.ly, 1.5);
}

TEST(Config, OverridesReplaceKeys) {
  const Config c = parse_deck("grid: {nx: 64}\nrun: {precision: double}\n", "deck.yaml",
                              {"grid.nx=128", "run.precision=single", "poisson.sigma=0.2"});
  EXPECT_EQ(c.grid.nx, 128);
  EXPECT_EQ(c.grid.ny, 128);
  EXPECT_EQ(c.run.precision, Precision::Single);
  EXPECT_DOUBLE_EQ(c.poisson.sigma, 0.2);
  EXPECT_NE(error_of("grid: {nx: 64}\n", {"gridnx=3"}).find("--set"), std::string::npos);
  const std::string e = error_of("grid: {nx: 64}\n", {"grid.nx=63"});
  EXPECT_NE(e.find("--set grid.nx"), std::string::npos) << e;
}

TEST(Config, ResolvedDeckRoundTrips) {
  const Config a = parse_deck("grid: {nx: 48, ny: 32, lx: 2pi, ly: 3}\nrun: {backend: cpu, precision: single, "
                              "step_transforms: rows, fft_callbacks: off}\n"
                              "poisson: {sigma: 0.3, gauge: zero-mean}\noutput: {directory: out}\n",
                              "d");
  const Config b = parse_deck(resolved_yaml(a), "resolved");
  EXPECT_EQ(b.run.step_transforms, "rows");  // a restart asks for the same step plan
  EXPECT_EQ(b.run.fft_callbacks, "off");
  EXPECT_EQ(parse_deck("grid: {nx: 48}\n", "d").run.step_transforms, "auto");
  EXPECT_EQ(resolved_yaml(a), resolved_yaml(b));
  EXPECT_EQ(b.grid.ny, 32);
  EXPECT_DOUBLE_EQ(b.grid.lx, a.grid.lx);  // 17 digits survive the round trip
  EXPECT_EQ(b.run.precision, Precision::Single);
  EXPECT_EQ(b.poisson.gauge, "zero-mean");
}

// Paths and strings from the command line are taken byte for byte, and the resolved deck (deck.yaml,
// a checkpoint's deck_resolved, read again on restart) gives them back unchanged.
TEST(Config, StringOverridesAreVerbatimAndRoundTrip) {
  const std::vector<std::string> nasty = {"null", "~", "Null", "runs/t #2", " lead", "trail ", "a: b", "- x",
                                          "123", "0x10", "1e3", "true", "yes", ".nan", "é/ü", "x\ny",
                                          "x\r", "tab\there", "'q'", "\"dq\"", "a\\b", "#c", "&a", "*a",
                                          "!t", "[x]", "{x: 1}", "---", "...", "|", "> x", "%x", "\x01",
                                          "\xe2\x80\xa8", "\xef\xbb\xbf" "bom"};
  for (const auto& s : nasty) {
    SCOPED_TRACE(testing::PrintToString(s));
    const Config a = parse_deck("grid: {nx: 32}\n", "deck.yaml", {"output.directory=" + s, "initial.path=" + s});
    EXPECT_EQ(a.output.directory, s);
    EXPECT_EQ(a.initial.path, s);
    const std::string resolved = resolved_yaml(a);
    const Config b = parse_deck(resolved, "resolved");
    EXPECT_EQ(b.output.directory, s);
    EXPECT_EQ(b.initial.path, s);
    EXPECT_EQ(resolved_yaml(b), resolved);
  }
}

TEST(Config, StringsMustBeUtf8) {
  const std::string e = error_of("grid: {nx: 32}\n", {"output.directory=o\xff"});
  EXPECT_NE(e.find("deck.yaml: --set output.directory: expected UTF-8 text, found 'o\\xff'"), std::string::npos) << e;
  EXPECT_NE(error_of("grid: {nx: 32}\noutput: {directory: \"a\xc3\"}\n").find("expected UTF-8 text"), std::string::npos);
}

TEST(Config, NumbersAreDecimal) {
  EXPECT_EQ(parse_deck("grid: {nx: 32}\nphysics: {nu: 1e-310}\n", "d").physics.nu, 1e-310);  // subnormal
  EXPECT_EQ(parse_deck("grid: {nx: 32}\n", "d", {"physics.nu=4.9e-324"}).physics.nu, 4.9e-324);
  const Config c = parse_deck("grid: {nx: 32}\nphysics: {nu: 1e-310}\n", "d");
  EXPECT_EQ(parse_deck(resolved_yaml(c), "r").physics.nu, 1e-310);
  EXPECT_EQ(parse_deck("grid: {nx: 32}\ninitial: {type: gaussian, radius: 1e-310pi}\n", "d").initial.radius, 1e-310 * M_PI)
      << "a subnormal multiple of pi reads as one";
  EXPECT_DOUBLE_EQ(parse_length(".5pi"), M_PI / 2);
  EXPECT_DOUBLE_EQ(parse_length("+1.5e1"), 15);
  EXPECT_TRUE(std::isnan(parse_length("nan")));
  EXPECT_TRUE(std::isnan(parse_length(".NaN")));
  EXPECT_EQ(parse_length("-inf"), -INFINITY);
  EXPECT_EQ(parse_length("-.inf"), -INFINITY);
  for (const char* hex : {"0x10", "0x1p-3", "0X1P3", "-0x1"}) EXPECT_THROW(parse_length(hex), std::invalid_argument) << hex;
  EXPECT_THROW(parse_length("1e400"), std::out_of_range);
  EXPECT_THROW(parse_length("infinity"), std::invalid_argument);
}

// A key or section given twice, or a second document, is refused naming both lines; in a --set
// value too.
TEST(Config, DuplicatesAndSecondDocumentsAreRefused) {
  EXPECT_EQ(error_of("grid: {nx: 32}\nphysics:\n  nu: 1\n  mu: 0\n  nu: 2\n"),
            "deck.yaml:5: physics.nu: duplicate key (first at line 3)");
  EXPECT_EQ(error_of("grid: {nx: 32}\nphysics: {nu: 1}\ngrid: {nx: 64}\n"),
            "deck.yaml:3: grid: duplicate section (first at line 1)");
  EXPECT_EQ(error_of("grid: {nx: 32}\ninitial:\n  type: vortices\n  vortices:\n    - {x: 1, y: 1}\n"
                     "    - x: 1\n      y: 2\n      x: 3\n"),
            "deck.yaml:8: initial.vortices[1].x: duplicate key (first at line 6)");
  EXPECT_EQ(error_of("grid: {nx: 32}\nphysics: {nu: &n 1, mu: *n}\n"), "");  // aliases as values are fine
  EXPECT_EQ(error_of("grid: {nx: 32}\nphysics: {&k nu: 1, *k : 2}\n"),
            "deck.yaml:2: physics.nu: duplicate key (first at line 2)");
  EXPECT_EQ(error_of("grid: {nx: 32}\n---\ngrid: {nx: 64}\n"),
            "deck.yaml:2: a second YAML document in the deck (a deck is one document)");
  EXPECT_EQ(error_of("---\ngrid: {nx: 32}\n...\n"), "");  // one document, marked
  EXPECT_EQ(error_of("grid: {nx: 32}\n", {"initial.type=vortices", "initial.vortices=[{x: 1, y: 1, y: 2}]"}),
            "deck.yaml: --set initial.vortices: the value gives [0].y twice");
  EXPECT_EQ(error_of("grid: {nx: 32}\n", {"physics.nu=1\n---\n2"}),
            "deck.yaml: --set physics.nu: a second YAML document in the value");
  // The same key twice on the command line is not a duplicate: the last one counts.
  EXPECT_EQ(parse_deck("grid: {nx: 32}\n", "d", {"grid.nx=16", "grid.nx=64"}).grid.nx, 64);
}

// A key that is there with no value is an error, not the default; an empty section is allowed.
TEST(Config, EmptyValuesAreRefused) {
  EXPECT_EQ(error_of("grid: {nx: 32}\ntime:\n  t_end:\n  cfl: 0.5\n"),
            "deck.yaml:3: time.t_end: expected a value, found nothing");
  EXPECT_EQ(error_of("grid: {nx: 32}\nphysics: {nu: ~}\n"), "deck.yaml:2: physics.nu: expected a value, found nothing");
  EXPECT_EQ(error_of("grid: {nx: 32}\noutput: {fields: null}\n"),
            "deck.yaml:2: output.fields: expected a value, found nothing");
  EXPECT_EQ(error_of("grid: {nx: 32}\n", {"time.t_end="}), "deck.yaml: --set time.t_end: expected a value, found nothing");
  EXPECT_EQ(error_of("grid: {nx: 32}\n", {"physics.nu=~"}), "deck.yaml: --set physics.nu: expected a value, found nothing");
  EXPECT_EQ(error_of("grid: {nx: 32}\n", {"physics.nu=null"}), "deck.yaml: --set physics.nu: expected a value, found nothing");
  EXPECT_EQ(error_of("grid: {nx: 32}\n", {"output.directory="}),
            "deck.yaml: --set output.directory: expected a value, found nothing");
  EXPECT_EQ(error_of("grid: {nx: 32}\n", {"run.backend="}), "deck.yaml: --set run.backend: expected a value, found nothing");
  EXPECT_EQ(error_of("grid: {nx: 32}\nphysics:\ntime: {}\n"), "");
}

// Bad decks: one line, naming file, line and key, saying what was expected and found.
struct BadDeck {
  const char* name;
  const char* text;
  const char* must_contain;
};

void PrintTo(const BadDeck& d, std::ostream* os) { *os << d.name; }

class BadDecks : public testing::TestWithParam<BadDeck> {};

TEST_P(BadDecks, GiveOneLineWithFileLineAndKey) {
  const std::string e = error_of(GetParam().text);
  ASSERT_FALSE(e.empty()) << "deck was accepted";
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  EXPECT_EQ(e.rfind("deck.yaml:", 0), 0u) << e;
  EXPECT_NE(e.find(GetParam().must_contain), std::string::npos) << e;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BadDecks,
    testing::Values(
        BadDeck{"UnknownKey", "grid:\n  nx: 64\n  nz: 3\n", "deck.yaml:3: grid.nz: expected a known key"},
        BadDeck{"UnknownSection", "grid: {nx: 64}\nphysiks: {nu: 1}\n", "deck.yaml:2: physiks"},
        BadDeck{"WrongTypeString", "grid:\n  nx: abc\n", "deck.yaml:2: grid.nx: expected an integer, found 'abc'"},
        BadDeck{"WrongTypeFloat", "grid:\n  nx: 64.5\n", "grid.nx: expected an integer, found '64.5'"},
        BadDeck{"WrongTypeList", "grid:\n  nx: [1, 2]\n", "grid.nx: expected a single value, found a list"},
        BadDeck{"OddNx", "grid:\n  nx: 63\n", "deck.yaml:2: grid.nx: expected an even integer"},
        BadDeck{"ZeroNx", "grid:\n  nx: 0\n", "deck.yaml:2: grid.nx: expected an even integer"},
        BadDeck{"NegativeNx", "grid:\n  nx: -64\n", "deck.yaml:2: grid.nx: expected an even integer"},
        BadDeck{"OddNy", "grid:\n  nx: 64\n  ny: 31\n", "deck.yaml:3: grid.ny"},
        BadDeck{"HugeNx", "grid:\n  nx: 99999999999\n", "grid.nx: expected an integer that fits"},
        BadDeck{"MissingNx", "grid:\n  lx: 1\n", "grid.nx: expected a value, found nothing"},
        BadDeck{"MissingGrid", "run: {backend: cpu}\n", "grid: expected a 'grid:' section"},
        BadDeck{"NegativeLength", "grid:\n  nx: 64\n  lx: -1\n", "deck.yaml:3: grid.lx: expected a positive"},
        BadDeck{"NanLength", "grid:\n  nx: 64\n  lx: .nan\n", "grid.lx"},
        BadDeck{"BadChoice", "grid: {nx: 64}\nrun:\n  backend: gpu\n", "deck.yaml:3: run.backend: expected one of auto, cuda or cpu, found 'gpu'"},
        BadDeck{"BadPrecision", "grid: {nx: 64}\nrun:\n  precision: half\n", "run.precision"},
        BadDeck{"BadSigma", "grid: {nx: 64}\npoisson:\n  sigma: 0\n", "deck.yaml:3: poisson.sigma"},
        BadDeck{"SectionNotMap", "grid: 64\n", "deck.yaml:1: grid: expected a mapping"},
        BadDeck{"SyntaxError", "grid:\n  nx: [64\n", "YAML syntax error"},
        BadDeck{"NotAMapping", "- 1\n- 2\n", "expected a mapping of sections"},
        BadDeck{"DuplicateKey", "grid:\n  nx: 64\n  nx: 32\n", "deck.yaml:3: grid.nx: duplicate key (first at line 2)"},
        BadDeck{"DuplicateInFlowMap", "grid: {nx: 64, ny: 32, nx: 32}\n", "deck.yaml:1: grid.nx: duplicate key"},
        BadDeck{"SecondDocument", "grid: {nx: 64}\n---\n", "deck.yaml:2: a second YAML document"},
        BadDeck{"EmptyValue", "grid:\n  nx: 64\n  lx:\n", "deck.yaml:3: grid.lx: expected a value, found nothing"},
        BadDeck{"NullVortexValue", "grid: {nx: 64}\ninitial: {type: vortices, vortices: [{x: 1, y: null}]}\n",
                "deck.yaml:2: initial.vortices[0].y: expected a value, found nothing"},
        BadDeck{"HexInteger", "grid:\n  nx: 0x40\n", "grid.nx: expected an integer, found '0x40'"},
        BadDeck{"HexFloat", "grid: {nx: 64}\nphysics:\n  nu: 0x1p-3\n", "deck.yaml:3: physics.nu: expected a number, found '0x1p-3'"},
        BadDeck{"HexLength", "grid: {nx: 64, lx: 0x10}\n", "grid.lx: expected a number or a multiple of pi"},
        BadDeck{"Overflow", "grid: {nx: 64}\nphysics: {nu: 1e400}\n", "physics.nu: expected a number within the range of a double"},
        BadDeck{"OverflowVortex", "grid: {nx: 64}\ninitial: {type: vortices, vortices: [{x: 1e400}]}\n",
                "initial.vortices[0].x: expected a number within the range"},
        BadDeck{"MultiLineKey", "grid: {nx: 64}\nphysics: {\"a\\nb\": 1}\n", "physics.a\\nb: expected a known key"}),
    [](const testing::TestParamInfo<BadDeck>& i) { return std::string(i.param.name); });

TEST(Config, EveryDeckInInputLoads) {
  int decks = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(CASCADE_SOURCE_DIR) + "/input")) {
    if (entry.path().extension() != ".yaml") continue;
    SCOPED_TRACE(entry.path().string());
    EXPECT_NO_THROW(load_deck(entry.path().string()));
    ++decks;
  }
  EXPECT_GE(decks, 1);
}

TEST(Config, MissingFileIsInputError) {
  EXPECT_THROW(load_deck("/nonexistent/deck.yaml"), InputError);
}

std::string load_error(const std::string& path) {
  try {
    load_deck(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// run.step_transforms and run.fft_callbacks: words from one list each, default auto, kept in the
// resolved deck so that a restart makes the same choice.
TEST(Config, StepPlanKeys) {
  const Config d = parse_deck("grid: {nx: 32}\n", "d");
  EXPECT_EQ(d.run.step_transforms, "auto");
  EXPECT_EQ(d.run.fft_callbacks, "auto");
  for (const auto& w : kStepTransforms)
    EXPECT_EQ(parse_deck("grid: {nx: 32}\n", "d", {"run.step_transforms=" + w}).run.step_transforms, w);
  for (const auto& w : kFftCallbacks)
    EXPECT_EQ(parse_deck("grid: {nx: 32}\n", "d", {"run.fft_callbacks=" + w}).run.fft_callbacks, w);
  const Config c = parse_deck("grid: {nx: 32}\nrun: {step_transforms: rows, fft_callbacks: store}\n", "d");
  const std::string resolved = resolved_yaml(c);
  EXPECT_NE(resolved.find("  fft_planning: auto\n  step_transforms: rows\n  fft_callbacks: store\n"), std::string::npos)
      << resolved;
  const Config b = parse_deck(resolved, "resolved");
  EXPECT_EQ(b.run.step_transforms, "rows");
  EXPECT_EQ(b.run.fft_callbacks, "store");
  EXPECT_EQ(error_of("grid: {nx: 32}\nrun: {fft_callbacks: some}\n"),
            "deck.yaml:2: run.fft_callbacks: expected one of auto, off, store or all, found 'some'");
}

// A checkpoint keeps the resolved deck of the version that wrote it, and a restart reads it: the
// resolved deck of input/decaying.yaml as written before run.step_transforms existed reads, and
// resolves to the same text with the keys added since at their defaults.
TEST(Config, EarlierResolvedDecksRead) {
  const std::string earlier =
      "grid:\n"
      "  nx: 256\n"
      "  ny: 256\n"
      "  lx: 6.283185307179586\n"
      "  ly: 6.283185307179586\n"
      "  dealias: two-thirds\n"
      "  nonlinear: basdevant\n"
      "physics:\n"
      "  nu: 0.0005\n"
      "  nu_order: 1\n"
      "  mu: 0\n"
      "  alpha: 0\n"
      "  alpha_order: 1\n"
      "  beta: 0\n"
      "forcing:\n"
      "  type: none\n"
      "  amplitude: 1\n"
      "  wavenumber: 4\n"
      "  epsilon: 1\n"
      "  k_f: 10\n"
      "  dk: 1\n"
      "  seed: 1\n"
      "initial:\n"
      "  type: random\n"
      "  seed: 1\n"
      "  k0: 6\n"
      "  energy: 0.5\n"
      "  amplitude: 1\n"
      "  mode: 1\n"
      "  x0: 3.141592653589793\n"
      "  y0: 3.141592653589793\n"
      "  radius: 0.5\n"
      "  speed: 1\n"
      "  vortices:\n"
      "    []\n"
      "time:\n"
      "  t_end: 20\n"
      "  cfl: 0.5\n"
      "  dt_max: 0.05\n"
      "  dt_min: 1e-10\n"
      "  dt_initial: 0\n"
      "  growth: 1.1\n"
      "  stepper: rk4\n"
      "  max_steps: 0\n"
      "run:\n"
      "  backend: auto\n"
      "  precision: double\n"
      "  device: 0\n"
      "  threads: 0\n"
      "  fft_planning: auto\n"
      "output:\n"
      "  directory: \"output/decaying\"\n"
      "  diagnostics_every: 0.1\n"
      "  snapshot_every: 1\n"
      "  spectra_every: 1\n"
      "  checkpoint_every: 0\n"
      "  checkpoint_wall_seconds: 3600\n"
      "  keep_checkpoints: 2\n"
      "  fields: [vorticity]\n"
      "  print_every: 200\n"
      "poisson:\n"
      "  rhs: gaussian\n"
      "  sigma: 0.1\n"
      "  x0: 3.141592653589793\n"
      "  y0: 3.141592653589793\n"
      "  gauge: corner\n";
  const Config c = parse_deck(earlier, "checkpoint (deck)");
  std::string now = earlier;
  const std::string planning = "  fft_planning: auto\n";
  now.insert(now.find(planning) + planning.size(),
             "  step_transforms: auto\n  fft_callbacks: auto\n  step_graph: auto\n  exchange_chunks: 0\n");
  now += "ensemble:\n  members: 1\n  on_blowup: stop\n";  // one member, no vary
  EXPECT_EQ(resolved_yaml(c), now);
}

// The key reference (input/README.md's tables, `cascade check --keys`) has a row for every key
// the resolved deck holds, under its section.
TEST(Config, KeyReferenceNamesEveryResolvedKey) {
  const std::string reference = deck_key_reference();
  const std::string resolved = resolved_yaml(parse_deck("grid: {nx: 32}\ninitial: {type: file, path: a.h5}\n", "d"));
  std::istringstream lines(resolved);
  std::string line, section;
  int keys = 0;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    const std::string name = line.substr(0, line.find(':'));
    if (line[0] != ' ') {
      section = name;
      EXPECT_NE(reference.find("## " + section + "\n"), std::string::npos) << section;
      continue;
    }
    if (line.rfind("    ", 0) == 0) continue;  // the items of a list
    const std::size_t at = reference.find("## " + section + "\n");
    const std::size_t end = reference.find("\n## ", at + 1);
    const std::string table = reference.substr(at, end == std::string::npos ? std::string::npos : end - at);
    const std::string key = name.substr(name.find_first_not_of(' '));
    EXPECT_NE(table.find("`" + key + "`"), std::string::npos) << section << "." << key;
    ++keys;
  }
  EXPECT_EQ(keys, 64);
}

// Decks that are not small files: one line naming the cause, and no unbounded read.
TEST(Config, DeckReadsAreBounded) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("cascade_deck_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  EXPECT_EQ(load_error(dir.string()), "cannot open deck '" + dir.string() + "': Is a directory");
  EXPECT_EQ(load_error("/dev/zero"), "cannot read deck '/dev/zero': longer than 4 MiB (a deck is a small YAML text file)");
  {
    std::ofstream big(dir / "big.yaml");
    big << "grid: {nx: 32}\n" << std::string(5 << 20, '#') << "\n";
  }
  EXPECT_NE(load_error((dir / "big.yaml").string()).find("longer than 4 MiB"), std::string::npos);
  // A name with a new line (legal on Linux) is shown escaped: still one line.
  const std::string odd = (dir / "a\nb.yaml").string();
  { std::ofstream(odd) << "grid: {nx: 63}\n"; }
  const std::string e = load_error(odd);
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  EXPECT_NE(e.find("a\\nb.yaml:1: grid.nx: expected an even integer"), std::string::npos) << e;
  EXPECT_EQ(load_error(odd + "x"), "cannot open deck '" + dir.string() + "/a\\nb.yamlx': No such file or directory");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace cascade

namespace cascade {

// The deck's table of types (what `cascade check` accepts and input/README.md documents) and the
// types that the solver makes (include/cascade/forcing.hpp, src/physics/initial.hpp) name the same
// words: a word in one list alone is a type the deck accepts and the solver refuses, or the reverse.
TEST(DeckTypes, TheTableAndTheTypesNameTheSameWords) {
  auto sorted = [](std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  std::vector<std::string> forcings, initials;
  type_words<Forcing>(forcings);
  type_words<InitialCondition>(initials);
  EXPECT_EQ(sorted(deck::type_names(deck::forcing_types())), sorted(forcings));
  EXPECT_EQ(sorted(deck::type_names(deck::initial_types())), sorted(initials));
}

// Each forcing type is made from the deck by its own word, and an unknown word is one line.
TEST(DeckTypes, EachWordMakesItsType) {
  const Grid g(64, 64, 2 * M_PI, 2 * M_PI);
  ForcingConfig f;
  f.k_f = 6;
  f.dk = 1;
  for (const char* word : {"none", "kolmogorov", "ring", "ring-steady"}) {
    f.type = word;
    const Forcing made = make_forcing(f, g);
    const bool claims = std::visit(
        [&](const auto& t) {
          for (const char* w : t.kTypes)
            if (std::string(w) == word) return true;
          return false;
        },
        made);
    EXPECT_TRUE(claims) << word;
  }
  EXPECT_TRUE(std::get<RingForcing>(make_forcing([&] { f.type = "ring"; return f; }(), g)).white_noise());
  EXPECT_FALSE(std::get<RingForcing>(make_forcing([&] { f.type = "ring-steady"; return f; }(), g)).white_noise());
  f.type = "spiral";
  try {
    make_forcing(f, g);
    FAIL() << "an unknown forcing was made";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "forcing.type: unknown type 'spiral'");
  }
  // A shell between the modes of the grid holds none: refused when the forcing is made.
  f.type = "ring";
  f.k_f = 1.75;  // |k| = sqrt(2) and 2 lie outside (1.65, 1.85)
  f.dk = 0.1;
  EXPECT_THROW(make_forcing(f, g), InputError);
}

// ---------------------------------------------------------------- the ensemble section (issue 23)

namespace {

//! A deck of `members` members varying physics.nu and initial.energy (block and flow lists).
const char* const kEnsembleDeck =
    "grid: {nx: 32}\n"
    "initial: {type: random, seed: 7, energy: 0.25}\n"
    "forcing: {type: ring, k_f: 6, dk: 1, seed: 11}\n"
    "ensemble:\n"
    "  members: 3\n"
    "  vary:\n"
    "    physics.nu:\n"
    "      - 1e-4\n"
    "      - 2.5e-4\n"
    "      - 0.1\n"
    "    initial.energy: [0.5, 1, 2]\n";

//! The resolved deck without its ensemble section (the last one).
std::string without_ensemble(const Config& c) {
  const std::string r = resolved_yaml(c);
  return r.substr(0, r.find("ensemble:\n"));
}

}  // namespace

TEST(Ensemble, Defaults) {
  const Config c = parse_deck("grid: {nx: 32}\n", "deck.yaml");
  EXPECT_EQ(c.ensemble.members, 1);
  EXPECT_TRUE(c.ensemble.vary.empty());
  const Config e = parse_deck("grid: {nx: 32}\nensemble:\n", "deck.yaml");  // an empty section: the defaults
  EXPECT_EQ(e.ensemble.members, 1);
  EXPECT_TRUE(e.ensemble.vary.empty());
  EXPECT_NE(resolved_yaml(c).find("ensemble:\n  members: 1\n"), std::string::npos);
  EXPECT_EQ(resolved_yaml(c).find("vary"), std::string::npos) << "no vary: left out of the resolved deck";
}

TEST(Ensemble, MembersAndVaryAreRead) {
  const Config c = parse_deck(kEnsembleDeck, "deck.yaml");
  EXPECT_EQ(c.ensemble.members, 3);
  ASSERT_EQ(c.ensemble.vary.size(), 2u);
  EXPECT_EQ(c.ensemble.vary[0].first, "physics.nu");  // the deck's order
  EXPECT_EQ(c.ensemble.vary[0].second, (std::vector<double>{1e-4, 2.5e-4, 0.1}));
  EXPECT_EQ(c.ensemble.vary[1].first, "initial.energy");
  EXPECT_EQ(c.ensemble.vary[1].second, (std::vector<double>{0.5, 1, 2}));
  // A length may be a multiple of pi, as its key reads it; a seed is an integer.
  const Config d = parse_deck("grid: {nx: 32}\ninitial: {type: gaussian}\n"
                              "ensemble: {members: 2, vary: {initial.x0: [pi/2, 1], initial.radius: [0.25, 0.5]}}\n",
                              "d");
  EXPECT_EQ(d.ensemble.vary[0].second[0], M_PI / 2);
  EXPECT_EQ(error_of("grid: {nx: 32}\nensemble: {members: 2, vary: {initial.seed: [1, 2.5]}}\n"),
            "deck.yaml:2: ensemble.vary.initial.seed[1]: expected an integer, found '2.5'");
  EXPECT_EQ(error_of("grid: {nx: 32}\nensemble: {members: 2, vary: {initial.k0: [1, .inf]}}\n"),
            "deck.yaml:2: ensemble.vary.initial.k0[1]: expected a finite number, found '.inf'");
}

TEST(Ensemble, MemberConfig) {
  const Config c = parse_deck(kEnsembleDeck, "deck.yaml");
  for (int b = 0; b < 3; ++b) {
    const Config m = member_config(c, b);
    EXPECT_EQ(m.ensemble.members, 1);
    EXPECT_TRUE(m.ensemble.vary.empty());
    EXPECT_EQ(m.initial.seed, 7 + b);
    EXPECT_EQ(m.forcing.seed, 11 + b);
    EXPECT_EQ(m.physics.nu, c.ensemble.vary[0].second[b]);
    EXPECT_EQ(m.initial.energy, c.ensemble.vary[1].second[b]);
    EXPECT_EQ(m.grid.nx, 32);
    EXPECT_EQ(m.forcing.k_f, 6);
  }
  EXPECT_THROW(member_config(c, 3), std::out_of_range);
  EXPECT_THROW(member_config(c, -1), std::out_of_range);

  // A seed that vary lists is that member's value, not seed + b.
  const Config s = parse_deck("grid: {nx: 32}\ninitial: {seed: 5}\nensemble: {members: 3, vary: {initial.seed: [40, 2, 9]}}\n", "d");
  EXPECT_EQ(member_config(s, 0).initial.seed, 40);
  EXPECT_EQ(member_config(s, 2).initial.seed, 9);
  EXPECT_EQ(member_config(s, 2).forcing.seed, 1 + 2);

  // Member 0 of a deck without vary is the deck itself; the others differ in their seeds alone.
  const Config plain = parse_deck("grid: {nx: 48}\nphysics: {nu: 1e-3}\ninitial: {seed: 3}\nensemble: {members: 4}\n", "d");
  const Config zero = member_config(plain, 0);
  EXPECT_EQ(without_ensemble(zero), without_ensemble(plain));
  EXPECT_EQ(zero.text, plain.text);
  EXPECT_EQ(zero.lines, plain.lines);
  EXPECT_EQ(zero.overrides, plain.overrides);
  Config three = member_config(plain, 3);
  EXPECT_EQ(three.initial.seed, 6);
  three.initial.seed = 3;
  three.forcing.seed = 1;
  EXPECT_EQ(without_ensemble(three), without_ensemble(plain));
  // A member's deck reads as a single run.
  EXPECT_EQ(parse_deck(resolved_yaml(zero), "r").ensemble.members, 1);
}

TEST(Ensemble, WrongLengthList) {
  EXPECT_EQ(error_of("grid: {nx: 32}\nensemble:\n  members: 4\n  vary:\n    physics.nu: [1, 2, 3]\n"),
            "deck.yaml:5: ensemble.vary.physics.nu: expected 4 values, one a member (ensemble.members), found 3 values");
  EXPECT_EQ(error_of("grid: {nx: 32}\nensemble: {members: 2, vary: {physics.nu: 1}}\n"),
            "deck.yaml:2: ensemble.vary.physics.nu: expected a list of values, one a member, found '1'");
}

TEST(Ensemble, UnknownKey) {
  const std::string e = error_of("grid: {nx: 32}\nensemble:\n  members: 2\n  vary:\n    physics.viscosity: [1, 2]\n");
  EXPECT_EQ(e.rfind("deck.yaml:5: ensemble.vary.physics.viscosity: expected a key of the deck that may vary (physics.nu, ", 0), 0u) << e;
  EXPECT_NE(e.find("found unknown key 'physics.viscosity'"), std::string::npos) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos);
  EXPECT_NE(error_of("grid: {nx: 32}\nensemble: {members: 2, size: 3}\n").find("ensemble.size: expected a known key of 'ensemble' (members, on_blowup, vary)"),
            std::string::npos);
  EXPECT_EQ(error_of("grid: {nx: 32}\nensemble: {members: 2, vary: [physics.nu]}\n"),
            "deck.yaml:2: ensemble.vary: expected a mapping of keys to lists (section.key: [one value a member]), found a list");
}

TEST(Ensemble, KeysThatCannotVary) {
  const auto refused = [](const std::string& key) {
    return error_of("grid: {nx: 32}\nensemble: {members: 2, vary: {" + key + ": [1, 2]}}\n");
  };
  EXPECT_EQ(refused("grid.nx"),
            "deck.yaml:2: ensemble.vary.grid.nx: expected a key that may vary within a batch, found grid.nx, which "
            "cannot: one grid for the batch");
  EXPECT_NE(refused("time.dt_max").find("which cannot: the batch shares one device, precision and time step"), std::string::npos);
  EXPECT_NE(refused("run.device").find("which cannot: the batch shares one device, precision and time step"), std::string::npos);
  EXPECT_NE(refused("physics.nu_order").find("which cannot: the batch shares one operator's form"), std::string::npos);
  EXPECT_NE(refused("output.snapshot_every").find("which cannot: one run directory"), std::string::npos);
  EXPECT_NE(refused("initial.mode").find("which cannot: an integer that picks the initial modes"), std::string::npos);
  EXPECT_NE(refused("forcing.wavenumber").find("which cannot: an integer that picks the forced modes"), std::string::npos);
  for (const char* key : {"forcing.type", "initial.type", "initial.path", "initial.vortices", "ensemble.members"})
    EXPECT_NE(refused(key).find("expected a key that may vary within a batch"), std::string::npos) << key;
  // A forcing or initial key its type does not read would make every member the same run.
  EXPECT_EQ(error_of("grid: {nx: 32}\ninitial: {type: taylor-green}\nensemble: {members: 2, vary: {initial.energy: [1, 2]}}\n"),
            "deck.yaml:3: ensemble.vary.initial.energy: expected a key that initial.type taylor-green reads (amplitude, "
            "mode), found initial.energy");
  // Every key of the table may vary or says why not; those that may are numbers of the table.
  for (const auto& k : deck::deck_keys()) {
    const std::string why = deck::fixed_reason(k.path());
    EXPECT_NE(why, "it is not one that may vary") << k.path() << ": give it its reason";
    if (why.empty()) EXPECT_TRUE(k.assign) << k.path();
  }
  for (const auto& path : deck::vary_keys()) EXPECT_NE(deck::find_key(path), nullptr) << path;
}

TEST(Ensemble, ValuesPassTheirKeysChecks) {
  // The key's own check (physics.nu >= 0), at the entry's line in a block list.
  EXPECT_EQ(error_of("grid: {nx: 32}\nensemble:\n  members: 3\n  vary:\n    physics.nu:\n      - 1e-4\n      - 2e-4\n"
                     "      - -1\n"),
            "deck.yaml:8: ensemble.vary.physics.nu[2]: expected a finite value >= 0, found -1");
  // The seeds' (integer >= 0), and those of the type that reads the key (initial.energy > 0).
  EXPECT_EQ(error_of("grid: {nx: 32}\nensemble: {members: 2, vary: {forcing.seed: [-3, 1]}}\nforcing: {type: ring, k_f: 6}\n"),
            "deck.yaml:2: ensemble.vary.forcing.seed[0]: expected an integer >= 0, found -3");
  EXPECT_EQ(error_of("grid: {nx: 32}\nensemble: {members: 2, vary: {initial.energy: [1, 0]}}\n"),
            "deck.yaml:2: ensemble.vary.initial.energy[1]: expected a positive energy, found 0");
  // A check that joins keys names the member: dk < k_f for member 1.
  EXPECT_EQ(error_of("grid: {nx: 32}\nforcing: {type: ring, k_f: 6, dk: 1}\nensemble: {members: 2, vary: {forcing.k_f: [6, 0.5]}}\n"),
            "deck.yaml:2: forcing.dk (ensemble member 1): expected a half-width in (0, k_f), found 1");
  // Seed + b must stay within 32 bits for every member.
  EXPECT_EQ(error_of("grid: {nx: 32}\ninitial: {seed: 2147483646}\nensemble: {members: 3}\n"),
            "deck.yaml:2: initial.seed: expected a seed whose members' seeds, seed + 0 to seed + 2, fit in 32 bits, "
            "found 2147483646");
  EXPECT_NO_THROW(parse_deck("grid: {nx: 32}\ninitial: {seed: 2147483646}\nensemble: {members: 2}\n", "d"));
  EXPECT_EQ(error_of("grid: {nx: 32}\nensemble: {members: 0}\n"),
            "deck.yaml:2: ensemble.members: expected an integer in [1, 65535], found 0");
  EXPECT_EQ(error_of("grid: {nx: 32}\nensemble: {members: 65536}\n"),
            "deck.yaml:2: ensemble.members: expected an integer in [1, 65535], found 65536");
}

TEST(Ensemble, ResolvedDeckRoundTrips) {
  const Config a = parse_deck(
      "grid: {nx: 32}\ninitial: {type: gaussian}\nforcing: {type: ring, k_f: 6}\nensemble:\n  members: 4\n"
      "  vary:\n"
      "    physics.nu: [0.1, 1e-310, 3.0000000000000004e-5, 1e20]\n    forcing.seed: [1000000000, 0, 2147483647, 5]\n"
      "    initial.x0: [2pi, pi/3, 0.1, 1]\n",
      "d");
  const std::string resolved = resolved_yaml(a);
  const Config b = parse_deck(resolved, "resolved");
  EXPECT_EQ(b.ensemble.members, a.ensemble.members);
  EXPECT_EQ(b.ensemble.vary, a.ensemble.vary);  // bit for bit
  EXPECT_EQ(resolved_yaml(b), resolved);
  EXPECT_NE(resolved.find("    forcing.seed: [1000000000, 0, 2147483647, 5]\n"), std::string::npos) << resolved;
  // Without the section: one member.
  EXPECT_EQ(parse_deck(resolved_yaml(parse_deck("grid: {nx: 32}\n", "d")), "r").ensemble.members, 1);
}

TEST(Ensemble, Overrides) {
  const Config c = parse_deck("grid: {nx: 32}\n", "deck.yaml", {"ensemble.members=4"});
  EXPECT_EQ(c.ensemble.members, 4);
  EXPECT_EQ(c.ensemble.on_blowup, "stop");
  EXPECT_EQ(parse_deck("grid: {nx: 32}\n", "deck.yaml", {"ensemble.on_blowup=drop"}).ensemble.on_blowup, "drop");
  EXPECT_EQ(error_of("grid: {nx: 32}\nensemble: {on_blowup: retry}\n"),
            "deck.yaml:2: ensemble.on_blowup: expected one of stop or drop, found 'retry'");
  EXPECT_EQ(member_config(c, 3).initial.seed, 4);
  EXPECT_EQ(error_of("grid: {nx: 32}\n", {"ensemble.members=0"}),
            "deck.yaml: --set ensemble.members: expected an integer in [1, 65535], found 0");
  // A vary list must follow members as --set gives it.
  EXPECT_EQ(error_of(kEnsembleDeck, {"ensemble.members=2"}),
            "deck.yaml:7: ensemble.vary.physics.nu: expected 2 values, one a member (ensemble.members), found 3 values");
  for (const char* set : {"ensemble.vary.physics.nu=[1, 2, 3]", "ensemble.vary={physics.nu: [1, 2, 3]}"}) {
    const std::string e = error_of(kEnsembleDeck, {set});
    EXPECT_EQ(e.rfind("deck.yaml: --set ensemble.vary", 0), 0u) << e;
    EXPECT_NE(e.find("expected a key --set can give (ensemble.vary's lists, one value a member, are written in the deck)"),
              std::string::npos) << e;
  }
  // An override of a key that vary lists is that of the deck, which the members' values replace.
  EXPECT_EQ(member_config(parse_deck(kEnsembleDeck, "d", {"physics.nu=7"}), 1).physics.nu, 2.5e-4);
}

}  // namespace cascade
