// Fuzz target `text`: the text and CSV particle readers (what `nbody info F` and `nbody run
// -i F` read) on any bytes. Each input is read as text and as CSV. A refusal (nbody::Error)
// is the expected answer to bad input; anything else (a crash, a sanitizer report, another
// exception, a leak, a hang) is a finding. A file that is accepted must also read back bit
// for bit after the matching writer wrote it: a difference is silent wrong data, a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "fuzz_input.hpp"
#include "nbody/error.hpp"
#include "nbody/io.hpp"

namespace {

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

void check_round_trip(const nbody::ParticleSystem& ps, nbody::FileFormat format) {
  static nbody::fuzz::InputFile again("text-again",
                                      format == nbody::FileFormat::Csv ? ".csv" : ".txt");
  nbody::write_particles(again.path(), ps, format);
  const nbody::ParticleSystem back = nbody::read_particles(again.path(), format);
  const bool same = same_bits(ps.x, back.x) && same_bits(ps.y, back.y) && same_bits(ps.z, back.z) &&
                    same_bits(ps.vx, back.vx) && same_bits(ps.vy, back.vy) &&
                    same_bits(ps.vz, back.vz) && same_bits(ps.mass, back.mass) &&
                    same_bits(ps.radius, back.radius) &&
                    (format != nbody::FileFormat::Csv || same_bits(ps.id, back.id));
  if (!same) {
    std::fprintf(stderr, "fuzz_text: %s file read, written and read again gives other values\n",
                 format == nbody::FileFormat::Csv ? "CSV" : "text");
    std::abort();
  }
}

void read_as(const std::filesystem::path& path, nbody::FileFormat format) {
  nbody::ParticleSystem ps;
  try {
    ps = format == nbody::FileFormat::Csv ? nbody::read_csv(path) : nbody::read_text(path);
  } catch (const nbody::Error&) {
    return;  // refused: the answer to bad input
  }
  check_round_trip(ps, format);  // a refusal of what the writer wrote escapes: a finding
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static nbody::fuzz::InputFile input("text", ".txt");
  const auto& path = input.write(data, size);
  read_as(path, nbody::FileFormat::Text);
  read_as(path, nbody::FileFormat::Csv);
  return 0;
}
