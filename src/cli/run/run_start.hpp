#pragma once
// The bodies `nbody run` starts from (run_loop.cpp): a checkpoint's, a file's or a model's.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>

#include "cli/cli11_fwd.hpp"
#include "cli/run/run_args.hpp"
#include "nbody/distributed.hpp"
#include "nbody/particles.hpp"
#include "nbody/simulation.hpp"
#include "nbody/snapshot.hpp"

namespace nbody::cli {

struct StartBodies {
  ParticleSystem bodies;
  std::size_t total = 0;  // every rank's bodies together
  bool shared = false;    // `bodies` is this rank's share of them
  // A restart: the checkpoint's state (its bodies moved to `bodies`), for Simulation::resume.
  std::optional<CheckpointState> checkpoint;
};

/// In a decomposed run (Simulation::decomposes) of a checkpoint (--restart), a model or an
/// HDF5 file, this rank's share alone (read_checkpoint_share, generate_window,
/// read_snapshot_share: no rank holds all N); otherwise every body (read_checkpoint,
/// load_or_generate). --radius with a file gives its bodies that radius; --n-active and
/// --test-particle-type mark the test particles.
[[nodiscard]] StartBodies start_bodies(const RunArgs& a, const CLI::App& app,
                                       const SimulationOptions& options,
                                       const std::shared_ptr<ForceReducer>& ranks);
/// start_bodies() before --n-active and --test-particle-type are applied.
[[nodiscard]] StartBodies start_bodies_as_given(const RunArgs& a, const CLI::App& app,
                                                const SimulationOptions& options,
                                                const std::shared_ptr<ForceReducer>& ranks);

/// How far the run goes, checked before anything is written: --t-end after the start time
/// (a restart already past it is said, `talk`, on `human`), a restart already past --steps
/// said, and every step advancing the time to the end within 2^53 steps (the library's
/// checks, as Python's evolve). Throws the input error naming the option.
void check_run_length(const RunArgs& a, const Simulation& sim, bool until_time, bool resumed,
                      std::uint64_t first_step, bool talk, std::FILE* human);

}  // namespace nbody::cli
