//! @file HDF5 output: self-describing files written to a temporary name and renamed on close.
#pragma once

#include <memory>
#include <string>

namespace cascade {

struct Config;

//! One HDF5 file. It is written as PATH.tmp-PID and renamed to PATH by close(), so a crash
//! never leaves a half-written file under the real name; the destructor of an unclosed
//! writer removes the temporary.
class H5Writer {
 public:
  explicit H5Writer(const std::string& path);
  ~H5Writer();
  H5Writer(const H5Writer&) = delete;
  H5Writer& operator=(const H5Writer&) = delete;

  //! A (ny, nx) dataset with `units` and `description` attributes.
  void write_2d(const std::string& name, const double* data, int ny, int nx, const std::string& units,
                const std::string& description);
  void write_2d(const std::string& name, const float* data, int ny, int nx, const std::string& units,
                const std::string& description);
  void attribute(const std::string& name, const std::string& value);
  void attribute(const std::string& name, double value);
  void attribute(const std::string& name, long long value);
  //! Flush, close and rename into place.
  void close();

  const std::string& path() const { return path_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string path_;
  std::string tmp_;
};

//! The attributes every cascade file carries: deck text, resolved deck, version, backend, precision.
void write_provenance(H5Writer& file, const Config& config, const std::string& backend);

//! mkdir -p; throws InputError naming the directory when it cannot be made or written.
void make_directories(const std::string& path);

}  // namespace cascade
