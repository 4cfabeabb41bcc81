#pragma once
// Movies through ffmpeg: raw RGB frames are piped to an `ffmpeg` process that encodes H.264
// (yuv420p, which every player reads). The movie is written to a temporary file beside the
// target and renamed into place when ffmpeg succeeds, so a failed run leaves no broken file.
#include <cstdio>
#include <filesystem>
#include <string>

#include "render/image.hpp"

namespace nbody::render {

class MovieWriter {
 public:
  /// Starts ffmpeg. Throws nbody::Error when ffmpeg is not on PATH, when width or height is
  /// odd (yuv420p halves both), or when the target's folder does not exist.
  MovieWriter(std::filesystem::path path, int width, int height, double fps);
  /// Without finish(): stops ffmpeg and removes the temporary file.
  ~MovieWriter();
  MovieWriter(const MovieWriter&) = delete;
  MovieWriter& operator=(const MovieWriter&) = delete;

  /// Sends one frame (its size must be the movie's).
  void add(const Image& frame);
  /// Waits for ffmpeg and renames the movie into place; throws nbody::Error with ffmpeg's
  /// own message when it failed.
  void finish();
  [[nodiscard]] int frames() const { return frames_; }

 private:
  /// Ends ffmpeg; its exit status, or -1 when it did not exit normally.
  int close_pipe();
  [[nodiscard]] std::string ffmpeg_log() const;

  std::filesystem::path path_, temporary_, log_;
  int width_, height_;
  int frames_ = 0;
  std::FILE* pipe_ = nullptr;
};

/// The ffmpeg executable found on PATH, or an empty path.
[[nodiscard]] std::filesystem::path find_ffmpeg();

}  // namespace nbody::render
