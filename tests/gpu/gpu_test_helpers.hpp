#pragma once
// Shared by the GPU tests: skip (and say why) when no CUDA device is usable, so a run on
// a machine without a GPU reports the tests as skipped, never as passed.
#include <gtest/gtest.h>

#include <string>

#include "nbody/build_info.hpp"

#define SKIP_WITHOUT_GPU()                                                            \
  do {                                                                                \
    std::string reason_;                                                              \
    if (nbody::gpu_devices(&reason_).empty()) GTEST_SKIP() << "no CUDA device: " << reason_; \
  } while (0)
