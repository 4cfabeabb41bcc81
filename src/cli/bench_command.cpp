// nbody bench SUITE: registers the options and dispatches to the suites in cli/bench/:
// the console suites (direct on the CPU or GPU, tree, collisions) and the report suites of
// issue 7, which write CSV, JSON, plots and report.md (suite_report.hpp), timestep (fixed
// against adaptive steps, bench_timestep.hpp) and theta (without -o the Pareto fronts of the
// opening criteria, theta_sweep.hpp; with -o the reports theta and theta-pareto): a report
// with -o, else a table.
#include <algorithm>
#include <charconv>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include "cli/bench/bench_common.hpp"
#include "cli/bench/bench_small.hpp"
#include "cli/bench/bench_test_particles.hpp"
#include "cli/bench/bench_timestep.hpp"
#include "cli/bench/suite_report.hpp"
#include "cli/bench/theta_sweep.hpp"
#include "cli/commands.hpp"
#include "cli/option_checks.hpp"
#include "cli/usage_error.hpp"
#include "nbody/error.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/input_error.hpp"

namespace nbody::cli {

using namespace bench;

namespace {

const std::vector<std::string> kSuites{
    "direct",  "tree", "collisions",  "scaling",  "block-size", "threads", "phases",        "theta",
    "speedup", "all",  "scaling-mpi", "timestep", "seeds",      "small",   "test-particles"};

/// The options of bench theta beyond the common ones: the lists, as text (checked by
/// resolve_theta_sweep, so that a bad value is named with its option).
void add_theta_options(CLI::App* cmd, ThetaBenchArgs& t) {
  using List = std::vector<std::string>;
  auto list = [cmd](const char* name, List& values, bool& given, const char* help) {
    cmd->add_option_function<List>(
           name,
           [&values, &given](const List& v) {
             values = v;
             given = true;
           },
           help)
        ->delimiter(',');
  };
  list("--thetas", t.thetas, t.thetas_given,
       "theta: the opening angles of the geometric and bmax criteria (comma-separated, > 0; "
       "default 0.3,0.4,0.5,0.6,0.7; -o: 0.3,0.5,0.7; --quick: 0.4,0.7)");
  list("--alphas", t.alphas, t.alphas_given,
       "theta: the relative criterion's alpha (comma-separated, > 0; default "
       "0.0005,0.001,0.002,0.004,0.008; -o: 0.0005,0.002,0.008; --quick: 0.001,0.004)");
  list("--criteria", t.criteria, t.criteria_given,
       "theta: the opening criteria (default geometric,bmax,relative)");
  list("--orders", t.orders, t.orders_given,
       "theta: the multipole orders (default monopole,quadrupole)");
  cmd->add_option_function<std::size_t>(
         "--sample", [&t](std::size_t k) { t.sample = k; },
         "theta: bodies compared with the float64 direct sum (default 2000, GPU 4096, --quick "
         "200; 0: all)")
      ->check(CLI::Validator(
          [](std::string& text) {
            std::size_t k = 0;
            const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), k);
            return ec == std::errc() && end == text.data() + text.size()
                       ? std::string()
                       : fmt::format("{}: must be a whole number >= 0 (0: every body)", text);
          },
          "K"));
  cmd->add_option_function<std::uint64_t>(
      "--seed", [&t](std::uint64_t s) { t.seed = s; },
      "theta and timestep: the model's seed (default 42)");
  cmd->add_option("--plot", t.plot,
                  "theta: draw the median and p99 fronts into this PNG (bench/tree_pareto.py, "
                  "matplotlib)")
      ->type_name("FILE.png");
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  auto steps = std::make_shared<TimestepBenchArgs>();
  auto sweep = std::make_shared<ThetaBenchArgs>();
  auto* cmd = app.add_subcommand("bench", "Built-in benchmarks");
  cmd->add_option(
         "suite", args->suite,
         "Benchmark suite. Reports (CSV, JSON, PNG and report.md in -o DIR): scaling, block-size, "
         "threads, phases, theta (with theta-pareto), collisions, speedup, or all of them; "
         "timestep (fixed against adaptive steps; not in all; without -o a table); small "
         "(microseconds per step of 3 to 1000 bodies for each integrator, REBOUND's beside them "
         "when NBODY_PYTHON or python3 has it; not in all; without -o a table); test-particles "
         "(the Sun, four giants and -n test particles, default 10^6, against REBOUND's N_active; "
         "not in all; without -o a table); theta without "
         "-o: median and p99 force error against time for every opening criterion and order "
         "(--thetas, --alphas, --plot); seeds (the seed documents' experiments: the tree's "
         "kernels against N for the insertion and Morton builds, with and without the sort, and "
         "the grid and tree collision searches; not in all). Console tables: direct (direct sum, "
         "interactions per second), tree (Barnes-Hut against the direct sum), scaling-mpi (strong "
         "and weak "
         "scaling over the ranks of mpirun -np P); collisions without -o and --quick prints its "
         "table only")
      ->check(one_of(kSuites));
  auto* count = cmd->add_option("-n,--count", args->n,
                                "Number of bodies (tree: default 100000; timestep: 20000, GPU "
                                "65536, --quick 2000; theta: 100000, GPU 1048576, --quick 5000)")
                    ->check(whole_at_least(1))
                    ->capture_default_str();
  cmd->add_option("--seconds", args->seconds, "Time spent on each configuration")
      ->check(positive_number())
      ->capture_default_str();
  cmd->add_option("--threads", args->threads,
                  "Threads (direct: 0 = one thread, then all; tree: 0 = all)")
      ->check(whole_at_least(0))
      ->capture_default_str();
  auto* kernels = cmd->add_option_function<std::vector<std::string>>(
                         "--kernel",
                         [args](const std::vector<std::string>& names) {
                           args->kernels.clear();
                           for (const auto& name : names)
                             args->kernels.push_back(parse_force_kernel(name));
                         },
                         "Kernels to time (CPU: fast, scalar; GPU: naive, tiled, fast)")
                      ->check(one_of({"fast", "scalar", "naive", "tiled"}));
  cmd->add_option("--device", args->device,
                  "cpu or gpu (CUDA); reports also all (the GPU when one is usable)")
      ->check(one_of({"cpu", "gpu", "all"}))
      ->capture_default_str();
  cmd->add_flag("--quick", args->quick,
                "Reports: small sizes and short timings (well under a minute)");
  auto* output = cmd->add_option("-o,--output", args->output_dir,
                                 "Reports: the folder for CSV, JSON, PNG, report.md")
                     ->capture_default_str();
  cmd->add_option("--block-size", args->block_size,
                  "gpu: threads per block (0 = each kernel's default)")
      ->check(whole_in(0, 1024))
      ->capture_default_str();
  cmd->add_flag(
      "--sweep-block-size", args->sweep_block_size,
      "gpu: steps/s for block sizes 8..1024 at N = 16384, then against N = 1024..1048576");
  cmd->add_option("--softening,--eps", args->softening,
                  "Plummer softening length (default: 0.01; tree --device gpu: 0.05; collisions "
                  "have no gravity)")
      ->check(non_negative_number());
  cmd->add_flag("--deterministic", args->deterministic,
                "direct --device gpu: bit-identical results run after run (no each-pair-once "
                "kernel with atomics; as nbody run --deterministic)");
  auto* theta = cmd->add_option("--theta", args->theta, "tree: opening angle")
                    ->check(non_negative_number())
                    ->capture_default_str();
  auto* quadrupole =
      cmd->add_flag("--quadrupole", args->quadrupole, "tree: add quadrupole moments");
  auto* mac = cmd->add_option("--mac", args->mac,
                              "tree: the opening criterion, geometric, bmax or relative (as nbody "
                              "run --mac)")
                  ->check(one_of({"geometric", "bmax", "relative"}))
                  ->capture_default_str();
  auto* alpha = cmd->add_option("--alpha", args->alpha, "tree: the relative criterion's alpha")
                    ->check(positive_number())
                    ->capture_default_str();
  cmd->add_option("--tree-build", args->tree_build,
                  "tree --device gpu: morton or insertion (the seeds' build with locks)")
      ->check(one_of({"morton", "insertion"}))
      ->capture_default_str();
  cmd->add_option("--walk-order", args->walk_order,
                  "tree --device gpu: walk the bodies in tree order or in input order (the "
                  "seeds' run without the sort)")
      ->check(one_of({"tree", "input"}))
      ->capture_default_str();
  cmd->add_option(
         "--precision", args->precision,
         "tree: force arithmetic, float, double or auto (float for the tree); gpu direct: float, "
         "double or auto (both)")
      ->check(one_of({"auto", "float", "double"}))
      ->capture_default_str();
  cmd->add_option("--collisions", args->collisions, "collisions: the model to time")
      ->check(one_of({"bounce", "merge"}))
      ->capture_default_str();
  cmd->add_option("--restitution", args->restitution, "collisions: bounce restitution")
      ->check(number_in(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--collision-iterations", args->iterations,
                  "collisions: passes per step (0: 1 pass against N, then 1, 2, 4, 8 passes at -n)")
      ->check(whole_in(0, 1000))
      ->capture_default_str();
  cmd->add_option("--dim", args->dim, "collisions: 3, or 2 (discs in a square)")
      ->check(one_of({"2", "3"}))
      ->capture_default_str();
  cmd->add_option("--collision-search", args->collision_search,
                  "collisions: candidate search, grid or tree (seed 001's quadtree/octree)")
      ->check(one_of({"grid", "tree"}))
      ->capture_default_str();
  cmd->add_option("--volume-fraction", args->volume_fraction,
                  "collisions: total body volume (2D: area) over the box's, 0 < f < 1")
      ->check(number_between(0.0, 1.0))
      ->capture_default_str();
  auto* gravity = cmd->add_option("--gravity", args->gravity,
                                  "scaling-mpi: direct, tree or both; timestep: "
                                  "direct or tree (default tree)")
                      ->check(one_of({"direct", "tree", "both"}))
                      ->capture_default_str();
  cmd->add_option("--scaling", args->scaling, "scaling-mpi: strong, weak or both")
      ->check(one_of({"strong", "weak", "both"}))
      ->capture_default_str();
  cmd->add_option("--from-ranks", args->from_ranks,
                  "scaling-mpi: the fewest ranks timed, the base of the efficiencies (for N "
                  "that one GPU cannot hold)")
      ->check(whole_in(1, 1 << 20))
      ->capture_default_str();
  cmd->add_flag(
      "--timings", args->timings,
      "scaling-mpi: milliseconds per step of each force stage (rank 0 and the slowest rank)");
  cmd->add_option("--model", steps->model,
                  fmt::format("the model (timestep: default {}; theta: default plummer)",
                              default_timestep_model()))
      ->check(one_of(model_names()));
  cmd->add_option(
         "--t-end", steps->t_end,
         fmt::format("timestep: the end time, model units (default {:g})", kTimestepDefaultTEnd))
      ->check(positive_number());
  cmd->add_option("--dts", steps->dts,
                  "timestep: the fixed steps (comma-separated; default t_end/16 ... t_end/512, "
                  "--quick t_end/16, t_end/128); adaptive runs take the largest")
      ->delimiter(',')
      ->check(positive_number());
  cmd->add_option("--etas", steps->etas,
                  "timestep: the adaptive runs' eta (comma-separated; default 0.1, 0.05, 0.025, "
                  "0.0125, 0.00625; --quick 0.1, 0.025)")
      ->delimiter(',')
      ->check(positive_number());
  cmd->add_option("--timestep-criteria", steps->criteria,
                  "timestep: the adaptive runs' step criteria (comma-separated: acceleration, "
                  "dynamical, jerk (the CPU direct sum); default acceleration and dynamical)")
      ->delimiter(',')
      ->check(one_of({"acceleration", "dynamical", "jerk"}));
  cmd->add_option("--timestep-modes", steps->modes,
                  "timestep: the schemes with bins beside the fixed steps (comma-separated: "
                  "adaptive, hierarchical (CPU); default adaptive)")
      ->delimiter(',')
      ->check(one_of({"adaptive", "hierarchical"}));
  add_theta_options(cmd, *sweep);
  auto* json = cmd->add_option("--json", args->json_file,
                               "Print one JSON object with the results on stdout (theta: --json "
                               "FILE writes it to FILE, atomically)")
                   ->expected(0, 1)
                   ->type_name("[FILE]");
  cmd->callback([args, steps, sweep, count, kernels, output, gravity, json, theta, quadrupole, mac,
                 alpha] {
    args->json = json->count() > 0;
    if (args->suite.empty()) {  // the suite is checked here: `bench --json SUITE` gave it to --json
      if (std::find(kSuites.begin(), kSuites.end(), args->json_file) == kSuites.end())
        throw UsageError(
            fmt::format("SUITE: missing (nbody bench needs one of {})", fmt::join(kSuites, ", ")));
      args->suite = std::exchange(args->json_file, std::string());
    }
    if (!args->json_file.empty() && (args->suite != "theta" || output->count() > 0)) {
      throw input_error("--json",
                        "only bench theta without -o writes its JSON to a file; "
                        "--json alone prints it on stdout",
                        args->json_file);
    }
    if (args->suite == "theta") {
      sweep->model = steps->model;
      if (theta->count() > 0)
        throw Error("--theta: bench theta sweeps --thetas (and --alphas for --mac relative)");
      if (quadrupole->count() > 0)
        throw Error("--quadrupole: bench theta measures both orders; choose with --orders");
      if (mac->count() > 0 || alpha->count() > 0)
        throw Error(
            "--mac, --alpha: bench theta sweeps every criterion; choose with --criteria "
            "and --alphas");
      if (output->count() == 0) {
        bench_theta(*args, *sweep, count->count() > 0);
        return;
      }
      if (!sweep->plot.empty()) throw Error("--plot: bench theta without -o draws it");
    }
    using Suite = std::function<SuiteResult(const BenchArgs&)>;
    const std::vector<std::pair<std::string, Suite>> reports = {
        {"scaling", scaling_suite},
        {"block-size", block_size_suite},
        {"threads", threads_suite},
        {"phases", phases_suite},
        {"theta", theta_suite},
        {"theta-pareto", [sweep](const BenchArgs& a) { return theta_pareto_suite(a, *sweep); }},
        {"collisions", collisions_suite},
        {"speedup", speedup_suite},
        {"seeds", seeds_suite},
        {"seeds-collisions", seeds_collisions_suite},
        {"timestep", [steps](const BenchArgs& a) { return timestep_suite(a, *steps, stderr); }},
        {"small", [](const BenchArgs& a) { return small_suite(a, stderr); }},
        {"test-particles", [count](const BenchArgs& a) {
           return test_particles_suite(a, count->count() > 0, stderr);
         }}};
    if (args->suite == "small" && output->count() == 0) {
      print_suite_console(small_suite(*args, stderr), args->json ? stderr : stdout, args->json);
      return;
    }
    if (args->suite == "test-particles" && output->count() == 0) {
      print_suite_console(test_particles_suite(*args, count->count() > 0, stderr),
                          args->json ? stderr : stdout, args->json);
      return;
    }
    if (args->suite == "timestep") {
      steps->seed = sweep->seed.value_or(42);
      if (gravity->count() == 0) args->gravity = "tree";
      if (count->count() == 0) {
        args->n = args->quick             ? kTimestepQuickN
                  : args->device == "gpu" ? kTimestepDefaultGpuN
                                          : kTimestepDefaultN;
      }
      if (output->count() == 0) {
        print_suite_console(timestep_suite(*args, *steps, stderr), args->json ? stderr : stdout,
                            args->json);
        return;
      }
    }
    if (args->suite == "scaling-mpi") {
      if (args->device == "all")
        throw input_error("--device", "bench scaling-mpi takes cpu or gpu", "all");
      bench_scaling_mpi(*args, count->count() > 0);
      return;
    }
    const bool report =
        args->suite == "all" || args->quick || output->count() > 0 ||
        (args->suite != "direct" && args->suite != "tree" && args->suite != "collisions");
    if (report) {
      if (args->suite == "direct" || args->suite == "tree") {
        throw Error("bench " + args->suite +
                    ": a console suite (no -o or --quick); reports: scaling, block-size, "
                    "threads, phases, theta, collisions, speedup, all");
      }
      std::FILE* human = stdout;
      for (const auto& [name, suite] : reports) {
        // all: every report but the long ones (timestep, seeds), which are asked by name
        const bool chosen = args->suite == "all"
                                ? name != "timestep" && name != "small" &&
                                      name != "test-particles" && name.rfind("seeds", 0) != 0
                                : name == args->suite || name == args->suite + "-pareto" ||
                                      name == args->suite + "-collisions";
        if (!chosen) continue;
        fmt::print(human, "== bench {} (device {}{})\n", name, args->device,
                   args->quick ? ", quick" : "");
        std::fflush(human);
        write_suite(suite(*args), *args, human);
      }
      return;
    }
    if (args->device == "all")
      throw input_error("--device", "for the report suites (scaling, ..., all)", "all");
    if (args->suite == "collisions") {
      if (count->count() == 0) args->n = kCollisionsDefaultN;
      bench_collisions(*args);
    } else if (args->suite == "tree") {
      if (args->device == "gpu") {
        bench_tree_gpu(*args,
                       count->count() ? std::vector<std::size_t>{args->n} : kTreeGpuDefaultSizes);
        return;
      }
      if (count->count() == 0) args->n = kTreeDefaultN;
      bench_tree(*args);
    } else if (args->device == "gpu") {
      if (count->count() == 0) args->n = kGpuDefaultN;
      bench_direct_gpu(*args, kernels->count() ? args->kernels : std::vector<ForceKernel>{});
    } else {
      for (const ForceKernel k : args->kernels) {
        if (k != ForceKernel::Fast && k != ForceKernel::Scalar) {
          throw input_error("--kernel", "GPU only (bench direct --device gpu)", to_string(k));
        }
      }
      if (args->block_size != 0 || args->sweep_block_size)
        throw Error("--block-size, --sweep-block-size: GPU only (--device gpu)");
      bench_direct(*args);
    }
  });
}

}  // namespace nbody::cli
