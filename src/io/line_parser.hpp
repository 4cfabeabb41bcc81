#pragma once
// Private helpers shared by the particle file formats: streaming a file line by line,
// splitting lines into fields, parsing numbers with "FILE:LINE: problem" errors, and
// the matching exact text form of a number for the writers.
#include <fmt/format.h>

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nbody/particles.hpp"

namespace nbody::io_detail {

/// Reads a file one line at a time through a fixed-size buffer, so a file of any size
/// streams without being held in memory. Lines come back without '\n' or a trailing
/// '\r' (CRLF files), and a UTF-8 byte-order mark on the first line is dropped.
class LineReader {
 public:
  /// Opens path; throws nbody::Error("FILE: cannot open file (REASON)").
  explicit LineReader(const std::filesystem::path& path);

  /// The next line, valid until the following call; false at the end of the file.
  bool next(std::string_view& line);

  /// 1-based physical number of the line last returned by next().
  [[nodiscard]] std::size_t line_number() const { return line_number_; }
  [[nodiscard]] const std::string& file_name() const { return file_name_; }

  /// Throws nbody::Error("FILE:LINE: problem") for the current line.
  [[noreturn]] void fail(std::string_view problem) const;

 private:
  struct FileCloser {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };

  void refill();

  std::unique_ptr<std::FILE, FileCloser> file_;
  std::string file_name_;
  std::vector<char> buffer_;
  std::size_t begin_ = 0;  // unread bytes are buffer_[begin_, end_)
  std::size_t end_ = 0;
  std::size_t scanned_ = 0;  // bytes after begin_ already known to hold no '\n'
  bool at_eof_ = false;
  std::size_t line_number_ = 0;
};

/// The line without its comment: everything from the first '#' on (numbers and column
/// names never contain '#', so a whole-line comment and a trailing one are the same).
[[nodiscard]] std::string_view strip_comment(std::string_view line);

/// True when the line holds nothing but spaces and tabs.
[[nodiscard]] bool is_blank(std::string_view line);

/// Splits on runs of spaces and tabs into out; returns how many fields the line has,
/// which may be more than out.size() (the extra fields are counted, not stored).
std::size_t split_whitespace(std::string_view line, std::span<std::string_view> out);

/// Splits on ',' into out, trimming spaces and tabs around each field and one pair of
/// surrounding double quotes (spreadsheets and R quote header names).
void split_csv(std::string_view line, std::vector<std::string_view>& out);

/// One field of the current line, named for error messages: "column 4 (vx)".
struct Field {
  std::string_view text;
  std::size_t column;  // 1-based
  std::string_view name;
};

/// A finite double; throws for text that is not a number, NaN, infinity or out of range.
[[nodiscard]] double parse_finite(const LineReader& in, const Field& field);
/// A finite mass >= 0 (0: a test particle, TestParticleOrder).
[[nodiscard]] double parse_mass(const LineReader& in, const Field& field);
/// A finite radius >= 0.
[[nodiscard]] double parse_radius(const LineReader& in, const Field& field);
/// A positive integer id.
[[nodiscard]] std::uint64_t parse_id(const LineReader& in, const Field& field);

/// Appends v as printf's "%.17g" would: 17 significant digits, so parse_finite gives
/// back the same bits. std::to_chars produces the identical text about twice as fast as
/// fmt's "{:.17g}", which matters when writing millions of bodies.
inline void append_exact(fmt::memory_buffer& buf, double v) {
  char text[32];  // the longest %.17g form, "-1.2345678901234567e-308", is 24 characters
  const auto result = std::to_chars(text, text + sizeof text, v, std::chars_format::general, 17);
  buf.append(text, result.ptr);
}

/// Text from the file as messages show it: 'TEXT', escaped and cut (nbody::printable).
[[nodiscard]] std::string quoted(std::string_view text);

/// The error for a file that held no bodies.
[[noreturn]] void fail_no_particles(const LineReader& in, std::string_view why);

/// Bodies of mass 0 are test particles (ParticleSystem::n_active), which come after every
/// body with mass: the readers hand each body's mass to check() as they read it, then the
/// bodies to finish(). Where the masses do not say it (test particles with mass, type 1,
/// massless active bodies), a comment line says it before the first body:
///   # nbody: n_active=K test_particle_type=T
/// (either key, each at most once; test_particle_directive writes it).
class TestParticleOrder {
 public:
  /// True when the raw line (its comment not stripped) is that directive, then taken:
  /// throws "FILE:LINE: ..." for an unknown key, a bad value, a repeat, or a directive after
  /// the first body (bodies_seen).
  bool directive(const LineReader& in, std::string_view raw_line, bool bodies_seen);
  /// Throws "FILE:LINE: column C (m): a body with mass after the test particles (mass 0
  /// from line K): test particles come last" for a mass > 0 after a mass of 0 (not with
  /// n_active given).
  void check(const LineReader& in, const Field& field, double mass);
  /// n_active given: throws when it is above the bodies read, else sets it (and the type).
  /// Otherwise throws "FILE: no body has mass: ..." when every body is massless; else marks
  /// the massless bodies as the test particles (mark_massless_test_particles).
  void finish(const LineReader& in, ParticleSystem& ps) const;

 private:
  std::size_t first_massless_line_ = 0;  // 0: none yet
  bool any_mass_ = false;
  std::size_t directive_line_ = 0;  // 0: none
  std::size_t n_active_ = 0;        // 0: not given
  int type_ = -1;                   // -1: not given
};

/// The directive line (with its '\n') a writer puts first so that reading the file gives
/// back ps's n_active and test_particle_type; empty where the masses already say them.
[[nodiscard]] std::string test_particle_directive(const ParticleSystem& ps);

}  // namespace nbody::io_detail
