#include <fmt/format.h>

#include "gravity/direct_scalar.hpp"
#include "gravity/direct_simd.hpp"
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

std::unique_ptr<GravitySolver> make_gravity_solver(const GravityOptions& options) {
  GravityOptions o = options;
  o.precision = resolve_precision(o.precision, o.algorithm);
  if (o.device == Device::Gpu) {
    throw Error("--device gpu: GPU solvers are not available in this version of nbody");
  }
  if (o.softening < 0) throw Error(fmt::format("--softening {}: must be >= 0", o.softening));
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
