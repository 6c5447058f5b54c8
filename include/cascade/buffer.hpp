//! @file RAII buffers owned by a backend: host memory (CPU backend) or device memory (CUDA).
//!
//! Host code never dereferences a Buffer's data(): it hands buffers back to the backend that
//! made them (transforms, operations, copies to and from host vectors). A buffer without a
//! deleter is a view into another's allocation (the second field of Backend::real_pair and
//! spectral_pair).
#pragma once

#include <cstddef>
#include <utility>

namespace cascade {

enum class MemorySpace { Host, Device };

template <class T>
class Buffer {
 public:
  using Deleter = void (*)(void*) noexcept;

  Buffer() = default;
  Buffer(T* data, std::size_t size, MemorySpace space, Deleter deleter)
      : data_(data), size_(size), space_(space), deleter_(deleter) {}
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& o) noexcept { swap(o); }
  Buffer& operator=(Buffer&& o) noexcept {
    Buffer tmp(std::move(o));
    swap(tmp);
    return *this;
  }
  ~Buffer() {
    if (data_ && deleter_) deleter_(data_);
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }
  std::size_t bytes() const { return size_ * sizeof(T); }
  MemorySpace space() const { return space_; }
  bool empty() const { return size_ == 0; }
  //! Whether this buffer frees its memory (false for a view into another's, as the second of
  //! a backend's pair).
  bool owns() const { return deleter_ != nullptr; }
  //! Whether `second` is the second field of a pair this buffer was made the first of
  //! (Backend::real_pair, spectral_pair: one allocation, transformed by one batched plan). The
  //! pair is recorded when it is made, not inferred from where the memory lies.
  bool pairs_with(const Buffer& second) const { return second_ != nullptr && second_ == second.data_; }
  //! Make this the first of a pair with `second` (the backends' pair allocation alone).
  void set_pair(const Buffer& second) { second_ = second.data_; }
  //! Give up the allocation: returns the deleter, which the caller now owes data() (this
  //! buffer is left empty).
  Deleter release() noexcept {
    const Deleter d = deleter_;
    data_ = nullptr;
    size_ = 0;
    deleter_ = nullptr;
    second_ = nullptr;
    return d;
  }

 private:
  void swap(Buffer& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(space_, o.space_);
    std::swap(deleter_, o.deleter_);
    std::swap(second_, o.second_);
  }
  T* data_ = nullptr;
  std::size_t size_ = 0;
  MemorySpace space_ = MemorySpace::Host;
  Deleter deleter_ = nullptr;
  const T* second_ = nullptr;  //!< the second of this buffer's pair, if it is the first of one
};

}  // namespace cascade
