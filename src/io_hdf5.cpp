//! @file HDF5 writer with checked calls, atomic rename, and provenance attributes.
#include <hdf5.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "cascade/config.hpp"
#include "cascade/error.hpp"
#include "cascade/io.hpp"
#include "cascade/version.hpp"

namespace cascade {

namespace {
//! HDF5 prints its own error stack by default; cascade reports failures itself.
void quiet_hdf5() {
  static const bool done = [] {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    return true;
  }();
  (void)done;
}

void string_attribute(hid_t obj, const std::string& name, const std::string& value) {
  const hid_t type = CASCADE_CHECK_HDF5(H5Tcopy(H5T_C_S1));
  CASCADE_CHECK_HDF5(H5Tset_size(type, value.empty() ? 1 : value.size()));
  CASCADE_CHECK_HDF5(H5Tset_cset(type, H5T_CSET_UTF8));
  const hid_t space = CASCADE_CHECK_HDF5(H5Screate(H5S_SCALAR));
  const hid_t attr = CASCADE_CHECK_HDF5(H5Acreate2(obj, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT));
  CASCADE_CHECK_HDF5(H5Awrite(attr, type, value.empty() ? "" : value.c_str()));
  CASCADE_CHECK_HDF5(H5Aclose(attr));
  CASCADE_CHECK_HDF5(H5Sclose(space));
  CASCADE_CHECK_HDF5(H5Tclose(type));
}

template <class T>
void scalar_attribute(hid_t obj, const std::string& name, hid_t type, T value) {
  const hid_t space = CASCADE_CHECK_HDF5(H5Screate(H5S_SCALAR));
  const hid_t attr = CASCADE_CHECK_HDF5(H5Acreate2(obj, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT));
  CASCADE_CHECK_HDF5(H5Awrite(attr, type, &value));
  CASCADE_CHECK_HDF5(H5Aclose(attr));
  CASCADE_CHECK_HDF5(H5Sclose(space));
}
}  // namespace

struct H5Writer::Impl {
  hid_t file = -1;
};

H5Writer::H5Writer(const std::string& path) : impl_(std::make_unique<Impl>()), path_(path) {
  quiet_hdf5();
  tmp_ = path + ".tmp-" + std::to_string(::getpid());
  impl_->file = H5Fcreate(tmp_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (impl_->file < 0) throw RunError("cannot create HDF5 file '" + tmp_ + "'");
}

H5Writer::~H5Writer() {
  if (impl_ && impl_->file >= 0) {
    H5Fclose(impl_->file);
    std::remove(tmp_.c_str());
  }
}

namespace {
template <class T>
void write_dataset(hid_t file, const std::string& name, hid_t type, const T* data, int ny, int nx,
                   const std::string& units, const std::string& description) {
  const hsize_t dims[2] = {hsize_t(ny), hsize_t(nx)};
  const hid_t space = CASCADE_CHECK_HDF5(H5Screate_simple(2, dims, nullptr));
  const hid_t set = CASCADE_CHECK_HDF5(
      H5Dcreate2(file, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  CASCADE_CHECK_HDF5(H5Dwrite(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data));
  string_attribute(set, "units", units);
  string_attribute(set, "description", description);
  CASCADE_CHECK_HDF5(H5Dclose(set));
  CASCADE_CHECK_HDF5(H5Sclose(space));
}
}  // namespace

void H5Writer::write_2d(const std::string& name, const double* data, int ny, int nx,
                        const std::string& units, const std::string& description) {
  write_dataset(impl_->file, name, H5T_NATIVE_DOUBLE, data, ny, nx, units, description);
}
void H5Writer::write_2d(const std::string& name, const float* data, int ny, int nx,
                        const std::string& units, const std::string& description) {
  write_dataset(impl_->file, name, H5T_NATIVE_FLOAT, data, ny, nx, units, description);
}
void H5Writer::attribute(const std::string& name, const std::string& value) {
  string_attribute(impl_->file, name, value);
}
void H5Writer::attribute(const std::string& name, double value) {
  scalar_attribute(impl_->file, name, H5T_NATIVE_DOUBLE, value);
}
void H5Writer::attribute(const std::string& name, long long value) {
  scalar_attribute(impl_->file, name, H5T_NATIVE_LLONG, value);
}

void H5Writer::close() {
  CASCADE_CHECK_HDF5(H5Fflush(impl_->file, H5F_SCOPE_GLOBAL));
  const herr_t rc = H5Fclose(impl_->file);
  impl_->file = -1;
  if (rc < 0) {
    std::remove(tmp_.c_str());
    throw RunError("cannot close HDF5 file '" + tmp_ + "'");
  }
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp_.c_str());
    throw RunError("cannot rename '" + tmp_ + "' to '" + path_ + "': " + why);
  }
}

void write_provenance(H5Writer& file, const Config& config, const std::string& backend) {
  file.attribute("program", std::string("cascade"));
  file.attribute("version", std::string(kVersion) + " (" + kGitRevision + ")");
  file.attribute("backend", backend);
  file.attribute("precision", std::string(to_string(config.run.precision)));
  file.attribute("deck", config.text);
  file.attribute("deck_source", config.source);
  file.attribute("deck_resolved", resolved_yaml(config));
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

}  // namespace cascade
