//! @file HDF5 writer and reader with checked calls, atomic rename, and provenance attributes; the
//! seal they write and verify is seal.cpp.
#include <algorithm>
#include <fcntl.h>
#include <fmt/format.h>
#include <hdf5.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "cascade/config.hpp"
#include "cascade/error.hpp"
#include "cascade/io.hpp"
#include "cascade/version.hpp"
#include "io/dimensions.hpp"
#include "io/seal.hpp"

namespace cascade {

namespace io_detail {

void quiet_hdf5() {
  static const bool done = [] {
    // No library clean-up at exit: after a failed write (a full disk) HDF5 would retry the
    // failed file's flush from its atexit handler and crash; files are closed explicitly.
    H5dont_atexit();
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    return true;
  }();
  (void)done;
}

}  // namespace io_detail

using io_detail::FileDescriptor;
using io_detail::quiet_hdf5;
using io_detail::read_full;
using io_detail::write_seal;

namespace {
//! Closes an HDF5 identifier with the matching call when it goes out of scope.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  ~Handle() {
    if (id_ >= 0) closer_(id_);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  operator hid_t() const { return id_; }
  bool ok() const { return id_ >= 0; }

 private:
  hid_t id_;
  Closer closer_;
};

void string_attribute(hid_t obj, const std::string& name, const std::string& value) {
  Handle type(CASCADE_CHECK_HDF5(H5Tcopy(H5T_C_S1)), H5Tclose);
  CASCADE_CHECK_HDF5(H5Tset_size(type, value.empty() ? 1 : value.size()));
  CASCADE_CHECK_HDF5(H5Tset_cset(type, H5T_CSET_UTF8));
  Handle space(CASCADE_CHECK_HDF5(H5Screate(H5S_SCALAR)), H5Sclose);
  if (H5Aexists(obj, name.c_str()) > 0) CASCADE_CHECK_HDF5(H5Adelete(obj, name.c_str()));
  Handle attr(CASCADE_CHECK_HDF5(H5Acreate2(obj, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT)),
              H5Aclose);
  CASCADE_CHECK_HDF5(H5Awrite(attr, type, value.empty() ? "" : value.c_str()));
}

template <class T>
void scalar_attribute(hid_t obj, const std::string& name, hid_t type, T value) {
  Handle space(CASCADE_CHECK_HDF5(H5Screate(H5S_SCALAR)), H5Sclose);
  if (H5Aexists(obj, name.c_str()) > 0) CASCADE_CHECK_HDF5(H5Adelete(obj, name.c_str()));
  Handle attr(CASCADE_CHECK_HDF5(H5Acreate2(obj, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT)),
              H5Aclose);
  CASCADE_CHECK_HDF5(H5Awrite(attr, type, &value));
}

void write_dataset(hid_t file, const std::string& name, hid_t type, const void* data,
                   const std::vector<std::uint64_t>& shape, bool extendable, const std::string& units,
                   const std::string& description) {
  std::vector<hsize_t> dims(shape.begin(), shape.end()), maxdims = dims, chunk = dims;
  Handle plist(CASCADE_CHECK_HDF5(H5Pcreate(H5P_DATASET_CREATE)), H5Pclose);
  if (extendable) {
    maxdims[0] = H5S_UNLIMITED;
    chunk[0] = 256;  // rows per chunk: appends touch one chunk at a time
    hsize_t row = 1;
    for (std::size_t d = 1; d < chunk.size(); ++d) row *= chunk[d] = dims[d] > 0 ? dims[d] : 1;
    // Rows of more than one dimension (an ensemble's (t, member, k)): chunks of about a MiB.
    if (chunk.size() > 2) chunk[0] = std::max<hsize_t>(1, std::min<hsize_t>(256, (hsize_t(1) << 17) / row));
    CASCADE_CHECK_HDF5(H5Pset_chunk(plist, int(chunk.size()), chunk.data()));
  }
  Handle space(CASCADE_CHECK_HDF5(H5Screate_simple(int(dims.size()), dims.data(), maxdims.data())), H5Sclose);
  Handle set(CASCADE_CHECK_HDF5(H5Dcreate2(file, name.c_str(), type, space, H5P_DEFAULT, plist, H5P_DEFAULT)),
             H5Dclose);
  bool empty = false;
  for (hsize_t d : dims) empty = empty || d == 0;
  if (!empty) CASCADE_CHECK_HDF5(H5Dwrite(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data));
  string_attribute(set, "units", units);
  string_attribute(set, "description", description);
  string_attribute(set, "long_name", description);  // CF's name for it, which xarray shows
}
}  // namespace

// ---------------------------------------------------------------- writer

struct H5Writer::Impl {
  hid_t file = -1;
};

namespace {
//! Copy a file byte for byte (in the kernel where it can: copy_file_range).
void copy_file(const std::string& from, const std::string& to) {
  FileDescriptor in(from, O_RDONLY);
  if (!in.ok()) throw RunError("cannot open '" + from + "': " + std::strerror(errno));
  FileDescriptor out(to, O_WRONLY | O_CREAT | O_TRUNC);
  if (!out.ok()) throw RunError("cannot create '" + to + "': " + std::strerror(errno));
  struct stat st{};
  if (::fstat(in.get(), &st) != 0) throw RunError("cannot stat '" + from + "': " + std::strerror(errno));
  std::uint64_t done = 0;
  const std::uint64_t size = std::uint64_t(st.st_size);
  std::vector<unsigned char> buffer;
  while (done < size) {
    ssize_t n = ::copy_file_range(in.get(), nullptr, out.get(), nullptr, size - done, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {  // no kernel copy here (or the end): plain reads and writes
      if (buffer.empty()) buffer.resize(std::size_t(4) << 20);
      const long long got = read_full(in.get(), buffer.data(), buffer.size(), done);
      if (got <= 0) throw RunError("cannot read '" + from + "': " + std::strerror(errno));
      n = ::pwrite(out.get(), buffer.data(), std::size_t(got), off_t(done));
      if (n != static_cast<ssize_t>(got))
        throw RunError("cannot write '" + to + "' (disk full or write error?): " + std::strerror(errno));
    }
    done += std::uint64_t(n);
  }
}
}  // namespace

H5Writer::H5Writer(const std::string& path, Mode mode) : impl_(std::make_unique<Impl>()), path_(path) {
  quiet_hdf5();
  tmp_ = path + ".tmp-" + std::to_string(::getpid());
  struct stat st{};
  if (mode == Mode::Append && ::stat(path.c_str(), &st) == 0) {
    // A copy of the file grows; the file itself stays as it was until the rename.
    try {
      verify_seal(path, false);
    } catch (const InputError& e) {
      throw RunError(std::string("cannot append to a corrupt file: ") + e.what());
    }
    try {
      copy_file(path, tmp_);
    } catch (...) {
      std::remove(tmp_.c_str());
      throw;
    }
    impl_->file = H5Fopen(tmp_.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    if (impl_->file < 0) {
      std::remove(tmp_.c_str());
      throw RunError("cannot open '" + tmp_ + "' to append to it");
    }
    return;
  }
  // The user block (skipped by every HDF5 reader, h5py included) holds the seal.
  Handle fcpl(CASCADE_CHECK_HDF5(H5Pcreate(H5P_FILE_CREATE)), H5Pclose);
  CASCADE_CHECK_HDF5(H5Pset_userblock(fcpl, kSealBlockBytes));
  // Objects listed in the order written (netCDF readers and xarray show them so), not by name.
  CASCADE_CHECK_HDF5(H5Pset_link_creation_order(fcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED));
  impl_->file = H5Fcreate(tmp_.c_str(), H5F_ACC_TRUNC, fcpl, H5P_DEFAULT);
  if (impl_->file < 0) throw RunError("cannot create HDF5 file '" + tmp_ + "'");
}

template <class Fn>
void H5Writer::guarded(const std::string& what, Fn&& fn) {
  try {
    fn();
  } catch (const RunError& e) {
    throw RunError("cannot write HDF5 file '" + tmp_ + "' (" + what + "; disk full or write error?): " + e.what());
  }
}

H5Writer::~H5Writer() {
  if (impl_ && impl_->file >= 0) {
    H5Fclose(impl_->file);
    std::remove(tmp_.c_str());
  }
}

void H5Writer::write(const std::string& name, const double* data, const std::vector<std::uint64_t>& shape,
                     const std::string& units, const std::string& description) {
  guarded(name, [&] { write_dataset(impl_->file, name, H5T_NATIVE_DOUBLE, data, shape, false, units, description); });
}
void H5Writer::write(const std::string& name, const float* data, const std::vector<std::uint64_t>& shape,
                     const std::string& units, const std::string& description) {
  guarded(name, [&] { write_dataset(impl_->file, name, H5T_NATIVE_FLOAT, data, shape, false, units, description); });
}
void H5Writer::write_series(const std::string& name, const std::vector<double>& data, std::uint64_t cols,
                            const std::string& units, const std::string& description) {
  const std::uint64_t rows = cols ? data.size() / cols : 0;
  std::vector<std::uint64_t> shape = cols > 1 ? std::vector<std::uint64_t>{rows, cols}
                                              : std::vector<std::uint64_t>{std::uint64_t(data.size())};
  guarded(name, [&] { write_dataset(impl_->file, name, H5T_NATIVE_DOUBLE, data.data(), shape, true, units, description); });
}
namespace {
//! Add rows to an extendable dataset whose row has the shape `tail` (rank 1 + tail.size()), or
//! create it.
void append_rows(hid_t file, const std::string& name, hid_t type, const void* data, std::uint64_t rows,
                 const std::vector<std::uint64_t>& tail, const std::string& units, const std::string& description) {
  const int rank = 1 + int(tail.size());
  if (H5Lexists(file, name.c_str(), H5P_DEFAULT) <= 0) {
    std::vector<std::uint64_t> shape{rows};
    shape.insert(shape.end(), tail.begin(), tail.end());
    write_dataset(file, name, type, data, shape, true, units, description);
    return;
  }
  Handle set(CASCADE_CHECK_HDF5(H5Dopen2(file, name.c_str(), H5P_DEFAULT)), H5Dclose);
  std::vector<hsize_t> dims(std::size_t(rank), 0);
  {
    Handle space(CASCADE_CHECK_HDF5(H5Dget_space(set)), H5Sclose);
    const int found = H5Sget_simple_extent_ndims(space);
    if (found != rank) throw RunError("cannot append to " + name + ": it has rank " + std::to_string(found));
    H5Sget_simple_extent_dims(space, dims.data(), nullptr);
    for (std::size_t d = 0; d < tail.size(); ++d)
      if (dims[d + 1] != tail[d])
        throw RunError("cannot append to " + name + ": its dimension " + std::to_string(d + 1) + " has " +
                       std::to_string(dims[d + 1]) + " entries, not " + std::to_string(tail[d]));
  }
  if (rows == 0) return;
  std::vector<hsize_t> start(std::size_t(rank), 0), count(dims), grown(dims);
  start[0] = dims[0];
  count[0] = rows;
  grown[0] = dims[0] + rows;
  CASCADE_CHECK_HDF5(H5Dset_extent(set, grown.data()));
  Handle file_space(CASCADE_CHECK_HDF5(H5Dget_space(set)), H5Sclose);
  CASCADE_CHECK_HDF5(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr));
  Handle memory_space(CASCADE_CHECK_HDF5(H5Screate_simple(rank, count.data(), nullptr)), H5Sclose);
  CASCADE_CHECK_HDF5(H5Dwrite(set, type, memory_space, file_space, H5P_DEFAULT, data));
}

std::uint64_t product(const std::vector<std::uint64_t>& tail) {
  std::uint64_t n = 1;
  for (auto d : tail) n *= d;
  return n;
}
}  // namespace

void H5Writer::append_series(const std::string& name, const std::vector<double>& data, std::uint64_t cols,
                             const std::string& units, const std::string& description) {
  append_series(name, data, cols > 1 ? std::vector<std::uint64_t>{cols} : std::vector<std::uint64_t>{}, units,
                description);
}
void H5Writer::append_series(const std::string& name, const std::vector<double>& data,
                             const std::vector<std::uint64_t>& tail, const std::string& units,
                             const std::string& description) {
  const std::uint64_t n = product(tail), rows = n ? data.size() / n : 0;
  guarded(name, [&] { append_rows(impl_->file, name, H5T_NATIVE_DOUBLE, data.data(), rows, tail, units, description); });
}
void H5Writer::append_series(const std::string& name, const std::vector<long long>& data, const std::string& units,
                             const std::string& description) {
  append_series(name, data, 1, units, description);
}
void H5Writer::append_series(const std::string& name, const std::vector<long long>& data, std::uint64_t cols,
                             const std::string& units, const std::string& description) {
  const std::vector<std::uint64_t> tail = cols > 1 ? std::vector<std::uint64_t>{cols} : std::vector<std::uint64_t>{};
  guarded(name, [&] {
    append_rows(impl_->file, name, H5T_NATIVE_LLONG, data.data(), cols ? data.size() / cols : 0, tail, units,
                description);
  });
}

void H5Writer::write_series(const std::string& name, const std::vector<long long>& data,
                            const std::string& units, const std::string& description) {
  guarded(name, [&] {
    write_dataset(impl_->file, name, H5T_NATIVE_LLONG, data.data(), {std::uint64_t(data.size())}, true, units,
                  description);
  });
}
void H5Writer::coordinate(const std::string& name, const std::vector<double>& values, const std::string& units,
                          const std::string& description, const std::string& axis) {
  write(name, values.data(), {std::uint64_t(values.size())}, units, description);
  coordinate(name);
  if (!axis.empty()) attribute("axis", axis, name);
}
void H5Writer::integer_coordinate(const std::string& name, const std::vector<long long>& values,
                                  const std::string& units, const std::string& description) {
  guarded(name, [&] {
    write_dataset(impl_->file, name, H5T_NATIVE_LLONG, values.data(), {std::uint64_t(values.size())}, false, units,
                  description);
  });
  coordinate(name);
}
void H5Writer::coordinate(const std::string& name) {
  guarded(name, [&] { io_detail::make_dimension_scale(impl_->file, name); });
}
void H5Writer::dimensions(const std::string& name, const std::vector<std::string>& coordinates) {
  guarded(name, [&] { io_detail::attach_dimension_scales(impl_->file, name, coordinates); });
}
void H5Writer::group(const std::string& name) {
  Handle gcpl(CASCADE_CHECK_HDF5(H5Pcreate(H5P_GROUP_CREATE)), H5Pclose);
  CASCADE_CHECK_HDF5(H5Pset_link_creation_order(gcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED));
  Handle g(CASCADE_CHECK_HDF5(H5Gcreate2(impl_->file, name.c_str(), H5P_DEFAULT, gcpl, H5P_DEFAULT)), H5Gclose);
}
void H5Writer::attribute(const std::string& name, const std::string& value, const std::string& object) {
  Handle obj(CASCADE_CHECK_HDF5(H5Oopen(impl_->file, object.c_str(), H5P_DEFAULT)), H5Oclose);
  string_attribute(obj, name, value);
}
void H5Writer::attribute(const std::string& name, double value, const std::string& object) {
  Handle obj(CASCADE_CHECK_HDF5(H5Oopen(impl_->file, object.c_str(), H5P_DEFAULT)), H5Oclose);
  scalar_attribute(obj, name, H5T_NATIVE_DOUBLE, value);
}
void H5Writer::attribute(const std::string& name, long long value, const std::string& object) {
  Handle obj(CASCADE_CHECK_HDF5(H5Oopen(impl_->file, object.c_str(), H5P_DEFAULT)), H5Oclose);
  scalar_attribute(obj, name, H5T_NATIVE_LLONG, value);
}

namespace {
//! Fault injection for the tests: CASCADE_FAIL_WRITE=N makes the N-th file closed by this
//! process fail as a full disk would.
bool injected_write_failure() {
  static const long fail_at = [] {
    const char* v = std::getenv("CASCADE_FAIL_WRITE");
    return v ? std::atol(v) : 0L;
  }();
  static std::atomic<long> closed{0};
  return fail_at > 0 && ++closed == fail_at;
}
}  // namespace

void H5Writer::close() {
  const herr_t flushed = H5Fflush(impl_->file, H5F_SCOPE_GLOBAL);
  const herr_t rc = H5Fclose(impl_->file);
  impl_->file = -1;
  if (injected_write_failure()) {
    std::remove(tmp_.c_str());
    throw RunError("cannot write HDF5 file '" + tmp_ + "': simulated write error (CASCADE_FAIL_WRITE)");
  }
  if (flushed < 0 || rc < 0) {
    std::remove(tmp_.c_str());
    throw RunError("cannot write HDF5 file '" + tmp_ + "' (disk full or write error?)");
  }
  // Seal the file; the data and the seal must be on disk before the new name points at them.
  try {
    FileDescriptor fd(tmp_, O_RDWR);
    write_seal(fd, tmp_);
    if (::fsync(fd.get()) != 0) throw RunError("cannot sync '" + tmp_ + "' to disk: " + std::strerror(errno));
  } catch (...) {
    std::remove(tmp_.c_str());
    throw;
  }
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp_.c_str());
    throw RunError("cannot rename '" + tmp_ + "' to '" + path_ + "': " + why);
  }
}

// ---------------------------------------------------------------- reader

struct H5Reader::Impl {
  hid_t file = -1;
};

H5Reader::H5Reader(const std::string& path, Seal seal) : impl_(std::make_unique<Impl>()), path_(path) {
  quiet_hdf5();
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) fail(std::string("cannot open: ") + std::strerror(errno));
  // HDF5 parses only files whose bytes are the ones cascade wrote: the library (1.10) reads
  // freed memory on some corrupt files, so a corrupt sealed file must never reach it.
  verify_seal(path, seal == Seal::Required);
  if (H5Fis_hdf5(path.c_str()) <= 0) fail("not an HDF5 file (truncated or corrupt?)");
  impl_->file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (impl_->file < 0) fail("cannot open as HDF5 (truncated or corrupt?)");
}

H5Reader::~H5Reader() {
  if (impl_ && impl_->file >= 0) H5Fclose(impl_->file);
}

void H5Reader::fail(const std::string& what) const { throw InputError(path_ + ": " + what); }

bool H5Reader::has(const std::string& object) const {
  // Check each level: H5Lexists fails on a missing intermediate group.
  std::size_t pos = 0;
  while ((pos = object.find('/', pos + 1)) != std::string::npos)
    if (H5Lexists(impl_->file, object.substr(0, pos).c_str(), H5P_DEFAULT) <= 0) return false;
  return H5Lexists(impl_->file, object.c_str(), H5P_DEFAULT) > 0;
}

bool H5Reader::has_attribute(const std::string& name, const std::string& object) const {
  if (object != "/" && !has(object)) return false;
  return H5Aexists_by_name(impl_->file, object.c_str(), name.c_str(), H5P_DEFAULT) > 0;
}

std::vector<std::uint64_t> H5Reader::shape(const std::string& dataset) const {
  if (!has(dataset)) fail("missing dataset " + dataset);
  Handle set(H5Dopen2(impl_->file, dataset.c_str(), H5P_DEFAULT), H5Dclose);
  if (!set.ok()) fail("cannot open dataset " + dataset);
  Handle space(H5Dget_space(set), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space);
  if (rank < 0) fail("cannot read the shape of " + dataset);
  std::vector<hsize_t> dims(rank);
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  return std::vector<std::uint64_t>(dims.begin(), dims.end());
}

int H5Reader::float_size(const std::string& dataset) const {
  if (!has(dataset)) fail("missing dataset " + dataset);
  Handle set(H5Dopen2(impl_->file, dataset.c_str(), H5P_DEFAULT), H5Dclose);
  Handle type(H5Dget_type(set), H5Tclose);
  if (!type.ok() || H5Tget_class(type) != H5T_FLOAT) fail(dataset + " is not floating-point data");
  return int(H5Tget_size(type));
}

namespace {
std::uint64_t file_bytes(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 ? std::uint64_t(st.st_size) : 0;
}

//! The most bytes a dataset of this file can hold: the file's own size when stored plainly;
//! compressed data (cascade writes none, h5py may) can expand, by at most about 1000 (deflate).
std::uint64_t plausible_bytes(hid_t set, const std::string& path) {
  Handle plist(H5Dget_create_plist(set), H5Pclose);
  const bool filtered = plist.ok() && H5Pget_nfilters(plist) > 0;
  return file_bytes(path) * (filtered ? 1032 : 1);
}

template <class T>
std::vector<T> read_all(hid_t file, const std::string& name, hid_t memtype, const std::string& path) {
  Handle set(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!set.ok()) throw InputError(path + ": cannot open dataset " + name);
  Handle space(H5Dget_space(set), H5Sclose);
  const hssize_t n = H5Sget_simple_extent_npoints(space);
  if (n < 0) throw InputError(path + ": cannot read the size of " + name);
  const std::uint64_t room = plausible_bytes(set, path);
  if (double(n) * double(sizeof(T)) > double(room))
    throw InputError(fmt::format("{}: dataset {} declares {} values ({:.3g} bytes) but the file holds {} bytes "
                                 "(truncated, crafted or corrupt)",
                                 path, name, n, double(n) * double(sizeof(T)), file_bytes(path)));
  std::vector<T> out(static_cast<std::size_t>(n));
  if (n > 0 && H5Dread(set, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0)
    throw InputError(path + ": cannot read " + name + " (truncated or corrupt?)");
  return out;
}
}  // namespace

std::vector<double> H5Reader::read_double(const std::string& d) const {
  if (!has(d)) fail("missing dataset " + d);
  return read_all<double>(impl_->file, d, H5T_NATIVE_DOUBLE, path_);
}
std::vector<float> H5Reader::read_float(const std::string& d) const {
  if (!has(d)) fail("missing dataset " + d);
  return read_all<float>(impl_->file, d, H5T_NATIVE_FLOAT, path_);
}
std::vector<long long> H5Reader::read_int(const std::string& d) const {
  if (!has(d)) fail("missing dataset " + d);
  return read_all<long long>(impl_->file, d, H5T_NATIVE_LLONG, path_);
}

std::string H5Reader::attr_string(const std::string& name, const std::string& object) const {
  if (!has_attribute(name, object)) fail("missing attribute " + name + " of " + object);
  Handle attr(H5Aopen_by_name(impl_->file, object.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  Handle type(H5Aget_type(attr), H5Tclose);
  if (!type.ok() || H5Tget_class(type) != H5T_STRING || H5Tis_variable_str(type) > 0)
    fail("attribute " + name + " is not a fixed-length string");
  const std::size_t size = H5Tget_size(type);
  if (size > file_bytes(path_)) fail("attribute " + name + " declares more bytes than the file holds (corrupt?)");
  std::string out(size + 1, '\0');  // room for the terminator whatever the file's padding
  Handle mem(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(mem, size + 1);
  H5Tset_cset(mem, H5Tget_cset(type));  // HDF5 converts no character sets (ASCII <-> UTF-8)
  if (H5Aread(attr, mem, out.data()) < 0) fail("cannot read attribute " + name);
  while (!out.empty() && out.back() == '\0') out.pop_back();
  return out;
}
double H5Reader::attr_double(const std::string& name, const std::string& object) const {
  if (!has_attribute(name, object)) fail("missing attribute " + name + " of " + object);
  Handle attr(H5Aopen_by_name(impl_->file, object.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  double v = 0;
  if (H5Aread(attr, H5T_NATIVE_DOUBLE, &v) < 0) fail("cannot read attribute " + name);
  return v;
}
long long H5Reader::attr_int(const std::string& name, const std::string& object) const {
  if (!has_attribute(name, object)) fail("missing attribute " + name + " of " + object);
  Handle attr(H5Aopen_by_name(impl_->file, object.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  long long v = 0;
  if (H5Aread(attr, H5T_NATIVE_LLONG, &v) < 0) fail("cannot read attribute " + name);
  return v;
}

// ---------------------------------------------------------------- helpers

void write_provenance(H5Writer& file, const Config& config, const std::string& backend) {
  file.attribute("program", std::string("cascade"));
  file.attribute("version", std::string(kVersion) + " (" + kGitRevision + ")");
  file.attribute("backend", backend);
  file.attribute("precision", std::string(to_string(config.run.precision)));
  file.attribute("deck", config.text);
  file.attribute("deck_source", config.source);
  file.attribute("deck_resolved", resolved_yaml(config));
  if (!config.run_id.empty()) file.attribute("run_id", config.run_id);
}

void write_grid_coordinates(H5Writer& file, int nx, int ny, double lx, double ly, const std::string& group) {
  std::vector<double> x(static_cast<std::size_t>(nx)), y(static_cast<std::size_t>(ny));
  for (int i = 0; i < nx; ++i) x[std::size_t(i)] = i * (lx / nx);
  for (int j = 0; j < ny; ++j) y[std::size_t(j)] = j * (ly / ny);
  file.coordinate(group + "/x", x, "length", "position x_i = i lx/nx of the values", "X");
  file.coordinate(group + "/y", y, "length", "position y_j = j ly/ny of the values", "Y");
}

void make_directories(const std::string& path) {
  if (path.empty()) throw InputError("output.directory: expected a directory name, found ''");
  std::string partial;
  std::size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    partial = path.substr(0, pos);
    if (partial.empty()) continue;
    if (::mkdir(partial.c_str(), 0777) != 0 && errno != EEXIST)
      throw InputError("output.directory: cannot create '" + partial + "': " + std::strerror(errno));
  }
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw InputError("output.directory: '" + path + "' is not a directory");
  if (::access(path.c_str(), W_OK) != 0)
    throw InputError("output.directory: '" + path + "' is not writable");
}

void check_output_path(const std::string& path) {
  if (path.empty()) throw InputError("output.directory: expected a directory name, found ''");
  // The longest name a run makes inside it: checkpoints/ckpt_NNNNNN.h5 written under a
  // temporary name (.tmp-PID), with room for a step count of 15 digits.
  constexpr std::size_t kLongestInside = sizeof("/checkpoints/ckpt_000000000000000.h5.tmp-4194304") - 1;
  const long path_max = ::pathconf("/", _PC_PATH_MAX) > 0 ? ::pathconf("/", _PC_PATH_MAX) : 4096;
  if (path.size() + kLongestInside >= std::size_t(path_max))
    throw InputError(fmt::format("output.directory: the path is {} bytes long; with the names a run makes inside "
                                 "it, at most {} bytes fit",
                                 path.size(), std::size_t(path_max) - 1 - kLongestInside));
  std::size_t start = 0;
  while (start < path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (end - start > 255)
      throw InputError(fmt::format("output.directory: a name in the path is {} bytes long; at most 255 fit",
                                   end - start));
    start = end + 1;
  }
}

void check_output_directory(const std::string& path) {
  check_output_path(path);
  // The directory itself, or the nearest ancestor that exists, must be a writable directory.
  std::string probe = path;
  for (;;) {
    struct stat st{};
    if (::stat(probe.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode))
        throw InputError("output.directory: '" + probe + "' is not a directory (in '" + path + "')");
      if (::access(probe.c_str(), W_OK | X_OK) != 0)
        throw InputError("output.directory: '" + probe + "' is not writable (in '" + path + "')");
      return;
    }
    if (errno != ENOENT)
      throw InputError("output.directory: cannot use '" + probe + "': " + std::strerror(errno));
    const auto slash = probe.find_last_of('/');
    if (slash == std::string::npos) return;  // relative: the working directory is checked by mkdir
    probe = slash == 0 ? "/" : probe.substr(0, slash);
  }
}

void write_text_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw RunError("cannot write '" + tmp + "': " + std::strerror(errno));
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size() && std::fflush(f) == 0 &&
                  ::fsync(::fileno(f)) == 0;
  const int saved = errno;
  std::fclose(f);
  if (!ok) {
    std::remove(tmp.c_str());
    throw RunError("cannot write '" + tmp + "': " + std::strerror(saved));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    throw RunError("cannot rename '" + tmp + "' to '" + path + "': " + why);
  }
}

}  // namespace cascade
