//! @file plan_step as a value: auto reproduces the choices the GPU and CPU backends made before
//! the plan was data (the CASCADE_FFT_* variables unset), and the deck's requests are taken as
//! asked or refused with one line; step_traffic counts the bytes of the passes a plan makes. No
//! device needed.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "cascade/error.hpp"
#include "cascade/step_plan.hpp"

namespace cascade {
namespace {

using S = StepStrategy;
using L = CallbackLevel;
using Kind = StepDevice::Kind;

//! An H100-like GPU: the row kernel fits (up to 2^13 points, 139 KiB in double), the column
//! kernel's tiles split over pairs of blocks (clusters), 60 GiB free, a complex plan's work area
//! twice the real one's.
StepDevice gpu(std::size_t free_bytes = std::size_t(60) << 30) {
  StepDevice d;
  d.kind = Kind::Cuda;
  d.row_shared_bytes = std::size_t(139) << 10;
  d.column_shared_bytes = std::size_t(34) << 10;  // a tile of one column of 2048 points, one field, in double
  d.column_pairs = true;
  d.shared_optin_bytes = 227 << 10;
  d.free_bytes = free_bytes;
  d.work_bytes = std::size_t(4) << 30;
  d.complex_work_bytes = std::size_t(8) << 30;
  return d;
}
//! An A100-like GPU: no clusters, so no pairs of blocks; columns up to 4096 points in double.
StepDevice no_pairs(std::size_t free_bytes = std::size_t(60) << 30) {
  StepDevice d = gpu(free_bytes);
  d.column_pairs = false;
  d.column_shared_bytes = std::size_t(68) << 10;  // both fields' column of 2048 points in double
  d.shared_optin_bytes = 163 << 10;
  return d;
}
StepDevice cpu() { return {}; }
StepDevice slabs() {
  StepDevice d;
  d.kind = Kind::Slabs;
  return d;
}

StepProblem problem(int nx, int ny, Precision p, StepDevice d, bool basdevant = true, bool two_thirds = true) {
  return {nx, ny, p, basdevant, two_thirds, d};
}
StepPlan plan(S s, L l, bool batched) { return {s, l, batched, ""}; }

struct AutoCase {
  StepProblem problem;
  StepPlan expected;
};

constexpr Precision D = Precision::Double, F = Precision::Single;

// Each row: what the choose_* methods of the GPU backend (and prepare_rows of the CPU one) chose
// before the plan was data, with no CASCADE_FFT_* variable set, and what measurements changed since
// (rows and columns for small grids, and for large grids in double where blocks pair).
const AutoCase kAuto[] = {
    // GPU, Basdevant, 2/3: the row kernel from nx = 1024 to 8192, in both precisions.
    // Below, rows and columns from 128^2 to 256^2 (512^2 in double); the plain transforms
    // around them.
    {problem(64, 64, D, gpu()), plan(S::Plain, L::Off, true)},
    {problem(128, 128, D, gpu()), plan(S::RowsColumns, L::Off, false)},
    {problem(256, 256, D, gpu()), plan(S::RowsColumns, L::Off, false)},
    {problem(512, 512, D, gpu()), plan(S::RowsColumns, L::Off, false)},
    {problem(512, 256, D, gpu()), plan(S::RowsColumns, L::Off, false)},
    {problem(128, 128, F, gpu()), plan(S::RowsColumns, L::Off, false)},
    {problem(256, 256, F, gpu()), plan(S::RowsColumns, L::Off, false)},
    {problem(512, 512, F, gpu()), plan(S::Plain, L::Off, true)},
    {problem(256, 256, D, gpu(), false), plan(S::Plain, L::Off, true)},
    {problem(256, 256, D, gpu(), true, false), plan(S::Plain, L::Off, true)},
    {problem(256, 192, D, gpu()), plan(S::Plain, L::Off, true)},
    // One grid from 2048^2 to 8192^2 (each side; to 16384 in double), rows and columns where the
    // column kernel's tiles split over pairs of blocks; else the row kernel.
    {problem(1024, 1024, D, gpu()), plan(S::Rows, L::Off, false)},
    {problem(2048, 2048, D, gpu()), plan(S::RowsColumns, L::Off, false)},
    {problem(4096, 4096, D, gpu()), plan(S::RowsColumns, L::Off, false)},
    {problem(8192, 8192, D, gpu()), plan(S::RowsColumns, L::Off, false)},
    {problem(8192, 2048, D, gpu()), plan(S::RowsColumns, L::Off, false)},
    {problem(2048, 1024, D, gpu()), plan(S::Rows, L::Off, false)},
    {problem(2048, 2048, D, no_pairs()), plan(S::Rows, L::Off, false)},
    {problem(4096, 4096, D, no_pairs()), plan(S::Rows, L::Off, false)},
    {problem(8192, 8192, D, no_pairs()), plan(S::Rows, L::Off, false)},
    {problem(2048, 2048, F, gpu()), plan(S::RowsColumns, L::Off, false)},
    {problem(2048, 2048, F, no_pairs()), plan(S::Rows, L::Off, false)},
    {problem(16384, 16384, D, gpu()), plan(S::RowsColumns, L::Off, false)},
    {problem(16384, 2048, D, gpu()), plan(S::RowsColumns, L::Off, false)},
    {problem(16384, 16384, D, no_pairs()), plan(S::ComplexPairs, L::All, false)},
    {problem(32768, 32768, D, gpu()), plan(S::ComplexPairs, L::All, false)},
    {problem(1024, 1024, F, gpu()), plan(S::Rows, L::Off, false)},
    {problem(4096, 4096, F, gpu()), plan(S::RowsColumns, L::Off, false)},
    {problem(8192, 8192, F, gpu()), plan(S::RowsColumns, L::Off, false)},
    {problem(8192, 2048, F, gpu()), plan(S::RowsColumns, L::Off, false)},
    {problem(8192, 8192, F, no_pairs()), plan(S::Rows, L::Off, false)},
    {problem(16384, 16384, F, gpu()), plan(S::Plain, L::Off, false)},
    // nx decides the row kernel, points the rest (where the columns cannot pair: else rows and
    // columns, up to 16384 a side in double).
    {problem(8192, 16384, D, no_pairs()), plan(S::Rows, L::Off, false)},
    {problem(8192, 16384, D, gpu()), plan(S::RowsColumns, L::Off, false)},
    {problem(16384, 1024, D, gpu()), plan(S::Pruned, L::Off, true)},
    {problem(16384, 4096, D, no_pairs()), plan(S::Plain, L::All, false)},
    {problem(8192, 4096, D, gpu(), false), plan(S::Plain, L::Store, false)},
    {problem(512, 8192, D, gpu()), plan(S::Pruned, L::Off, true)},
    // Where the complex plan's work area does not fit: the real transforms with callbacks.
    {problem(16384, 16384, D, no_pairs(std::size_t(1) << 30)), plan(S::Plain, L::All, false)},
    // nx not a power of two: no row kernel.
    {problem(3072, 3072, D, gpu()), plan(S::Pruned, L::Off, true)},
    {problem(1536, 1536, D, gpu()), plan(S::Plain, L::Off, true)},
    {problem(2560, 2560, F, gpu()), plan(S::Pruned, L::Off, true)},
    {problem(6144, 6144, F, gpu()), plan(S::Pruned, L::Off, false)},
    // The advective form: no row kernel, no complex pairs; pruned where the size says.
    {problem(1024, 1024, D, gpu(), false), plan(S::Plain, L::Off, true)},
    {problem(2048, 2048, D, gpu(), false), plan(S::Pruned, L::Off, true)},
    {problem(4096, 4096, D, gpu(), false), plan(S::Pruned, L::Off, true)},
    {problem(8192, 8192, D, gpu(), false), plan(S::Plain, L::All, false)},
    {problem(16384, 16384, D, gpu(), false), plan(S::Plain, L::All, false)},
    {problem(4096, 4096, F, gpu(), false), plan(S::Pruned, L::Off, true)},
    {problem(8192, 8192, F, gpu(), false), plan(S::Pruned, L::Off, false)},
    {problem(16384, 16384, F, gpu(), false), plan(S::Plain, L::Off, false)},
    // No dealiasing: neither rows nor pruning; callbacks by size.
    {problem(2048, 2048, D, gpu(), true, false), plan(S::Plain, L::Off, true)},
    {problem(4096, 4096, D, gpu(), true, false), plan(S::Plain, L::Store, true)},
    {problem(8192, 8192, D, gpu(), true, false), plan(S::Plain, L::All, false)},
    {problem(16384, 16384, D, gpu(), true, false), plan(S::ComplexPairs, L::All, false)},
    {problem(4096, 4096, F, gpu(), true, false), plan(S::Plain, L::Off, true)},
    // A GPU whose blocks cannot hold a row: no row kernel.
    {problem(8192, 8192, D, [] { StepDevice d = gpu(); d.shared_optin_bytes = 48 << 10; return d; }()),
     plan(S::Plain, L::All, false)},
    // CPU: row by row from 256^2 points under the 2/3 rule.
    {problem(128, 128, D, cpu()), plan(S::Plain, L::Off, false)},
    {problem(256, 256, D, cpu()), plan(S::CpuRows, L::Off, false)},
    {problem(1024, 1024, F, cpu(), false), plan(S::CpuRows, L::Off, false)},
    {problem(1024, 1024, D, cpu(), true, false), plan(S::Plain, L::Off, false)},
    // Several MPI ranks: the slab transforms.
    {problem(1024, 1024, D, slabs()), plan(S::Slabs, L::Off, false)},
};

TEST(StepPlan, AutoReproducesTheChoicesOfTheVariables) {
  for (const AutoCase& c : kAuto) {
    const StepPlan p = plan_step(c.problem, {});
    EXPECT_EQ(p, c.expected) << c.problem.nx << " x " << c.problem.ny << " "
                             << (c.problem.precision == D ? "double" : "single") << ": " << describe(p);
    EXPECT_EQ(p.why.rfind("auto, ", 0), 0u) << p.why;
  }
}

TEST(StepPlan, DeckValuesMakeRequests) {
  using T = StepRequest::Transforms;
  using B = StepRequest::Batching;
  using C = StepRequest::Callbacks;
  const struct {
    const char* transforms;
    T t;
    B b;
  } values[] = {{"auto", T::Auto, B::Auto},         {"plain", T::Plain, B::Off},
                {"plain-pairs", T::Plain, B::On},   {"pruned", T::Pruned, B::Off},
                {"pruned-pairs", T::Pruned, B::On}, {"rows", T::Rows, B::Off},
                {"complex-pairs", T::ComplexPairs, B::Off}, {"rows-columns", T::RowsColumns, B::Off}};
  for (const auto& v : values) {
    const StepRequest r = step_request_from(v.transforms, "store");
    EXPECT_EQ(r.transforms, v.t) << v.transforms;
    EXPECT_EQ(r.batching, v.b) << v.transforms;
    EXPECT_EQ(r.callbacks, C::Store);
    EXPECT_EQ(to_string(r.transforms, r.batching), v.transforms);
  }
  for (const char* c : {"auto", "off", "store", "all"}) EXPECT_EQ(to_string(step_request_from("auto", c).callbacks), c);
  EXPECT_THROW(step_request_from("sideways", "auto"), InputError);
  EXPECT_THROW(step_request_from("auto", "on"), InputError);
}

//! Every strategy through the request, as the GPU agreement tests select them.
TEST(StepPlan, NamedStrategiesAreTakenAsAsked) {
  const StepProblem p = problem(256, 256, D, gpu());
  for (const char* level : {"off", "store", "all"}) {
    const L l = std::string(level) == "off" ? L::Off : std::string(level) == "store" ? L::Store : L::All;
    EXPECT_EQ(plan_step(p, step_request_from("plain", level)), plan(S::Plain, l, false));
    EXPECT_EQ(plan_step(p, step_request_from("plain-pairs", level)), plan(S::Plain, l, true));
    EXPECT_EQ(plan_step(p, step_request_from("pruned", level)), plan(S::Pruned, l, false));
    EXPECT_EQ(plan_step(p, step_request_from("pruned-pairs", level)), plan(S::Pruned, l, true));
    EXPECT_EQ(plan_step(p, step_request_from("rows", level)), plan(S::Rows, l, false));
    EXPECT_EQ(plan_step(p, step_request_from("complex-pairs", level)), plan(S::ComplexPairs, l, false));
  }
  // Rows and columns run no cuFFT transform: no callbacks, whatever the size.
  EXPECT_EQ(plan_step(p, step_request_from("rows-columns", "off")), plan(S::RowsColumns, L::Off, false));
  EXPECT_EQ(plan_step(problem(8192, 8192, D, gpu()), step_request_from("rows-columns", "auto")),
            plan(S::RowsColumns, L::Off, false));
  // A named strategy with callbacks auto: the table's level for it at this size.
  const StepProblem big = problem(8192, 8192, D, gpu());
  EXPECT_EQ(plan_step(big, step_request_from("plain", "auto")), plan(S::Plain, L::All, false));
  EXPECT_EQ(plan_step(big, step_request_from("complex-pairs", "auto")), plan(S::ComplexPairs, L::All, false));
  EXPECT_EQ(plan_step(big, step_request_from("pruned", "auto")), plan(S::Pruned, L::Off, false));
  // Complex pairs asked for skip the memory estimate; the row kernel in parts above nx = 8192.
  EXPECT_EQ(plan_step(problem(16384, 16384, D, gpu(1 << 20)), step_request_from("complex-pairs", "off")),
            plan(S::ComplexPairs, L::Off, false));
  EXPECT_EQ(plan_step(problem(16384, 16384, F, gpu()), step_request_from("rows", "auto")), plan(S::Rows, L::Off, false));
  // Callbacks alone: the strategy stays auto's.
  EXPECT_EQ(plan_step(problem(4096, 4096, D, gpu()), step_request_from("auto", "store")), plan(S::Rows, L::Store, false));
  EXPECT_EQ(plan_step(problem(4096, 4096, D, gpu()), step_request_from("auto", "off")), plan(S::RowsColumns, L::Off, false));
  EXPECT_EQ(plan_step(problem(512, 512, D, gpu()), step_request_from("auto", "off")), plan(S::RowsColumns, L::Off, false));
  // Callbacks asked for where auto would take rows and columns: the table's plan, which takes them.
  EXPECT_EQ(plan_step(problem(256, 256, D, gpu()), step_request_from("auto", "store")), plan(S::Plain, L::Store, true));
  // Batching left auto with a named strategy (`cascade bench step --callbacks off`): the table's.
  StepRequest unpruned{StepRequest::Transforms::Plain, StepRequest::Batching::Auto, StepRequest::Callbacks::Off};
  EXPECT_EQ(plan_step(problem(2048, 2048, D, gpu()), unpruned), plan(S::Plain, L::Off, true));
  EXPECT_EQ(plan_step(problem(8192, 8192, D, gpu()), unpruned), plan(S::Plain, L::Off, false));
  // The CPU and the slabs.
  EXPECT_EQ(plan_step(problem(64, 64, D, cpu()), step_request_from("rows", "off")), plan(S::CpuRows, L::Off, false));
  EXPECT_EQ(plan_step(problem(1024, 1024, D, cpu()), step_request_from("plain", "auto")), plan(S::Plain, L::Off, false));
  EXPECT_EQ(plan_step(problem(1024, 1024, D, cpu(), false), step_request_from("rows", "auto")),
            plan(S::CpuRows, L::Off, false));
  EXPECT_EQ(plan_step(problem(64, 64, D, slabs()), step_request_from("plain", "off")), plan(S::Slabs, L::Off, false));
}

//! What cannot run is refused, one line naming the key.
TEST(StepPlan, ImpossibleRequestsAreRefused) {
  const struct {
    StepProblem problem;
    const char* transforms;
    const char* callbacks;
    const char* message;
  } cases[] = {
      {problem(256, 256, D, gpu(), false), "rows", "auto", "run.step_transforms: rows needs grid.nonlinear: basdevant"},
      {problem(256, 256, D, gpu(), true, false), "rows", "auto", "run.step_transforms: rows needs grid.dealias: two-thirds"},
      {problem(96, 96, D, gpu()), "rows", "auto", "run.step_transforms: rows needs nx a power of two from 16 to 65536"},
      {problem(8, 8, D, gpu()), "rows", "auto", "run.step_transforms: rows needs nx a power of two from 16 to 65536"},
      {problem(256, 256, D, gpu(), true, false), "pruned-pairs", "off",
       "run.step_transforms: pruned-pairs needs grid.dealias: two-thirds"},
      {problem(256, 256, D, gpu(), false), "complex-pairs", "auto",
       "run.step_transforms: complex-pairs needs grid.nonlinear: basdevant"},
      {problem(256, 256, D, cpu()), "pruned", "auto", "run.step_transforms: pruned needs the cuda backend on one GPU"},
      {problem(256, 256, D, cpu()), "complex-pairs", "auto",
       "run.step_transforms: complex-pairs needs the cuda backend on one GPU"},
      {problem(256, 256, D, cpu(), true, false), "rows", "auto", "run.step_transforms: rows needs grid.dealias: two-thirds"},
      {problem(256, 256, D, cpu()), "auto", "store", "run.fft_callbacks: store needs the cuda backend on one GPU"},
      {problem(256, 256, D, slabs()), "rows", "auto", "run.step_transforms: rows needs the cuda backend on one GPU"},
      {problem(256, 256, D, slabs()), "auto", "all", "run.fft_callbacks: all needs the cuda backend on one GPU"},
      {problem(256, 256, D, gpu(), false), "rows-columns", "auto",
       "run.step_transforms: rows-columns needs grid.nonlinear: basdevant"},
      {problem(256, 256, D, gpu(), true, false), "rows-columns", "auto",
       "run.step_transforms: rows-columns needs grid.dealias: two-thirds"},
      {problem(256, 96, D, gpu()), "rows-columns", "auto",
       "run.step_transforms: rows-columns needs ny a power of two from 16 to 65536"},
      {problem(96, 256, D, gpu()), "rows-columns", "auto",
       "run.step_transforms: rows-columns needs nx a power of two from 16 to 65536"},
      {problem(256, 256, D, cpu()), "rows-columns", "auto",
       "run.step_transforms: rows-columns needs the cuda backend on one GPU"},
      {problem(32768, 32768, D,
               [] {
                 StepDevice d = gpu();
                 d.column_shared_bytes = std::size_t(544) << 10;  // 32768 points of one field in double
                 return d;
               }()),
       "rows-columns", "auto",
       "run.step_transforms: rows-columns needs a column of ny points in a block's shared memory (one field's, or "
       "half of one over four blocks: ny up to 16384 on an H100; both fields' below compute capability 9.0)"},
      {problem(256, 256, D, gpu()), "rows-columns", "store",
       "run.fft_callbacks: store has no cuFFT transform to go in (rows and columns run none)"},
  };
  for (const auto& c : cases) {
    try {
      const StepPlan p = plan_step(c.problem, step_request_from(c.transforms, c.callbacks));
      ADD_FAILURE() << c.transforms << " / " << c.callbacks << ": not refused: " << describe(p);
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()), c.message);
    }
  }
  // Batched pairs with a strategy that has none.
  StepRequest r{StepRequest::Transforms::Rows, StepRequest::Batching::On, StepRequest::Callbacks::Auto};
  EXPECT_THROW(plan_step(problem(256, 256, D, gpu()), r), InputError);
}

//! An ensemble's batch runs the plain transforms or complex pairs, with the callbacks and pairs
//! the table gives a grid of all its members' points; the strategies whose passes have one
//! field's layout built in are refused.
TEST(StepPlan, EnsemblesRunPlainTransformsSizedByTheBatch) {
  const auto batch = [](int n, int members, Precision p, StepDevice d) {
    StepProblem b = problem(n, n, p, d);
    b.members = members;
    return b;
  };
  const StepRequest automatic;
  // On a GPU in Basdevant's form, members up to 256^2 (512^2 in double) from 1024^2 points in
  // all, and in double from 128^2 a member at any batch, rows and columns; else complex pairs
  // with the plain row's callbacks.
  EXPECT_EQ(plan_step(batch(256, 16, D, gpu()), automatic), plan(S::RowsColumns, L::Off, false));
  EXPECT_EQ(plan_step(batch(128, 1024, F, gpu()), automatic), plan(S::RowsColumns, L::Off, false));
  EXPECT_EQ(plan_step(batch(256, 4096, D, gpu()), automatic), plan(S::RowsColumns, L::Off, false));  // 16384^2 points
  EXPECT_EQ(plan_step(batch(512, 16, D, gpu()), automatic), plan(S::RowsColumns, L::Off, false));    // double: to 512^2
  EXPECT_EQ(plan_step(batch(512, 64, F, gpu()), automatic), plan(S::ComplexPairs, L::Off, false));   // single: to 256^2
  EXPECT_EQ(plan_step(batch(1024, 64, D, gpu()), automatic), plan(S::ComplexPairs, L::All, false));  // 8192^2 points
  EXPECT_EQ(plan_step(batch(2048, 64, D, gpu()), automatic), plan(S::ComplexPairs, L::All, false));   // 16384^2
  EXPECT_EQ(plan_step(batch(128, 16, D, gpu()), automatic), plan(S::RowsColumns, L::Off, false));   // 512^2 points
  EXPECT_EQ(plan_step(batch(256, 4, D, gpu()), automatic), plan(S::RowsColumns, L::Off, false));
  EXPECT_EQ(plan_step(batch(256, 4, F, gpu()), automatic), plan(S::ComplexPairs, L::Off, false));  // single: from 1024^2
  EXPECT_EQ(plan_step(batch(128, 64, F, gpu()), automatic), plan(S::RowsColumns, L::Off, false));
  EXPECT_EQ(plan_step(batch(64, 256, D, gpu()), automatic), plan(S::RowsColumns, L::Off, false));    // 1024^2 points
  EXPECT_EQ(plan_step(batch(64, 64, D, gpu()), automatic), plan(S::ComplexPairs, L::Off, false));    // 512^2 points
  EXPECT_EQ(plan_step(batch(128, 64, D, gpu()), automatic), plan(S::RowsColumns, L::Off, false));   // 1024^2 points
  StepProblem odd = batch(256, 16, D, gpu());
  odd.ny = 192;  // the column kernel needs powers of two
  EXPECT_EQ(plan_step(odd, automatic).strategy, S::ComplexPairs);
  EXPECT_EQ(plan_step(batch(1024, 4, F, gpu()), automatic), plan(S::ComplexPairs, L::Off, false));    // not the row kernel
  EXPECT_EQ(plan_step(batch(512, 8, D, cpu()), automatic), plan(S::Plain, L::Off, false));            // not by rows
  StepProblem advective = batch(256, 256, D, gpu());
  advective.basdevant = false;  // complex pairs carry Basdevant's products alone
  EXPECT_EQ(plan_step(advective, automatic), plan(S::Plain, L::Store, true));
  EXPECT_EQ(plan_step(batch(256, 4, D, gpu()), step_request_from("complex-pairs", "all")).strategy, S::ComplexPairs);
  EXPECT_EQ(plan_step(batch(256, 4, D, gpu()), step_request_from("rows-columns", "off")).strategy, S::RowsColumns);
  for (const char* t : {"pruned", "rows"}) {
    try {
      plan_step(batch(256, 4, D, gpu()), step_request_from(t, "auto"));
      ADD_FAILURE() << t << ": not refused";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()), std::string("run.step_transforms: ") + t +
                                           " cannot batch the members of an ensemble (ensemble.members > 1 runs the "
                                           "plain transforms, complex pairs or rows and columns)");
    }
  }
}

TEST(StepPlan, DescribeSaysStrategyLevelAndWhy) {
  const StepPlan p = plan_step(problem(2048, 2048, D, gpu(), false), {});
  EXPECT_EQ(describe(p), "pruned, batched pairs, callbacks off (auto, 2048^2 to 4096^2 points in double)");
  EXPECT_EQ(describe(plan_step(problem(256, 256, D, cpu()), step_request_from("rows", "off"))),
            "pruned, row by row (run.step_transforms: rows, run.fft_callbacks: off)");
}

// ---------------------------------------------------------------- step_traffic

// Hand counts, double (complex 16 bytes) unless said. Under the 2/3 rule at N = 1024: kept
// columns 342 (band 341), kept rows 683, so a half spectrum H = 1024 * 513 * 16 = 8404992
// bytes, its kept columns C = 1024 * 342 * 16 = 5603328, its kept modes K = 342 * 683 * 16 =
// 3737376, a real field R = 1024^2 * 8 = 8388608. rk4 is classic (W), 4 stages: the fused
// stages read a, b, S and write S (4K a stage), W is written in stage 0 and read in stages 1
// and 2 (3K), and the next inputs are written (2H, or 2K with loads): 4 (4K + 2H) + 3K.

TEST(StepTraffic, RowsAt1024DoubleRk4) {
  const StepTraffic t = step_traffic(problem(1024, 1024, D, gpu()), plan(S::Rows, L::Off, false), 4, true);
  // A stage: the column passes of a, b each way read and write C (8C), the row kernel reads
  // and writes a, b's kept columns (4C).
  EXPECT_EQ(t.transforms, 4 * 8 * 5603328.0);
  EXPECT_EQ(t.products, 4 * 4 * 5603328.0);
  EXPECT_EQ(t.cfl, 0.0);
  EXPECT_EQ(t.stages, 4 * (4 * 3737376.0 + 2 * 8404992.0) + 3 * 3737376.0);
  EXPECT_EQ(t.budget, 0.0);
  EXPECT_EQ(t.total(), 407209824.0);
}

TEST(StepTraffic, RowsAndColumnsAt1024DoubleRk4) {
  // C = 1024 * 342 * 16 = 5603328 bytes (kept columns), K = 342 * 683 * 16 = 3737376 (kept
  // modes). A stage: the row kernel reads and writes 2C, the column kernel reads the products'
  // 2C and writes the inputs' 2C; the stage inside reads and writes S at the kept modes (2K),
  // and W (written in stage 0, read in 1 and 2): 3K a step.
  const StepTraffic t = step_traffic(problem(1024, 1024, D, gpu()), plan(S::RowsColumns, L::Off, false), 4, true);
  EXPECT_EQ(t.transforms, 4 * 4 * 5603328.0);
  EXPECT_EQ(t.products, 4 * 4 * 5603328.0);
  EXPECT_EQ(t.cfl, 0.0);
  EXPECT_EQ(t.stages, 4 * 2 * 3737376.0 + 3 * 3737376.0);
  EXPECT_EQ(t.total(), 220417632.0);
  // Half the row products' (the cuFFT column passes and the stage's reads of the spectra gone).
  EXPECT_LT(t.total(), 0.6 * step_traffic(problem(1024, 1024, D, gpu()), plan(S::Rows, L::Off, false), 4, true).total());
}

TEST(StepTraffic, PlainAt1024DoubleRk4WithAndWithoutCallbacks) {
  const StepProblem p = problem(1024, 1024, D, gpu());
  // Off: an inverse reads and writes H (columns), reads H and writes R (rows); a forward the
  // reverse: 3H + R each, two of each a stage. The product kernel: 4R.
  const StepTraffic off = step_traffic(p, plan(S::Plain, L::Off, true), 4, true);
  EXPECT_EQ(off.transforms, 4 * 4 * (3 * 8404992.0 + 8388608.0));
  EXPECT_EQ(off.products, 4 * 4 * 8388608.0);
  EXPECT_EQ(off.stages, 4 * (4 * 3737376.0 + 2 * 8404992.0) + 3 * 3737376.0);
  EXPECT_EQ(off.total(), 810125152.0);
  // Store: each forward's column pass writes K in place of H.
  const StepTraffic store = step_traffic(p, plan(S::Plain, L::Store, true), 4, true);
  EXPECT_EQ(off.transforms - store.transforms, 4 * 2 * (8404992.0 - 3737376.0));
  EXPECT_EQ(store.stages, off.stages);
  // All: each inverse's column pass reads K too, and the stages write 2K of inputs, not 2H.
  const StepTraffic all = step_traffic(p, plan(S::Plain, L::All, false), 4, true);
  EXPECT_EQ(all.transforms,
            4 * (2 * (3737376.0 + 2 * 8404992.0 + 8388608.0) + 2 * (8388608.0 + 2 * 8404992.0 + 3737376.0)));
  EXPECT_EQ(all.stages, 4 * 6 * 3737376.0 + 3 * 3737376.0);
  EXPECT_EQ(all.total(), 698102368.0);
}

TEST(StepTraffic, PrunedAt2048SingleRk4) {
  // Single (complex 8 bytes): H = 2048 * 1025 * 8 = 16793600, C = 2048 * 683 * 8 = 11190272,
  // K = 683 * 1365 * 8 = 7458360, R = 2048^2 * 4 = 16777216. An inverse: the kept columns in
  // place (2C), then the rows (H + R); a forward the reverse.
  const StepTraffic t = step_traffic(problem(2048, 2048, F, gpu()), plan(S::Pruned, L::Off, true), 4, true);
  EXPECT_EQ(t.transforms, 4 * 4 * (2 * 11190272.0 + 16793600.0 + 16777216.0));
  EXPECT_EQ(t.products, 4 * 4 * 16777216.0);
  EXPECT_EQ(t.stages, 4 * (4 * 7458360.0 + 2 * 16793600.0) + 3 * 7458360.0);
  EXPECT_EQ(t.total(), 1439714856.0);
}

TEST(StepTraffic, ComplexPairsAt16384DoubleRk4) {
  // A whole complex field Z = 16384^2 * 16 = 4294967296, its kept modes (10923^2) Kz =
  // 1908990864, a half spectrum's Kh = 5462 * 10923 * 16 = 954582816. Loads and stores: each
  // way two passes, the first reading Kz (inverse) or the last writing it (forward): 2 (Kz + 3Z)
  // a stage; the CFL maximum reads the products once (Z); a stage reads Kz of the packed
  // spectra, S (2Kh), writes Kz of inputs; W as above.
  const StepTraffic t =
      step_traffic(problem(16384, 16384, D, gpu()), plan(S::ComplexPairs, L::All, false), 4, true);
  EXPECT_EQ(t.transforms, 4 * 2 * (1908990864.0 + 3 * 4294967296.0));
  EXPECT_EQ(t.products, 0.0);
  EXPECT_EQ(t.cfl, 4294967296.0);
  EXPECT_EQ(t.stages, 4 * (2 * 1908990864.0 + 2 * 954582816.0) + 3 * 954582816.0);
  EXPECT_EQ(t.total(), 148418447200.0);
}

TEST(StepTraffic, AdvectivePlainAt256DoubleRk3) {
  // rk3 is low storage (no W), 3 stages. H = 256 * 129 * 16 = 528384, R = 256^2 * 8 = 524288,
  // K = 86 * 171 * 16 = 235296. A stage: 4 inverse and 1 forward transforms (3H + R each), the
  // product reads u, v, wx, wy and writes wx (5R), the fused stage reads a (K) and S, writes S
  // (2K) and four inputs (4H).
  const StepProblem p = problem(256, 256, D, gpu(), false);
  const StepTraffic t = step_traffic(p, plan(S::Plain, L::Off, true), 3, false);
  EXPECT_EQ(t.transforms, 3 * 5 * (3 * 528384.0 + 524288.0));
  EXPECT_EQ(t.products, 3 * 5 * 524288.0);
  EXPECT_EQ(t.stages, 3 * (3 * 235296.0 + 4 * 528384.0));
  EXPECT_EQ(t.total(), 47964192.0);
}

TEST(StepTraffic, ScalesWithMembersAndPrecision) {
  const struct {
    int n;
    StepPlan plan;
    bool basdevant;
  } cases[] = {{256, plan(S::Plain, L::Off, true), true},       {256, plan(S::Plain, L::All, false), false},
               {1024, plan(S::Rows, L::Off, false), true},      {2048, plan(S::Pruned, L::Store, true), true},
               {4096, plan(S::ComplexPairs, L::Store, false), true}};
  for (const auto& c : cases) {
    StepProblem one = problem(c.n, c.n, D, gpu(), c.basdevant);
    const StepTraffic t1 = step_traffic(one, c.plan, 4, true);
    ASSERT_GT(t1.total(), 0.0) << c.n;
    StepProblem many = one;
    many.members = 16;
    const StepTraffic t16 = step_traffic(many, c.plan, 4, true);
    EXPECT_EQ(t16.total(), 16 * t1.total()) << c.n;
    EXPECT_EQ(t16.stages, 16 * t1.stages) << c.n;
    EXPECT_EQ(t16.cfl, 16 * t1.cfl) << c.n;
    StepProblem single = one;
    single.precision = F;
    EXPECT_EQ(2 * step_traffic(single, c.plan, 4, true).total(), t1.total()) << c.n;
    // Batched pairs move the same bytes; the budget sums none of their own.
    StepPlan other = c.plan;
    other.batched = !other.batched;
    EXPECT_EQ(step_traffic(one, other, 4, true).total(), t1.total()) << c.n;
    EXPECT_EQ(t1.budget, 0.0);
  }
}

TEST(StepTraffic, EachSavingOfThePlansShows) {
  const StepProblem p = problem(4096, 4096, D, gpu());
  const auto total = [&](S s, L l) { return step_traffic(p, plan(s, l, false), 4, true).total(); };
  EXPECT_GT(total(S::Plain, L::Off), total(S::Plain, L::Store));
  EXPECT_GT(total(S::Plain, L::Store), total(S::Plain, L::All));
  EXPECT_GT(total(S::Plain, L::Off), total(S::Pruned, L::Off));
  EXPECT_GT(total(S::Pruned, L::Off), total(S::Rows, L::Off));
  // A classic stepper's W: written in stage 0, read in the stages but the last (3K at rk4).
  const double k = 1366.0 * 2731.0 * 16.0;
  EXPECT_EQ(step_traffic(p, plan(S::Rows, L::Off, false), 4, true).total() -
                step_traffic(p, plan(S::Rows, L::Off, false), 4, false).total(),
            3 * k);
  // More stages, more traffic, stage for stage.
  EXPECT_LT(step_traffic(p, plan(S::Plain, L::Off, false), 3, false).total(),
            step_traffic(p, plan(S::Plain, L::Off, false), 4, false).total());
}

TEST(StepTraffic, WhatIsNotModelledIsNaN) {
  const auto total = [](const StepProblem& p, S s, L l) { return step_traffic(p, plan(s, l, false), 4, true).total(); };
  EXPECT_TRUE(std::isnan(total(problem(512, 512, D, cpu()), S::CpuRows, L::Off)));
  EXPECT_TRUE(std::isnan(total(problem(512, 512, D, slabs()), S::Slabs, L::Off)));
  // Strategies in a form they cannot run.
  EXPECT_TRUE(std::isnan(total(problem(1024, 1024, D, gpu(), false), S::Rows, L::Off)));
  EXPECT_TRUE(std::isnan(
      step_traffic(problem(1024, 1024, D, gpu(), true, false), plan(S::Pruned, L::Off, false), 4, true).stages));
  EXPECT_TRUE(std::isnan(
      step_traffic(problem(1024, 1024, D, gpu(), false), plan(S::ComplexPairs, L::All, false), 4, true).transforms));
}

}  // namespace
}  // namespace cascade
