#include "nbody/build_info.hpp"

#include <fstream>

#include <fmt/format.h>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace nbody {

namespace {
std::string read_cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "unknown CPU";
}
}  // namespace

BuildInfo build_info() {
  BuildInfo b;
  b.version = NBODY_VERSION;
#if defined(__clang__)
  b.compiler = fmt::format("clang {}.{}", __clang_major__, __clang_minor__);
#elif defined(__GNUC__)
  b.compiler = fmt::format("gcc {}.{}", __GNUC__, __GNUC_MINOR__);
#else
  b.compiler = "unknown compiler";
#endif
#ifdef NBODY_HAVE_CUDA
  b.cuda = true;
#endif
#ifdef _OPENMP
  b.openmp = true;
  b.max_threads = omp_get_max_threads();
#endif
  b.cpu_model = read_cpu_model();
  return b;
}

}  // namespace nbody
