#include "core/parallel_copy.hpp"

#include <algorithm>
#include <cstring>

#include "core/omp_team.hpp"

namespace nbody {

void parallel_copy(void* dst, const void* src, std::size_t bytes, int threads) {
  constexpr std::size_t kPiece = std::size_t(1) << 20;
  const std::size_t pieces = (bytes + kPiece - 1) / kPiece;
  // More than 8 threads gain nothing on one socket's memory, and ranks share the cores.
  const int team = int(std::min<std::size_t>(
      {std::size_t(threads > 0 ? threads : std::min(team_size(0), 8)), pieces}));
  if (team < 2) {
    if (bytes > 0) std::memcpy(dst, src, bytes);
    return;
  }
  auto* to = static_cast<unsigned char*>(dst);
  const auto* from = static_cast<const unsigned char*>(src);
#pragma omp parallel for num_threads(team) schedule(static)
  for (std::ptrdiff_t p = 0; p < std::ptrdiff_t(pieces); ++p) {
    const std::size_t at = std::size_t(p) * kPiece;
    std::memcpy(to + at, from + at, std::min(kPiece, bytes - at));
  }
}

}  // namespace nbody
