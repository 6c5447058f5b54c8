//! @file The pieces of the seal (seal.cpp) that the HDF5 writer (io_hdf5.cpp) uses too: an
//! owned file descriptor, whole reads, sealing a written file; and HDF5 kept quiet. Private to src/io.
#pragma once
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace cascade {
namespace io_detail {

//! An open file descriptor, closed when it goes out of scope.
class FileDescriptor {
 public:
  FileDescriptor(const std::string& path, int flags) : fd_(::open(path.c_str(), flags | O_CLOEXEC, 0666)) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }
  bool ok() const { return fd_ >= 0; }

 private:
  int fd_;
};

//! pread until n bytes or the end of the file; the count read, -1 on an error.
long long read_full(int fd, unsigned char* p, std::size_t n, std::uint64_t offset);

//! Write the seal block of the file open in `fd` (RunError on failure).
void write_seal(const FileDescriptor& fd, const std::string& path);

//! HDF5 prints its own error stack by default; cascade reports failures itself.
void quiet_hdf5();

}  // namespace io_detail
}  // namespace cascade
