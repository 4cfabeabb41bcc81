// DirectWriter (direct_writer.hpp): the aligned middle of a byte range by O_DIRECT from aligned
// staging buffers, written on threads while the next one fills; the ends by ordinary pwrite.
#include "io/direct_writer.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>

namespace nbody::io_detail {

namespace {

/// pwrite until every byte is written (a call moves at most ~2 GB; EINTR retried): 0, or
/// the errno of the failure (EIO for a write that moved nothing).
int write_all(int fd, const unsigned char* p, std::size_t bytes, std::uint64_t at) {
  while (bytes > 0) {
    const ssize_t n =
        ::pwrite(fd, p, std::min<std::size_t>(bytes, std::size_t(1) << 30), off_t(at));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    p += n, bytes -= std::size_t(n), at += std::uint64_t(n);
  }
  return 0;
}

/// A direct write; where the file system wants another alignment (EINVAL), the same bytes
/// through the page cache.
DirectWriter::Outcome write_direct(RowFiles files, const unsigned char* p, std::size_t bytes,
                                   std::uint64_t at) {
  const int error = write_all(files.direct, p, bytes, at);
  if (error != EINVAL) return {error, false};
  return {write_all(files.buffered, p, bytes, at), true};
}

}  // namespace

DirectWriter::DirectWriter(RowFiles files, std::uint64_t offset)
    : files_(files), at_(offset), staged_at_(offset) {
  for (Stage& s : stages_) {
    if (files_.direct < 0) break;
    if (posix_memalign(reinterpret_cast<void**>(&s.data), kAlign, kStage) != 0) s.data = nullptr;
    if (!s.data) files_.direct = -1;  // no staging buffers: everything through the page cache
  }
}

DirectWriter::~DirectWriter() {
  for (Stage& s : stages_) {
    if (s.going.valid()) s.going.wait();  // no thread may write from a freed buffer
    std::free(s.data);
  }
}

bool DirectWriter::take(const Outcome& o) {
  if (o.direct_refused) files_.direct = -1;  // append and finish: the page cache from here on
  if (o.error == 0) return true;
  if (reason_.empty()) reason_ = std::strerror(o.error);
  return false;
}

bool DirectWriter::write(int fd, const void* data, std::size_t bytes, std::uint64_t at) {
  const auto* p = static_cast<const unsigned char*>(data);
  return take(fd == files_.direct ? write_direct(files_, p, bytes, at)
                                  : Outcome{write_all(fd, p, bytes, at), false});
}

bool DirectWriter::wait(Stage& s) {
  return !s.going.valid() || take(s.going.get());
}

bool DirectWriter::send(std::size_t bytes) {
  Stage& s = stages_[current_];
  const std::uint64_t at = staged_at_;
  try {
    s.going = std::async(std::launch::async, write_direct, files_, s.data, bytes, at);
  } catch (const std::system_error&) {  // no thread to be had: write it here
    if (!write(files_.direct, s.data, bytes, at)) return false;
  }
  staged_at_ += bytes, used_ = 0;
  current_ = (current_ + 1) % kStages;
  return wait(stages_[current_]);  // the next stage to fill, once its own write is done
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
    std::memcpy(stages_[current_].data + used_, p, take);
    p += take, bytes -= take, used_ += take, at_ += take;
    if (used_ == kStage && !send(kStage)) return false;
    if (files_.direct < 0 && bytes > 0) return append(p, bytes);  // refused: the rest buffered
  }
  return true;
}

bool DirectWriter::finish() {
  bool ok = true;
  for (Stage& s : stages_) ok = wait(s) && ok;  // every write sent, in the file
  if (!ok || used_ == 0) return ok;
  Stage& s = stages_[current_];
  if (files_.direct < 0) {  // refused after this stage was filled: all of it buffered
    ok = write(files_.buffered, s.data, used_, staged_at_);
  } else {
    const std::size_t whole = used_ - used_ % kAlign;  // aligned blocks: direct; the rest not
    ok = (whole == 0 || write(files_.direct, s.data, whole, staged_at_)) &&
         (used_ == whole ||
          write(files_.buffered, s.data + whole, used_ - whole, staged_at_ + whole));
  }
  staged_at_ += used_, used_ = 0;
  return ok;
}

}  // namespace nbody::io_detail
