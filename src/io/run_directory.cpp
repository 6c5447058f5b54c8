//! @file The run directory (docs/output-format.md): what makes a folder a run's, its lock and
//! its run id, clearing it for --overwrite, the temporaries of killed writes; and the
//! background writer that keeps file writes off the time-stepping thread.
#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "cascade/error.hpp"
#include "cascade/io.hpp"
#include "cascade/output.hpp"
#include "io/output_files.hpp"

namespace cascade {

// ---------------------------------------------------------------- file-system helpers

namespace output_files {

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

long numbered(const std::string& name, const std::string& prefix) {
  if (!starts_with(name, prefix) || !ends_with(name, ".h5")) return -1;
  const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - 3);
  if (digits.empty() || digits.size() > 15 || digits.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stol(digits);
}

}  // namespace output_files

using namespace output_files;

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

}  // namespace cascade
