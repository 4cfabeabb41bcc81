// nbody: the command-line entry point. Subcommands live in one file each.
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/option_checks.hpp"
#include "cli/usage_error.hpp"
#include "nbody/build_info.hpp"
#include "nbody/distributed.hpp"
#include "nbody/error.hpp"
#include "nbody/snapshot.hpp"
#include "viewer/viewer.hpp"

namespace {

std::string version_text() {
  const nbody::BuildInfo b = nbody::build_info();
  std::string out =
      fmt::format("nbody {} ({}; CUDA {}; OpenMP {}, {} threads)\n", b.version, b.compiler,
                  b.cuda ? "on" : "off", b.openmp ? "on" : "off", b.max_threads);
  out += fmt::format("CPU: {}\n", b.cpu_model);
  std::string reason;
  const auto gpus = nbody::gpu_devices(&reason);
  if (gpus.empty()) out += fmt::format("GPU: none ({})", reason);
  for (const auto& g : gpus) {
    out += fmt::format("GPU {}: {} (sm_{}{}, {:.0f} GiB, {} SMs)\n", g.index, g.name,
                       g.compute_major, g.compute_minor, g.memory_gib, g.multiprocessors);
  }
  if (!out.empty() && out.back() != '\n') out += '\n';
  out += nbody::have_hdf5() ? "hdf5: yes (snapshots, checkpoints)\n"
                            : "hdf5: no (built without HDF5)\n";
  out += fmt::format("mpi: {}, nccl: {}\n",
                     nbody::have_mpi() ? "yes (mpirun -np P nbody run ...)" : "no",
                     nbody::have_nccl() ? "yes" : "no");
#ifdef NBODY_HAVE_TOML
  out += "config files: yes (run --config)\n";
#else
  out += "config files: no (built without toml++)\n";
#endif
  out += nbody::viewer::viewer_available()
             ? "viewer: yes (nbody view)"
             : "viewer: no (built without GLFW, OpenGL or Dear ImGui)";
  while (!out.empty() && out.back() == '\n') out.pop_back();  // CLI11 adds the last newline
  return out;
}
}  // namespace

int run_command_line(int argc, char** argv);

/// Under mpirun only `run` and `bench scaling-mpi` share the work; any other command
/// would run once per rank and write the same files.
static void check_distributed_command(int argc, char** argv) {
  const auto ranks = nbody::world();
  if (!ranks || ranks->parts() == 1 || argc < 2) return;
  const std::string command = argv[1];
  if (command == "run" || command == "render" ||
      (command == "bench" && argc > 2 && std::string(argv[2]) == "scaling-mpi"))
    return;
  throw nbody::cli::UsageError(
      fmt::format("nbody {} runs as one process; under mpirun (here {} ranks) use nbody run, "
                  "nbody render or nbody bench scaling-mpi",
                  command, ranks->parts()));
}

int main(int argc, char** argv) {
  // A file size limit (ulimit -f) must fail the write with EFBIG, reported with the file's
  // name and its temporary removed, not kill nbody and leave a hidden half-written file.
  std::signal(SIGXFSZ, SIG_IGN);
  try {
    (void)nbody::init_distributed(&argc, &argv);
    check_distributed_command(argc, argv);
  } catch (const nbody::Error& e) {
    fmt::print(stderr, "nbody: error: {}\n", e.what());
    return nbody::cli::kExitUsage;
  }
  int status = run_command_line(argc, argv);
  // Output redirected to a full disk (`nbody info f --json > out.json`) must not exit 0 with
  // the output lost: the last of stdout is flushed here, where the reason can be reported.
  errno = 0;
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    fmt::print(stderr, "nbody: error: standard output: cannot write ({})\n",
               errno != 0 ? std::strerror(errno) : "an earlier write failed");
    status = status != 0 ? status : nbody::cli::kExitError;
  }
  nbody::finalize_distributed();
  return status;
}

int run_command_line(int argc, char** argv) {
  CLI::App app{"nbody: gravitational N-body simulation (direct sum, leapfrog and more)", "nbody"};
  app.set_version_flag("--version", version_text, "Print the version, build options and devices");
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  nbody gen plummer -n 10000 --seed 1 -o cluster.txt\n"
      "  nbody info cluster.txt\n"
      "  nbody run -i cluster.txt --t-end 10 --dt 0.01 --softening 0.01 -o final.txt\n"
      "  nbody run --model kepler --e 0.5 --t-end 62.83 --dt 0.00628 --json\n"
      "  nbody bench direct\n"
      "Run 'nbody COMMAND --help' for a command's options.\n"
      "Exit status: 0 success; 1 an error in the input or the run; 2 a command line that\n"
      "cannot be read (unknown option, missing value, ...); 130 / 143 nbody run stopped by\n"
      "Ctrl-C / SIGTERM (after writing a checkpoint). See docs/bad-input.md.");
  nbody::cli::add_gen_command(app);
  nbody::cli::add_run_command(app);
  nbody::cli::add_info_command(app);
  nbody::cli::add_bench_command(app);
  nbody::cli::add_accuracy_command(app);
  nbody::cli::add_render_command(app);
  nbody::cli::add_view_command(app);
  nbody::cli::check_every_option(app);  // after every option exists: none is forgotten
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::fflush(stdout);
    fmt::print(stderr, "{}", nbody::cli::failure_message(&app, e));
    return nbody::cli::kExitUsage;
  } catch (const nbody::cli::CommandExit& e) {
    return e.status;
  } catch (const nbody::cli::UsageError& e) {
    std::fflush(stdout);
    fmt::print(stderr, "nbody: error: {}\nRun 'nbody {} --help' for more information.\n", e.what(),
               argc > 1 ? argv[1] : "");
    return nbody::cli::kExitUsage;
  } catch (const nbody::Error& e) {
    std::fflush(stdout);
    fmt::print(stderr, "nbody: error: {}\n", e.what());
    return nbody::cli::kExitError;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    fmt::print(stderr, "nbody: internal error: {}\n", e.what());
    return nbody::cli::kExitInternal;
  }
  return nbody::cli::kExitSuccess;
}
