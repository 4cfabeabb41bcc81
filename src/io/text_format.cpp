// The text format of the seed files: one body per line, "x y z vx vy vz m [r]",
// whitespace separated, '#' comments. Ids are not stored; reading assigns 1..N. Bodies of
// mass 0 are test particles, after every body with mass (n_active: the bodies with mass),
// or a first line "# nbody: n_active=K test_particle_type=T" says which (io_detail).
#include <fmt/format.h>

#include <array>
#include <iterator>
#include <ostream>
#include <string_view>

#include "io/line_parser.hpp"
#include "nbody/io.hpp"

namespace nbody {

namespace {
constexpr std::array<std::string_view, 8> kColumnNames = {"x",  "y",  "z", "vx",
                                                          "vy", "vz", "m", "r"};
// Formatted text is handed to the stream in chunks of about this size: one write per
// megabyte instead of one stream operation per number.
constexpr std::size_t kFlushBytes = std::size_t{1} << 20;
}  // namespace

ParticleSystem read_text(const std::filesystem::path& path) {
  io_detail::LineReader in(path);
  ParticleSystem ps;
  io_detail::TestParticleOrder order;
  std::array<std::string_view, 8> fields;
  std::string_view line;
  while (in.next(line)) {
    if (order.directive(in, line, !ps.empty())) continue;
    line = io_detail::strip_comment(line);
    if (io_detail::is_blank(line)) continue;
    const std::size_t n = io_detail::split_whitespace(line, fields);
    if (n != 7 && n != 8) {
      in.fail(fmt::format("expected 7 or 8 columns (x y z vx vy vz m [r]), found {}", n));
    }
    auto field = [&](std::size_t i) { return io_detail::Field{fields[i], i + 1, kColumnNames[i]}; };
    Body b;
    b.position = {io_detail::parse_finite(in, field(0)), io_detail::parse_finite(in, field(1)),
                  io_detail::parse_finite(in, field(2))};
    b.velocity = {io_detail::parse_finite(in, field(3)), io_detail::parse_finite(in, field(4)),
                  io_detail::parse_finite(in, field(5))};
    b.mass = io_detail::parse_mass(in, field(6));
    order.check(in, field(6), b.mass);
    if (n == 8) b.radius = io_detail::parse_radius(in, field(7));
    ps.add(b);
  }
  if (ps.empty()) io_detail::fail_no_particles(in, "the file is empty or holds only comments");
  order.finish(in, ps);
  ps.assign_sequential_ids();
  return ps;
}

void write_text(const std::filesystem::path& path, const ParticleSystem& ps) {
  // Radii only when some body has one, so radius-free files stay in the 7-column form.
  const bool radii = ps.has_radii();
  write_file_atomically(path, [&](std::ostream& out) {
    fmt::memory_buffer buf;
    auto sink = std::back_inserter(buf);
    fmt::format_to(sink, "{}{}", io_detail::test_particle_directive(ps),
                   radii ? "# x y z vx vy vz m r\n" : "# x y z vx vy vz m\n");
    for (std::size_t i = 0; i < ps.size(); ++i) {
      const double values[8] = {ps.x[i],  ps.y[i],  ps.z[i],    ps.vx[i],
                                ps.vy[i], ps.vz[i], ps.mass[i], ps.radius[i]};
      const std::size_t columns = radii ? 8 : 7;
      for (std::size_t k = 0; k < columns; ++k) {
        if (k > 0) buf.push_back(' ');
        io_detail::append_exact(buf, values[k]);
      }
      buf.push_back('\n');
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
