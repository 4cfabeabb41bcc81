// nbody::generate(): looks the model up by name, checks the options it uses, runs it,
// then applies what every model shares (ids 1..N, body radius, planar projection).

#include <cmath>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (in format.h before fmt 11)

#include "core/huge_pages.hpp"
#include "core/machine_memory.hpp"
#include "ic/models.hpp"
#include "ic/parallel.hpp"
#include "nbody/distributed.hpp"
#include "nbody/error.hpp"
#include "nbody/gravity.hpp"
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

void check_giants(const ModelOptions& o) {
  require_bodies(o, 5, " (the Sun and the four giant planets)");
}

/// The few-body models, made whole, into the window.
template <ParticleSystem (*Whole)(const ModelOptions&)>
void few(const ModelOptions& o, ic::Bodies& b) {
  const ParticleSystem all = Whole(o);
  for (std::size_t k = 0; k < b.ps.size(); ++k) {
    const std::size_t i = b.first + k;
    ic::set_body(b.ps, k, {all.x[i], all.y[i], all.z[i]}, {all.vx[i], all.vy[i], all.vz[i]},
                 all.mass[i]);
  }
}

struct Model {
  std::string_view name;
  void (*check)(const ModelOptions&);
  void (*make)(const ModelOptions&, ic::Bodies&);
  bool uses_G;                   // velocities from gravity (orbits, equilibrium): G must be > 0
  std::size_t fixed_bodies = 0;  // kepler, figure-eight: this many whatever -n says
};

// The order here is the order model_names() (and so the CLI help) lists them in.
constexpr Model kModels[] = {
    {"uniform-cube", check_one_body, ic::uniform_cube, false},
    {"uniform-sphere", check_one_body, ic::uniform_sphere, false},
    {"cold-sphere", check_one_body, ic::cold_sphere, false},
    {"plummer", check_one_body, ic::plummer, true},
    {"hernquist", check_one_body, ic::hernquist, true},
    {"nfw", check_one_body, ic::nfw, true},
    {"kepler", check_nothing, few<ic::kepler>, true, 2},
    {"figure-eight", check_nothing, few<ic::figure_eight>, true, 3},
    {"two-clusters", check_two_clusters, ic::two_clusters, true},
    {"disk", check_disk, ic::exponential_disk, true},
    {"giants", check_giants, ic::giants, true},
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

std::size_t model_bodies(const ModelOptions& options) {
  const Model& model = find_model(options.model);
  return model.fixed_bodies > 0 ? model.fixed_bodies : options.n;
}

ParticleSystem generate(const ModelOptions& options) {
  return generate_window(options, 0, model_bodies(options), nullptr);
}

ParticleSystem generate_share(const ModelOptions& options, ForceReducer& group) {
  const ShareRange mine = share_range(model_bodies(options), group.part(), group.parts());
  return generate_window(options, mine.first, mine.last - mine.first, &group);
}

ParticleSystem generate_window(const ModelOptions& options, std::size_t first, std::size_t count,
                               ForceReducer* group) {
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
  const std::size_t n = model_bodies(options);
  if (first > n || count > n - first || (group == nullptr && count != n)) {
    throw Error(fmt::format("generate_window: bodies [{}, {}) of a model of {}{}", first,
                            first + count, n, group ? "" : " without the ranks of the rest"));
  }
  ic::check_memory_for(count);

  ic::Bodies bodies{ic::allocate(count, options.threads), first, group};
  model.make(options, bodies);
  ParticleSystem& ps = bodies.ps;

  // Ids first + 1 .. written through the array (ParticleSystem::add rescans them if a body
  // is added later), in the same parallel pass as the radii.
  ic::for_each_body(options.threads, 0, ps.size(), [&](std::size_t i) {
    ps.id[i] = first + i + 1;
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
  // Massless bodies after the others (giants, a disk of --disk-mass 0) are test particles;
  // a window of several ranks' is not (the decomposition does not take them).
  if (group == nullptr) (void)mark_massless_test_particles(ps);
  return std::move(bodies.ps);
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
      // Room to grow (memory not touched until used): a rank's share of a decomposed
      // run changes in number, and its downloads then reuse these arrays
      // (ParticleSystem::resize_for_overwrite).
      if (a < kArrays - 1) {
        reserve_huge(*arrays[a], ParticleSystem::with_room(n));
        arrays[a]->resize(n);
      } else {
        reserve_huge(ps.id, ParticleSystem::with_room(n));
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

void to_center_of_mass_frame(Bodies& b, std::size_t begin, std::size_t end, int threads) {
  // Exact sums (exact_sum.hpp): the same bits for any thread count and any windows.
  ParticleSystem& ps = b.ps;
  const auto [lo, hi] = b.clip(begin, end);
  const auto s = exact_sums<7>(threads, lo, hi, b.group, [&](std::size_t i, auto& terms) {
    const std::size_t k = i - b.first;
    const double m = ps.mass[k];
    terms = {m, m * ps.x[k], m * ps.y[k], m * ps.z[k], m * ps.vx[k], m * ps.vy[k], m * ps.vz[k]};
  });
  const double m = s[0];
  if (!(m > 0)) return;  // massless set: no centre of mass to move to
  const double cx = s[1] / m, cy = s[2] / m, cz = s[3] / m;
  const double cvx = s[4] / m, cvy = s[5] / m, cvz = s[6] / m;
  for_each_body(threads, lo, hi, [&](std::size_t i) {
    const std::size_t k = i - b.first;
    ps.x[k] -= cx;
    ps.y[k] -= cy;
    ps.z[k] -= cz;
    ps.vx[k] -= cvx;
    ps.vy[k] -= cvy;
    ps.vz[k] -= cvz;
  });
}

void scale_velocities(Bodies& b, std::size_t begin, std::size_t end, double factor, int threads) {
  if (factor == 1.0) return;
  const auto [lo, hi] = b.clip(begin, end);
  for_each_body(threads, lo, hi, [&](std::size_t i) {
    const std::size_t k = i - b.first;
    b.ps.vx[k] *= factor;
    b.ps.vy[k] *= factor;
    b.ps.vz[k] *= factor;
  });
}

}  // namespace ic
}  // namespace nbody
