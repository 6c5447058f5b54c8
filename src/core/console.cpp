//! @file The run's console and log.txt.
#include "cascade/console.hpp"

#include <unistd.h>

#include <cstring>

#include <fmt/format.h>

namespace cascade {

Console::Console(Level level) : level_(level), tty_(::isatty(STDOUT_FILENO) == 1) {}

Console::~Console() {
  end_progress();
  if (log_) std::fclose(log_);
}

void Console::open_log(const std::string& path) {
  if (log_) std::fclose(log_);
  log_ = std::fopen(path.c_str(), "a");  // a missing log is not worth failing a run
  if (log_) {
    for (const auto& line : pending_) std::fprintf(log_, "%s\n", line.c_str());
    std::fflush(log_);
  }
  pending_.clear();
}

void Console::log(const std::string& text) {
  if (!log_) {
    pending_.push_back(text);  // what is said before the log exists goes into it when it does
    return;
  }
  std::fputs(text.c_str(), log_);
  std::fputc('\n', log_);
  std::fflush(log_);
}

void Console::end_progress() {
  if (progress_open_) {
    std::fputc('\n', stdout);
    std::fflush(stdout);
    progress_open_ = false;
  }
}

void Console::info(const std::string& text) {
  if (muted_) return;
  if (level_ != Level::Quiet) {
    end_progress();
    std::printf("%s\n", text.c_str());
    std::fflush(stdout);
  }
  log(text);
}

void Console::detail(const std::string& text) {
  if (muted_) return;
  if (level_ == Level::Verbose) {
    end_progress();
    std::printf("%s\n", text.c_str());
    std::fflush(stdout);
  }
  log(text);
}

void Console::always(const std::string& text) {
  if (muted_) return;
  end_progress();
  std::printf("%s\n", text.c_str());
  std::fflush(stdout);
  log(text);
}

void Console::progress(const std::string& text, bool periodic) {
  if (muted_) return;
  if (periodic) log(text);
  if (level_ == Level::Quiet) return;
  if (tty_) {
    // Carriage return, the line, then erase to the end of the line.
    std::printf("\r%s\033[K", text.c_str());
    std::fflush(stdout);
    progress_open_ = true;
    if (periodic && level_ == Level::Verbose) end_progress();  // keep a record on screen too
  } else if (periodic) {
    std::printf("%s\n", text.c_str());
    std::fflush(stdout);
  }
}

std::string human_bytes(double bytes) {
  if (bytes < 1024.0) return fmt::format("{:.0f} bytes", bytes);
  if (bytes < 1048576.0) return fmt::format("{:.1f} KiB", bytes / 1024.0);
  if (bytes < 1073741824.0) return fmt::format("{:.1f} MiB", bytes / 1048576.0);
  return fmt::format("{:.2f} GiB", bytes / 1073741824.0);
}

}  // namespace cascade
