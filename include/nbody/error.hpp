#pragma once
// One exception type for every user-facing problem (bad input, bad option, missing
// device). The CLI prints what() and exits non-zero; Python will raise it as-is.
#include <stdexcept>
#include <string>

namespace nbody {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace nbody
