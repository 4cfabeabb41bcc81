#pragma once
// A word for sh built from any text: single quotes, everything literal, a quote inside
// written '\''. For the commands nbody starts through a shell (ffmpeg for movies, Python
// for REBOUND's figures in bench small).
#include <string>

namespace nbody {

inline std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

}  // namespace nbody
