#include "render/movie_writer.hpp"

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <system_error>
#include <utility>

#include "core/shell_quote.hpp"
#include "nbody/error.hpp"

namespace nbody::render {
namespace {

namespace fs = std::filesystem;

}  // namespace

fs::path find_ffmpeg() {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return {};
  std::stringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / "ffmpeg";
    if (::access(candidate.c_str(), X_OK) == 0 && !fs::is_directory(candidate)) return candidate;
  }
  return {};
}

MovieWriter::MovieWriter(fs::path path, int width, int height, double fps)
    : path_(std::move(path)), width_(width), height_(height) {
  if (width % 2 != 0 || height % 2 != 0) {
    throw Error(fmt::format(
        "{}: an .mp4 needs an even width and height (yuv420p), got {}x{}: use --width {} "
        "--height {}",
        path_.string(), width, height, width + width % 2, height + height % 2));
  }
  const fs::path ffmpeg = find_ffmpeg();
  if (ffmpeg.empty()) {
    throw Error(fmt::format(
        "{}: writing a movie needs ffmpeg, which is not on PATH (install it, e.g. apt-get "
        "install ffmpeg, or write PNG frames with -o FOLDER)",
        path_.string()));
  }
  const fs::path dir = path_.has_parent_path() ? path_.parent_path() : fs::path(".");
  if (!fs::is_directory(dir)) {
    throw Error(fmt::format("{}: cannot write the movie (directory '{}' does not exist)",
                            path_.string(), dir.string()));
  }
  const long pid = static_cast<long>(::getpid());
  temporary_ = dir / fmt::format(".{}.tmp-{}", path_.filename().string(), pid);
  log_ = dir / fmt::format(".{}.ffmpeg-{}.log", path_.filename().string(), pid);
  // -f mp4 because the temporary name does not end in .mp4; ffmpeg's messages go to a log so
  // that a failure can be reported with them.
  const std::string command = fmt::format(
      "{} -y -loglevel error -f rawvideo -pix_fmt rgb24 -s {}x{} -r {} -i - -pix_fmt yuv420p "
      "-vcodec libx264 -f mp4 {} 2> {}",
      shell_quote(ffmpeg.string()), width, height, fps, shell_quote(temporary_.string()),
      shell_quote(log_.string()));
  // A dead ffmpeg must turn writes into errors (EPIPE), not kill nbody with SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  pipe_ = ::popen(command.c_str(), "w");
  if (pipe_ == nullptr) throw Error(fmt::format("{}: cannot start ffmpeg", path_.string()));
}

MovieWriter::~MovieWriter() {
  if (pipe_ != nullptr) close_pipe();
  std::error_code ignored;
  fs::remove(temporary_, ignored);
  fs::remove(log_, ignored);
}

int MovieWriter::close_pipe() {
  const int status = ::pclose(pipe_);
  pipe_ = nullptr;
  return (status != -1 && WIFEXITED(status)) ? WEXITSTATUS(status) : -1;
}

std::string MovieWriter::ffmpeg_log() const {
  std::ifstream in(log_);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  constexpr std::size_t kMaxChars = 2000;  // the end holds the reason
  if (text.size() > kMaxChars) text = "..." + text.substr(text.size() - kMaxChars);
  return text.empty() ? "no message" : text;
}

void MovieWriter::add(const Image& frame) {
  if (pipe_ == nullptr)
    throw Error(fmt::format("{}: the movie is already finished", path_.string()));
  if (frame.width != width_ || frame.height != height_) {
    throw Error(fmt::format("{}: frame of {}x{} in a {}x{} movie", path_.string(), frame.width,
                            frame.height, width_, height_));
  }
  if (std::fwrite(frame.rgb.data(), 1, frame.rgb.size(), pipe_) != frame.rgb.size()) {
    const int status = close_pipe();
    throw Error(fmt::format("{}: ffmpeg stopped (exit status {}): {}", path_.string(), status,
                            ffmpeg_log()));
  }
  ++frames_;
}

void MovieWriter::finish() {
  if (pipe_ == nullptr)
    throw Error(fmt::format("{}: the movie is already finished", path_.string()));
  const int status = close_pipe();
  if (status != 0) {
    throw Error(fmt::format("{}: ffmpeg failed (exit status {}): {}", path_.string(), status,
                            ffmpeg_log()));
  }
  std::error_code ec;
  fs::rename(temporary_, path_, ec);
  if (ec) {
    throw Error(
        fmt::format("{}: cannot move the movie into place: {}", path_.string(), ec.message()));
  }
}

}  // namespace nbody::render
