//! @file The output directory: background writer, diagnostics, spectra, snapshots with their
//! XDMF index, and checkpoints (write, verify, read, prune).
#include "cascade/output.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>

#include "cascade/error.hpp"
#include "cascade/io.hpp"
#include "cascade/run.hpp"

namespace cascade {

// ---------------------------------------------------------------- background writer

BackgroundWriter::BackgroundWriter() : thread_([this] { loop(); }) {}

BackgroundWriter::~BackgroundWriter() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void BackgroundWriter::loop() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stop_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // stop requested and nothing left
      task = std::move(tasks_.front());
      tasks_.pop_front();
      busy_ = true;
    }
    try {
      if (!error_) task();  // after a failure the remaining tasks are dropped
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) error_ = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      busy_ = false;
    }
    idle_.notify_all();  // wakes drain() and a submit() waiting for room
  }
}

void BackgroundWriter::rethrow() {
  if (error_) {
    std::exception_ptr e = error_;
    error_ = nullptr;
    std::rethrow_exception(e);
  }
}

void BackgroundWriter::submit(std::function<void()> task) {
  {
    // Back-pressure: a run that produces output faster than the disk takes it waits here,
    // instead of queueing copies of its fields without bound.
    std::unique_lock<std::mutex> lock(mutex_);
    idle_.wait(lock, [this] { return tasks_.size() < kMaxQueued || error_; });
    rethrow();
    tasks_.push_back(std::move(task));
  }
  wake_.notify_one();
}

void BackgroundWriter::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [this] { return tasks_.empty() && !busy_; });
  rethrow();
}

// ---------------------------------------------------------------- the run directory

namespace {
bool exists(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0;
}

std::vector<std::string> list_dir(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") out.push_back(name);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

bool starts_with(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }
bool ends_with(const std::string& s, const std::string& x) {
  return s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0;
}

//! The number in "prefix_NNNNNN.h5", or -1.
long numbered(const std::string& name, const std::string& prefix) {
  if (!starts_with(name, prefix) || !ends_with(name, ".h5")) return -1;
  const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - 3);
  if (digits.empty() || digits.size() > 15 || digits.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stol(digits);
}
}  // namespace

bool holds_run(const std::string& dir) {
  for (const char* f : {"run_id", "deck.yaml", "diagnostics.csv", "diagnostics.h5", "spectra.h5", "snapshots.xmf"})
    if (exists(dir + "/" + f)) return true;
  for (const auto& name : list_dir(dir + "/checkpoints"))
    if (numbered(name, "ckpt_") >= 0) return true;
  for (const auto& name : list_dir(dir + "/snapshots"))
    if (numbered(name, "snap_") >= 0) return true;
  return false;
}

void remove_stale_temporaries(const std::string& dir) {
  // NAME.tmp-PID, left by a writer that was killed: remove it unless PID is still running.
  for (const std::string& sub : {std::string(""), std::string("/checkpoints"), std::string("/snapshots")}) {
    for (const auto& name : list_dir(dir + sub)) {
      const auto at = name.rfind(".tmp-");
      if (at == std::string::npos) continue;
      const std::string pid = name.substr(at + 5);
      if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
      if (std::stol(pid) != long(::getpid()) && !exists("/proc/" + pid)) std::remove((dir + sub + "/" + name).c_str());
    }
  }
}

RunLock::RunLock(const std::string& dir) {
  fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd_ < 0) throw InputError("output.directory: cannot open '" + dir + "': " + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) return;
  int why = errno;
  if (why != EWOULDBLOCK) {
    // A file system that locks no directories (NFS emulates flock with byte-range locks, which
    // need a file open for writing): a lock file inside it.
    ::close(fd_);
    fd_ = ::open((dir + "/.cascade.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd_ < 0) throw InputError("output.directory: cannot lock '" + dir + "': " + std::strerror(why));
    if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) return;
    why = errno;
  }
  ::close(fd_);
  fd_ = -1;
  if (why == EWOULDBLOCK)
    throw InputError("output.directory: '" + dir +
                     "' is in use by another cascade run (locked); wait for it to end, or choose another directory");
  throw InputError("output.directory: cannot lock '" + dir + "': " + std::strerror(why));
}

RunLock::~RunLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the lock
}

std::string new_run_id() {
  unsigned char bytes[16] = {};
  bool ok = false;
  if (std::FILE* f = std::fopen("/dev/urandom", "rb")) {
    ok = std::fread(bytes, 1, sizeof(bytes), f) == sizeof(bytes);
    std::fclose(f);
  }
  if (!ok) {  // no /dev/urandom: the clock and the process, mixed
    std::uint64_t h = checksum64(&ok, 0, std::uint64_t(std::chrono::system_clock::now().time_since_epoch().count()));
    h = checksum64(&h, sizeof(h), std::uint64_t(::getpid()));
    std::memcpy(bytes, &h, 8);
    h = checksum64(&h, sizeof(h));
    std::memcpy(bytes + 8, &h, 8);
  }
  std::string id;
  for (unsigned char b : bytes) id += fmt::format("{:02x}", b);
  return id;
}

std::string read_run_id(const std::string& dir) {
  std::ifstream in(dir + "/run_id");
  if (!in) return "";
  std::string id;
  std::getline(in, id);
  if (id.size() != 32 || id.find_first_not_of("0123456789abcdef") != std::string::npos)
    throw InputError(dir + "/run_id: expected 32 hex digits (a run id), found '" + id.substr(0, 64) + "'");
  return id;
}

void write_run_id(const std::string& dir, const std::string& id) { write_text_atomically(dir + "/run_id", id + "\n"); }

void clear_run(const std::string& dir) {
  for (const char* f : {"run_id", "deck.yaml", "diagnostics.csv", "diagnostics.h5", "spectra.h5", "snapshots.xmf", "log.txt"})
    std::remove((dir + "/" + f).c_str());
  for (const auto& name : list_dir(dir + "/checkpoints"))
    if (numbered(name, "ckpt_") >= 0) std::remove((dir + "/checkpoints/" + name).c_str());
  for (const auto& name : list_dir(dir + "/snapshots"))
    if (numbered(name, "snap_") >= 0) std::remove((dir + "/snapshots/" + name).c_str());
}

// ---------------------------------------------------------------- diagnostics

std::string diagnostics_csv_line(const Diagnostics& d, double wall) {
  return fmt::format("{},{},{},{},{},{},{},{},{},{},{:.3f},{},{},{},{},{},{:.6g}", d.step, d.t, d.dt, d.energy,
                     d.enstrophy, d.palinstrophy, d.max_u, d.cfl_limit, d.injection, d.dissipation, wall,
                     d.dissipation_nu, d.dissipation_mu, d.dissipation_alpha, d.injection_z, d.dissipation_z,
                     d.wall_per_step);
}

namespace {
std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string item;
  while (std::getline(ss, item, sep)) out.push_back(item);
  return out;
}

const char* const kLimits[] = {"none", "cfl", "dt_max", "growth", "output"};

long long limit_code(const std::string& name) {
  for (int k = 0; k < 5; ++k)
    if (name == kLimits[k]) return k;
  return -1;
}
}  // namespace

DiagnosticsLog::DiagnosticsLog(const std::string& dir, bool restart, double t_keep)
    : csv_path_(dir + "/diagnostics.csv"), h5_path_(dir + "/diagnostics.h5") {
  if (restart && exists(csv_path_)) {
    // Keep the rows up to the checkpoint's time; the restarted run appends the rest.
    std::ifstream in(csv_path_);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      const auto f = split(line, ',');
      if (f.size() < 17) throw InputError(csv_path_ + ": malformed row '" + line + "'");
      DiagnosticsRow r;
      try {
        r.d.step = std::stol(f[0]);
        r.d.t = std::stod(f[1]);
        r.d.dt = std::stod(f[2]);
        r.d.energy = std::stod(f[3]);
        r.d.enstrophy = std::stod(f[4]);
        r.d.palinstrophy = std::stod(f[5]);
        r.d.max_u = std::stod(f[6]);
        r.d.cfl_limit = f[7];
        r.d.injection = std::stod(f[8]);
        r.d.dissipation = std::stod(f[9]);
        r.wall = std::stod(f[10]);
        r.d.dissipation_nu = std::stod(f[11]);
        r.d.dissipation_mu = std::stod(f[12]);
        r.d.dissipation_alpha = std::stod(f[13]);
        r.d.injection_z = std::stod(f[14]);
        r.d.dissipation_z = std::stod(f[15]);
        r.d.wall_per_step = std::stod(f[16]);
      } catch (const std::exception&) {
        throw InputError(csv_path_ + ": malformed row '" + line + "'");
      }
      if (r.d.t > t_keep) break;
      r.text = line;
      pending_.push_back(r);
    }
  }
}

void DiagnosticsLog::start() {
  std::string text = std::string(kDiagnosticsColumns) + "\n";
  for (const auto& r : pending_) text += r.text + "\n";
  write_text_atomically(csv_path_, text);
  csv_ = std::fopen(csv_path_.c_str(), "a");
  if (!csv_) throw RunError("cannot append to '" + csv_path_ + "': " + std::strerror(errno));
}

DiagnosticsLog::~DiagnosticsLog() {
  if (csv_) std::fclose(csv_);
}

void DiagnosticsLog::append(const Diagnostics& d, double wall) {
  DiagnosticsRow r{d, wall, diagnostics_csv_line(d, wall)};
  if (std::fputs((r.text + "\n").c_str(), csv_) < 0 || std::fflush(csv_) != 0)
    throw RunError("cannot write to '" + csv_path_ + "': " + std::strerror(errno));
  pending_.push_back(std::move(r));
}

std::function<void()> DiagnosticsLog::h5_task(const Config& config, const std::string& backend) {
  std::vector<long long> step, limit;
  std::vector<double> t, dt, e, z, p, umax, inj, diss, wall, dnu, dmu, dal, injz, dissz, wps;
  for (const auto& r : pending_) {
    step.push_back(r.d.step);
    t.push_back(r.d.t);
    dt.push_back(r.d.dt);
    e.push_back(r.d.energy);
    z.push_back(r.d.enstrophy);
    p.push_back(r.d.palinstrophy);
    umax.push_back(r.d.max_u);
    limit.push_back(limit_code(r.d.cfl_limit));
    inj.push_back(r.d.injection);
    diss.push_back(r.d.dissipation);
    wall.push_back(r.wall);
    dnu.push_back(r.d.dissipation_nu);
    dmu.push_back(r.d.dissipation_mu);
    dal.push_back(r.d.dissipation_alpha);
    injz.push_back(r.d.injection_z);
    dissz.push_back(r.d.dissipation_z);
    wps.push_back(r.d.wall_per_step);
  }
  pending_.clear();
  pending_.shrink_to_fit();
  const H5Writer::Mode mode = fresh_ ? H5Writer::Mode::Create : H5Writer::Mode::Append;
  fresh_ = false;
  return [=, path = h5_path_] {
    H5Writer f(path, mode);
    write_provenance(f, config, backend);
    f.append_series("/step", step, "1", "time step number");
    f.append_series("/t", t, 1, "time", "simulation time");
    f.append_series("/dt", dt, 1, "time", "the step that ended at t (0 at the start)");
    f.append_series("/E", e, 1, "length^2/time^2", "energy 1/2 <|u|^2>");
    f.append_series("/Z", z, 1, "1/time^2", "enstrophy 1/2 <omega^2>");
    f.append_series("/P", p, 1, "1/(length^2 time^2)", "palinstrophy 1/2 <|grad omega|^2>");
    f.append_series("/max_u", umax, 1, "length/time", "max |u|");
    f.append_series("/cfl_limit", limit, "1", "what bound dt: 0 none, 1 cfl, 2 dt_max, 3 growth, 4 output");
    f.append_series("/injection", inj, 1, "length^2/time^3",
                    "dE/dt from the forcing (mean over the interval since the previous row)");
    f.append_series("/dissipation", diss, 1, "length^2/time^3",
                    "-dE/dt from D(k) (mean over the interval since the previous row)");
    f.append_series("/wall_seconds", wall, 1, "s", "wall time since the run (or restart) began");
    f.append_series("/dissipation_nu", dnu, 1, "length^2/time^3", "-dE/dt by viscosity nu k^2p");
    f.append_series("/dissipation_mu", dmu, 1, "length^2/time^3", "-dE/dt by friction mu");
    f.append_series("/dissipation_alpha", dal, 1, "length^2/time^3", "-dE/dt by hypoviscosity alpha k^-2q");
    f.append_series("/injection_Z", injz, 1, "1/time^3", "dZ/dt from the forcing");
    f.append_series("/dissipation_Z", dissz, 1, "1/time^3", "-dZ/dt from D(k)");
    f.append_series("/wall_per_step", wps, 1, "s", "wall seconds per step over the interval");
    f.close();
  };
}

// ---------------------------------------------------------------- spectra

SpectraLog::SpectraLog(const std::string& dir, bool restart, double t_keep, const std::vector<double>& k)
    : path_(dir + "/spectra.h5"), k_(k) {
  if (!restart || !exists(path_)) return;
  H5Reader r(path_);
  const auto t = r.read_double("/t");
  const auto step = r.read_int("/step");
  const auto e = r.read_double("/E");
  const auto z = r.read_double("/Z");
  const auto pe = r.has("/Pi") ? r.read_double("/Pi") : std::vector<double>(e.size(), 0.0);
  const auto pz = r.has("/Pi_Z") ? r.read_double("/Pi_Z") : std::vector<double>(e.size(), 0.0);
  const auto kk = r.read_double("/k");
  if (kk.size() != k_.size() || kk != k_) {
    // A resized restart: start() keeps the earlier series under its own name; a new one starts.
    set_aside_ = fmt::format("{}/spectra_until_t{}.h5", dir, t_keep);
    return;
  }
  const std::size_t n = k_.size();
  const std::size_t rows = t.size();
  if (step.size() != rows || e.size() != rows * n || z.size() != rows * n || pe.size() != rows * n ||
      pz.size() != rows * n)
    throw InputError(fmt::format("{}: its datasets disagree in length ({} times, {} steps, {} x {} spectra): "
                                 "corrupt or edited",
                                 path_, rows, step.size(), e.size(), n));
  for (std::size_t row = 0; row < t.size() && t[row] <= t_keep; ++row) {
    t_.push_back(t[row]);
    step_.push_back(step[row]);
    energy_.insert(energy_.end(), e.begin() + row * n, e.begin() + (row + 1) * n);
    enstrophy_.insert(enstrophy_.end(), z.begin() + row * n, z.begin() + (row + 1) * n);
    flux_.insert(flux_.end(), pe.begin() + row * n, pe.begin() + (row + 1) * n);
    flux_z_.insert(flux_z_.end(), pz.begin() + row * n, pz.begin() + (row + 1) * n);
  }
}

void SpectraLog::start() {
  if (set_aside_.empty()) return;
  if (std::rename(path_.c_str(), set_aside_.c_str()) != 0)
    throw RunError("cannot rename '" + path_ + "' to '" + set_aside_ + "': " + std::strerror(errno));
}

void SpectraLog::append(double t, long step, const std::vector<double>& e, const std::vector<double>& z,
                        const std::vector<double>& pe, const std::vector<double>& pz) {
  t_.push_back(t);
  step_.push_back(step);
  energy_.insert(energy_.end(), e.begin(), e.end());
  enstrophy_.insert(enstrophy_.end(), z.begin(), z.end());
  flux_.insert(flux_.end(), pe.begin(), pe.end());
  flux_z_.insert(flux_z_.end(), pz.begin(), pz.end());
}

std::function<void()> SpectraLog::h5_task(const Config& config, const std::string& backend, double dk) {
  const H5Writer::Mode mode = fresh_ ? H5Writer::Mode::Create : H5Writer::Mode::Append;
  const bool with_k = fresh_;
  fresh_ = false;
  auto task = [=, path = path_, k = k_, t = std::move(t_), step = std::move(step_), e = std::move(energy_),
               z = std::move(enstrophy_), pe = std::move(flux_), pz = std::move(flux_z_)] {
    H5Writer f(path, mode);
    write_provenance(f, config, backend);
    f.attribute("dk", dk);
    if (with_k) f.write_series("/k", k, 1, "1/length", "shell centres: shell s holds s dk - dk/2 <= |k| < s dk + dk/2");
    f.append_series("/t", t, 1, "time", "simulation time of each spectrum");
    f.append_series("/step", step, "1", "time step number of each spectrum");
    f.append_series("/E", e, k.size(), "length^3/time^2",
                    "shell energy spectrum E(k) (time, k): sum over a shell / dk, so that sum E dk = E");
    f.append_series("/Z", z, k.size(), "length/time^2",
                    "shell enstrophy spectrum Z(k) (time, k): sum over a shell / dk, so that sum Z dk = Z");
    f.append_series("/Pi", pe, k.size(), "length^2/time^3",
                    "energy flux through k by the nonlinear term (time, k): minus its transfer summed over shells <= k");
    f.append_series("/Pi_Z", pz, k.size(), "1/time^3",
                    "enstrophy flux through k by the nonlinear term (time, k)");
    f.close();
  };
  // The moved-from rows are empty: the log holds only what the next task will add.
  t_.clear();
  step_.clear();
  energy_.clear();
  enstrophy_.clear();
  flux_.clear();
  flux_z_.clear();
  return task;
}

// ---------------------------------------------------------------- snapshots

std::string snapshot_name(long index) { return fmt::format("snap_{:06d}.h5", index); }

namespace {
const char kXdmfHead[] =
    "<?xml version=\"1.0\" ?>\n<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n<Xdmf Version=\"3.0\">\n <Domain>\n"
    "  <Grid Name=\"cascade\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
const char kXdmfTail[] = "  </Grid>\n </Domain>\n</Xdmf>\n";
const char kXdmfEntryStart[] = "   <Grid Name=\"snap_";
const char kXdmfEntryEnd[] = "   </Grid>\n";

std::string xdmf_entry(const SnapshotEntry& e) {
  std::string x;
  const std::string file = "snapshots/" + snapshot_name(e.index);
  x += fmt::format("{}{:06d}\" GridType=\"Uniform\">\n", kXdmfEntryStart, e.index);
  x += fmt::format("    <Time Value=\"{}\"/>\n", e.time);
  x += fmt::format("    <Topology TopologyType=\"2DCoRectMesh\" Dimensions=\"{} {}\"/>\n", e.ny, e.nx);
  x += "    <Geometry GeometryType=\"ORIGIN_DXDY\">\n";
  x += "     <DataItem Format=\"XML\" NumberType=\"Float\" Dimensions=\"2\">0 0</DataItem>\n";
  x += fmt::format("     <DataItem Format=\"XML\" NumberType=\"Float\" Dimensions=\"2\">{} {}</DataItem>\n", e.dy,
                   e.dx);
  x += "    </Geometry>\n";
  for (const auto& name : e.fields) {
    x += fmt::format("    <Attribute Name=\"{}\" AttributeType=\"Scalar\" Center=\"Node\">\n", name);
    x += fmt::format(
        "     <DataItem Format=\"HDF\" NumberType=\"Float\" Precision=\"{}\" Dimensions=\"{} {}\">{}:/{}</DataItem>\n",
        e.precision_bytes, e.ny, e.nx, file, name);
    x += "    </Attribute>\n";
  }
  x += kXdmfEntryEnd;
  return x;
}

//! The entries of an index this program wrote whose snapshot number is below `limit`, as
//! text; false if the file is missing or not one of ours.
bool kept_xdmf_entries(const std::string& path, long limit, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string head = kXdmfHead, tail = kXdmfTail;
  if (text.compare(0, head.size(), head) != 0 || text.size() < head.size() + tail.size() ||
      text.compare(text.size() - tail.size(), tail.size(), tail) != 0)
    return false;
  std::size_t at = head.size();
  const std::size_t end = text.size() - tail.size();
  out.clear();
  while (at < end) {
    if (text.compare(at, sizeof(kXdmfEntryStart) - 1, kXdmfEntryStart) != 0) return false;
    const std::size_t close = text.find(kXdmfEntryEnd, at);
    if (close == std::string::npos || close + sizeof(kXdmfEntryEnd) - 1 > end) return false;
    const std::size_t stop = close + sizeof(kXdmfEntryEnd) - 1;
    const std::string digits = text.substr(at + sizeof(kXdmfEntryStart) - 1, 6);
    if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() != 6) return false;
    if (std::stol(digits) < limit) out += text.substr(at, stop - at);
    at = stop;
  }
  return true;
}

//! Add one entry at the end of an index this program wrote, in place: O(1) a snapshot, where
//! rewriting it would be O(snapshots). A crash half-way can leave it cut short; the index is
//! rebuilt from the snapshot files when a run restarts. False if the file does not end as
//! ours does (then the caller rewrites it whole).
bool append_xdmf_entry(const std::string& path, const std::string& entry) {
  std::FILE* f = std::fopen(path.c_str(), "r+b");
  if (!f) return false;
  const std::string tail = kXdmfTail;
  std::string found(tail.size(), '\0');
  bool ok = std::fseek(f, -long(tail.size()), SEEK_END) == 0 && std::fread(&found[0], 1, found.size(), f) == found.size() &&
            found == tail && std::fseek(f, -long(tail.size()), SEEK_END) == 0;
  if (ok) {
    const std::string more = entry + tail;
    ok = std::fwrite(more.data(), 1, more.size(), f) == more.size() && std::fflush(f) == 0;
    if (!ok) {
      const std::string why = std::strerror(errno);
      std::fclose(f);
      throw RunError("cannot write '" + path + "' (disk full or write error?): " + why);
    }
  }
  std::fclose(f);
  return ok;
}
}  // namespace

//! The entries of the snapshot files below `limit` in dir/snapshots, read from the files.
std::string SnapshotSeries::listed_entries(long limit) const {
  std::string out;
  for (const auto& name : list_dir(dir_ + "/snapshots")) {
    const long index = numbered(name, "snap_");
    if (index < 0 || index >= limit) continue;
    H5Reader r(dir_ + "/snapshots/" + name);
    SnapshotEntry e{index, r.attr_double("time"), {}, 8, grid_.nx, grid_.ny, grid_.dx(), grid_.dy()};
    for (const char* f : {"vorticity", "streamfunction", "u", "v"})
      if (r.has(std::string("/") + f)) {
        e.fields.push_back(f);
        e.precision_bytes = r.float_size(std::string("/") + f);
        const auto shape = r.shape(std::string("/") + f);
        if (shape.size() == 2) {
          e.ny = int(shape[0]);
          e.nx = int(shape[1]);
        }
      }
    if (r.has_attribute("lx") && r.has_attribute("ly")) {
      e.dx = r.attr_double("lx") / e.nx;
      e.dy = r.attr_double("ly") / e.ny;
    }
    out += xdmf_entry(e);
  }
  return out;
}

SnapshotSeries::SnapshotSeries(const std::string& dir, const Grid& grid, long next_index)
    : dir_(dir), grid_(grid), next_(next_index) {
  // A restart keeps the entries of the snapshots written before the checkpoint: from the
  // index when it is whole (no file is opened), else from the files themselves.
  if (next_index > 0 && !kept_xdmf_entries(dir + "/snapshots.xmf", next_index, kept_))
    kept_ = listed_entries(next_index);
}

void SnapshotSeries::start() { make_directories(dir_ + "/snapshots"); }

template <class Real>
std::function<void()> SnapshotSeries::task(const Config& config, const std::string& backend, double t, long step,
                                           double dt, std::vector<std::pair<std::string, std::vector<Real>>> fields) {
  SnapshotEntry e{next_, t, {}, int(sizeof(Real)), grid_.nx, grid_.ny, grid_.dx(), grid_.dy()};
  for (const auto& f : fields) e.fields.push_back(f.first);
  ++next_;
  const std::string path = dir_ + "/snapshots/" + snapshot_name(e.index);
  const std::string entry = xdmf_entry(e);
  // The first snapshot of a run (or restart) writes the index whole; later ones add to it.
  const std::string whole = fresh_ ? kXdmfHead + kept_ + entry + kXdmfTail : std::string();
  fresh_ = false;
  kept_.clear();
  const std::string xmf_path = dir_ + "/snapshots.xmf";
  const Grid g = grid_;
  const long count = next_;
  return [=, dir = dir_, fields = std::move(fields)] {
    H5Writer f(path);
    write_provenance(f, config, backend);
    f.attribute("time", t);
    f.attribute("step", static_cast<long long>(step));
    f.attribute("dt", dt);
    f.attribute("lx", g.lx);
    f.attribute("ly", g.ly);
    for (const auto& [name, values] : fields) {
      const bool w = name == "vorticity", s = name == "streamfunction";
      f.write_2d("/" + name, values.data(), g.ny, g.nx,
                 w ? "1/time" : s ? "length^2/time" : "length/time",
                 w ? "vorticity omega = dv/dx - du/dy"
                   : s ? "streamfunction psi, omega = -lap(psi), zero mean"
                       : (name == "u" ? "velocity u = dpsi/dy" : "velocity v = -dpsi/dx"));
    }
    f.close();
    if (!whole.empty()) {
      write_text_atomically(xmf_path, whole);
    } else if (!append_xdmf_entry(xmf_path, entry)) {
      // Not as this run left it (edited, or cut short): rebuild it from the files.
      SnapshotSeries again(dir, g, 0);
      write_text_atomically(xmf_path, kXdmfHead + again.listed_entries(count) + kXdmfTail);
    }
  };
}

template std::function<void()> SnapshotSeries::task<float>(const Config&, const std::string&, double, long, double,
                                                            std::vector<std::pair<std::string, std::vector<float>>>);
template std::function<void()> SnapshotSeries::task<double>(const Config&, const std::string&, double, long, double,
                                                             std::vector<std::pair<std::string, std::vector<double>>>);

// ---------------------------------------------------------------- checkpoints

std::string checkpoint_path(const std::string& dir, long step) {
  return fmt::format("{}/checkpoints/ckpt_{:06d}.h5", dir, step);
}

namespace {
//! The checksum covers the state's bytes and the scalars a restart depends on.
std::string state_checksum(const void* data, std::size_t bytes, const CheckpointMeta& m) {
  std::uint64_t h = checksum64(data, bytes);
  const double scalars[3] = {m.time, m.dt, double(m.step)};
  h = checksum64(scalars, sizeof(scalars), h);
  return fmt::format("fnv1a64w:{:016x}", h);
}
}  // namespace

template <class Real>
std::function<void()> checkpoint_task(const std::string& path, const Config& config, const std::string& backend,
                                      std::vector<Complex<Real>> omega_hat, const CheckpointMeta& meta) {
  return [=, hat = std::move(omega_hat)] {
    const Grid g = config.make_grid();
    H5Writer f(path);
    write_provenance(f, config, backend);
    f.attribute("time", meta.time);
    f.attribute("step", static_cast<long long>(meta.step));
    f.attribute("dt", meta.dt);
    f.attribute("snapshot_index", static_cast<long long>(meta.snapshot_index));
    f.attribute("nx", static_cast<long long>(g.nx));
    f.attribute("ny", static_cast<long long>(g.ny));
    f.group("/state");
    f.write("/state/omega_hat", reinterpret_cast<const Real*>(hat.data()),
            {std::uint64_t(g.ny), std::uint64_t(g.nxh()), 2}, "1/time (times nx ny: unnormalised DFT)",
            "exact spectral state: the unnormalised real-to-complex DFT of omega, (ky, kx, re/im)");
    f.group("/stepper");
    f.attribute("name", meta.stepper, "/stepper");
    f.attribute("dt_previous", meta.dt, "/stepper");
    f.group("/rng");
    f.attribute("seed", meta.seed, "/rng");
    f.attribute("counter", static_cast<long long>(meta.step), "/rng");
    f.group("/budget");
    static const char* const names[BudgetState::kTerms] = {"diss_nu", "diss_mu", "diss_alpha",
                                                           "diss_z", "inj", "inj_z"};
    for (int q = 0; q < BudgetState::kTerms; ++q) f.attribute(names[q], meta.budget.integral[q], "/budget");
    f.attribute("interval", meta.budget.interval, "/budget");
    f.attribute("last_dt", meta.budget.last_dt, "/budget");
    f.attribute("open", static_cast<long long>(meta.budget.open), "/budget");
    f.attribute("generator", std::string("counter-based: SplitMix64 mix of (seed, step, mode)"), "/rng");
    f.attribute("checksum", state_checksum(hat.data(), hat.size() * sizeof(Complex<Real>), meta));
    f.close();
  };
}

template std::function<void()> checkpoint_task<float>(const std::string&, const Config&, const std::string&,
                                                      std::vector<Complex<float>>, const CheckpointMeta&);
template std::function<void()> checkpoint_task<double>(const std::string&, const Config&, const std::string&,
                                                       std::vector<Complex<double>>, const CheckpointMeta&);

void prune_checkpoints(const std::string& dir, int keep, long now) {
  std::vector<std::pair<long, std::string>> found;
  for (const auto& name : list_dir(dir + "/checkpoints")) {
    const long step = numbered(name, "ckpt_");
    if (step > now) std::remove((dir + "/checkpoints/" + name).c_str());
    else if (step >= 0) found.emplace_back(step, dir + "/checkpoints/" + name);
  }
  std::sort(found.begin(), found.end());
  for (std::size_t i = 0; i + keep < found.size(); ++i) std::remove(found[i].second.c_str());
}

CheckpointFile read_checkpoint(const std::string& path, const std::vector<std::string>& overrides) {
  H5Reader r(path, Seal::Required);
  CheckpointFile c;
  c.path = path;
  for (const char* a : {"time", "step", "dt", "checksum", "deck_resolved", "precision", "nx", "ny"})
    if (!r.has_attribute(a)) throw InputError(path + ": not a cascade checkpoint (no attribute '" + a + "')");
  if (!r.has("/state/omega_hat")) throw InputError(path + ": missing dataset /state/omega_hat");
  c.meta.time = r.attr_double("time");
  c.meta.step = static_cast<long>(r.attr_int("step"));
  c.meta.dt = r.attr_double("dt");
  c.meta.snapshot_index = r.has_attribute("snapshot_index") ? static_cast<long>(r.attr_int("snapshot_index")) : 0;
  c.meta.stepper = r.has_attribute("name", "/stepper") ? r.attr_string("name", "/stepper") : "";
  c.meta.seed = r.has_attribute("seed", "/rng") ? r.attr_int("seed", "/rng") : 0;
  if (r.has("/budget")) {
    static const char* const names[BudgetState::kTerms] = {"diss_nu", "diss_mu", "diss_alpha",
                                                           "diss_z", "inj", "inj_z"};
    for (int q = 0; q < BudgetState::kTerms; ++q) c.meta.budget.integral[q] = r.attr_double(names[q], "/budget");
    c.meta.budget.interval = r.attr_double("interval", "/budget");
    c.meta.budget.last_dt = r.attr_double("last_dt", "/budget");
    c.meta.budget.open = r.attr_int("open", "/budget") != 0;
  }
  // The seal proves the bytes are those cascade wrote, not that they make sense (a file edited
  // and re-sealed, or written by a buggy tool): every value is checked as a deck value is.
  const long long nx = r.attr_int("nx"), ny = r.attr_int("ny");
  auto bad = [&](const std::string& what, const std::string& expected, const std::string& found) {
    throw InputError(fmt::format("{}: attribute {}: expected {}, found {}", path, what, expected, found));
  };
  if (nx < 4 || nx > (1 << 20) || nx % 2 || ny < 4 || ny > (1 << 20) || ny % 2)
    bad("nx, ny", "even sizes in [4, 1048576]", fmt::format("{} x {}", nx, ny));
  c.nx = static_cast<int>(nx);
  c.ny = static_cast<int>(ny);
  const CheckpointMeta& m = c.meta;
  if (!std::isfinite(m.time) || m.time < 0) bad("time", "a finite time >= 0", fmt::format("{}", m.time));
  if (m.step < 0) bad("step", "a step number >= 0", std::to_string(m.step));
  if ((m.step == 0) != (m.time == 0))
    bad("step", "step 0 exactly at t = 0", fmt::format("step {} at t = {}", m.step, m.time));
  if (!std::isfinite(m.dt) || m.dt < 0 || m.dt > m.time)
    bad("dt", "a step size in [0, time]", fmt::format("{}", m.dt));
  // At most one snapshot a step, plus the one at the start.
  if (m.snapshot_index < 0 || m.snapshot_index > m.step + 1)
    bad("snapshot_index", fmt::format("a snapshot count in [0, step + 1 = {}]", m.step + 1),
        std::to_string(m.snapshot_index));
  if (m.seed < 0 || m.seed > std::numeric_limits<int>::max()) bad("/rng seed", "an integer >= 0", std::to_string(m.seed));
  if (!m.stepper.empty() && m.stepper != "rk4" && m.stepper != "rk3")
    bad("/stepper name", "rk4 or rk3", "'" + m.stepper + "'");
  for (int q = 0; q < BudgetState::kTerms; ++q)
    if (!std::isfinite(m.budget.integral[q])) bad("/budget", "finite integrals", fmt::format("{}", m.budget.integral[q]));
  if (!std::isfinite(m.budget.interval) || m.budget.interval < 0 || !std::isfinite(m.budget.last_dt) ||
      m.budget.last_dt < 0)
    bad("/budget", "a finite interval and last step >= 0",
        fmt::format("{} and {}", m.budget.interval, m.budget.last_dt));
  if (r.has_attribute("run_id")) {
    c.run_id = r.attr_string("run_id");
    if (c.run_id.size() != 32 || c.run_id.find_first_not_of("0123456789abcdef") != std::string::npos)
      bad("run_id", "32 hex digits", "'" + c.run_id.substr(0, 64) + "'");
  }
  const std::string precision = r.attr_string("precision");
  if (precision != "double" && precision != "single")
    throw InputError(path + ": attribute precision is '" + precision + "', expected double or single");
  c.precision = precision == "single" ? Precision::Single : Precision::Double;
  const int want_bytes = c.precision == Precision::Single ? 4 : 8;
  const int bytes = r.float_size("/state/omega_hat");
  if (bytes != want_bytes)
    throw InputError(fmt::format("{}: /state/omega_hat holds {}-byte values but the checkpoint says precision {}",
                                 path, bytes, precision));
  const auto shape = r.shape("/state/omega_hat");
  if (c.nx < 4 || c.ny < 4 || shape.size() != 3 || shape[0] != std::uint64_t(c.ny) ||
      shape[1] != std::uint64_t(c.nx / 2 + 1) || shape[2] != 2)
    throw InputError(fmt::format("{}: /state/omega_hat has shape ({}) but the checkpoint's grid is {} x {} "
                                 "(expected ({}, {}, 2))",
                                 path, fmt::join(shape, ", "), c.nx, c.ny, c.ny, c.nx / 2 + 1));
  // Verify the checksum on the data in its stored precision.
  std::string sum;
  if (c.precision == Precision::Single) {
    const auto v = r.read_float("/state/omega_hat");
    sum = state_checksum(v.data(), v.size() * sizeof(float), c.meta);
    c.omega_hat.assign(v.begin(), v.end());
  } else {
    c.omega_hat = r.read_double("/state/omega_hat");
    sum = state_checksum(c.omega_hat.data(), c.omega_hat.size() * sizeof(double), c.meta);
  }
  const std::string stored = r.attr_string("checksum");
  if (sum != stored)
    throw InputError(path + ": checksum mismatch (stored " + stored + ", computed " + sum +
                     "): the file is corrupt");
  c.config = parse_deck(r.attr_string("deck_resolved"), path + " (deck)", overrides);
  // A different grid is a spectral resize, done only when asked for with --set grid.nx/ny.
  bool resize_asked = false;
  for (const auto& o : overrides) resize_asked = resize_asked || starts_with(o, "grid.nx=") || starts_with(o, "grid.ny=");
  if ((c.config.grid.nx != c.nx || c.config.grid.ny != c.ny) && !resize_asked)
    throw InputError(fmt::format("{}: the state is {} x {} but the deck asks for {} x {}; to resize, set both "
                                 "grid.nx and grid.ny with --set",
                                 path, c.nx, c.ny, c.config.grid.nx, c.config.grid.ny));
  return c;
}

}  // namespace cascade
