#pragma once
// DirectWriter: one contiguous byte range of a file written from a stream of pieces, its
// 4096-byte-aligned middle with O_DIRECT (no page cache: on the VMs measured, filling the page
// cache of a fresh file ran at 0.76 GB/s where the disk took 2.1 GB/s), its unaligned ends
// through the page cache (docs/snapshots.md, "Large files"). The direct writes go out on
// threads of their own, one a staging buffer (kStages), while the caller converts and stages the
// next pieces: the conversion no longer waits for the disk, nor the disk for it.
#include <array>
#include <cstddef>
#include <cstdint>
#include <future>
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
  /// Waits for the writes still going (their buffers are freed here).
  ~DirectWriter();
  DirectWriter(const DirectWriter&) = delete;
  DirectWriter& operator=(const DirectWriter&) = delete;
  /// Appends `bytes` bytes; false (and reason()) when a write failed.
  bool append(const void* data, std::size_t bytes);
  /// Writes what is still held and waits for every write; false when one failed.
  bool finish();
  /// The system's reason for the first failed write.
  [[nodiscard]] const std::string& reason() const { return reason_; }

  /// A staging buffer: direct writes go out in pieces of this many bytes.
  static constexpr std::size_t kStage = std::size_t(8) << 20;
  static constexpr std::uint64_t kAlign = 4096;
  /// Staging buffers: while one fills, the others' writes may be going.
  static constexpr std::size_t kStages = 3;

  /// The outcome of one write: 0 or the errno of the failure; `direct_refused` when the
  /// file system refused O_DIRECT's alignment and the bytes went through the page cache.
  struct Outcome {
    int error = 0;
    bool direct_refused = false;
  };

 private:
  struct Stage {
    unsigned char* data = nullptr;
    std::future<Outcome> going;  // its write, while it goes
  };
  bool write(int fd, const void* data, std::size_t bytes, std::uint64_t at);
  bool send(std::size_t bytes);  // the current stage's bytes, on a thread
  bool wait(Stage& s);           // its write done; false if it failed
  bool take(const Outcome& o);   // what a write's outcome means for the next ones
  RowFiles files_;
  std::uint64_t at_;         // the file offset of the next byte appended
  std::uint64_t staged_at_;  // the file offset of the current stage's first byte
  std::size_t used_ = 0;     // bytes in the current stage
  std::size_t current_ = 0;  // the stage being filled
  std::array<Stage, kStages> stages_{};
  std::string reason_;
};

}  // namespace nbody::io_detail
