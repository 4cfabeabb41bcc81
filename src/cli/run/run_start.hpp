#pragma once
// The bodies `nbody run` starts from when it is not a restart (run_loop.cpp).
#include <cstddef>
#include <memory>

#include "cli/cli11_fwd.hpp"
#include "cli/run/run_args.hpp"
#include "nbody/distributed.hpp"
#include "nbody/particles.hpp"
#include "nbody/simulation.hpp"

namespace nbody::cli {

struct StartBodies {
  ParticleSystem bodies;
  std::size_t total = 0;  // every rank's bodies together
  bool shared = false;    // `bodies` is this rank's share of them
};

/// In a decomposed run (Simulation::decomposes) of a model or an HDF5 file, this rank's
/// share alone (generate_window, read_snapshot_share: no rank holds all N); otherwise
/// every body (load_or_generate). --radius with a file gives its bodies that radius.
[[nodiscard]] StartBodies start_bodies(const RunArgs& a, const CLI::App& app,
                                       const SimulationOptions& options,
                                       const std::shared_ptr<ForceReducer>& ranks);

}  // namespace nbody::cli
