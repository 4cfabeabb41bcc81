// Two equal masses on a circular orbit, stepped through the installed library: prints the
// library's version and the relative energy change (the test checks both).
#include <cmath>
#include <cstdio>
#include <utility>

#include <nbody/build_info.hpp>
#include <nbody/simulation.hpp>

int main() {
  nbody::ParticleSystem bodies;
  // Separation 1, G = 1, masses 0.5: each moves at 0.5 on a circle of radius 0.5.
  bodies.add({{0.5, 0, 0}, {0, 0.5, 0}, 0.5});
  bodies.add({{-0.5, 0, 0}, {0, -0.5, 0}, 0.5});
  nbody::Simulation sim(std::move(bodies), nbody::SimulationOptions{});
  const double e0 = sim.diagnostics().total_energy;
  for (int i = 0; i < 100; ++i) sim.step(0.01);
  const double e1 = sim.diagnostics().total_energy;
  std::printf("nbody %s t=%.2f dE/E=%.1e\n", nbody::build_info().version.c_str(), sim.time(),
              std::abs((e1 - e0) / e0));
}
