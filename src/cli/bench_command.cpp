// nbody bench SUITE: registers the options and dispatches to the suites in cli/bench/
// (direct on the CPU or GPU, tree). Later suites plug in here.
#include <memory>
#include <string>
#include <vector>

#include "cli/bench/bench_common.hpp"
#include "cli/commands.hpp"
#include "nbody/error.hpp"

namespace nbody::cli {

using namespace bench;

void add_bench_command(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  auto* cmd = app.add_subcommand("bench", "Built-in benchmarks");
  cmd->add_option("suite", args->suite,
                  "Benchmark suite: direct (CPU direct sum, interactions per second) or tree (Barnes-Hut on a "
                  "Plummer sphere, against the direct sum)")
      ->required()
      ->check(CLI::IsMember({"direct", "tree"}));
  auto* count = cmd->add_option("-n,--count", args->n, "Number of bodies (tree: default 100000)")
                    ->check(CLI::PositiveNumber)
                    ->capture_default_str();
  cmd->add_option("--seconds", args->seconds, "Time spent on each configuration")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--threads", args->threads, "Threads (direct: 0 = one thread, then all; tree: 0 = all)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  auto* kernels = cmd->add_option("--kernel", args->kernels,
                                  "Kernels to time (CPU: fast, scalar; GPU: naive, tiled, fast)")
                      ->check(CLI::IsMember({"fast", "scalar", "naive", "tiled"}));
  cmd->add_option("--device", args->device, "direct: time the CPU or the GPU (CUDA) direct sum")
      ->check(CLI::IsMember({"cpu", "gpu"}))
      ->capture_default_str();
  cmd->add_option("--block-size", args->block_size, "gpu: threads per block (0 = each kernel's default)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_flag("--sweep-block-size", args->sweep_block_size,
                "gpu: steps/s for block sizes 8..1024 at N = 16384, then against N = 1024..1048576");
  cmd->add_option("--theta", args->theta, "tree: opening angle")->check(CLI::NonNegativeNumber)->capture_default_str();
  cmd->add_flag("--quadrupole", args->quadrupole, "tree: add quadrupole moments");
  cmd->add_option("--precision", args->precision,
                  "tree: force arithmetic, float, double or auto (float for the tree); gpu direct: float, "
                  "double or auto (both)")
      ->check(CLI::IsMember({"auto", "float", "double"}))
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "Print one JSON object with the results on stdout");
  cmd->callback([args, count, kernels] {
    if (args->suite == "tree") {
      if (args->device == "gpu") throw Error("bench tree --device gpu: not available yet");
      if (count->count() == 0) args->n = kTreeDefaultN;
      bench_tree(*args);
    } else if (args->device == "gpu") {
      if (count->count() == 0) args->n = kGpuDefaultN;
      bench_direct_gpu(*args, kernels->count() ? args->kernels : std::vector<std::string>{});
    } else {
      for (const auto& k : args->kernels) {
        if (k != "fast" && k != "scalar") throw Error("--kernel " + k + ": GPU only (bench direct --device gpu)");
      }
      if (args->block_size != 0 || args->sweep_block_size) throw Error("--block-size, --sweep-block-size: GPU only (--device gpu)");
      bench_direct(*args);
    }
  });
}

}  // namespace nbody::cli
