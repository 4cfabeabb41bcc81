#pragma once
// The GPU tree's experiment for hierarchical time steps, switched by an environment variable
// (docs/timesteps.md, "GPU substeps"): plain C++, so that the unit tests check its parsing
// without CUDA.

namespace nbody {

/// Whether the GPU's substeps refit the tree between a step's builds (1) or build it each
/// time (0, unset: the default), from NBODY_TREE_REFIT, given its text. Throws the input error
/// that names the variable otherwise.
bool tree_refit_from(const char* text);

}  // namespace nbody
