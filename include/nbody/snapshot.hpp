#pragma once
// HDF5 files: snapshots in the GADGET/SWIFT layout (read by yt, pynbody, and by `-i`),
// and checkpoints that hold the exact state of a run so that it can be continued bit for
// bit (docs/reference-values.md, docs/snapshots.md).
//
// Snapshot layout: /Header attributes (NumPart_ThisFile, NumPart_Total,
// NumPart_Total_HighWord, MassTable, Time, Redshift, BoxSize = 0, NumFilesPerSnapshot,
// Omega0, OmegaLambda, HubbleParam, Flag_DoublePrecision, plus nbody's Dimension) and
// /PartType1 with Coordinates (N x 3), Velocities (N x 3), Masses (N), ParticleIDs (N,
// unsigned 64-bit, >= 1) and, when asked for, Radii (N), Accelerations (N x 3) and
// Potential (N). Test particles (ParticleSystem::n_active) are /PartType3, with the same
// datasets, after the active bodies of /PartType1 (NumPart_* count them as type 3), and
// /Header then holds nbody's TestParticleType (0 or 1).
//
// Every writer here writes a temporary file beside the target and renames it into place,
// so a reader (or a run killed with -9 mid-write) sees the old file or the whole new one.
// Every reader throws nbody::Error naming the file and the group, dataset or attribute at
// fault for a missing, truncated or corrupt file ("FILE: /PartType1/Masses[17]: must be
// finite and > 0 (got 0)"); the HDF5 library's own error stack printing is switched off.
// What enters is checked where it enters: each object's header in the file's bytes before
// libhdf5 decodes it, datatypes (IEEE floats, standard integers), shapes, counts against
// the extents and the machine's memory before anything is allocated, then every value.
// A failed write says why ("No space left on device"), keeps the old file and leaves no
// temporary.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "nbody/collisions.hpp"
#include "nbody/distributed.hpp"
#include "nbody/integrator.hpp"
#include "nbody/particles.hpp"

namespace nbody {

class ForceReducer;

/// True when this build can read and write HDF5 (NBODY_HAVE_HDF5); without it every
/// function below throws nbody::Error("... built without HDF5 ...").
[[nodiscard]] bool have_hdf5();

struct SnapshotParameter;  // nbody/snapshot_parameters.hpp

enum class SnapshotPrecision { Float, Double };

struct SnapshotOptions {
  SnapshotPrecision precision =
      SnapshotPrecision::Double;  // of Coordinates, Velocities, Masses, ...
  bool radius = false;        // write /PartType1/Radii (also written whenever a body has a radius)
  bool acceleration = false;  // write /PartType1/Accelerations (ps.ax/ay/az)
  // The run options, written as /Parameters (nbody/snapshot_parameters.hpp); null: none.
  const std::vector<SnapshotParameter>* parameters = nullptr;
  // Whether the ids are all >= 1 and unique, kept by a caller that writes many files of
  // the same bodies: empty, the check runs and its answer is kept here; set, it is used.
  // A run's ids do not change as bodies move between ranks or merge, and the check is a
  // collective exchange of every id in a decomposed run (2.2 s a rank for 2^26 bodies on
  // the H200 hosts). Null: checked every time.
  std::optional<bool>* ids_usable = nullptr;
};

/// Writes a GADGET/SWIFT-layout snapshot of ps at ps.time, atomically. `potential`, when
/// not null, is written as /PartType1/Potential (it must have ps.size() entries). Ids of
/// 0 are not allowed in the file: a system whose ids are not all >= 1 and unique is
/// written with ids 1..N.
void write_snapshot(const std::filesystem::path& path, const ParticleSystem& ps,
                    const SnapshotOptions& options, const std::vector<double>* potential = nullptr);

/// write_snapshot of every rank's bodies in a decomposed run, into one file: `ps` (and
/// `potential`) are this rank's bodies, written after those of the ranks before it (rank 0
/// lays the file out, the ranks write their rows at once, rank 0 renames it into place; no
/// rank holds all N). The ids are written as write_snapshot writes them, judged over every
/// rank's. Collective over `group`: what any rank found every rank throws, and then no file
/// is left under `path` (the old one stays) nor beside it. Test particles are refused (one
/// process writes them).
void write_snapshot_share(const std::filesystem::path& path, const ParticleSystem& ps,
                          const SnapshotOptions& options, const std::vector<double>* potential,
                          ForceReducer& group);

/// Reads a snapshot in the GADGET/SWIFT layout: ours, GADGET-2/3/4's HDF5 output or
/// SWIFT's. Every PartType0..5 group present is read, in type order; masses come from
/// Masses or, when a type has none, from Header/MassTable; radii from Radii (else 0);
/// ids from ParticleIDs (else 1..N); the time from Header/Time; dim from Header/Dimension
/// (else 3). Float32 and float64 datasets are both accepted. Test particles: with
/// /Header/TestParticleType, PartType3's bodies, read last (their masses >= 0, the others'
/// > 0); a checkpoint's, from /Checkpoint/NumActive; otherwise the bodies of mass 0, which
/// must come after every body with mass. Multi-file snapshots (NumFilesPerSnapshot > 1) are
/// refused with a message saying so, and so are snapshots without bodies or without a body
/// of mass, masses that are not finite and >= 0, a body with mass after one without,
/// positions and velocities that are not finite, counts that are not integers, and repeated
/// ids.
[[nodiscard]] ParticleSystem read_snapshot(const std::filesystem::path& path);
/// This rank's share of read_snapshot(path): its bodies share_range(N, part, parts)
/// (gravity.hpp), with their values and ids, read alone (HDF5 row selections: no rank holds
/// all N), checked as read_snapshot checks them and their ids unique over every share.
/// Collective over `group` (every rank throws what any found); `total` gets N. A file with
/// test particles is refused ("test particles: read by one process ...").
[[nodiscard]] ParticleSystem read_snapshot_share(const std::filesystem::path& path,
                                                 ForceReducer& group, std::size_t& total);

/// True when the file starts with the HDF5 signature (used to pick the reader for `-i`).
[[nodiscard]] bool looks_like_hdf5(const std::filesystem::path& path);

/// Everything needed to continue a run exactly where it stopped.
struct CheckpointState {
  ParticleSystem particles;    // float64, bit for bit, accelerations and their validity included
  std::uint64_t step = 0;      // steps done
  double initial_energy = 0;   // E at step 0, for |dE/E|
  CollisionTotals collisions;  // totals so far
  std::uint64_t next_snapshot = 0;  // number of the next snapshot file
  double next_snapshot_time = 0;    // --snapshot-dt: simulated time of the next snapshot
  double snapshot_origin = std::numeric_limits<double>::quiet_NaN();  // time of snapshot 0
                                                                      // (NaN: not recorded)
  std::string parameters;      // the run's used parameters (TOML text), for the record
  IntegratorState integrator;  // IAS15's polynomial and compensations (empty: none)
  /// A decomposed CPU run's cuts and this rank's bodies' costs (empty: none). Read back only
  /// by a restart on as many ranks as wrote it, each reading the rows it wrote (the costs are
  /// read at any count of ranks: the first cut balances them).
  DecompositionState decomposition;
};

/// Writes a checkpoint (HDF5: the particle arrays as float64 datasets under /Checkpoint,
/// the scalars as attributes, n_active as NumActive when there are test particles and
/// test_particle_type as TestParticleType), atomically.
void write_checkpoint(const std::filesystem::path& path, const CheckpointState& state);
/// The same with the bodies `particles` in place of state.particles (which is not read): a
/// run's own bodies, not copied (a copy of 2^29 bodies took longer than their writing);
/// `ids_usable` as SnapshotOptions::ids_usable.
void write_checkpoint(const std::filesystem::path& path, const CheckpointState& state,
                      const ParticleSystem& particles, std::optional<bool>* ids_usable = nullptr);
/// write_checkpoint of a decomposed run, into one file as write_snapshot_share writes (the
/// same layout and names: read_checkpoint, `-i`, yt and h5py read it as any checkpoint, its
/// bodies in the ranks' order): `particles` are this rank's bodies, the state's fields
/// every rank's (rank 0's are written). IAS15's state and test particles are refused (one
/// process writes them). Collective over `group`, as write_snapshot_share.
void write_checkpoint_share(const std::filesystem::path& path, const CheckpointState& state,
                            const ParticleSystem& particles, ForceReducer& group,
                            std::optional<bool>* ids_usable = nullptr);
/// Reads a checkpoint written by write_checkpoint; throws nbody::Error naming the file and
/// what is missing or malformed, or a value no run holds (a NaN position, a mass of 0 for an
/// active body, a repeated id, a NaN time, a NaN in IAS15's state, NumActive above N). A
/// checkpoint without NumActive or TestParticleType (written before test particles) has every
/// body active, of type 0.
[[nodiscard]] CheckpointState read_checkpoint(const std::filesystem::path& path);
/// This rank's share of read_checkpoint(path): the bodies share_range(N, part, parts)
/// (gravity.hpp) read alone (HDF5 row selections), every scalar; checked as read_checkpoint
/// checks them, with its messages (a row named over the whole file, "x[1234]"), the ids
/// unique over every share. A checkpoint with IAS15's state or test particles is refused
/// (one process reads them). Collective over `group` (every rank throws what any found);
/// `total` gets N.
[[nodiscard]] CheckpointState read_checkpoint_share(const std::filesystem::path& path,
                                                    ForceReducer& group, std::size_t& total);
/// read_checkpoint without the bodies: the format checked, the scalars (the time and dim in
/// `particles`, which holds no bodies, with n_active and test_particle_type as in the file)
/// and the parameters, for a restart's options before the run reads its bodies. IAS15's
/// state is left for the read of the bodies.
[[nodiscard]] CheckpointState read_checkpoint_header(const std::filesystem::path& path);

/// The atomic-replace pattern for writers that need a path (HDF5) rather than a stream:
/// `write(tmp)` creates the file tmp (a hidden name beside `path`), which is then renamed
/// over `path`. When `write` throws, tmp is removed and the exception passed on.
void write_path_atomically(const std::filesystem::path& path,
                           const std::function<void(const std::filesystem::path& tmp)>& write);

}  // namespace nbody
