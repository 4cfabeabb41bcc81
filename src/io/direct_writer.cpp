// DirectWriter (direct_writer.hpp): the aligned middle of a byte range by O_DIRECT from an
// aligned staging buffer, the ends by ordinary pwrite.
#include "io/direct_writer.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace nbody::io_detail {

DirectWriter::DirectWriter(RowFiles files, std::uint64_t offset)
    : files_(files), at_(offset), staged_at_(offset) {
  if (files_.direct >= 0 && posix_memalign(reinterpret_cast<void**>(&stage_), kAlign, kStage) != 0)
    stage_ = nullptr;
  if (!stage_) files_.direct = -1;  // no staging buffer: everything through the page cache
}

DirectWriter::~DirectWriter() {
  std::free(stage_);
}

bool DirectWriter::write(int fd, const void* data, std::size_t bytes, std::uint64_t at) {
  const auto* p = static_cast<const char*>(data);
  while (bytes > 0) {  // a call moves at most ~2 GB; EINTR retried
    const ssize_t n =
        ::pwrite(fd, p, std::min<std::size_t>(bytes, std::size_t(1) << 30), off_t(at));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EINVAL && fd == files_.direct) {
      // A file system that opens with O_DIRECT but wants another alignment: the page cache
      // from here on (append and finish then write nothing more by fd).
      files_.direct = -1;
      return write(files_.buffered, p, bytes, at);
    }
    if (n <= 0) {
      if (reason_.empty()) reason_ = n < 0 ? std::strerror(errno) : "nothing written";
      return false;
    }
    p += n, bytes -= std::size_t(n), at += std::uint64_t(n);
  }
  return true;
}

bool DirectWriter::append(const void* data, std::size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  if (files_.direct < 0) {
    if (!write(files_.buffered, p, bytes, at_)) return false;
    at_ += bytes;
    return true;
  }
  if (used_ == 0 && at_ % kAlign != 0) {  // the unaligned start, through the page cache
    const std::size_t head = std::min<std::uint64_t>(bytes, kAlign - at_ % kAlign);
    if (!write(files_.buffered, p, head, at_)) return false;
    p += head, bytes -= head, at_ += head, staged_at_ = at_;
  }
  while (bytes > 0) {
    const std::size_t take = std::min(bytes, kStage - used_);
    std::memcpy(stage_ + used_, p, take);
    p += take, bytes -= take, used_ += take, at_ += take;
    if (used_ == kStage) {
      if (!write(files_.direct, stage_, kStage, staged_at_)) return false;
      staged_at_ += kStage, used_ = 0;
    }
  }
  return true;
}

bool DirectWriter::finish() {
  if (files_.direct < 0 || used_ == 0) return true;
  const std::size_t whole = used_ - used_ % kAlign;  // aligned blocks: direct; the rest not
  if (whole > 0 && !write(files_.direct, stage_, whole, staged_at_)) return false;
  if (used_ > whole && !write(files_.buffered, stage_ + whole, used_ - whole, staged_at_ + whole))
    return false;
  staged_at_ += used_, used_ = 0;
  return true;
}

}  // namespace nbody::io_detail
