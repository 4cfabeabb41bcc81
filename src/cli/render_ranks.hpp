#pragma once
// nbody render under mpirun (issue 36): the simulation runs on every rank as `nbody run`
// runs it (each rank owning its bodies where the decomposition covers the options), and
// rank 0 draws: each frame's bodies are gathered to it, every k-th by id when N is larger
// than a picture needs (kDrawnMost), so that no rank holds all of a large N.
#include <cstddef>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "nbody/distributed.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/simulation.hpp"

namespace nbody::cli {

/// The most bodies a frame of a decomposed run gathers to rank 0 (every k-th by id beyond:
/// an 800 x 800 picture shows no more).
inline constexpr std::size_t kDrawnMost = std::size_t{1} << 22;

/// The simulation of `nbody render`: the model drawn by each rank for its own share when
/// the run is decomposed (as `nbody run` draws it), else the bodies of the file or model
/// on every rank (the share kept where the run is decomposed; --radius given to a file's
/// bodies, as `nbody run` does). `ranks` may be null.
[[nodiscard]] Simulation render_simulation(const std::string& input, const std::string& format,
                                           const ModelOptions& model,
                                           const SimulationOptions& options, int dim,
                                           const CLI::App& app,
                                           const std::shared_ptr<ForceReducer>& ranks);

/// Collective in a decomposed run: the bodies of a frame, gathered into `gathered` on rank 0
/// in id order (every rank's bodies, or those whose id is a multiple of
/// ceil(N / most)), empty on the other ranks. Elsewhere the simulation's own bodies.
[[nodiscard]] const ParticleSystem& drawn_bodies(const Simulation& sim, ForceReducer* ranks,
                                                 ParticleSystem& gathered,
                                                 std::size_t most = kDrawnMost);

}  // namespace nbody::cli
