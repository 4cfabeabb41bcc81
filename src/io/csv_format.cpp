// CSV particle files: a header row names the columns (x,y,z,vx,vy,vz,m required; r and
// id optional; any order), then one body per row. Written with every column, so ids
// and radii survive a round trip. Bodies of mass 0 are test particles, after every body with
// mass (n_active: the bodies with mass), or a first line "# nbody: n_active=K
// test_particle_type=T" says which (io_detail).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <functional>
#include <iterator>
#include <numeric>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "io/line_parser.hpp"
#include "nbody/error.hpp"
#include "nbody/io.hpp"

namespace nbody {

namespace {

enum class Column { X, Y, Z, Vx, Vy, Vz, M, R, Id };

struct ColumnSpec {
  std::string_view name;
  Column column;
  bool required;
};

constexpr std::array<ColumnSpec, 9> kColumns = {{{"x", Column::X, true},
                                                 {"y", Column::Y, true},
                                                 {"z", Column::Z, true},
                                                 {"vx", Column::Vx, true},
                                                 {"vy", Column::Vy, true},
                                                 {"vz", Column::Vz, true},
                                                 {"m", Column::M, true},
                                                 {"r", Column::R, false},
                                                 {"id", Column::Id, false}}};

constexpr std::size_t kFlushBytes = std::size_t{1} << 20;  // see text_format.cpp

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char p, char q) {
           return std::tolower(static_cast<unsigned char>(p)) ==
                  std::tolower(static_cast<unsigned char>(q));
         });
}

/// What the header says: which quantity each field holds, and the names as written
/// (copied, because the line they came from is gone once the next line is read).
struct Header {
  std::vector<Column> columns;
  std::vector<std::string> names;
  std::size_t line = 0;
  bool has_id = false;
};

Header parse_header(const io_detail::LineReader& in, const std::vector<std::string_view>& fields) {
  Header h;
  h.line = in.line_number();
  std::array<std::size_t, kColumns.size()> seen_at{};  // 1-based field number, 0 = absent
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const std::string_view name = fields[i];
    if (name.empty()) in.fail(fmt::format("column {}: empty column name in the header", i + 1));
    const auto spec = std::find_if(kColumns.begin(), kColumns.end(), [&](const ColumnSpec& s) {
      return equal_ignoring_case(s.name, name);
    });
    if (spec == kColumns.end()) {
      // Also what a file without a header gets: its first row is read as names.
      in.fail(fmt::format(
          "column {}: unknown column {} (the first line must be a header naming the columns "
          "x,y,z,vx,vy,vz,m and optionally r,id)",
          i + 1, io_detail::quoted(name)));
    }
    auto& seen = seen_at[static_cast<std::size_t>(spec - kColumns.begin())];
    if (seen != 0) {
      in.fail(fmt::format("column {}: column {} appears twice (also column {})", i + 1,
                          io_detail::quoted(name), seen));
    }
    seen = i + 1;
    h.columns.push_back(spec->column);
    h.names.emplace_back(name);
    h.has_id = h.has_id || spec->column == Column::Id;
  }
  std::vector<std::string_view> missing;
  for (std::size_t k = 0; k < kColumns.size(); ++k) {
    if (kColumns[k].required && seen_at[k] == 0) missing.push_back(kColumns[k].name);
  }
  if (!missing.empty()) {
    in.fail(fmt::format("header lacks required column{} {} (needs x,y,z,vx,vy,vz,m)",
                        missing.size() > 1 ? "s" : "", fmt::join(missing, ", ")));
  }
  return h;
}

/// Throws for the first repeated id, naming the line it repeats on and the line where it
/// first appeared. lines[i] is the file line of body i.
void check_unique_ids(const std::string& file, const std::vector<std::uint64_t>& ids,
                      const std::vector<std::size_t>& lines) {
  // Ids in increasing order (what write_csv produces) cannot repeat: skip the sort.
  if (std::adjacent_find(ids.begin(), ids.end(), std::greater_equal<>()) == ids.end()) return;
  std::vector<std::size_t> order(ids.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  // Stable, so equal ids stay in file order and each pair is (earlier, later).
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return ids[a] < ids[b]; });
  std::optional<std::size_t> first, second;
  for (std::size_t k = 1; k < order.size(); ++k) {
    const std::size_t a = order[k - 1], b = order[k];
    // Report the repeat met first when reading top to bottom.
    if (ids[a] == ids[b] && (!second || lines[b] < lines[*second])) {
      first = a;
      second = b;
    }
  }
  if (second) {
    throw Error(fmt::format("{}:{}: duplicate id {} (first used on line {})", file, lines[*second],
                            ids[*second], lines[*first]));
  }
}

}  // namespace

ParticleSystem read_csv(const std::filesystem::path& path) {
  io_detail::LineReader in(path);
  ParticleSystem ps;
  std::optional<Header> header;
  io_detail::TestParticleOrder order;
  std::vector<std::size_t> row_lines;  // kept only with an id column, for duplicate errors
  std::vector<std::string_view> fields;
  std::string_view line;
  while (in.next(line)) {
    if (order.directive(in, line, !ps.empty())) continue;
    line = io_detail::strip_comment(line);
    if (io_detail::is_blank(line)) continue;
    io_detail::split_csv(line, fields);
    if (!header) {
      header = parse_header(in, fields);
      continue;
    }
    // Spreadsheets export trailing rows of empty cells (",,,,"): treat them as blank.
    if (std::all_of(fields.begin(), fields.end(), [](std::string_view f) { return f.empty(); })) {
      continue;
    }
    if (fields.size() != header->columns.size()) {
      in.fail(fmt::format("expected {} columns (as in the header on line {}), found {}",
                          header->columns.size(), header->line, fields.size()));
    }
    Body b;
    for (std::size_t i = 0; i < fields.size(); ++i) {
      const io_detail::Field f{fields[i], i + 1, header->names[i]};
      switch (header->columns[i]) {
        case Column::X:
          b.position.x = io_detail::parse_finite(in, f);
          break;
        case Column::Y:
          b.position.y = io_detail::parse_finite(in, f);
          break;
        case Column::Z:
          b.position.z = io_detail::parse_finite(in, f);
          break;
        case Column::Vx:
          b.velocity.x = io_detail::parse_finite(in, f);
          break;
        case Column::Vy:
          b.velocity.y = io_detail::parse_finite(in, f);
          break;
        case Column::Vz:
          b.velocity.z = io_detail::parse_finite(in, f);
          break;
        case Column::M:
          b.mass = io_detail::parse_mass(in, f);
          order.check(in, f, b.mass);
          break;
        case Column::R:
          b.radius = io_detail::parse_radius(in, f);
          break;
        case Column::Id:
          b.id = io_detail::parse_id(in, f);
          break;
      }
    }
    ps.add(b);
    if (header->has_id) row_lines.push_back(in.line_number());
  }
  if (!header) io_detail::fail_no_particles(in, "the file is empty or holds only comments");
  if (ps.empty()) io_detail::fail_no_particles(in, "the file has a header but no rows");
  order.finish(in, ps);
  if (header->has_id) {
    check_unique_ids(in.file_name(), ps.id, row_lines);
  } else {
    ps.assign_sequential_ids();
  }
  return ps;
}

void write_csv(const std::filesystem::path& path, const ParticleSystem& ps) {
  write_file_atomically(path, [&](std::ostream& out) {
    fmt::memory_buffer buf;
    auto sink = std::back_inserter(buf);
    fmt::format_to(sink, "{}x,y,z,vx,vy,vz,m,r,id\n", io_detail::test_particle_directive(ps));
    for (std::size_t i = 0; i < ps.size(); ++i) {
      const double values[8] = {ps.x[i],  ps.y[i],  ps.z[i],    ps.vx[i],
                                ps.vy[i], ps.vz[i], ps.mass[i], ps.radius[i]};
      for (double v : values) {
        io_detail::append_exact(buf, v);
        buf.push_back(',');
      }
      fmt::format_to(sink, "{}\n", ps.id[i]);
      if (buf.size() >= kFlushBytes) {
        out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
        buf.clear();
        if (!out) return;  // the write failed (disk full): the caller reports why
      }
    }
    out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
  });
}

}  // namespace nbody
