#pragma once
// write_path_atomically (snapshot.hpp) in two steps, for a file that several processes write
// at once (written_together.cpp): the temporary beside the target first, the rename once
// every process has written its part.
#include <filesystem>
#include <memory>

namespace nbody {

class AtomicTarget {
 public:
  /// Checks `path` as write_path_atomically does (its folder exists, it is no device) and
  /// names a temporary beside it, removed by the signal handlers' cleanup while it exists.
  /// Throws nbody::Error naming `path`.
  explicit AtomicTarget(const std::filesystem::path& path);
  /// Without commit(): removes the temporary (the old file stays as it was).
  ~AtomicTarget();
  AtomicTarget(const AtomicTarget&) = delete;
  AtomicTarget& operator=(const AtomicTarget&) = delete;

  [[nodiscard]] const std::filesystem::path& temporary() const;
  /// Renames the complete temporary over the target; throws "PATH: cannot write file
  /// (reason)" (the temporary is then gone).
  void commit();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace nbody
