// The runner's bridge to libtorch's c10d: a TCPStore rendezvous and a ProcessGroupGloo
// (CPU tensors) or, built against a CUDA libtorch with NCCL's headers (MLB_NCCL, set by
// build.rs), a ProcessGroupNCCL (CUDA tensors), with the collectives the runner needs (DDP's
// and DataParallel's), behind a C interface for Rust. Every collective is c10d's; this file
// only constructs, calls and waits, and turns C++ exceptions into error strings, since an
// exception must not cross into Rust.
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef MLB_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

namespace {

struct Group {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::Backend> backend;
  std::chrono::milliseconds timeout;
};

char* copy_error(const char* what) {
  size_t n = std::strlen(what);
  char* out = static_cast<char*>(std::malloc(n + 1));
  if (out != nullptr) {
    std::memcpy(out, what, n + 1);
  }
  return out;
}

// Runs `body`; on an exception, stores its message in `*err` and returns false.
template <typename F>
bool guarded(char** err, F body) {
  try {
    body();
    return true;
  } catch (const c10::Error& e) {
    // Its message without the C++ backtrace what() appends.
    *err = copy_error(e.what_without_backtrace());
  } catch (const std::exception& e) {
    *err = copy_error(e.what());
  } catch (...) {
    *err = copy_error("unknown C++ exception");
  }
  return false;
}

void wait(const Group& g, c10::intrusive_ptr<c10d::Work> work) {
  if (!work->wait(g.timeout)) {
    throw std::runtime_error("collective timed out");
  }
}

// The store of a world of `world` ranks whose rank 0 serves it at host:port: rank 0 listens
// there, the others connect, each waiting at most `timeout`.
c10::intrusive_ptr<c10d::Store> tcp_store(
    const char* host,
    uint16_t port,
    int rank,
    int world,
    std::chrono::milliseconds timeout) {
  c10d::TCPStoreOptions opts;
  opts.port = port;
  opts.isServer = rank == 0;
  opts.numWorkers = world;
  opts.waitWorkers = true;
  opts.timeout = timeout;
  return c10::make_intrusive<c10d::TCPStore>(host, opts);
}

// Joins, with the backend `make` builds, the group of `world` ranks whose store rank 0 serves
// at host:port.
template <typename Make>
void* join(
    const char* host,
    uint16_t port,
    int rank,
    int world,
    int64_t timeout_ms,
    char** err,
    Make make) {
  Group* out = nullptr;
  guarded(err, [&] {
    std::chrono::milliseconds timeout(timeout_ms);
    auto store = tcp_store(host, port, rank, world, timeout);
    out = new Group{store, make(store, timeout), timeout};
  });
  return out;
}

} // namespace

extern "C" {

void mlb_c10d_free_error(char* err) {
  std::free(err);
}

// Joins, with Gloo, the group of `world` ranks whose store rank 0 serves at host:port.
void* mlb_c10d_gloo_new(
    const char* host,
    uint16_t port,
    int rank,
    int world,
    int64_t timeout_ms,
    char** err) {
  return join(host, port, rank, world, timeout_ms, err, [&](auto store, auto timeout) {
    auto options = c10d::ProcessGroupGloo::Options::create(timeout);
    options->devices.push_back(
        c10d::ProcessGroupGloo::createDeviceForHostname(host));
    options->threads = 1;
    return c10::intrusive_ptr<c10d::Backend>(
        c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, world, options));
  });
}

// Joins, with NCCL, the group of `world` ranks whose store rank 0 serves at host:port. NCCL's
// communicator is made at the first collective, on the device of its tensors. Without
// MLB_NCCL: an error saying so.
void* mlb_c10d_nccl_new(
    const char* host,
    uint16_t port,
    int rank,
    int world,
    int64_t timeout_ms,
    char** err) {
#ifdef MLB_NCCL
  return join(host, port, rank, world, timeout_ms, err, [&](auto store, auto timeout) {
    auto options = c10d::ProcessGroupNCCL::Options::create();
    options->timeout = timeout;
    return c10::intrusive_ptr<c10d::Backend>(
        c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, world, options));
  });
#else
  (void)host;
  (void)port;
  (void)rank;
  (void)world;
  (void)timeout_ms;
  *err = copy_error(
      "NCCL is not built into this runner: its c10d shim was compiled without a CUDA "
      "libtorch and NCCL's headers (runner/setup-libtorch.sh --cuda)");
  return nullptr;
#endif
}

// Whether this shim was built with NCCL.
bool mlb_c10d_has_nccl() {
#ifdef MLB_NCCL
  return true;
#else
  return false;
#endif
}

void mlb_c10d_free(void* group) {
  delete static_cast<Group*>(group);
}

// Sums `tensor` in place over the ranks.
bool mlb_c10d_all_reduce_sum(void* group, at::Tensor* tensor, char** err) {
  return guarded(err, [&] {
    auto& g = *static_cast<Group*>(group);
    std::vector<at::Tensor> tensors{*tensor};
    c10d::AllreduceOptions opts;
    opts.reduceOp = c10d::ReduceOp::SUM;
    wait(g, g.backend->allreduce(tensors, opts));
  });
}

// Copies rank `root`'s `tensor` into every rank's.
bool mlb_c10d_broadcast(void* group, at::Tensor* tensor, int root, char** err) {
  return guarded(err, [&] {
    auto& g = *static_cast<Group*>(group);
    std::vector<at::Tensor> tensors{*tensor};
    c10d::BroadcastOptions opts;
    opts.rootRank = root;
    wait(g, g.backend->broadcast(tensors, opts));
  });
}

// Sums every rank's `tensor` into rank `root`'s (the others' are left as they were).
bool mlb_c10d_reduce_sum(void* group, at::Tensor* tensor, int root, char** err) {
  return guarded(err, [&] {
    auto& g = *static_cast<Group*>(group);
    std::vector<at::Tensor> tensors{*tensor};
    c10d::ReduceOptions opts;
    opts.reduceOp = c10d::ReduceOp::SUM;
    opts.rootRank = root;
    wait(g, g.backend->reduce(tensors, opts));
  });
}

// Returns when every rank has called it.
bool mlb_c10d_barrier(void* group, char** err) {
  return guarded(err, [&] {
    auto& g = *static_cast<Group*>(group);
    wait(g, g.backend->barrier());
  });
}

} // extern "C"
