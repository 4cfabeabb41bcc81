// placeholder: nbody accuracy is being written.
#include "cli/commands.hpp"

namespace nbody::cli {
void add_accuracy_command(CLI::App&) {}
}  // namespace nbody::cli
