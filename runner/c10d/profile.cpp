// `mlbench run --profile`: libtorch's profiler (Kineto) around a copy's timed
// observations, behind a C interface for Rust: start on the calling thread (CPU operators;
// CUDA kernels too when asked and this libtorch has CUDA), stop and write its Chrome trace.
// C++ exceptions become error strings, since an exception must not cross into Rust.
#include <torch/csrc/autograd/profiler_kineto.h>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <set>

namespace {

namespace prof = torch::autograd::profiler;
using torch::profiler::impl::ActivityType;
using torch::profiler::impl::ProfilerConfig;
using torch::profiler::impl::ProfilerState;

char* profile_error(const char* what) {
  size_t n = std::strlen(what);
  char* out = static_cast<char*>(std::malloc(n + 1));
  if (out != nullptr) {
    std::memcpy(out, what, n + 1);
  }
  return out;
}

std::set<ActivityType> activities(bool cuda) {
  std::set<ActivityType> out{ActivityType::CPU};
  if (cuda) {
    out.insert(ActivityType::CUDA);
  }
  return out;
}

ProfilerConfig config() {
  // Operators only: no input shapes, memory, stacks, FLOPs or modules (each costs time in
  // the window it measures).
  return ProfilerConfig(ProfilerState::KINETO, false, false, false, false, false);
}

}  // namespace

extern "C" {

// Starts the profiler on this thread; false with `*err` set when it cannot.
bool mlb_profile_start(bool cuda, char** err) {
  try {
    auto acts = activities(cuda);
    prof::prepareProfiler(config(), acts);
    prof::enableProfiler(config(), acts);
    return true;
  } catch (const std::exception& e) {
    *err = profile_error(e.what());
    return false;
  }
}

// Stops the profiler this thread started and writes its Chrome trace to `path`.
bool mlb_profile_stop(const char* path, char** err) {
  try {
    std::unique_ptr<prof::ProfilerResult> result = prof::disableProfiler();
    if (!result) {
      *err = profile_error("the profiler returned no result");
      return false;
    }
    result->save(path);
    return true;
  } catch (const std::exception& e) {
    *err = profile_error(e.what());
    return false;
  }
}

}  // extern "C"
