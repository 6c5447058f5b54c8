//! @file plan_step: the tuning table of the step's transforms and the pure function that reads it.
#include "cascade/step_plan.hpp"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>

#include "cascade/error.hpp"
#include "cascade/grid.hpp"

namespace cascade {
namespace {

using Strategy = StepStrategy;
using Level = CallbackLevel;
constexpr std::uint64_t sq(std::uint64_t n) { return n * n; }
constexpr std::uint64_t kAll = ~std::uint64_t(0);

//! One row of the tuning table: where it applies (the device, a precision or both, a range of
//! nx or of points nx ny, both ends included) and what auto then takes. The first row that
//! applies, and whose strategy can run the problem (can_run), is the plan.
struct TuningRow {
  StepDevice::Kind device;
  int precision;  //!< 0: both; 4: single; 8: double (bytes of a Real)
  bool by_nx;     //!< the range is of nx (the row kernel's length), else of points nx ny
  std::uint64_t lo, hi;
  Strategy strategy;
  Level callbacks;
  bool batched;
  const char* range;  //!< the run log's words for the row
};

// Measured on an NVIDIA H100 80GB (cuFFT of CUDA 13), `cascade bench step`, rk4, double unless
// said, medians; the tables are in docs/gpu-step.md. CPU rows: a 2-core VM, FFTW.
constexpr TuningRow kTable[] = {
    // Row products: the fastest wherever they run, nx 1024 to 8192 (rk4 double: 20.3 against
    // 28.1 ms at 8192^2, 4.28 against 5.32 at 4096^2, 1.11 against 1.46 at 2048^2; even at 1024^2,
    // 0.35 to 0.36). Above, the rows in parts lose to the 2D transforms with callbacks (150
    // against 112 ms at 16384^2; single 57.6 against 51.1). Callbacks in the pruned passes
    // around them made pruned transforms slower (below): none. No batched plans: the row kernel
    // takes both fields in one launch.
    {StepDevice::Kind::Cuda, 0, true, 1024, 8192, Strategy::Rows, Level::Off, false, "nx from 1024 to 8192"},
    // Complex pairs: from 16384^2 points in double, where the complex plan's work area fits
    // (can_run): 102.7 against 112.4 ms at 16384^2 (rk4), 319.7 against 410.6 at 32768^2 (rk3).
    // The kept-mode callbacks of the plain transforms' rows below (loads and stores from 8192^2).
    {StepDevice::Kind::Cuda, 8, false, sq(16384), kAll, Strategy::ComplexPairs, Level::All, false,
     "from 16384^2 points in double"},
    // Pruned transforms, 2048^2 to 4096^2 points in double, to 8192^2 in single: 5.32 against
    // 6.06 ms a step at 4096^2 double, single 2.90 against 3.19 at 4096^2 and 12.31 against 12.84
    // at 8192^2; even with callbacks at 8192^2 double (28.3 against 28.2). Callbacks in their
    // passes made them slower (4096^2 double: 5.91 ms with stores, 6.72 with loads too): none.
    // Batched pairs up to 4096^2 points, as for the plain transforms.
    {StepDevice::Kind::Cuda, 8, false, sq(2048), sq(4096), Strategy::Pruned, Level::Off, true,
     "2048^2 to 4096^2 points in double"},
    {StepDevice::Kind::Cuda, 4, false, sq(2048), sq(4096), Strategy::Pruned, Level::Off, true,
     "2048^2 to 4096^2 points in single"},
    {StepDevice::Kind::Cuda, 4, false, sq(4096) + 1, sq(8192), Strategy::Pruned, Level::Off, false,
     "4096^2 to 8192^2 points in single"},
    // cuFFT's 2D transforms. Callbacks (`--callbacks both`): in double, kept-mode stores from
    // 4096^2 points, loads too from 8192^2; in single none (cuFFT's callback kernels are slower
    // at every size). Batched pairs up to 4096^2 points (rk4 double: 20% faster at 1024^2, 3% at
    // 4096^2, even at 2048^2); at 8192^2 they gained nothing, and a batched plan's work area
    // (twice a single one's) costs memory the largest grids need.
    {StepDevice::Kind::Cuda, 8, false, 0, sq(4096) - 1, Strategy::Plain, Level::Off, true,
     "below 4096^2 points in double"},
    {StepDevice::Kind::Cuda, 8, false, sq(4096), sq(4096), Strategy::Plain, Level::Store, true,
     "4096^2 points in double"},
    {StepDevice::Kind::Cuda, 8, false, sq(4096) + 1, sq(8192) - 1, Strategy::Plain, Level::Store, false,
     "4096^2 to 8192^2 points in double"},
    {StepDevice::Kind::Cuda, 8, false, sq(8192), kAll, Strategy::Plain, Level::All, false,
     "from 8192^2 points in double"},
    {StepDevice::Kind::Cuda, 4, false, 0, sq(4096), Strategy::Plain, Level::Off, true,
     "up to 4096^2 points in single"},
    {StepDevice::Kind::Cuda, 4, false, sq(4096) + 1, kAll, Strategy::Plain, Level::Off, false,
     "above 4096^2 points in single"},
    // CPU: the evaluation row by row from 256^2 points (a 2-core VM: 7% faster a step there,
    // even at 512^2, 20-35% faster from 1024^2, and slower at 128^2 on one thread).
    {StepDevice::Kind::Cpu, 0, false, sq(256), kAll, Strategy::CpuRows, Level::Off, false, "from 256^2 points"},
    {StepDevice::Kind::Cpu, 0, false, 0, kAll, Strategy::Plain, Level::Off, false, "below 256^2 points"},
    // Several MPI ranks: the slab transforms alone.
    {StepDevice::Kind::Slabs, 0, false, 0, kAll, Strategy::Slabs, Level::Off, false, "over MPI ranks"},
};

int real_bytes(Precision p) { return p == Precision::Single ? 4 : 8; }

//! Why the strategy cannot run the problem ("" where it can). `asked`: named by the deck
//! (complex pairs then skip the memory estimate, as they are asked for).
std::string cannot_run(Strategy s, const StepProblem& p, bool asked) {
  const StepDevice& d = p.device;
  const bool cuda = d.kind == StepDevice::Kind::Cuda;
  if (p.members > 1 && s != Strategy::Plain && s != Strategy::ComplexPairs && s != Strategy::RowsColumns)
    return "cannot batch the members of an ensemble (ensemble.members > 1 runs the plain transforms, complex pairs "
           "or rows and columns)";
  switch (s) {
    case Strategy::Plain: return "";
    case Strategy::Slabs: return d.kind == StepDevice::Kind::Slabs ? "" : "runs over several MPI ranks alone";
    case Strategy::CpuRows:
      if (d.kind != StepDevice::Kind::Cpu) return "runs on the cpu backend alone";
      return p.two_thirds ? "" : "needs grid.dealias: two-thirds";
    case Strategy::Pruned:
      if (!cuda) return "needs the cuda backend on one GPU";
      return p.two_thirds ? "" : "needs grid.dealias: two-thirds";
    case Strategy::Rows: {
      if (!cuda) return "needs the cuda backend on one GPU";
      if (!p.basdevant) return "needs grid.nonlinear: basdevant";
      if (!p.two_thirds) return "needs grid.dealias: two-thirds";
      int m = 0;
      while ((1 << m) < p.nx && m < 30) ++m;
      if ((1 << m) != p.nx || m < 4 || m > 16) return "needs nx a power of two from 16 to 65536";
      if (d.row_shared_bytes > d.shared_optin_bytes) return "needs more shared memory a block than this GPU has";
      return "";
    }
    case Strategy::RowsColumns: {
      if (!cuda) return "needs the cuda backend on one GPU";
      if (!p.basdevant) return "needs grid.nonlinear: basdevant";
      if (!p.two_thirds) return "needs grid.dealias: two-thirds";
      const auto power_of_two = [](int n, int lo, int hi) { return n >= lo && n <= hi && (n & (n - 1)) == 0; };
      if (!power_of_two(p.nx, 16, 65536)) return "needs nx a power of two from 16 to 65536";
      if (!power_of_two(p.ny, 16, 65536)) return "needs ny a power of two from 16 to 65536";
      if (d.row_shared_bytes > d.shared_optin_bytes) return "needs more shared memory a block than this GPU has";
      if (d.column_shared_bytes > d.shared_optin_bytes)
        return "needs a column of ny points in a block's shared memory (one field's, or half of one over four "
               "blocks: ny up to 16384 on an H100; both fields' below compute capability 9.0)";
      return "";
    }
    case Strategy::ComplexPairs: {
      if (!cuda) return "needs the cuda backend on one GPU";
      if (!p.basdevant) return "needs grid.nonlinear: basdevant";
      if (asked) return "";
      // Auto: the complex plan's work area (twice a real one's) must fit beside the fields.
      const std::size_t need = d.complex_work_bytes, margin = std::size_t(256) << 20;
      if (need == 0) return "no estimate of the complex plan's work area";
      if (need > d.work_bytes && need - d.work_bytes + margin > d.free_bytes) return "its work area does not fit";
      return "";
    }
  }
  return "";
}

bool applies(const TuningRow& r, const StepProblem& p) {
  if (r.device != p.device.kind) return false;
  if (r.precision != 0 && r.precision != real_bytes(p.precision)) return false;
  // An ensemble's transforms batch its members: the table's sizes are of the points of all of them.
  const std::uint64_t x =
      r.by_nx ? std::uint64_t(p.nx) : std::uint64_t(p.nx) * std::uint64_t(p.ny) * std::uint64_t(std::max(1, p.members));
  return x >= r.lo && x <= r.hi;
}

//! The first row of the table for this problem, among those of `only` (where given).
const TuningRow* first_row(const StepProblem& p, const Strategy* only) {
  for (const TuningRow& r : kTable)
    if (applies(r, p) && (!only || r.strategy == *only) && cannot_run(r.strategy, p, false).empty()) return &r;
  return nullptr;
}

Strategy strategy_of(StepRequest::Transforms t, StepDevice::Kind kind) {
  using T = StepRequest::Transforms;
  switch (t) {
    case T::Plain: return kind == StepDevice::Kind::Slabs ? Strategy::Slabs : Strategy::Plain;
    case T::Pruned: return Strategy::Pruned;
    case T::Rows: return kind == StepDevice::Kind::Cpu ? Strategy::CpuRows : Strategy::Rows;
    case T::ComplexPairs: return Strategy::ComplexPairs;
    case T::RowsColumns: return Strategy::RowsColumns;
    case T::Auto: break;
  }
  return Strategy::Plain;
}

}  // namespace

StepPlan plan_step(const StepProblem& p, const StepRequest& req) {
  using T = StepRequest::Transforms;
  using B = StepRequest::Batching;
  const StepDevice::Kind kind = p.device.kind;
  StepPlan plan;
  if (req.transforms == T::Auto) {
    const TuningRow* r = first_row(p, nullptr);
    if (!r) throw RunError("plan_step: no row of the tuning table applies");  // the table ends in catch-alls
    plan = {r->strategy, r->callbacks, r->batched, std::string("auto, ") + r->range};
    // An ensemble on a GPU in Basdevant's form: complex pairs, with the callbacks of the plain
    // row, ran faster than the plain transforms at every batch measured (128^2 to 512^2, 16 to
    // 1024 members, both precisions: docs/performance.md, Ensembles).
    // Grids from 128^2 to 256^2 (512^2 in double): rows and columns before them, the row kernel
    // and the column kernel compiled for the size, no cuFFT (H100, 2026-11-25, rk4, ms a step on
    // the device against the plain transforms: double 0.0624 against 0.0765 at 128^2, 0.0606
    // against 0.0842 at 256^2, 0.1216 against 0.1310 at 512^2; single 0.0516 against 0.0731,
    // 0.0567 against 0.0757; single 512^2 lost, 0.1041 against 0.1008).
    // Ensembles of them from 1024^2 points in all, member-steps/s against complex pairs: 256^2 x
    // 256 112,000 against 60,500 in double; 128^2 x 1024 443,000 against 228,000; 512^2 x 64
    // 22,600 against 15,200 (512^2 in single lost, 24,300 against 26,900); and in double below
    // that too: 128^2 x 4 41,800-43,300 against 27,700-32,100, 128^2 x 16 120,400-125,100
    // against 108,300-108,500, 256^2 x 4 31,000-31,300 against 28,200-29,300 (single's small
    // batches not measured: complex pairs, as before). Members below 128^2 (kernels that read
    // the length at run time) from 1024^2 points in all, as before those kernels.
    const int largest = p.precision == Precision::Double ? 512 : 256;
    const std::uint64_t points = std::uint64_t(p.nx) * std::uint64_t(p.ny) * std::uint64_t(std::max(1, p.members));
    const bool sized = p.nx >= 128 && p.ny >= 128 && (p.members <= 1 || p.precision == Precision::Double);
    // Callbacks asked for (rows and columns have no cuFFT transform to put them in) keep the
    // table's plan.
    const bool no_callbacks =
        req.callbacks == StepRequest::Callbacks::Auto || req.callbacks == StepRequest::Callbacks::Off;
    const bool small = p.nx <= largest && p.ny <= largest && (sized || points >= sq(1024));
    // One grid from 2048^2 to 8192^2, on a GPU whose column kernel splits a tile over a pair of
    // blocks (clusters, compute capability 9.0): rows and columns before the row products, the
    // column kernel's tiles of one field's columns, whole sectors of a row (H200, 2026-11-28,
    // rk4, ms a step against the row products: in double 0.822-0.829 against 0.872-0.873 at
    // 2048^2, 3.23-3.26 against 3.57-3.58 at 4096^2, 16.42-16.46 against 17.09-17.11 at 8192^2;
    // 1024^2 lost, 0.279-0.287 against 0.251-0.256). Without pairs they lost at 2048^2 and
    // 4096^2 (0.90, 3.67-3.69) and cannot run at 8192^2. Single precision since its tiles take
    // two butterflies a thread and the work fields' rows start a sector (column_kernel_eval.cuh;
    // the same day): 0.492-0.502 against 0.540 at 2048^2, 1.77 against 2.01 at 4096^2,
    // 8.97-8.98 against 10.27 at 8192^2. In double up to 16384 a side, whose columns go over
    // quads of blocks and rows over pairs of blocks (H200, 2026-11-30, rk4: 16384^2 62.90-63.15
    // against 85.26-85.40 ms a step with complex pairs; in single 38.2-38.3 against the plain
    // transforms' 38.5-38.8 launched by the host but 40.0 against 38.8 on the device, not taken).
    const int longest = p.precision == Precision::Double ? 16384 : 8192;
    const auto large_side = [longest](int n) { return n >= 2048 && n <= longest; };
    const bool large = p.members <= 1 && p.device.column_pairs && large_side(p.nx) && large_side(p.ny);
    if ((small || large) && no_callbacks && cannot_run(Strategy::RowsColumns, p, false).empty()) {
      plan.strategy = Strategy::RowsColumns;
      plan.callbacks = Level::Off;
      plan.batched = false;
      plan.why = p.members > 1 ? "auto, rows and columns for an ensemble of grids up to 256^2 (512^2 in double), from "
                                 "1024^2 points in all or 128^2 a member in double"
                 : large ? "auto, rows and columns for a grid from 2048^2 to 8192^2 (16384^2 in double), tiles "
                           "over pairs of blocks"
                         : "auto, rows and columns for a grid from 128^2 to 256^2 (512^2 in double)";
    } else if (p.members > 1 && r->strategy == Strategy::Plain &&
               cannot_run(Strategy::ComplexPairs, p, false).empty()) {
      plan.strategy = Strategy::ComplexPairs;
      plan.batched = false;
      plan.why += "; complex pairs for an ensemble";
    }
  } else {
    const Strategy s = strategy_of(req.transforms, kind);
    const std::string why = cannot_run(s, p, true);
    if (!why.empty())
      throw InputError("run.step_transforms: " + to_string(req.transforms, req.batching) + " " + why);
    plan = {s, Level::Off, false, "run.step_transforms: " + to_string(req.transforms, req.batching)};
    // Callbacks and batching as auto takes them for the strategy: the table's row for the
    // strategy at this size (pruned and rows: none; complex pairs: the plain transforms').
    const Strategy like = s == Strategy::ComplexPairs ? Strategy::Plain : s;
    if (const TuningRow* r = first_row(p, &like)) {
      plan.callbacks = r->callbacks;
      plan.batched = r->batched && (s == Strategy::Plain || s == Strategy::Pruned);
    }
  }
  if (req.batching != B::Auto) {
    if (req.batching == B::On && plan.strategy != Strategy::Plain && plan.strategy != Strategy::Pruned)
      throw InputError("run.step_transforms: batched pairs go with plain or pruned transforms alone");
    plan.batched = req.batching == B::On;
  }
  if (req.callbacks != StepRequest::Callbacks::Auto) {
    const Level level = req.callbacks == StepRequest::Callbacks::Off     ? Level::Off
                        : req.callbacks == StepRequest::Callbacks::Store ? Level::Store
                                                                         : Level::All;
    if (level != Level::Off && kind != StepDevice::Kind::Cuda)
      throw InputError("run.fft_callbacks: " + to_string(req.callbacks) + " needs the cuda backend on one GPU");
    if (level != Level::Off && plan.strategy == Strategy::RowsColumns)
      throw InputError("run.fft_callbacks: " + to_string(req.callbacks) + " has no cuFFT transform to go in (rows and "
                       "columns run none)");
    plan.callbacks = level;
    plan.why += ", run.fft_callbacks: " + to_string(req.callbacks);
  }
  return plan;
}

// The model (docs/performance.md, "The memory-traffic bound"), one assumption a line:
//  - a pass reads its input and writes its output once (its lower bound; L2 reuse ignored);
//  - cuFFT's 2D transform is two passes, rows (the real side, nx ny reals, to or from the half
//    spectrum, ny (nx/2+1) complex) and columns (the half spectrum in and out);
//  - a pruned transform: the rows' pass over every row, the columns' pass over the kept columns;
//  - the row kernel reads and writes the kept columns of the two spectra once, nothing real;
//  - rows and columns: the row kernel, and the column kernel reading the products' kept
//    columns and writing the next inputs' (the stage's reads and writes of S and W inside);
//  - complex pairs: one complex ny nx transform each way (two passes each), the products in
//    the inverse's store callback, the CFL maximum a read of the products in the first stage;
//  - the product kernel reads u, v and writes uv, v^2 - u^2 (advective: reads u, v, wx, wy,
//    writes wx); the CFL maximum rides on it, or on the row kernel;
//  - callbacks Store and All: the forward's last pass writes the kept modes alone; All: the
//    inverse's first pass reads them alone and the fused stage writes them alone;
//  - the fused stage reads the products' spectra (kept modes), S, W where the stepper keeps
//    one (written in the first stage, read in the others but the last), writes S and the next
//    inputs (two spectra, advective four); the budget sums read what the first stage reads;
//  - no forcing; reduction partials, twiddles and launch arguments neglected.
StepTraffic step_traffic(const StepProblem& p, const StepPlan& plan, int stages, bool classic_registers) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const StepTraffic unmodelled{nan, nan, nan, nan, nan};
  const double r = real_bytes(p.precision), c = 2 * r, nx = p.nx, ny = p.ny;
  // The kept band of each axis: the 2/3 rule's, else all but the Nyquist modes (DealiasMask).
  const int bx = p.two_thirds ? two_thirds_band(p.nx) : (p.nx - 1) / 2;
  const int by = p.two_thirds ? two_thirds_band(p.ny) : (p.ny - 1) / 2;
  const double real = nx * ny * r;                                   // a real field
  const double half = ny * (p.nx / 2 + 1) * c;                       // a half spectrum
  const double columns = ny * (bx + 1) * c;                          // its kept columns
  const double kept = double(bx + 1) * double(2 * by + 1) * c;       // its kept modes
  const double full = nx * ny * c;                                   // a whole complex field
  const double kept_full = double(2 * bx + 1) * double(2 * by + 1) * c;  // its kept modes
  const bool store = plan.callbacks != CallbackLevel::Off, load = plan.callbacks == CallbackLevel::All;
  const bool advective = !p.basdevant;
  const int inverses = advective ? 4 : 2, forwards = advective ? 1 : 2;
  const double product_kernel = (advective ? 5 : 4) * real;
  // An evaluation's transforms and products, the CFL pass, and what a fused stage reads of the
  // products' spectra and writes of the next inputs.
  double transforms = 0, products = 0, cfl = 0;
  double inputs_read = (advective ? 1 : 2) * kept, inputs_written = (advective ? 4 : 2) * (load ? kept : half);
  switch (plan.strategy) {
    case Strategy::Plain: {
      const double inverse = (load ? kept : half) + half + half + real;  // columns, then rows
      const double forward = real + half + half + (store ? kept : half);  // rows, then columns
      transforms = inverses * inverse + forwards * forward;
      products = product_kernel;
      break;
    }
    case Strategy::Pruned: {
      if (!p.two_thirds) return unmodelled;
      // The rows' passes take or leave the kept columns alone with callbacks (PrunedEval).
      const double inverse = (load ? kept : columns) + columns + (load ? columns : half) + real;
      const double forward = real + (store ? columns : half) + columns + (store ? kept : columns);
      transforms = inverses * inverse + forwards * forward;
      products = product_kernel;
      break;
    }
    case Strategy::Rows:
      if (advective || !p.two_thirds) return unmodelled;
      transforms = 2 * ((load ? kept : columns) + columns) + 2 * (columns + (store ? kept : columns));
      products = 2 * 2 * columns;
      break;
    case Strategy::ComplexPairs:
      if (advective) return unmodelled;
      transforms = (load ? kept_full : full) + 3 * full + 3 * full + (store ? kept_full : full);
      cfl = full;
      // The packed layout: each kept mode of the whole spectrum read once; written there, or
      // everywhere (zeros at the removed modes).
      inputs_read = kept_full;
      inputs_written = load ? kept_full : full;
      break;
    case Strategy::RowsColumns:
      // The column kernel reads the products' kept columns and writes the next inputs' there;
      // the stage between reads and writes S (and W) at the kept modes alone, in the same pass.
      if (advective || !p.two_thirds) return unmodelled;
      transforms = 2 * columns + 2 * columns;
      products = 2 * 2 * columns;
      inputs_read = 0;
      inputs_written = 0;
      break;
    default: return unmodelled;  // CpuRows, Slabs: not modelled
  }
  StepTraffic t;
  t.transforms = stages * transforms;
  t.products = stages * products;
  t.cfl = cfl;
  for (int i = 0; i < stages; ++i) {
    const bool w = classic_registers && (i == 0 || i + 1 < stages);  // W written in stage 0, read up to the last
    t.stages += inputs_read + 2 * kept + (w ? kept : 0) + inputs_written;
  }
  const double members = std::max(1, p.members);
  t.transforms *= members;
  t.products *= members;
  t.cfl *= members;
  t.stages *= members;
  return t;
}

std::string to_string(StepStrategy s) {
  switch (s) {
    case Strategy::Plain: return "plain";
    case Strategy::Pruned: return "pruned";
    case Strategy::Rows: return "row products";
    case Strategy::ComplexPairs: return "complex pairs";
    case Strategy::RowsColumns: return "rows and columns";
    case Strategy::CpuRows: return "pruned, row by row";
    case Strategy::Slabs: return "slab transforms";
  }
  return "?";
}
std::string to_string(CallbackLevel c) {
  return c == Level::Off ? "callbacks off" : c == Level::Store ? "kept-mode stores" : "kept-mode loads and stores";
}
std::string to_string(StepRequest::Transforms t, StepRequest::Batching b) {
  using T = StepRequest::Transforms;
  const char* pairs = b == StepRequest::Batching::On ? "-pairs" : "";
  switch (t) {
    case T::Auto: return "auto";
    case T::Plain: return std::string("plain") + pairs;
    case T::Pruned: return std::string("pruned") + pairs;
    case T::Rows: return "rows";
    case T::ComplexPairs: return "complex-pairs";
    case T::RowsColumns: return "rows-columns";
  }
  return "?";
}
std::string to_string(StepRequest::Callbacks c) {
  using C = StepRequest::Callbacks;
  return c == C::Auto ? "auto" : c == C::Off ? "off" : c == C::Store ? "store" : "all";
}

StepRequest step_request_from(const std::string& transforms, const std::string& callbacks) {
  using T = StepRequest::Transforms;
  using B = StepRequest::Batching;
  using C = StepRequest::Callbacks;
  StepRequest r;
  static const struct {
    const char* name;
    T t;
    B b;
  } kTransforms[] = {{"auto", T::Auto, B::Auto},         {"plain", T::Plain, B::Off},
                     {"plain-pairs", T::Plain, B::On},   {"pruned", T::Pruned, B::Off},
                     {"pruned-pairs", T::Pruned, B::On}, {"rows", T::Rows, B::Off},
                     {"complex-pairs", T::ComplexPairs, B::Off}, {"rows-columns", T::RowsColumns, B::Off}};
  bool found = false;
  for (const auto& k : kTransforms)
    if (transforms == k.name) r.transforms = k.t, r.batching = k.b, found = true;
  if (!found) throw InputError("run.step_transforms: unknown value '" + transforms + "'");
  static const struct {
    const char* name;
    C c;
  } kCallbacks[] = {{"auto", C::Auto}, {"off", C::Off}, {"store", C::Store}, {"all", C::All}};
  found = false;
  for (const auto& k : kCallbacks)
    if (callbacks == k.name) r.callbacks = k.c, found = true;
  if (!found) throw InputError("run.fft_callbacks: unknown value '" + callbacks + "'");
  return r;
}

std::string describe(const StepPlan& plan) {
  std::string s = to_string(plan.strategy);
  if (plan.strategy == Strategy::Plain || plan.strategy == Strategy::Pruned)
    s += plan.batched ? ", batched pairs" : ", one field a plan";
  if (plan.strategy != Strategy::CpuRows && plan.strategy != Strategy::Slabs) s += ", " + to_string(plan.callbacks);
  return s + " (" + plan.why + ")";
}

}  // namespace cascade
