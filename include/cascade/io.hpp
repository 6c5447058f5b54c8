//! @file HDF5 files: self-describing writers (temporary name, renamed on close) and a checked
//! reader whose failures are one-line InputErrors naming the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace cascade {

struct Config;

//! One HDF5 file being written. It is written as PATH.tmp-PID and renamed to PATH by close(),
//! so a crash never leaves a half-written file under the real name; the destructor of an
//! unclosed writer removes the temporary.
class H5Writer {
 public:
  //! Create: a new file. Append: a copy of the file at `path` (when there is one, its seal
  //! verified) that append_series grows; renamed over it by close(), so that a crash leaves
  //! the old file whole.
  enum class Mode { Create, Append };
  explicit H5Writer(const std::string& path, Mode mode = Mode::Create);
  ~H5Writer();
  H5Writer(const H5Writer&) = delete;
  H5Writer& operator=(const H5Writer&) = delete;

  //! A dataset of any rank, in double or float, with `units` and `description` attributes (and
  //! CF's `long_name`, the description again).
  void write(const std::string& name, const double* data, const std::vector<std::uint64_t>& shape,
             const std::string& units, const std::string& description);
  void write(const std::string& name, const float* data, const std::vector<std::uint64_t>& shape,
             const std::string& units, const std::string& description);
  //! (ny, nx) shorthand.
  template <class T>
  void write_2d(const std::string& name, const T* data, int ny, int nx, const std::string& units,
                const std::string& description) {
    write(name, data, {std::uint64_t(ny), std::uint64_t(nx)}, units, description);
  }
  //! A time series: rank 1 (rows) or 2 (rows x cols), chunked and extendable along the rows.
  void write_series(const std::string& name, const std::vector<double>& data, std::uint64_t cols,
                    const std::string& units, const std::string& description);
  void write_series(const std::string& name, const std::vector<long long>& data, const std::string& units,
                    const std::string& description);
  //! Rows added to a series written by write_series or append_series (created if absent).
  void append_series(const std::string& name, const std::vector<double>& data, std::uint64_t cols,
                     const std::string& units, const std::string& description);
  void append_series(const std::string& name, const std::vector<long long>& data, const std::string& units,
                     const std::string& description);
  //! Rows of any shape `tail` (rank 1 + tail.size(): an ensemble's (t, member, k)), and
  //! integer rows of `cols` columns (an ensemble's (t, member)).
  void append_series(const std::string& name, const std::vector<double>& data, const std::vector<std::uint64_t>& tail,
                     const std::string& units, const std::string& description);
  void append_series(const std::string& name, const std::vector<long long>& data, std::uint64_t cols,
                     const std::string& units, const std::string& description);
  //! netCDF-4 dimensions (docs/output-format.md, Dimensions): the rank-1 `values` as the
  //! coordinate variable `name` of the dimension of the same name (an HDF5 dimension scale),
  //! with CF's `axis` where one is given ("X", "Y", "T").
  void coordinate(const std::string& name, const std::vector<double>& values, const std::string& units,
                  const std::string& description, const std::string& axis = "");
  //! The same with integer values (an ensemble's `member`: 0, 1, ..., members - 1).
  void integer_coordinate(const std::string& name, const std::vector<long long>& values, const std::string& units,
                          const std::string& description);
  //! Make a rank-1 dataset already written (a series such as /t) a coordinate variable.
  void coordinate(const std::string& name);
  //! Name the dimensions of the dataset `name` by coordinate variables (paths), one a dimension,
  //! in order; dimensions named already are left as they are (a file being appended to).
  void dimensions(const std::string& name, const std::vector<std::string>& coordinates);
  void group(const std::string& name);
  //! Attributes on the root ("/") or on any group or dataset already written.
  void attribute(const std::string& name, const std::string& value, const std::string& object = "/");
  void attribute(const std::string& name, const char* value, const std::string& object = "/") {
    attribute(name, std::string(value), object);
  }
  void attribute(const std::string& name, double value, const std::string& object = "/");
  void attribute(const std::string& name, long long value, const std::string& object = "/");
  //! Flush, close, fsync and rename into place.
  void close();

  const std::string& path() const { return path_; }

 private:
  template <class Fn>
  void guarded(const std::string& what, Fn&& fn);  //!< library failures name the file
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string path_;
  std::string tmp_;
};

//! Every file H5Writer makes starts with a user block of this size (HDF5 and h5py skip it)
//! holding the seal: "cascade-seal 1 fnv1a64w:SUM BYTES", the checksum64 of the BYTES after
//! the block. A reader verifies it before HDF5 parses anything.
constexpr std::size_t kSealBlockBytes = 512;
enum class Seal { IfPresent, Required };

//! InputError unless the file matches its seal; a file with no seal passes unless `required`.
void verify_seal(const std::string& path, bool required);
//! Whether the file starts like an HDF5 file or a sealed cascade file (reads 16 bytes).
bool is_hdf5_file(const std::string& path);
//! InputError unless `path` is a sealed cascade HDF5 file that can be re-sealed (changes nothing).
void check_resealable(const std::string& path);
//! Renew the seal of a file cascade wrote and someone then edited on purpose (`cascade seal`).
void reseal(const std::string& path);

//! An HDF5 file opened for reading. Every failure (cannot open, missing object, wrong shape)
//! throws InputError with one line: "FILE: what". No read allocates more than the file could
//! hold: a dataset or string attribute that declares more bytes than the file has (a crafted
//! or truncated file) is refused before any memory is taken for it.
class H5Reader {
 public:
  //! Verifies the seal first (see kSealBlockBytes): required for checkpoints.
  explicit H5Reader(const std::string& path, Seal seal = Seal::IfPresent);
  ~H5Reader();
  H5Reader(const H5Reader&) = delete;
  H5Reader& operator=(const H5Reader&) = delete;

  bool has(const std::string& object) const;
  bool has_attribute(const std::string& name, const std::string& object = "/") const;
  std::vector<std::uint64_t> shape(const std::string& dataset) const;
  //! Size in bytes of one element of a floating-point dataset (4 or 8); throws if not float.
  int float_size(const std::string& dataset) const;
  std::vector<double> read_double(const std::string& dataset) const;
  std::vector<float> read_float(const std::string& dataset) const;
  std::vector<long long> read_int(const std::string& dataset) const;
  std::string attr_string(const std::string& name, const std::string& object = "/") const;
  double attr_double(const std::string& name, const std::string& object = "/") const;
  long long attr_int(const std::string& name, const std::string& object = "/") const;
  const std::string& path() const { return path_; }

 private:
  [[noreturn]] void fail(const std::string& what) const;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string path_;
};

//! The coordinate variables /x (nx) and /y (ny) of a field's grid, in `group` ("" for the root):
//! the positions x_i = i lx/nx and y_j = j ly/ny of the values.
void write_grid_coordinates(H5Writer& file, int nx, int ny, double lx, double ly, const std::string& group = "");

//! The attributes every cascade file carries: deck text, resolved deck, version, backend, precision.
void write_provenance(H5Writer& file, const Config& config, const std::string& backend);

//! mkdir -p; throws InputError naming the directory when it cannot be made or written.
void make_directories(const std::string& path);

//! Check that the names a run makes under `path` fit the system's limits (PATH_MAX, 255 a name).
void check_output_path(const std::string& path);
//! Check that `path` can be created and written, creating nothing (InputError otherwise).
void check_output_directory(const std::string& path);

//! Write a text file atomically (temporary name, flush, fsync, rename).
void write_text_atomically(const std::string& path, const std::string& text);

//! 64-bit FNV-1a over the bytes, in 8-byte words (fast enough for multi-GB states).
std::uint64_t checksum64(const void* data, std::size_t bytes, std::uint64_t seed = 0xcbf29ce484222325ull);

}  // namespace cascade
