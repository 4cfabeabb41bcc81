#pragma once
// CLI11's classes by name only, for headers that pass them by pointer or reference.
// Debian's CLI11 (2.1) is header-only, and including <CLI/CLI.hpp> costs every translation
// unit 4-7 s of compile time; only the files that add or read options include it.
namespace CLI {
class App;
class Option;
class Validator;
}  // namespace CLI
