#include <fmt/format.h>

#include "gravity/direct_cuda.hpp"
#include "gravity/direct_scalar.hpp"
#include "gravity/direct_simd.hpp"
#include "tree/tree_cuda.hpp"
#include "tree/tree_solver.hpp"
#include "nbody/error.hpp"
#include "nbody/gravity.hpp"

namespace nbody {

std::string_view to_string(Precision p) {
  switch (p) {
    case Precision::Float: return "float";
    case Precision::Double: return "double";
    default: return "auto";
  }
}

Precision resolve_precision(Precision p, const std::string& algorithm) {
  if (p != Precision::Auto) return p;
  return algorithm == "tree" ? Precision::Float : Precision::Double;
}
std::string_view to_string(Device d) { return d == Device::Cpu ? "cpu" : "gpu"; }

std::vector<std::string> cpu_direct_kernels() { return {"fast", "scalar"}; }
std::vector<std::string> gpu_direct_kernels() { return {"fast", "tiled", "naive"}; }

std::unique_ptr<GravitySolver> make_gravity_solver(const GravityOptions& options) {
  GravityOptions o = options;
  o.precision = resolve_precision(o.precision, o.algorithm);
  if (o.softening < 0) throw Error(fmt::format("--softening {}: must be >= 0", o.softening));
  if (o.device == Device::Gpu) {
    if (o.algorithm == "tree") {
      check_tree_options(o);
      return make_tree_cuda(o);  // checks the device
    }
    if (o.algorithm != "direct") {
      throw Error(fmt::format("--gravity {}: unknown gravity solver (available: direct, tree)", o.algorithm));
    }
    if (o.kernel == "scalar") throw Error("--kernel scalar: CPU only; GPU kernels: naive, tiled, fast");
    return make_direct_cuda(o);  // checks the kernel name, block size and device
  }
  if (o.kernel == "naive" || o.kernel == "tiled") {
    throw Error(fmt::format("--kernel {}: GPU only (--device gpu); CPU kernels: fast, scalar", o.kernel));
  }
  if (o.block_size != 0) {
    throw Error(fmt::format("--block-size {}: GPU only (--device gpu)", o.block_size));
  }
  if (o.algorithm == "tree") return make_tree_solver(o);
  if (o.algorithm != "direct") {
    throw Error(fmt::format("--gravity {}: unknown gravity solver (available: direct, tree)", o.algorithm));
  }
  if (o.kernel == "scalar") {
    if (o.precision == Precision::Float) return std::make_unique<DirectSumScalar<float>>(o.G, o.softening);
    return std::make_unique<DirectSumScalar<double>>(o.G, o.softening);
  }
  if (o.kernel == "fast" || o.kernel.empty()) {
    return make_direct_simd(o.precision, o.G, o.softening, o.threads);
  }
  throw Error(fmt::format("--kernel {}: unknown CPU direct-sum kernel (available: fast, scalar)", o.kernel));
}

}  // namespace nbody
