#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gravity/direct_cuda.hpp"
#include "gravity/direct_scalar.hpp"
#include "gravity/direct_simd.hpp"
#include "gravity/no_gravity.hpp"
#include "gravity/test_particle_gravity.hpp"
#include "nbody/error.hpp"
#include "nbody/gravity.hpp"
#include "nbody/input_error.hpp"
#include "tree/tree_cuda.hpp"
#include "tree/tree_solver.hpp"

namespace nbody {

std::string_view to_string(Precision p) {
  switch (p) {
    case Precision::Float:
      return "float";
    case Precision::Double:
      return "double";
    default:
      return "auto";
  }
}

Precision resolve_precision(Precision p, GravityAlgorithm a) {
  if (p != Precision::Auto) return p;
  return a == GravityAlgorithm::Tree ? Precision::Float : Precision::Double;
}
std::string_view to_string(Device d) {
  return d == Device::Cpu ? "cpu" : "gpu";
}

std::vector<std::string> precision_names() {
  return {"auto", "float", "double"};
}
std::vector<std::string> device_names() {
  return {"cpu", "gpu"};
}

Precision parse_precision(std::string_view name) {
  if (name == "auto") return Precision::Auto;
  if (name == "float") return Precision::Float;
  if (name == "double") return Precision::Double;
  throw input_error(
      "--precision",
      fmt::format("unknown precision (available: {})", fmt::join(precision_names(), ", ")), name);
}

Device parse_device(std::string_view name) {
  if (name == "cpu") return Device::Cpu;
  if (name == "gpu") return Device::Gpu;
  throw input_error("--device",
                    fmt::format("unknown device (available: {})", fmt::join(device_names(), ", ")),
                    name);
}

void validate(const GravityOptions& o) {
  if (!std::isfinite(o.G))
    throw input_error("--G", "the gravitational constant must be finite", o.G);
  if (!(std::isfinite(o.softening) && o.softening >= 0)) {
    throw input_error("--softening", "must be a finite number >= 0", o.softening);
  }
  check_tree_options(
      o);  // theta and dim, whatever the algorithm: a later switch to the tree uses them
  if (o.threads < 0) throw input_error("--threads", "must be >= 0", o.threads);
  if (o.block_size < 0) throw input_error("--block-size", "must be >= 0", o.block_size);
}

int default_threads(const GravityOptions& o, std::size_t n) {
  if (o.threads > 0 || o.device != Device::Cpu) return o.threads;
  switch (o.algorithm) {
    case GravityAlgorithm::Direct:
      return n < kSerialDirectBodies ? 1 : 0;
    case GravityAlgorithm::Tree:
      return n < kSerialTreeBodies ? 1 : 0;
    default:
      return 1;  // no forces to share
  }
}

namespace {

/// The solver of the options' algorithm, device and kernel (checked by the caller).
std::unique_ptr<GravitySolver> make_force_solver(const GravityOptions& o) {
  if (o.device == Device::Gpu) {
    if (o.algorithm == GravityAlgorithm::Tree) return make_tree_cuda(o);  // checks the device
    return make_direct_cuda(o);  // checks the kernel, block size and device
  }
  if (o.algorithm == GravityAlgorithm::Tree) return make_tree_solver(o);
  if (o.kernel == ForceKernel::Scalar) {
    if (o.precision == Precision::Float)
      return std::make_unique<DirectSumScalar<float>>(o.G, o.softening);
    return std::make_unique<DirectSumScalar<double>>(o.G, o.softening);
  }
  return make_direct_simd(o.precision, o.G, o.softening, o.threads);  // ForceKernel::Fast
}

}  // namespace

std::unique_ptr<GravitySolver> make_gravity_solver(const GravityOptions& options) {
  validate(options);
  GravityOptions o = options;
  o.precision = resolve_precision(o.precision, o.algorithm);
  if (o.device == Device::Gpu && o.kernel == ForceKernel::Scalar) {
    throw input_error("--kernel", "CPU only; GPU kernels: naive, tiled, fast", "scalar");
  }
  if (o.device == Device::Cpu &&
      (o.kernel == ForceKernel::Naive || o.kernel == ForceKernel::Tiled)) {
    throw input_error("--kernel", "GPU only (--device gpu); CPU kernels: fast, scalar",
                      to_string(o.kernel));
  }
  if (o.device == Device::Cpu && o.block_size != 0) {
    throw input_error("--block-size", "GPU only (--device gpu)", o.block_size);
  }
  // No gravity costs nothing, on either device (the GPU stepper checks the device itself).
  if (o.algorithm == GravityAlgorithm::None || o.G == 0.0) return make_no_gravity();
  return with_test_particles(make_force_solver(o), o);
}

}  // namespace nbody
