// write_together (written_together.hpp): rank 0 lays the file out, every rank writes its rows
// at once, rank 0 renames it into place once all agree that every part was written.
#include "io/written_together.hpp"

#include <exception>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "io/atomic_target.hpp"
#include "io/io_trace.hpp"
#include "io/share_checks.hpp"
#include "nbody/error.hpp"

namespace nbody::io_detail {

namespace fs = std::filesystem;

namespace {

using Bytes = ForceReducer::Bytes;

/// Rank 0's news after the layout: its problem, or ("" none) its temporary's name.
Bytes news(const std::string& problem, const std::string& tmp) {
  const std::string text = (problem.empty() ? '\0' + tmp : '\1' + problem);
  return Bytes(text.begin(), text.end());
}

}  // namespace

void write_together(const fs::path& path, ForceReducer* group, std::uint64_t count,
                    const std::function<void(hdf5::File&, std::uint64_t)>& layout,
                    const std::function<void(hdf5::File&, std::uint64_t)>& rows) {
  const int part = group ? group->part() : 0, parts = group ? group->parts() : 1;
  IoTrace trace(fmt::format("rank {} {}", part, path.filename().string()));
  std::uint64_t total = count, offset = 0;
  if (group) {  // the rows of every rank, and of those before this one
    const std::vector<std::uint64_t> all = every_rank_count(*group, count);
    total = 0;
    for (int p = 0; p < parts; ++p) {
      total += all[std::size_t(p)];
      if (p < part) offset += all[std::size_t(p)];
    }
  }
  std::string problem, tmp;
  std::unique_ptr<AtomicTarget> target;  // rank 0's: removes the temporary unless committed
  if (part == 0) {
    try {
      target = std::make_unique<AtomicTarget>(path);
      tmp = target->temporary().string();
      hdf5::File file = hdf5::File::create(tmp, path.string());
      layout(file, total);
      file.close();
    } catch (const std::exception& e) {
      problem = e.what();
    }
  }
  trace.mark("layout");
  if (group && parts > 1) {  // rank 0's temporary, or what went wrong, to every rank
    const auto said = group->all_gather(news(problem, part == 0 ? tmp : std::string()));
    const Bytes& zero = said[0];
    if (!zero.empty() && zero[0] != '\0') problem = std::string(zero.begin() + 1, zero.end());
    if (problem.empty()) tmp = std::string(zero.begin() + 1, zero.end());
  }
  trace.mark("news");
  if (problem.empty()) {
    try {
      hdf5::File file = hdf5::File::open_rows(tmp, path.string());
      trace.mark("open");
      rows(file, offset);
      file.close();
    } catch (const std::exception& e) {
      problem = e.what();
    }
  }
  trace.mark("rows");
  if (group) problem = first_found(*group, problem);
  trace.mark("agree");
  if (problem.empty() && part == 0) {
    try {
      target->commit();
    } catch (const std::exception& e) {
      problem = e.what();
    }
  }
  // The rename's outcome, from rank 0 to every rank.
  if (group && parts > 1) problem = first_found(*group, problem);
  target.reset();  // a temporary not renamed is removed before anyone reads the message
  trace.mark("rename");
  if (!problem.empty()) throw Error(problem);
}

}  // namespace nbody::io_detail
