// placeholder until the tree lands: --gravity tree reports that it is not built yet.
#include "tree/tree_solver.hpp"

#include "nbody/error.hpp"

namespace nbody {

std::unique_ptr<GravitySolver> make_tree_solver(const GravityOptions&) {
  throw Error("--gravity tree: the Barnes-Hut solver is not available in this build yet");
}

}  // namespace nbody
