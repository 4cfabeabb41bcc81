// Replays fuzz inputs without libFuzzer: `fuzz_replay_T FILE_OR_FOLDER...` hands every file
// (folders: every file in them, sorted) to the target's LLVMFuzzerTestOneInput once. The
// release and debug builds run it over fuzz/corpus/T and fuzz/regressions/T as a ctest, so
// a crash the fuzzer once found fails the ordinary tests too (under ASan + UBSan in debug).
// An input that takes more than 10 s (libFuzzer's -timeout in scripts/fuzz.sh) is a hang:
// the replay stops there, naming it, with exit status 1.
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace fs = std::filesystem;

namespace {

constexpr unsigned kTimeoutSeconds = 10;
const char* current = "";  // the input being replayed, for the timeout's message

extern "C" void on_timeout(int /*signal*/) {
  const char* what[] = {"replay: ", current, ": more than 10 s (a hang)\n"};
  for (const char* w : what) (void)!write(STDERR_FILENO, w, std::strlen(w));
  _exit(1);
}

void replay(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  const std::vector<char> bytes{std::istreambuf_iterator<char>(in),
                                std::istreambuf_iterator<char>()};
  std::printf("replay %s (%zu bytes)\n", file.c_str(), bytes.size());
  std::fflush(stdout);  // the name is out before a crash
  current = file.c_str();
  alarm(kTimeoutSeconds);
  (void)LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  alarm(0);
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGALRM, on_timeout);
  std::size_t count = 0;
  for (int i = 1; i < argc; ++i) {
    const fs::path arg = argv[i];
    std::vector<fs::path> files;
    if (fs::is_directory(arg)) {
      for (const auto& entry : fs::recursive_directory_iterator(arg)) {
        if (entry.is_regular_file() && entry.path().filename() != "README.md")
          files.push_back(entry.path());
      }
      std::sort(files.begin(), files.end());
    } else if (fs::is_regular_file(arg)) {
      files.push_back(arg);
    } else {
      std::fprintf(stderr, "replay: %s: no such file or folder\n", arg.c_str());
      return 2;
    }
    for (const auto& f : files) replay(f);
    count += files.size();
  }
  std::printf("replayed %zu inputs: no crash\n", count);
  return 0;
}
