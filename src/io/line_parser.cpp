#include "io/line_parser.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <string_view>

#include "nbody/error.hpp"
#include "nbody/input_error.hpp"

namespace nbody::io_detail {

namespace {

// Big enough that fread() calls are rare; a line longer than the buffer grows it.
constexpr std::size_t kBufferBytes = std::size_t{1} << 20;
// A particle line is a few hundred bytes; a line this long means a binary or wrong
// file, and refusing it keeps such a file from being pulled into memory whole.
constexpr std::size_t kMaxLineBytes = std::size_t{64} << 20;

bool is_space(char c) {
  return c == ' ' || c == '\t';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

[[noreturn]] void fail_field(const LineReader& in, const Field& f, std::string_view problem) {
  in.fail(fmt::format("column {} ({}): {}", f.column, f.name, problem));
}

}  // namespace

// The offending text as shown in a message: quoted, control bytes escaped (a line holding
// terminal escapes must not drive the terminal) and cut short (a garbage line must not
// flood it).
std::string quoted(std::string_view text) {
  return fmt::format("'{}'", printable(text));
}

// ---- LineReader ------------------------------------------------------------------

LineReader::LineReader(const std::filesystem::path& path)
    : file_name_(path.string()), buffer_(kBufferBytes) {
  errno = 0;
  file_.reset(std::fopen(path.c_str(), "rb"));
  if (!file_) {
    throw Error(fmt::format("{}: cannot open file ({})", file_name_,
                            errno != 0 ? std::strerror(errno) : "unknown reason"));
  }
}

void LineReader::refill() {
  // Move the unread tail to the front so the buffer only grows for a single long line.
  if (begin_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == buffer_.size()) {
    if (buffer_.size() >= kMaxLineBytes) {
      throw Error(fmt::format("{}:{}: line is longer than {} MiB (is this a particle file?)",
                              file_name_, line_number_ + 1, kMaxLineBytes >> 20));
    }
    buffer_.resize(buffer_.size() * 2);
  }
  errno = 0;
  const std::size_t got = std::fread(buffer_.data() + end_, 1, buffer_.size() - end_, file_.get());
  if (got == 0) {
    if (std::ferror(file_.get())) {
      throw Error(fmt::format("{}: cannot read file ({})", file_name_,
                              errno != 0 ? std::strerror(errno) : "read error"));
    }
    at_eof_ = true;
  }
  end_ += got;
}

bool LineReader::next(std::string_view& line) {
  for (;;) {
    const char* start = buffer_.data() + begin_;
    const std::size_t available = end_ - begin_;
    const void* newline = std::memchr(start + scanned_, '\n', available - scanned_);
    if (newline != nullptr) {
      const auto length = static_cast<std::size_t>(static_cast<const char*>(newline) - start);
      line = std::string_view(start, length);
      begin_ += length + 1;
      break;
    }
    if (at_eof_) {
      if (available == 0) return false;
      line = std::string_view(start, available);  // last line without a final '\n'
      begin_ = end_;
      break;
    }
    scanned_ = available;
    refill();
  }
  scanned_ = 0;
  ++line_number_;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line_number_ == 1 && line.starts_with("\xEF\xBB\xBF")) line.remove_prefix(3);
  return true;
}

void LineReader::fail(std::string_view problem) const {
  throw Error(fmt::format("{}:{}: {}", file_name_, line_number_, problem));
}

void fail_no_particles(const LineReader& in, std::string_view why) {
  throw Error(fmt::format("{}: no particles found ({})", in.file_name(), why));
}

bool TestParticleOrder::directive(const LineReader& in, std::string_view raw, bool bodies_seen) {
  std::string_view rest = trim(raw);
  if (rest.empty() || rest.front() != '#') return false;
  rest = trim(rest.substr(1));
  constexpr std::string_view kTag = "nbody:";
  if (rest.substr(0, kTag.size()) != kTag) return false;
  if (bodies_seen) in.fail("'# nbody:' must come before the first body");
  if (directive_line_ != 0) {
    in.fail(fmt::format("a second '# nbody:' line (the first is line {})", directive_line_));
  }
  directive_line_ = in.line_number();
  rest.remove_prefix(kTag.size());
  std::string_view fields[8];
  const std::size_t n = split_whitespace(rest, fields);
  if (n == 0 || n > 2) {
    in.fail(
        fmt::format("'# nbody:' takes n_active=K and/or test_particle_type=T, found {} "
                    "fields",
                    n));
  }
  for (std::size_t i = 0; i < n; ++i) {
    const std::string_view f = fields[i];
    const std::size_t eq = f.find('=');
    const std::string_view key = f.substr(0, eq), value = eq == f.npos ? "" : f.substr(eq + 1);
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    const bool number = !value.empty() && ec == std::errc() && end == value.data() + value.size();
    if (key == "n_active") {
      if (n_active_ != 0) in.fail("n_active given twice");
      if (!number || v == 0) {
        in.fail(fmt::format("n_active must be a whole number >= 1 (the active bodies), got {}",
                            quoted(value)));
      }
      n_active_ = std::size_t(v);
    } else if (key == "test_particle_type") {
      if (type_ >= 0) in.fail("test_particle_type given twice");
      if (!number || v > 1) {
        in.fail(fmt::format(
            "test_particle_type must be 0 (test particles feel the active bodies only) or 1 "
            "(they also pull on them), got {}",
            quoted(value)));
      }
      type_ = int(v);
    } else {
      in.fail(
          fmt::format("unknown key {} in '# nbody:' (n_active, test_particle_type)", quoted(f)));
    }
  }
  return true;
}

void TestParticleOrder::check(const LineReader& in, const Field& f, double mass) {
  if (n_active_ != 0) return;  // the directive says which bodies are active
  if (mass == 0) {
    if (first_massless_line_ == 0) first_massless_line_ = in.line_number();
    return;
  }
  any_mass_ = true;
  if (first_massless_line_ != 0) {
    fail_field(in, f,
               fmt::format("a body with mass after the test particles (mass 0 from line {}): "
                           "test particles come last",
                           first_massless_line_));
  }
}

void TestParticleOrder::finish(const LineReader& in, ParticleSystem& ps) const {
  if (n_active_ != 0) {
    if (n_active_ > ps.size()) {
      throw Error(fmt::format("{}:{}: n_active {} but the file holds {} bodies", in.file_name(),
                              directive_line_, n_active_, ps.size()));
    }
    ps.n_active = n_active_ == ps.size() ? ParticleSystem::kAllActive : n_active_;
  } else {
    if (!any_mass_) {
      throw Error(fmt::format(
          "{}: no body has mass: test particles need at least one body with mass", in.file_name()));
    }
    (void)mark_massless_test_particles(ps);  // check() saw every massless body come last
  }
  if (type_ >= 0) ps.test_particle_type = type_;
}

std::string test_particle_directive(const ParticleSystem& ps) {
  // What a reader would make of the masses alone (mark_massless_test_particles).
  const std::size_t n = ps.size();
  if (n == 0) return {};
  const MassOrder order = mass_order(ps);
  const bool readable = order.mass_after_massless == n && order.first_massless > 0;
  const std::size_t from_masses =
      order.first_massless == n ? ParticleSystem::kAllActive : order.first_massless;
  const std::size_t actual = ps.has_test_particles() ? ps.n_active : ParticleSystem::kAllActive;
  const int type = ps.has_test_particles() ? ps.test_particle_type : 0;
  if (readable && from_masses == actual && type == 0) return {};
  return fmt::format("# nbody: n_active={} test_particle_type={}\n", ps.active_count(), type);
}

// ---- Splitting -------------------------------------------------------------------

std::string_view strip_comment(std::string_view line) {
  const std::size_t hash = line.find('#');
  return hash == std::string_view::npos ? line : line.substr(0, hash);
}

bool is_blank(std::string_view line) {
  return trim(line).empty();
}

std::size_t split_whitespace(std::string_view line, std::span<std::string_view> out) {
  std::size_t count = 0;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_space(line[i])) ++i;
    if (i == line.size()) break;
    const std::size_t first = i;
    while (i < line.size() && !is_space(line[i])) ++i;
    if (count < out.size()) out[count] = line.substr(first, i - first);
    ++count;
  }
  return count;
}

void split_csv(std::string_view line, std::vector<std::string_view>& out) {
  out.clear();
  for (;;) {
    const std::size_t comma = line.find(',');
    std::string_view field = trim(line.substr(0, comma));
    if (field.size() >= 2 && field.front() == '"' && field.back() == '"') {
      field = field.substr(1, field.size() - 2);
    }
    out.push_back(field);
    if (comma == std::string_view::npos) break;
    line.remove_prefix(comma + 1);
  }
}

// ---- Numbers ---------------------------------------------------------------------

double parse_finite(const LineReader& in, const Field& f) {
  std::string_view text = f.text;
  if (text.empty()) fail_field(in, f, "field is empty");
  // from_chars rejects a leading '+', which other tools write; allow exactly one.
  if (text.front() == '+') {
    text.remove_prefix(1);
    if (text.starts_with('+') || text.starts_with('-')) {
      fail_field(in, f, fmt::format("{} is not a number", quoted(f.text)));
    }
  }
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  // Strict: the whole field must be the number ("1.5abc" is not 1.5).
  if (ec == std::errc::invalid_argument || end != text.data() + text.size()) {
    fail_field(in, f, fmt::format("{} is not a number", quoted(f.text)));
  }
  if (ec == std::errc::result_out_of_range) {
    fail_field(in, f, fmt::format("{} is out of the range of a double", quoted(f.text)));
  }
  // from_chars accepts "nan" and "inf"; a body cannot sit at either.
  if (std::isnan(value)) fail_field(in, f, "value is NaN");
  if (std::isinf(value)) fail_field(in, f, "value is infinite");
  return value;
}

double parse_mass(const LineReader& in, const Field& f) {
  const double m = parse_finite(in, f);
  if (m < 0) fail_field(in, f, fmt::format("mass must be >= 0, got {}", m));
  return m;
}

double parse_radius(const LineReader& in, const Field& f) {
  const double r = parse_finite(in, f);
  if (r < 0) fail_field(in, f, fmt::format("radius must be >= 0, got {}", r));
  // -0 is read as +0: a radius has no sign, and the writers leave a column of zero radii
  // out, so -0 could not read back bit for bit (a fuzz regression).
  return r + 0.0;
}

std::uint64_t parse_id(const LineReader& in, const Field& f) {
  std::string_view text = f.text;
  if (text.empty()) fail_field(in, f, "field is empty");
  if (text.front() == '+') text.remove_prefix(1);
  std::uint64_t id = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  // Unsigned from_chars already refuses '-', so "-3" lands here too.
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || id == 0) {
    fail_field(in, f, fmt::format("id must be a positive integer, got {}", quoted(f.text)));
  }
  return id;
}

}  // namespace nbody::io_detail
