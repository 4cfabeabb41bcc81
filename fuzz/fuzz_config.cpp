// Fuzz target `config`: the `nbody run --config FILE` reader (apply_config_file: toml++'s
// parser, then each key matched to an option and its value handed to CLI11) on any bytes.
// The command is `run` in miniature, with the option names of the real one and every kind
// of option the commands use (unsigned counts, doubles, checked strings, an option function,
// flags, lists, a fixed-size list, options that exclude each other). Building the real
// `run` would pull the whole library into the fuzz build; the reader is what is fuzzed.
// A refusal (nbody::Error) is the expected answer to a bad file; anything else (a crash, a
// sanitizer report, another exception such as a CLI::Error escaping the reader, a leak, a
// hang) is a finding. A file that is accepted must also survive the round trip the docs
// promise: the used-parameters document of the result, read by a fresh command, gives the
// same document again.
#include <CLI/CLI.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli/config_file.hpp"
#include "fuzz_input.hpp"
#include "nbody/error.hpp"

namespace {

struct Values {
  std::uint64_t count = 1000, seed = 1, steps = 0, every = 0, checkpoint_every = 0;
  double t_end = 0, dt = 0.01, theta = 0.5, softening = 0, G = 1, snapshot_dt = 0;
  int dim = 3, block_size = 256, threads = 0;
  std::string model = "plummer", gravity = "direct", integrator = "leapfrog", input, output,
              format = "auto", config;
  bool gpu = false, quadrupole = false, quiet = false, json = false;
  std::vector<double> center;
  std::vector<std::string> fields;
};

struct RunCommand {
  CLI::App app{"nbody fuzz", "nbody"};
  CLI::App* cmd = app.add_subcommand("run", "Run a simulation");
  Values v;

  RunCommand() {
    cmd->add_option("-n,--count", v.count, "Number of bodies")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    cmd->add_option("--seed", v.seed, "Random seed")->capture_default_str();
    auto* input = cmd->add_option("-i,--input", v.input, "Initial conditions file");
    auto* model = cmd->add_option("--model", v.model, "Model to generate")
                      ->check(CLI::IsMember({"plummer", "uniform", "two-body", "disk"}))
                      ->capture_default_str();
    input->excludes(model);
    cmd->add_option("--format", v.format, "File format")
        ->check(CLI::IsMember({"auto", "text", "csv", "hdf5"}))
        ->capture_default_str();
    auto* steps = cmd->add_option("--steps", v.steps, "Number of steps");
    auto* t_end = cmd->add_option("--t-end", v.t_end, "Run until this simulated time");
    steps->excludes(t_end);
    cmd->add_option("--dt", v.dt, "Time step")->check(CLI::PositiveNumber)->capture_default_str();
    cmd->add_option("--gravity", v.gravity, "Gravity solver")
        ->check(CLI::IsMember({"direct", "tree"}))
        ->capture_default_str();
    cmd->add_option("--theta", v.theta, "Opening angle")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
    cmd->add_option("--softening,--eps", v.softening, "Softening")->capture_default_str();
    cmd->add_option("--G", v.G, "Gravitational constant")->capture_default_str();
    cmd->add_option("--block-size", v.block_size, "GPU block size")
        ->check(CLI::Range(32, 1024))
        ->capture_default_str();
    cmd->add_option("--threads", v.threads, "CPU threads")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
    cmd->add_option("--integrator", v.integrator, "Integrator")
        ->check(CLI::IsMember({"euler", "leapfrog", "rk4", "ias15"}))
        ->capture_default_str();
    cmd->add_option_function<std::string>(
           "--device", [this](const std::string& d) { v.gpu = d == "gpu"; },
           "Where forces are computed")
        ->check(CLI::IsMember({"cpu", "gpu"}))
        ->default_str("cpu");
    cmd->add_flag("--quadrupole", v.quadrupole, "tree: quadrupole moments");
    cmd->add_option("--center", v.center, "Centre of the system")->expected(3);
    cmd->add_option("--snapshot-fields", v.fields, "Extra datasets")
        ->check(CLI::IsMember({"radius", "acceleration", "potential"}))
        ->delimiter(',');
    cmd->add_option("--dim", v.dim, "Dimensions")
        ->check(CLI::IsMember({2, 3}))
        ->capture_default_str();
    cmd->add_option("-o,--output", v.output, "Output file");
    cmd->add_option("--every", v.every, "Every K steps");
    cmd->add_option("--snapshot-dt", v.snapshot_dt, "Snapshot interval")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--checkpoint-every", v.checkpoint_every, "Checkpoint every K steps");
    nbody::cli::add_config_option(cmd, v.config);
    cmd->add_flag("-q,--quiet", v.quiet, "No progress line");
    cmd->add_flag("--json", v.json, "JSON output");
    app.parse(std::string("run"), false);  // as `nbody run --config F` before its callback
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static nbody::fuzz::InputFile input("config", ".toml");
  static nbody::fuzz::InputFile again("config-again", ".toml");
  const auto& path = input.write(data, size);
  RunCommand first;
  try {
    nbody::cli::apply_config_file(*first.cmd, path);
  } catch (const nbody::Error&) {
    return 0;  // refused: the answer to a bad file
  }
  // Accepted: the used parameters must read back to themselves (a refusal escapes: a finding).
  const std::string used = nbody::cli::used_parameters_toml(*first.cmd, {"config"});
  again.write(reinterpret_cast<const std::uint8_t*>(used.data()), used.size());
  RunCommand second;
  nbody::cli::apply_config_file(*second.cmd, again.path());
  if (nbody::cli::used_parameters_toml(*second.cmd, {"config"}) != used) {
    std::fprintf(stderr, "fuzz_config: the used parameters do not read back to themselves:\n%s\n",
                 used.c_str());
    std::abort();
  }
  return 0;
}
