#pragma once
// DirectWriter: one contiguous byte range of a file written from a stream of pieces, its
// 4096-byte-aligned middle with O_DIRECT (no page cache: on the VMs measured, filling the page
// cache of a fresh file ran at 0.76 GB/s where the disk took 2.1 GB/s), its unaligned ends
// through the page cache (docs/snapshots.md, "Large files").
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace nbody::io_detail {

/// A file's two descriptors for DirectWriter: `buffered` always, `direct` (opened with
/// O_DIRECT) where the file system takes it, else -1.
struct RowFiles {
  int buffered = -1;
  int direct = -1;
};

class DirectWriter {
 public:
  /// Writes the bytes appended from file offset `offset` on.
  DirectWriter(RowFiles files, std::uint64_t offset);
  ~DirectWriter();
  DirectWriter(const DirectWriter&) = delete;
  DirectWriter& operator=(const DirectWriter&) = delete;
  /// Appends `bytes` bytes; false (and reason()) when a write failed.
  bool append(const void* data, std::size_t bytes);
  /// Writes what is still held; false when a write failed.
  bool finish();
  /// The system's reason for the first failed write.
  [[nodiscard]] const std::string& reason() const { return reason_; }

  /// The staging buffer: direct writes go out in pieces of this many bytes.
  static constexpr std::size_t kStage = std::size_t(8) << 20;
  static constexpr std::uint64_t kAlign = 4096;

 private:
  bool write(int fd, const void* data, std::size_t bytes, std::uint64_t at);
  RowFiles files_;
  std::uint64_t at_;         // the file offset of the next byte appended
  std::uint64_t staged_at_;  // the file offset of stage_[0]
  std::size_t used_ = 0;     // bytes in stage_
  unsigned char* stage_ = nullptr;
  std::string reason_;
};

}  // namespace nbody::io_detail
