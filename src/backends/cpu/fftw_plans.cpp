//! @file FFTW planning for the CPU executors: the planner lock, measured plans through the
//! wisdom file (fftw_plans.hpp says why), and where that file lives.
#include "backends/cpu/fftw_plans.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "cascade/backend.hpp"

namespace cascade {
namespace cpu {

std::mutex& planner_mutex() {
  static std::mutex m;
  return m;
}

namespace {

//! The directory of the running executable ("" where /proc/self/exe cannot be read).
std::string executable_directory() {
  std::string buf(4096, '\0');
  const ssize_t n = ::readlink("/proc/self/exe", &buf[0], buf.size());
  if (n <= 0 || std::size_t(n) >= buf.size()) return "";
  buf.resize(std::size_t(n));
  const auto slash = buf.rfind('/');
  return slash == std::string::npos ? "" : buf.substr(0, slash == 0 ? 1 : slash);
}

std::string directory_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
}

//! Read a whole (small) file; false with `why` if it is missing (`missing` set) or unreadable.
bool read_small_file(const std::string& path, std::string& text, std::string& why, bool& missing) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  missing = !in && errno == ENOENT;
  if (!in) {
    why = errno ? std::strerror(errno) : "cannot open";
    return false;
  }
  std::ostringstream s;
  s << in.rdbuf();
  text = s.str();
  if (text.size() > (std::size_t(16) << 20)) {  // wisdom is a few kB; this is something else
    why = "larger than 16 MiB";
    return false;
  }
  return true;
}

//! Write text to path through a temporary file beside it, flushed to disk and renamed over
//! it, so that a reader (another run) sees the old file or the new one, never a torn one.
//! Returns "" on success, else why not (the temporary file is removed).
std::string write_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp." + std::to_string(long(::getpid()));
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return std::string("cannot write ") + tmp + ": " + std::strerror(errno);
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  ok = std::fflush(f) == 0 && ok;
  ok = ::fsync(::fileno(f)) == 0 && ok;
  ok = std::fclose(f) == 0 && ok;
  if (ok && std::rename(tmp.c_str(), path.c_str()) == 0) return "";
  const std::string why = std::strerror(errno);
  std::remove(tmp.c_str());
  return "cannot write " + path + ": " + why;
}

//! An advisory lock on `fftw-wisdom.lock` in the wisdom's directory, held while measuring:
//! runs started together on one machine then measure one after another, so that they do not
//! time their candidates against each other, and the later ones find the first one's wisdom
//! and use the same plans. Best effort: where the lock file cannot be made or locked
//! (read-only directory, a file system without flock), or another run holds it for more than
//! ten minutes, planning goes on without it.
class WisdomLock {
 public:
  explicit WisdomLock(const std::string& wisdom_path) {
    if (wisdom_path.empty()) return;
    fd_ = ::open((directory_of(wisdom_path) + "/fftw-wisdom.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd_ < 0) return;
    const auto t0 = std::chrono::steady_clock::now();
    while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      waited_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if ((errno != EWOULDBLOCK && errno != EINTR) || waited_ > 600) {
        ::close(fd_);
        fd_ = -1;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  ~WisdomLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the lock
  }
  WisdomLock(const WisdomLock&) = delete;
  WisdomLock& operator=(const WisdomLock&) = delete;
  //! Seconds spent waiting for another run's planning (0 if none).
  double waited() const { return waited_; }

 private:
  int fd_ = -1;
  double waited_ = 0;
};

template <class Real>
std::string wisdom_string() {
  char* s = Fftw<Real>::export_wisdom();
  std::string text = s ? s : "";
  std::free(s);  // FFTW allocates it with malloc
  return text;
}

//! The wisdom this process has planned with, per precision: reimported before each measured
//! planning, ahead of the file's (FFTW keeps the first entry it has for a problem), so that a
//! process plans a size the same way every time even if another run rewrote the file since.
//! FFTW's own wisdom is forgotten after each planning, so that estimated plans never pick up
//! measured ones and stay the same everywhere.
template <class Real>
std::string& process_wisdom() {
  static std::string text;
  return text;
}

}  // namespace

//! Make a set of plans with the run's planning, under the planner lock: `make(flags)` makes
//! them all with those FFTW flags (FFTW_ESTIMATE or FFTW_MEASURE) and returns whether every
//! one was made; `drop()` destroys those made. Measured plans go through the wisdom file (the
//! comment above). `outcome` says how (for the backend's description).
template <class Real>
void plan_set(bool measure, const std::function<bool(unsigned)>& make, const std::function<void()>& drop,
              std::string& outcome) {
  using F = Fftw<Real>;
  F::forget_wisdom();
  if (!measure) {
    make(FFTW_ESTIMATE);
    F::forget_wisdom();
    outcome = "estimated plans";
    return;
  }
  const std::string path = fftw_wisdom_file(precision_of<Real>());
  const WisdomLock lock(path);
  std::string note;
  if (!process_wisdom<Real>().empty()) F::import_wisdom(process_wisdom<Real>());
  bool file_ok = false;
  if (!path.empty()) {
    std::string text, why;
    bool missing = false;
    if (!read_small_file(path, text, why, missing)) {
      if (!missing) note = "wisdom " + path + " unreadable (" + why + ")";
    } else if (!(file_ok = F::import_wisdom(text))) {
      // FFTW leaves its wisdom as it was when an import fails; the file is rewritten below.
      note = "wisdom " + path + " was not FFTW " + fftw_version + " " + to_string(precision_of<Real>()) +
             " wisdom: replaced";
    }
  }
  const std::string before = wisdom_string<Real>();
  const auto t0 = std::chrono::steady_clock::now();
  // FFTW_MEASURE runs its candidates on the arrays and overwrites them: `make` plans on scratch.
  const bool made = make(FFTW_MEASURE);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!made) {
    // FFTW replans by itself around inconsistent wisdom; this is the last resort.
    drop();
    F::forget_wisdom();
    make(FFTW_ESTIMATE);
    F::forget_wisdom();
    outcome = "estimated plans (measuring failed)";
    return;
  }
  const std::string after = wisdom_string<Real>();
  process_wisdom<Real>() = after;
  F::forget_wisdom();
  const bool measured = after != before;
  outcome = measured ? fmt::format("plans measured in {:.1f} s", seconds) : "measured plans from wisdom";
  if (lock.waited() >= 1) outcome += fmt::format(" after {:.0f} s waiting for another run's planning", lock.waited());
  if (path.empty()) {
    outcome += ", no wisdom file (CASCADE_FFTW_WISDOM is empty)";
  } else if (measured || !file_ok) {
    const std::string why = write_atomically(path, after);
    outcome += why.empty() ? ", wisdom saved to " + path : "; wisdom not saved: " + why;
  } else {
    outcome += " " + path;
  }
  if (!note.empty()) outcome += "; " + note;
}

template void plan_set<float>(bool, const std::function<bool(unsigned)>&, const std::function<void()>&, std::string&);
template void plan_set<double>(bool, const std::function<bool(unsigned)>&, const std::function<void()>&, std::string&);

}  // namespace cpu

std::string fftw_wisdom_file(Precision precision) {
  std::string dir;
  if (const char* env = std::getenv("CASCADE_FFTW_WISDOM")) {
    dir = env;
    if (dir.empty() || dir == "none") return "";
  } else {
    dir = cpu::executable_directory();
    if (dir.empty()) return "";
  }
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir + "/fftw-wisdom-" + to_string(precision);
}

}  // namespace cascade
