//! @file plan_step as a value: auto reproduces the choices the GPU and CPU backends made before
//! the plan was data (the CASCADE_FFT_* variables unset), and the deck's requests are taken as
//! asked or refused with one line. No device needed.
#include <gtest/gtest.h>

#include <string>

#include "cascade/error.hpp"
#include "cascade/step_plan.hpp"

namespace cascade {
namespace {

using S = StepStrategy;
using L = CallbackLevel;
using Kind = StepDevice::Kind;

//! An H100-like GPU: the row kernel fits (up to 2^13 points, 139 KiB in double), 60 GiB free, a
//! complex plan's work area twice the real one's.
StepDevice gpu(std::size_t free_bytes = std::size_t(60) << 30) {
  StepDevice d;
  d.kind = Kind::Cuda;
  d.row_shared_bytes = std::size_t(139) << 10;
  d.column_shared_bytes = std::size_t(68) << 10;  // a tile of one column of 2048 points in double
  d.shared_optin_bytes = 227 << 10;
  d.free_bytes = free_bytes;
  d.work_bytes = std::size_t(4) << 30;
  d.complex_work_bytes = std::size_t(8) << 30;
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
// before the plan was data, with no CASCADE_FFT_* variable set.
const AutoCase kAuto[] = {
    // GPU, Basdevant, 2/3: the row kernel from nx = 1024 to 8192, in both precisions.
    {problem(256, 256, D, gpu()), plan(S::Plain, L::Off, true)},
    {problem(512, 512, D, gpu()), plan(S::Plain, L::Off, true)},
    {problem(1024, 1024, D, gpu()), plan(S::Rows, L::Off, false)},
    {problem(2048, 2048, D, gpu()), plan(S::Rows, L::Off, false)},
    {problem(4096, 4096, D, gpu()), plan(S::Rows, L::Off, false)},
    {problem(8192, 8192, D, gpu()), plan(S::Rows, L::Off, false)},
    {problem(16384, 16384, D, gpu()), plan(S::ComplexPairs, L::All, false)},
    {problem(32768, 32768, D, gpu()), plan(S::ComplexPairs, L::All, false)},
    {problem(1024, 1024, F, gpu()), plan(S::Rows, L::Off, false)},
    {problem(4096, 4096, F, gpu()), plan(S::Rows, L::Off, false)},
    {problem(8192, 8192, F, gpu()), plan(S::Rows, L::Off, false)},
    {problem(16384, 16384, F, gpu()), plan(S::Plain, L::Off, false)},
    // nx decides the row kernel, points the rest.
    {problem(8192, 16384, D, gpu()), plan(S::Rows, L::Off, false)},
    {problem(16384, 1024, D, gpu()), plan(S::Pruned, L::Off, true)},
    {problem(16384, 4096, D, gpu()), plan(S::Plain, L::All, false)},
    {problem(8192, 4096, D, gpu(), false), plan(S::Plain, L::Store, false)},
    {problem(512, 8192, D, gpu()), plan(S::Pruned, L::Off, true)},
    // Where the complex plan's work area does not fit: the real transforms with callbacks.
    {problem(16384, 16384, D, gpu(std::size_t(1) << 30)), plan(S::Plain, L::All, false)},
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
  EXPECT_EQ(plan_step(problem(512, 512, D, gpu()), step_request_from("auto", "off")), plan(S::Plain, L::Off, true));
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
      {problem(8192, 8192, D,
               [] {
                 StepDevice d = gpu();
                 d.column_shared_bytes = std::size_t(272) << 10;  // 8192 points in double
                 return d;
               }()),
       "rows-columns", "auto",
       "run.step_transforms: rows-columns needs a column of ny points of both fields in a block's shared memory (ny "
       "up to 4096 in double, 8192 in single on an H100)"},
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
  // On a GPU in Basdevant's form, up to 256^2 a member, rows and columns; above, complex pairs
  // with the plain row's callbacks.
  EXPECT_EQ(plan_step(batch(256, 16, D, gpu()), automatic), plan(S::RowsColumns, L::Off, false));
  EXPECT_EQ(plan_step(batch(128, 1024, F, gpu()), automatic), plan(S::RowsColumns, L::Off, false));
  EXPECT_EQ(plan_step(batch(256, 4096, D, gpu()), automatic), plan(S::RowsColumns, L::Off, false));  // 16384^2 points
  EXPECT_EQ(plan_step(batch(512, 16, D, gpu()), automatic), plan(S::ComplexPairs, L::Off, false));    // 2048^2 points
  EXPECT_EQ(plan_step(batch(512, 64, D, gpu()), automatic), plan(S::ComplexPairs, L::Store, false));  // 4096^2
  EXPECT_EQ(plan_step(batch(512, 256, D, gpu()), automatic), plan(S::ComplexPairs, L::All, false));   // 8192^2
  EXPECT_EQ(plan_step(batch(2048, 64, D, gpu()), automatic), plan(S::ComplexPairs, L::All, false));   // 16384^2
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

}  // namespace
}  // namespace cascade
