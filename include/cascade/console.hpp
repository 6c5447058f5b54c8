//! @file What a run shows: a progress line that updates in place on a terminal (plain periodic
//! lines otherwise, e.g. in batch jobs), messages, and the same text in log.txt without
//! control characters.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace cascade {

class Console {
 public:
  enum class Level { Quiet, Normal, Verbose };

  explicit Console(Level level);
  ~Console();
  Console(const Console&) = delete;
  Console& operator=(const Console&) = delete;

  //! Also write everything to this file (appended: a restart continues the same log).
  void open_log(const std::string& path);
  //! A message: shown unless quiet; logged.
  void info(const std::string& text);
  //! A detail: shown when verbose; logged.
  void detail(const std::string& text);
  //! Shown whatever the level (errors, the final summary); logged.
  void always(const std::string& text);
  //! The progress line: on a terminal it replaces the previous one in place; elsewhere it is
  //! printed only when `periodic` is true (every print_every steps). Logged when periodic.
  void progress(const std::string& text, bool periodic);
  bool terminal() const { return tty_; }
  //! Show and log nothing from now on (the ranks of an MPI run other than rank 0).
  void mute() { muted_ = true; }
  Level level() const { return level_; }

 private:
  void end_progress();
  void log(const std::string& text);
  Level level_;
  bool tty_;
  bool progress_open_ = false;
  bool muted_ = false;
  std::FILE* log_ = nullptr;
  std::vector<std::string> pending_;
};

//! A size in the unit that fits it: "512 bytes", "3.0 MiB", "1.25 GiB".
std::string human_bytes(double bytes);

}  // namespace cascade
