//! @file The seal of cascade's files: a block before the HDF5 data holding the checksum64 of
//! everything after it (docs/output-format.md), written, verified and renewed here.
#include <fcntl.h>
#include <fmt/format.h>
#include <hdf5.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cascade/error.hpp"
#include "cascade/io.hpp"
#include "io/seal.hpp"

namespace cascade {
namespace io_detail {

//! pread until n bytes or the end of the file; the count read, -1 on an error.
long long read_full(int fd, unsigned char* p, std::size_t n, std::uint64_t offset) {
  std::size_t done = 0;
  while (done < n) {
    const ssize_t r = ::pread(fd, p + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -1;
    if (r == 0) break;
    done += std::size_t(r);
  }
  return static_cast<long long>(done);
}

namespace {
constexpr char kSealMagic[] = "cascade-seal 1 ";

//! The checksum of everything after the seal block; `bytes` is set to that length.
bool body_checksum(int fd, std::uint64_t& sum, std::uint64_t& bytes) {
  // Whole 8-byte words in every chunk but the last, so the sum is checksum64 of the body.
  std::vector<unsigned char> buffer(std::size_t(8) << 20);
  sum = 0xcbf29ce484222325ull;
  bytes = 0;
  for (;;) {
    const long long got = read_full(fd, buffer.data(), buffer.size(), kSealBlockBytes + bytes);
    if (got < 0) return false;
    sum = checksum64(buffer.data(), std::size_t(got), sum);
    bytes += std::uint64_t(got);
    if (std::size_t(got) < buffer.size()) return true;
  }
}

std::string seal_text(std::uint64_t sum, std::uint64_t bytes) {
  return fmt::format("{}fnv1a64w:{:016x} {}\n", kSealMagic, sum, bytes);
}
}  // namespace

void write_seal(const FileDescriptor& fd, const std::string& path) {
  if (!fd.ok()) throw RunError("cannot open '" + path + "' to seal it: " + std::strerror(errno));
  std::uint64_t sum = 0, bytes = 0;
  if (!body_checksum(fd.get(), sum, bytes))
    throw RunError("cannot read '" + path + "' back to seal it: " + std::strerror(errno));
  std::string block = seal_text(sum, bytes);
  block.resize(kSealBlockBytes, '\0');
  if (::pwrite(fd.get(), block.data(), block.size(), 0) != static_cast<ssize_t>(block.size()))
    throw RunError("cannot write the seal of '" + path + "' (disk full or write error?): " + std::strerror(errno));
}

namespace {
//! Reads the seal block: false when the file has none.
bool read_seal(const FileDescriptor& fd, std::uint64_t& sum, std::uint64_t& bytes) {
  unsigned char block[kSealBlockBytes] = {};
  const long long got = read_full(fd.get(), block, sizeof(block), 0);
  const std::size_t magic = sizeof(kSealMagic) - 1;
  if (got < static_cast<long long>(magic) || std::memcmp(block, kSealMagic, magic) != 0) return false;
  block[kSealBlockBytes - 1] = 0;
  char newline = 0;
  unsigned long long s = 0, b = 0;
  if (std::sscanf(reinterpret_cast<const char*>(block) + magic, "fnv1a64w:%16llx %llu%c", &s, &b, &newline) != 3 ||
      newline != '\n')
    return false;
  sum = s;
  bytes = b;
  return true;
}
}  // namespace

}  // namespace io_detail

using namespace io_detail;

void verify_seal(const std::string& path, bool required) {
  FileDescriptor fd(path, O_RDONLY);
  if (!fd.ok()) throw InputError(path + ": cannot open: " + std::strerror(errno));
  std::uint64_t stored = 0, stored_bytes = 0;
  if (!read_seal(fd, stored, stored_bytes)) {
    if (required)
      throw InputError(path + ": not a cascade checkpoint (no cascade seal at the start of the file)");
    return;
  }
  std::uint64_t sum = 0, bytes = 0;
  if (!body_checksum(fd.get(), sum, bytes)) throw InputError(path + ": cannot read: " + std::strerror(errno));
  const std::string hint = "if it was edited on purpose, 'cascade seal " + path + "' re-seals it";
  if (bytes != stored_bytes)
    throw InputError(fmt::format("{}: truncated or corrupt: {} bytes follow the seal block, the seal says {} ({})",
                                 path, bytes, stored_bytes, hint));
  if (sum != stored) throw InputError(path + ": corrupt: the file does not match its seal (" + hint + ")");
}

bool is_hdf5_file(const std::string& path) {
  // Non-blocking and regular files only: a FIFO or a device is no HDF5 file, and must not hang.
  FileDescriptor fd(path, O_RDONLY | O_NONBLOCK);
  struct stat st{};
  if (!fd.ok() || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  static const unsigned char kSignature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  unsigned char head[sizeof(kSignature)] = {};
  const std::size_t magic = sizeof(kSealMagic) - 1;
  unsigned char seal[sizeof(kSealMagic)] = {};
  return (read_full(fd.get(), head, sizeof(head), 0) == sizeof(head) &&
          std::memcmp(head, kSignature, sizeof(head)) == 0) ||
         (read_full(fd.get(), seal, magic, 0) == static_cast<long long>(magic) &&
          std::memcmp(seal, kSealMagic, magic) == 0);
}

void check_resealable(const std::string& path) {
  {
    FileDescriptor probe(path, O_RDONLY);
    if (!probe.ok()) throw InputError(path + ": cannot open: " + std::strerror(errno));
    std::uint64_t sum = 0, bytes = 0;
    if (!read_seal(probe, sum, bytes))
      throw InputError(path + ": has no cascade seal block to renew (only files cascade wrote can be re-sealed)");
  }
  quiet_hdf5();
  if (H5Fis_hdf5(path.c_str()) <= 0) throw InputError(path + ": not an HDF5 file after its seal block");
  if (::access(path.c_str(), W_OK) != 0) throw InputError(path + ": not writable: " + std::strerror(errno));
}

void reseal(const std::string& path) {
  check_resealable(path);
  FileDescriptor fd(path, O_RDWR);
  write_seal(fd, path);
  if (::fsync(fd.get()) != 0) throw RunError("cannot sync '" + path + "' to disk: " + std::strerror(errno));
}

std::uint64_t checksum64(const void* data, std::size_t bytes, std::uint64_t h) {
  constexpr std::uint64_t kPrime = 0x100000001b3ull;
  const auto* p = static_cast<const unsigned char*>(data);
  std::size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * kPrime;
    h ^= h >> 29;  // fold high bits down: a plain word-wise FNV loses low-bit diffusion
  }
  for (; i < bytes; ++i) h = (h ^ p[i]) * kPrime;
  return h;
}

}  // namespace cascade
