#pragma once
// The GADGET/SWIFT snapshot layout, shared by snapshot_format.cpp and the checkpoint
// writer (whose files are snapshots too, so `-i checkpoint.h5`, yt and pynbody read them).
#include <cstdint>
#include <optional>
#include <vector>

#include "io/hdf5_file.hpp"
#include "nbody/distributed.hpp"
#include "nbody/particles.hpp"

namespace nbody::snapshot_layout {

/// Our bodies are all of GADGET type 1 (collisionless; type 0 would be SPH gas).
inline constexpr int kBodyType = 1;
inline constexpr const char* kBodyGroup = "PartType1";

/// Test particles (ParticleSystem::n_active) are of type 3, a group of their own after the
/// active bodies' (yt and pynbody see them as their own species), and /Header then holds
/// nbody's TestParticleType (0 or 1): its presence is what makes PartType3 the test
/// particles (GADGET's own type-3 bodies are read as any others). A checkpoint keeps every
/// body in PartType1 (its view, checkpoint_layout.hpp) and n_active under /Checkpoint.
inline constexpr int kTestType = 3;
inline constexpr const char* kTestGroup = "PartType3";
inline constexpr const char* kTestParticleType = "TestParticleType";

/// Writes /Header (the GADGET attributes plus nbody's Dimension) for n active bodies of type
/// 1 and `tests` test particles of type 3 (with them, TestParticleType `test_type`).
/// body_mass > 0: MassTable[1], the mass of every type-1 body (no Masses dataset then, as
/// GADGET writes it); 0: masses per body.
void write_header(hdf5::Group& root, std::uint64_t n, double time, int dim,
                  hdf5::Precision precision, std::uint64_t tests = 0, int test_type = 0,
                  double body_mass = 0.0);

/// True when every id is >= 1 and no two are equal (what GADGET-style readers expect).
[[nodiscard]] bool ids_usable(const std::vector<std::uint64_t>& ids);

/// ids_usable over every rank's ids (collective; group null: ids_usable(ids)). With `known`
/// (SnapshotOptions::ids_usable), its answer when it has one, else the check's, kept there.
[[nodiscard]] bool ids_usable_over(const std::vector<std::uint64_t>& ids, ForceReducer* group,
                                   std::optional<bool>* known = nullptr);

/// The ids a snapshot stores: ps.id when usable, else 1..N.
[[nodiscard]] std::vector<std::uint64_t> snapshot_ids(const ParticleSystem& ps);

}  // namespace nbody::snapshot_layout
