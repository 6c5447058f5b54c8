//! @file Deck reader: defaults, pi lengths, overrides, the resolved deck, and one-line errors
//! that name file, line and key.
#include <gtest/gtest.h>

#include <filesystem>

#include "cascade/config.hpp"
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
  const Config a = parse_deck("grid: {nx: 48, ny: 32, lx: 2pi, ly: 3}\nrun: {backend: cpu, precision: single}\n"
                              "poisson: {sigma: 0.3, gauge: zero-mean}\noutput: {directory: out}\n",
                              "d");
  const Config b = parse_deck(resolved_yaml(a), "resolved");
  EXPECT_EQ(resolved_yaml(a), resolved_yaml(b));
  EXPECT_EQ(b.grid.ny, 32);
  EXPECT_DOUBLE_EQ(b.grid.lx, a.grid.lx);  // 17 digits survive the round trip
  EXPECT_EQ(b.run.precision, Precision::Single);
  EXPECT_EQ(b.poisson.gauge, "zero-mean");
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
        BadDeck{"NotAMapping", "- 1\n- 2\n", "expected a mapping of sections"}),
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

}  // namespace
}  // namespace cascade
