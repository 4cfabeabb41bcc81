#pragma once
// The neighbourhood density of the dynamical time-step criterion (physics/timestep.hpp):
// for every body, the smallest cell of the octree (quadtree in 2D) of the bodies' bounding
// cube that holds it and at least kDensityCellBodies bodies, as cell_omega2(G, M, side, eps).
//
// The tree is implicit, as in the contact search (collisions/contact_tree.hpp): the bodies
// sorted by Morton key, so every cell of every level is one run of the sorted keys; the
// deepest cell holding a body and kDensityCellBodies bodies is the deepest common cell of
// the ends of one of the runs of kDensityCellBodies sorted bodies around it (one XOR and
// one count of leading zeros a run), and its run of keys is found by binary search (on the
// CPU once a cell: the bodies are taken in key order, the next ones in it reuse it). A
// cell's mass is a difference of prefix sums in key order. The result depends only on the positions
// and masses: the same for any number of threads. A GPU twin does the same operations
// (simulation/cuda/cell_density.cu).
#include <cstdint>
#include <utility>
#include <vector>

#include "nbody/particles.hpp"

namespace nbody {

class CellDensity {
 public:
  /// omega2[i] for every body of ps (resized to ps.size()); `dim` 2 keys x and y alone.
  void compute(const ParticleSystem& ps, int dim, double G, double softening,
               std::vector<double>& omega2);

 private:
  std::vector<std::pair<std::uint64_t, std::uint32_t>> keyed_, tmp_;
  std::vector<std::uint64_t> keys_;
  std::vector<double> mass_before_;  // mass of the bodies before each sorted position
  std::vector<std::uint8_t> level_;  // deepest common level of each run of the wanted bodies
};

}  // namespace nbody
