// The GPU tree's switch for hierarchical time steps (gpu_walk_options.hpp).
#include "tree/gpu_walk_options.hpp"

#include "core/environment_value.hpp"

namespace nbody {

bool tree_refit_from(const char* text) {
  return whole_from_environment("NBODY_TREE_REFIT", text, 0, 1, "must be 0 or 1") == 1;
}

}  // namespace nbody
