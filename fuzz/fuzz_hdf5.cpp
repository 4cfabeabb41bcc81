// Fuzz target `hdf5`: the HDF5 snapshot reader (`nbody info F.hdf5`, `nbody run -i F.hdf5`)
// and the checkpoint reader (`nbody run --restart F`) on any bytes, each input read as
// both. A refusal (nbody::Error) is the expected answer to a bad file; anything else (a
// crash, a sanitizer report, another exception such as std::bad_alloc, an allocation beyond
// libFuzzer's -malloc_limit_mb, a leak, a hang) is a finding. libhdf5 itself is Debian's,
// not instrumented: ASan sees its heap (malloc is replaced) but not its stack or globals.
#include <cstddef>
#include <cstdint>

#include "fuzz_input.hpp"
#include "nbody/error.hpp"
#include "nbody/snapshot.hpp"

// A corrupt file can make libhdf5 ask malloc for more than exists (0x56...0250 bytes for a
// metadata cache entry); without ASan malloc returns null and libhdf5 reports an error,
// which nbody refuses the file with. The same here, instead of ASan's allocation-size report
// from inside libhdf5. An allocation in nbody's own code still fails (std::bad_alloc
// escapes the target), and one above -malloc_limit_mb is still reported by libFuzzer.
extern "C" const char* __asan_default_options() {
  return "allocator_may_return_null=1";
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static nbody::fuzz::InputFile input("hdf5", ".hdf5");
  const auto& path = input.write(data, size);
  try {
    (void)nbody::read_snapshot(path);
  } catch (const nbody::Error&) {
  }
  try {
    (void)nbody::read_checkpoint(path);
  } catch (const nbody::Error&) {
  }
  return 0;
}
