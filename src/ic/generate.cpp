// nbody::generate(): looks the model up by name, checks the options it uses, runs it,
// then applies what every model shares (ids 1..N, body radius, planar projection).

#include <cmath>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (in format.h before fmt 11)

#include "core/machine_memory.hpp"
#include "ic/models.hpp"
#include "ic/parallel.hpp"
#include "nbody/error.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/input_error.hpp"

namespace nbody {

namespace {

// ---- Option checks. Messages name the command-line option and the value given
// ---- ("--e: eccentricity must be in [0, 1) (got 1)"), so a user can fix the call without
// ---- reading the source; the CLI runs the same checks on each option as it is parsed.

void require_positive(std::string_view option, double value, std::string_view what) {
  if (!(std::isfinite(value) && value > 0)) {
    throw input_error(fmt::format("--{}", option),
                      fmt::format("{} must be positive and finite", what), value);
  }
}

void require_non_negative(std::string_view option, double value, std::string_view what) {
  if (!(std::isfinite(value) && value >= 0)) {
    throw input_error(fmt::format("--{}", option),
                      fmt::format("{} must be non-negative and finite", what), value);
  }
}

void require_bodies(const ModelOptions& o, std::size_t minimum, std::string_view why) {
  if (o.n < minimum) {
    throw input_error("-n",
                      fmt::format("model '{}' needs at least {} {}{}", o.model, minimum,
                                  minimum == 1 ? "body" : "bodies", why),
                      std::uint64_t{o.n});
  }
}

void check_nothing(const ModelOptions&) {}

void check_one_body(const ModelOptions& o) {
  require_bodies(o, 1, "");
}

void check_two_clusters(const ModelOptions& o) {
  require_bodies(o, 2, " (one per cluster)");
}

void check_disk(const ModelOptions& o) {
  require_bodies(o, 2, " (the central mass and at least one disk body)");
}

struct Model {
  std::string_view name;
  void (*check)(const ModelOptions&);
  ParticleSystem (*make)(const ModelOptions&);
  bool uses_G;  // velocities from gravity (orbits, equilibrium): G must be > 0
};

// The order here is the order model_names() (and so the CLI help) lists them in.
constexpr Model kModels[] = {
    {"uniform-cube", check_one_body, ic::uniform_cube, false},
    {"uniform-sphere", check_one_body, ic::uniform_sphere, false},
    {"cold-sphere", check_one_body, ic::cold_sphere, false},
    {"plummer", check_one_body, ic::plummer, true},
    {"hernquist", check_one_body, ic::hernquist, true},
    {"nfw", check_one_body, ic::nfw, true},
    {"kepler", check_nothing, ic::kepler, true},
    {"figure-eight", check_nothing, ic::figure_eight, true},
    {"two-clusters", check_two_clusters, ic::two_clusters, true},
    {"disk", check_disk, ic::exponential_disk, true},
};

const Model& find_model(const std::string& name) {
  for (const Model& m : kModels) {
    if (m.name == name) return m;
  }
  throw Error(
      fmt::format("unknown model '{}' (available: {})", name, fmt::join(model_names(), ", ")));
}

}  // namespace

std::vector<std::string> model_names() {
  std::vector<std::string> names;
  for (const Model& m : kModels) names.emplace_back(m.name);
  return names;
}

void validate(const ModelOptions& o) {
  if (o.threads < 0) throw input_error("--threads", "must be >= 0", o.threads);
  if (o.dim != 2 && o.dim != 3) throw input_error("--dim", "dimension must be 2 or 3", o.dim);
  // Every parameter, whatever the model: a value no model could use is refused even where
  // this model leaves it unused, so the command line can check each option as it is parsed.
  if (!std::isfinite(o.G)) throw input_error("--G", "gravitational constant must be finite", o.G);
  require_non_negative("radius", o.radius, "body radius");
  require_positive("mass", o.mass, "total mass");
  require_positive("size", o.size, "cube half-edge / sphere radius");
  require_non_negative("velocity", o.velocity, "velocity range");
  // !(a <= e < b) also rejects NaN.
  if (!(o.e >= 0 && o.e < 1)) throw input_error("--e", "eccentricity must be in [0, 1)", o.e);
  require_positive("a", o.a, "semi-major axis");
  require_positive("separation", o.separation, "distance between the cluster centres");
  require_non_negative("impact", o.impact, "impact parameter");
  // A massless disk is allowed: test particles around a point mass.
  require_non_negative("disk-mass", o.disk_mass, "disk mass");
  require_positive("scale-length", o.scale_length, "disk scale length");
  require_positive("rmax", o.rmax, "truncation radius (in units of the scale length a)");
  require_positive("concentration", o.concentration, "concentration c = r_200 / r_s");
}

ParticleSystem generate(const ModelOptions& options) {
  const Model& model = find_model(options.model);
  // The uniform models' velocities do not depend on G, so they also serve runs without
  // gravity (--G 0, --gravity none: granular and ballistic runs).
  if (model.uses_G) {
    require_positive("G", options.G, "gravitational constant");
  } else {
    require_non_negative("G", options.G, "gravitational constant");
  }
  validate(options);
  model.check(options);
  ic::check_memory_for(options.n);

  ParticleSystem ps = model.make(options);

  // Ids 1..N written through the array (ParticleSystem::add rescans them if a body is
  // added later), in the same parallel pass as the radii.
  ic::for_each_body(options.threads, 0, ps.size(), [&](std::size_t i) {
    ps.id[i] = i + 1;
    ps.radius[i] = options.radius;
  });
  if (options.dim == 2) {
    // A projection onto the x-y plane: the planar models (kepler, figure-eight, disk)
    // are unchanged, but a 3-D model (the spheres, uniform-*, two-clusters) just loses z
    // and vz, so it is no longer in virial equilibrium or a uniform 2-D density.
    ps.make_planar();
  }
  ps.time = 0;
  ps.invalidate_accelerations();
  return ps;
}

namespace ic {

namespace {
// The arrays of a body that allocate() sizes: 12 doubles and the id, 8 bytes each.
constexpr int kArrays = 13;
constexpr double kBytesPerBody = kArrays * 8;
}  // namespace

void check_memory_for(std::size_t n) {
  // The run needs more (trees, copies): this is a floor.
  const double needed = double(n) * kBytesPerBody;
  const double machine = machine_memory_bytes();
  if (machine > 0 && needed > machine) {
    throw input_error("--count",
                      fmt::format("the bodies alone need {:.3g} GB of memory ({} bytes each), "
                                  "more than this machine's {:.3g} GB",
                                  needed / 1e9, kBytesPerBody, machine / 1e9),
                      n);
  }
}

ParticleSystem allocate(std::size_t n, int threads) {
  ParticleSystem ps;
  // std::vector zero-fills on one thread; 13 arrays of n values on up to 13 threads at
  // once. ps.resize() then only sets what is not listed here (it leaves arrays of the
  // right size alone), so an array added to ParticleSystem later is still sized.
  std::vector<double>* arrays[kArrays - 1] = {&ps.x,  &ps.y,         &ps.z,    &ps.vx,
                                              &ps.vy, &ps.vz,        &ps.ax,   &ps.ay,
                                              &ps.az, &ps.potential, &ps.mass, &ps.radius};
  [[maybe_unused]] const int team = team_size(threads);
  // An exception must not leave an OpenMP region (std::terminate): it is carried out
  // (core/omp_team.hpp) and thrown on the calling thread, a failed allocation as an Error.
  RegionErrors errors;
#pragma omp parallel for num_threads(team) schedule(dynamic, 1) if (n >= kParallelMin)
  for (int a = 0; a < kArrays; ++a) {
    errors.run([&] {
      if (a < kArrays - 1) {
        arrays[a]->resize(n);
      } else {
        ps.id.resize(n);
      }
    });
  }
  try {
    errors.rethrow();
  } catch (const std::bad_alloc&) {
    throw input_error("--count",
                      fmt::format("not enough memory for the bodies ({:.3g} GB)",
                                  double(n) * kBytesPerBody / 1e9),
                      n);
  }
  ps.resize(n);
  return ps;
}

void to_center_of_mass_frame(ParticleSystem& ps, std::size_t begin, std::size_t end, int threads) {
  // Block sums in index order (parallel.hpp): the same bits for any thread count, and
  // accurate enough (residual momentum ~1e-16 of the typical |m v|) for every model here.
  const auto s = ordered_sum<7>(threads, begin, end, [&](std::size_t i, auto& sum) {
    const double m = ps.mass[i];
    sum[0] += m;
    sum[1] += m * ps.x[i];
    sum[2] += m * ps.y[i];
    sum[3] += m * ps.z[i];
    sum[4] += m * ps.vx[i];
    sum[5] += m * ps.vy[i];
    sum[6] += m * ps.vz[i];
  });
  const double m = s[0];
  if (!(m > 0)) return;  // massless set: no centre of mass to move to
  const double cx = s[1] / m, cy = s[2] / m, cz = s[3] / m;
  const double cvx = s[4] / m, cvy = s[5] / m, cvz = s[6] / m;
  for_each_body(threads, begin, end, [&](std::size_t i) {
    ps.x[i] -= cx;
    ps.y[i] -= cy;
    ps.z[i] -= cz;
    ps.vx[i] -= cvx;
    ps.vy[i] -= cvy;
    ps.vz[i] -= cvz;
  });
}

void scale_velocities(ParticleSystem& ps, std::size_t begin, std::size_t end, double factor,
                      int threads) {
  if (factor == 1.0) return;
  for_each_body(threads, begin, end, [&](std::size_t i) {
    ps.vx[i] *= factor;
    ps.vy[i] *= factor;
    ps.vz[i] *= factor;
  });
}

}  // namespace ic
}  // namespace nbody
