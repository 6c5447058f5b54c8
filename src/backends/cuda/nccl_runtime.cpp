//! @file NCCL loaded when the first GPU slab backend uses it, not when the program starts.
//!
//! The NCCL functions slabs.cu calls are defined here and forward to the library opened with
//! dlopen on first use: first the one CMake found (CASCADE_NCCL_LIBRARY), then libnccl.so.2 on
//! the loader's path. No cascade binary names libnccl.so.2 among its needed libraries, so a
//! process that never runs over several GPUs holds no NCCL of ours: the Python module beside
//! PyTorch, which brings its own libnccl.so.2 (a second library of that name, loaded first,
//! would be the one PyTorch's calls reach).
#include <dlfcn.h>
#include <nccl.h>

#include <string>

namespace {

struct Library {
  void* handle = nullptr;
  std::string error;
  Library() {
    for (const char* name : {CASCADE_NCCL_LIBRARY, "libnccl.so.2"}) {
      handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (handle) return;
      const char* why = dlerror();
      error += std::string(error.empty() ? "" : "; ") + (why ? why : name);
    }
  }
  template <class F>
  F get(const char* name) {
    return handle ? reinterpret_cast<F>(dlsym(handle, name)) : nullptr;
  }
};

Library& nccl() {
  static Library library;
  return library;
}

}  // namespace

#define CASCADE_NCCL_FORWARD(name, params, args)                                  \
  ncclResult_t name params {                                                      \
    static const auto f = nccl().get<decltype(&name)>(#name);                     \
    return f ? f args : ncclSystemError;                                          \
  }

extern "C" {
CASCADE_NCCL_FORWARD(ncclGetVersion, (int* version), (version))
CASCADE_NCCL_FORWARD(ncclGetUniqueId, (ncclUniqueId * id), (id))
CASCADE_NCCL_FORWARD(ncclCommInitRank, (ncclComm_t * comm, int ranks, ncclUniqueId id, int rank),
                     (comm, ranks, id, rank))
CASCADE_NCCL_FORWARD(ncclCommDestroy, (ncclComm_t comm), (comm))
CASCADE_NCCL_FORWARD(ncclGroupStart, (), ())
CASCADE_NCCL_FORWARD(ncclGroupEnd, (), ())
CASCADE_NCCL_FORWARD(ncclSend,
                     (const void* buffer, size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                      cudaStream_t stream),
                     (buffer, count, type, peer, comm, stream))
CASCADE_NCCL_FORWARD(ncclRecv,
                     (void* buffer, size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                      cudaStream_t stream),
                     (buffer, count, type, peer, comm, stream))

const char* ncclGetErrorString(ncclResult_t result) {
  static const auto f = nccl().get<decltype(&ncclGetErrorString)>("ncclGetErrorString");
  if (f) return f(result);
  static const std::string why = "NCCL could not be loaded (" + nccl().error + ")";
  return why.c_str();
}
}
