// A check of an object's header, in the file's own bytes, before libhdf5 decodes it.
//
// Why: the libhdf5 1.10 that Debian ships trusts the sizes inside version-1 object header
// messages. A corrupted attribute message (a name length, a datatype or dataspace size, an
// extent) makes it copy past the end of its buffer while H5Aexists, H5Aopen or H5Aiterate
// decode the header (a crash under AddressSanitizer, and a plain segfault at times); a
// corrupted datatype message is taken as a float with impossible bit fields, read as zeros or
// garbage, or with a size of 4 GB, read for ever. Later libhdf5 versions refuse these files
// ("ran off end of input buffer while decoding"); here we do what they do, for the messages
// that our readers make libhdf5 decode: dataspace, datatype, attribute, and the continuations
// that lead to further chunks. Version-2 headers ("OHDR") carry checksums that libhdf5
// verifies, so only version 1 (the default of libhdf5, h5py and GADGET) is walked here.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <vector>

#include "io/hdf5_detail.hpp"

namespace nbody::hdf5::detail {

namespace {

constexpr std::uint64_t kMaxChunkBytes = std::uint64_t{1} << 26;  // far above any real header
constexpr int kMaxChunks = 4096;                                  // stops continuation cycles

std::uint64_t little(const unsigned char* p, std::size_t bytes) {
  std::uint64_t v = 0;
  for (std::size_t i = bytes; i-- > 0;) v = (v << 8) | p[i];
  return v;
}

std::uint64_t align8(std::uint64_t n) {
  return (n + 7) & ~std::uint64_t{7};
}

/// Walks one version-1 object header; `bad(problem)` throws.
class HeaderWalk {
 public:
  HeaderWalk(std::ifstream& in, std::uint64_t base, std::uint64_t eof, unsigned sizeof_addr,
             unsigned sizeof_size, std::function<void(const std::string&)> bad)
      : in_(in), base_(base), eof_(eof), sa_(sizeof_addr), ss_(sizeof_size), bad_(std::move(bad)) {}

  void walk(std::uint64_t address) {
    std::array<unsigned char, 16> prefix{};
    if (!read(base_ + address, prefix.data(), prefix.size())) bad_("its header lies past the end");
    if (std::memcmp(prefix.data(), "OHDR", 4) == 0) return;  // version 2: checksummed
    if (prefix[0] != 1) bad_(fmt::format("its header has version {}", prefix[0]));
    const std::uint64_t messages = little(&prefix[2], 2);
    std::vector<std::pair<std::uint64_t, std::uint64_t>> chunks{
        {base_ + address + 16, little(&prefix[8], 4)}};
    std::uint64_t seen = 0;
    for (std::size_t c = 0; c < chunks.size(); ++c) {
      if (c >= kMaxChunks) bad_("its header has too many continuation chunks");
      const auto [start, length] = chunks[c];
      if (length > kMaxChunkBytes) bad_(fmt::format("a header chunk of {} bytes", length));
      std::vector<unsigned char> chunk(length);
      if (!read(start, chunk.data(), length)) bad_("a header chunk lies past the end");
      std::uint64_t pos = 0;
      while (pos + 8 <= length) {
        const auto type = static_cast<unsigned>(little(&chunk[pos], 2));
        const std::uint64_t size = little(&chunk[pos + 2], 2);
        const unsigned flags = chunk[pos + 4];
        pos += 8;
        if (size > length - pos) bad_(fmt::format("header message {} runs past its chunk", seen));
        ++seen;
        const unsigned char* p = chunk.data() + pos;
        pos += size;
        // Types above 0x18 are not in the format; libhdf5 1.10 skips them, so a corrupted
        // type byte would make an attribute (say /Header/Dimension) silently absent.
        if (type > 0x18) bad_(fmt::format("header message {} has type {:#x}", seen - 1, type));
        if ((flags & 0x02) != 0) {  // a shared message: the data is elsewhere
          // Only these classes can be shared (dataspace, datatype, fill value, filters,
          // attribute); libhdf5 1.10 would decode any other as a reference.
          if (type != 0x01 && type != 0x03 && type != 0x05 && type != 0x0b && type != 0x0c) {
            bad_(fmt::format("header message {} of type {:#x} is flagged shared", seen - 1, type));
          }
          continue;
        }
        plausible(type, p, size, seen - 1);
        if (type == 0x10) {  // continuation
          if (size < sa_ + ss_) bad_("a short continuation message");
          chunks.emplace_back(base_ + little(p, sa_), little(p + sa_, ss_));
        } else if (type == 0x01) {
          (void)dataspace(p, size, "its dataspace");
        } else if (type == 0x03) {
          (void)datatype(p, size, "its datatype", 0);
        } else if (type == 0x0c) {
          attribute(p, size);
        } else if (type == 0x11) {
          symbol_table(p, size);
        }
      }
      // Messages fill a version-1 chunk exactly (gaps are null messages): a length off by a
      // few bytes is a corrupt size field.
      if (pos != length) bad_(fmt::format("a header chunk has {} stray bytes", length - pos));
    }
    if (seen != messages)
      bad_(fmt::format("its header holds {} messages, says {}", seen, messages));
  }

 private:
  /// A group's symbol table (old-style groups): its B-tree and local heap, which H5Lexists
  /// and H5Gopen read with the sizes they hold (a corrupt local heap made libhdf5 1.10 copy
  /// from a null buffer: a fuzz regression). The heap's data must lie inside the file.
  void symbol_table(const unsigned char* p, std::uint64_t size) {
    if (size < 2ull * sa_) bad_("a short symbol table message");
    std::array<unsigned char, 4> tree{};
    if (!read(base_ + little(p, sa_), tree.data(), tree.size()) ||
        std::memcmp(tree.data(), "TREE", 4) != 0) {
      bad_("its group's B-tree is not where the header says");
    }
    std::vector<unsigned char> heap(8 + 2ull * ss_ + sa_);
    if (!read(base_ + little(p + sa_, sa_), heap.data(), heap.size()) ||
        std::memcmp(heap.data(), "HEAP", 4) != 0 || heap[4] != 0) {
      bad_("its group's local heap is not where the header says");
    }
    const std::uint64_t data_size = little(&heap[8], ss_);
    const std::uint64_t free_list = little(&heap[8 + ss_], ss_);
    const std::uint64_t data_address = little(&heap[8 + 2ull * ss_], sa_);
    const std::uint64_t undefined =
        ss_ == 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * ss_)) - 1;
    if (data_size == 0 || data_size > eof_ || data_address > eof_ - base_ ||
        data_size > eof_ - base_ - data_address ||
        (free_list != undefined && free_list != 1 && free_list >= data_size)) {
      bad_(fmt::format("its group's local heap claims {} bytes at {}", data_size, data_address));
    }
    // Its free list, which libhdf5 1.10 follows with an allocation per block and no check
    // for a cycle (a looping list took 20 GB: a fuzz regression): every block inside the
    // heap, none visited twice.
    std::set<std::uint64_t> seen;
    for (std::uint64_t block = free_list; block != undefined && block != 1;) {
      std::vector<unsigned char> entry(2ull * ss_);
      if (block >= data_size || data_size - block < entry.size() || !seen.insert(block).second ||
          !read(base_ + data_address + block, entry.data(), entry.size()) ||
          little(&entry[ss_], ss_) > data_size - block) {
        bad_(fmt::format("its group's local heap has a broken free list (block at {})", block));
      }
      block = little(entry.data(), ss_);
    }
  }

  bool read(std::uint64_t offset, unsigned char* out, std::uint64_t bytes) {
    if (offset > eof_ || bytes > eof_ - offset) return false;
    in_.clear();
    in_.seekg(static_cast<std::streamoff>(offset));
    in_.read(reinterpret_cast<char*>(out), static_cast<std::streamsize>(bytes));
    return static_cast<std::uint64_t>(in_.gcount()) == bytes;
  }

  /// One flipped bit turns an attribute message (0x0c) into a fill value (0x04), a layout
  /// (0x08), a comment (0x0d) or a modification time (0x0e), which libhdf5 1.10 skips: the
  /// attribute would be silently absent (a 2-D snapshot read as 3-D). Their contents tell.
  void plausible(unsigned type, const unsigned char* p, std::uint64_t size, std::uint64_t index) {
    bool ok = true;
    if (type == 0x04) {
      ok = size >= 4 && little(p, 4) <= size - 4;
    } else if (type == 0x08) {
      ok = size >= 2 && (p[0] == 1 || p[0] == 2 ? p[1] >= 1 && p[1] <= 33 && size >= 3 && p[2] <= 2
                         : p[0] == 3 || p[0] == 4 ? p[1] <= 3
                                                  : false);
    } else if (type == 0x0d) {
      const auto* end = static_cast<const unsigned char*>(std::memchr(p, 0, size));
      ok = end != nullptr && std::all_of(p, end, [](unsigned char c) { return c >= 0x20; });
    } else if (type == 0x0e) {
      ok = size >= 14 &&
           std::all_of(p, p + 14, [](unsigned char c) { return c >= '0' && c <= '9'; });
    } else if (type == 0x12) {
      ok = size >= 8 && p[0] == 1;
    }
    if (!ok) bad_(fmt::format("header message {} (type {:#x}) is not one", index, type));
  }

  /// The number of elements, or a throw.
  std::uint64_t dataspace(const unsigned char* p, std::uint64_t size, const std::string& what) {
    if (size < 4) bad_(what + " is cut short");
    const unsigned version = p[0];
    const unsigned rank = p[1];
    const unsigned flags = p[2];
    if (version != 1 && version != 2) bad_(fmt::format("{} has version {}", what, version));
    if (rank > 32) bad_(fmt::format("{} has rank {}", what, rank));
    const std::uint64_t header = version == 1 ? 8 : 4;
    const std::uint64_t need = header + std::uint64_t{rank} * ss_ * ((flags & 1) != 0 ? 2 : 1) +
                               (version == 1 && (flags & 2) != 0 ? std::uint64_t{rank} * 4 : 0);
    if (need > size) bad_(what + " runs past its message");
    if (version == 2 && p[3] == 2) return 0;  // a null dataspace
    std::uint64_t n = 1;
    for (unsigned d = 0; d < rank; ++d) {
      const std::uint64_t extent = little(p + header + std::uint64_t{d} * ss_, ss_);
      if (extent != 0 && n > UINT64_MAX / extent) bad_(what + " has more elements than 2^64");
      n *= extent;
      if ((flags & 1) != 0) {  // a maximum extent follows the extents: all ones is unlimited
        const std::uint64_t most = little(p + header + std::uint64_t{rank + d} * ss_, ss_);
        const std::uint64_t unlimited = ss_ >= 8 ? UINT64_MAX : (std::uint64_t{1} << 8 * ss_) - 1;
        if (most != unlimited && most < extent) bad_(what + " is larger than its maximum");
      }
    }
    return n;
  }

  /// The size of one element in bytes, or a throw. Checks what later libhdf5 versions check.
  std::uint64_t datatype(const unsigned char* p, std::uint64_t size, const std::string& what,
                         int depth) {
    if (size < 8 || depth > 8) bad_(what + " is cut short");
    const unsigned cls = p[0] & 0x0f;
    const unsigned version = p[0] >> 4;
    const std::uint64_t bytes = little(p + 4, 4);
    if (version < 1 || version > 4) bad_(fmt::format("{} has version {}", what, version));
    if (cls > 10) bad_(fmt::format("{} has class {}", what, cls));
    if (cls == 0 || cls == 1) {  // fixed-point (integer), floating-point
      if (size < (cls == 0 ? 12 : 20)) bad_(what + " is cut short");
      const std::uint64_t offset = little(p + 8, 2);
      const std::uint64_t precision = little(p + 10, 2);
      if (bytes < 1 || bytes > 16) bad_(fmt::format("{} has {} bytes per number", what, bytes));
      if (precision < 1 || offset + precision > 8 * bytes) {
        bad_(fmt::format("{} has {} bits at bit {} in {} bytes", what, precision, offset, bytes));
      }
      if (cls == 1) {
        const unsigned sign = p[2];
        const unsigned exp_pos = p[12], exp_bits = p[13], man_pos = p[14], man_bits = p[15];
        if (sign >= precision || exp_bits < 1 || man_bits < 1 || exp_pos + exp_bits > precision ||
            man_pos + man_bits > precision || (sign >= man_pos && sign < man_pos + man_bits) ||
            (sign >= exp_pos && sign < exp_pos + exp_bits) ||
            (exp_pos < man_pos + man_bits && man_pos < exp_pos + exp_bits)) {
          bad_(what + " has impossible floating-point fields");
        }
      }
    } else if (cls == 3 && bytes < 1) {
      bad_(what + " is a string of 0 bytes");
    } else if (cls == 9) {  // variable length: the base type follows
      (void)datatype(p + 8, size - 8, what, depth + 1);
    } else if (cls == 8) {
      enumeration(p, size, what, version, depth);
    } else if (cls == 5) {  // opaque: a tag of the length in the class bits
      if (8 + std::uint64_t{p[1]} > size) bad_(what + ": its opaque tag runs past it");
    } else if (cls == 6 || cls == 10) {
      // Compound and array types nest member types whose names libhdf5 1.10 copies with
      // strdup wherever they end; no file nbody reads has them.
      bad_(fmt::format("{} has class {} ({}), which nbody does not read", what, cls,
                       cls == 6 ? "compound" : "array"));
    }
    return bytes;
  }

  /// An enumeration (h5py writes booleans as one): an integer base type, then each member's
  /// name, which libhdf5 1.10 copies with strdup (a fuzz regression: a variable-length type
  /// turned enumeration by one bit made it read past the header), then the values.
  void enumeration(const unsigned char* p, std::uint64_t size, const std::string& what,
                   unsigned version, int depth) {
    const std::uint64_t members = little(p + 1, 2);
    if (size < 20 || (p[8] & 0x0f) != 0) bad_(what + ": an enumeration without an integer base");
    const std::uint64_t base = datatype(p + 8, 12, what, depth + 1);
    std::uint64_t pos = 20;
    for (std::uint64_t m = 0; m < members; ++m) {
      const void* end = pos < size ? std::memchr(p + pos, 0, size - pos) : nullptr;
      if (end == nullptr) bad_(what + ": an enumeration's member name runs past it");
      const std::uint64_t length = static_cast<const unsigned char*>(end) - (p + pos) + 1;
      pos += version < 3 ? align8(length) : length;
    }
    if (pos > size || members > (size - pos) / base)
      bad_(what + ": an enumeration's values run past it");
  }

  void attribute(const unsigned char* p, std::uint64_t size) {
    if (size < 8) bad_("an attribute message is cut short");
    const unsigned version = p[0];
    if (version < 1 || version > 3) bad_(fmt::format("an attribute has version {}", version));
    const unsigned flags = version == 1 ? 0 : p[1];
    const std::uint64_t name_size = little(p + 2, 2);
    const std::uint64_t type_size = little(p + 4, 2);
    const std::uint64_t space_size = little(p + 6, 2);
    const auto pad = [&](std::uint64_t n) { return version == 1 ? align8(n) : n; };
    std::uint64_t pos = version == 3 ? 9 : 8;
    if (name_size < 1 || pad(name_size) > size - pos) bad_("an attribute's name runs past it");
    const unsigned char* name = p + pos;
    if (name[name_size - 1] != 0 || std::memchr(name, 0, name_size - 1) != nullptr) {
      bad_("an attribute's name has the wrong length");
    }
    const std::string what = fmt::format("attribute '{}'", reinterpret_cast<const char*>(name));
    pos += pad(name_size);
    if (pad(type_size) > size - pos) bad_(what + ": its datatype runs past it");
    const std::uint64_t element = (flags & 1) != 0 ? 0 : datatype(p + pos, type_size, what, 0);
    // A variable-length type (strings): each element points into a global heap collection.
    const bool variable = (flags & 1) == 0 && (p[pos] & 0x0f) == 9 && type_size >= 16;
    const std::uint64_t base_size = variable ? little(p + pos + 12, 4) : 0;
    pos += pad(type_size);
    if (pad(space_size) > size - pos) bad_(what + ": its dataspace runs past it");
    const std::uint64_t count = (flags & 2) != 0 ? 0 : dataspace(p + pos, space_size, what);
    pos += pad(space_size);
    if (element != 0 && count > (size - pos) / element) bad_(what + ": its data runs past it");
    if (variable && ((flags & 2) != 0 || element < 8 + sa_ || count > 1024)) {
      bad_(what + ": a variable-length value of a shape nbody does not read");
    }
    if (variable) {
      for (std::uint64_t i = 0; i < count; ++i) {
        const unsigned char* e = p + pos + i * element;
        const std::uint64_t length = little(e, 4);
        const std::uint64_t address = little(e + 4, sa_);
        // libhdf5 reads the heap object of any value whose address is not 0, the empty
        // ones included (into a buffer of 4 kB)
        if (address != 0) heap_object(address, little(e + 4 + sa_, 4), length * base_size, what);
      }
    }
  }

  /// Object `index` of the global heap collection at `address` holds exactly `bytes` (what
  /// libhdf5 writes; 1.10 copies the object's own size into a buffer sized by the value's
  /// length, so a larger object overruns it: a fuzz regression), and the collection parses
  /// to its end (libhdf5 1.10 only asserts it, then copies).
  void heap_object(std::uint64_t address, std::uint64_t index, std::uint64_t bytes,
                   const std::string& what) {
    const std::uint64_t header = 8 + ss_;  // "GCOL", version, reserved, collection size
    std::vector<unsigned char> head(header);
    if (!read(base_ + address, head.data(), header) || std::memcmp(head.data(), "GCOL", 4) != 0 ||
        head[4] != 1) {
      bad_(what + ": its value's heap collection is missing");
    }
    const std::uint64_t size = little(&head[8], ss_);
    if (size < header || size > kMaxChunkBytes)
      bad_(fmt::format("{}: a heap of {} bytes", what, size));
    std::vector<unsigned char> heap(size);
    if (!read(base_ + address, heap.data(), size))
      bad_(what + ": its value's heap lies past the end");
    const std::uint64_t object_header = 8 + ss_;
    bool found = false;
    std::uint64_t pos = header;
    while (pos < size) {
      if (size - pos < object_header) break;  // too small for an object: free space
      const std::uint64_t id = little(&heap[pos], 2);
      const std::uint64_t length = little(&heap[pos + 8], ss_);
      if (length > size) bad_(what + ": its value's heap is corrupt");  // align8 would wrap
      const std::uint64_t need = id == 0 ? length : object_header + align8(length);
      if (need == 0 || need > size - pos) bad_(what + ": its value's heap is corrupt");
      if (id == index && id != 0) found = length == bytes;
      pos += need;
    }
    if (!found) bad_(what + ": its value is not in its heap, or not of its length");
  }

  std::ifstream& in_;
  std::uint64_t base_, eof_;
  unsigned sa_, ss_;
  std::function<void(const std::string&)> bad_;
};

}  // namespace

void check_superblock(hid_t file, const std::string& path, const Group& group) {
  const Handle fcpl(H5Fget_create_plist(file), H5Pclose);
  hsize_t userblock = 0;
  if (!fcpl.valid() || H5Pget_userblock(fcpl.get(), &userblock) < 0) {
    group.fail(fmt::format("its creation properties cannot be read {}", kCorrupt));
  }
  std::array<unsigned char, 24> block{};
  std::ifstream in(path, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(userblock));
  in.read(reinterpret_cast<char*>(block.data()), block.size());
  if (in.gcount() != static_cast<std::streamsize>(block.size())) {
    group.fail(fmt::format("not a readable HDF5 file {}", kCorrupt));
  }
  // Versions 0 and 1: bytes 20..23 hold the status flags, of which only the low 3 bits
  // mean something (later versions carry a checksum that libhdf5 verifies).
  if (block[8] <= 1 && (little(&block[20], 4) & ~std::uint64_t{7}) != 0) {
    group.fail(
        fmt::format("the superblock's status flags are {:#x} {}", little(&block[20], 4), kCorrupt));
  }
}

void check_header(hid_t file, const std::string& path, haddr_t address, const std::string& what,
                  const Group& group) {
  const auto bad = [&](const std::string& problem) {
    group.fail(fmt::format("{}: {} {}", what, problem, kCorrupt));
  };
  const Handle fcpl(H5Fget_create_plist(file), H5Pclose);
  hsize_t userblock = 0;
  std::size_t sizeof_addr = 0, sizeof_size = 0;
  if (!fcpl.valid() || H5Pget_userblock(fcpl.get(), &userblock) < 0 ||
      H5Pget_sizes(fcpl.get(), &sizeof_addr, &sizeof_size) < 0 || sizeof_addr < 2 ||
      sizeof_addr > 8 || sizeof_size < 2 || sizeof_size > 8) {
    bad("the file's creation properties cannot be read");
  }
  std::error_code ec;
  const std::uint64_t eof = std::filesystem::file_size(path, ec);
  std::ifstream in(path, std::ios::binary);
  if (ec || !in) bad("cannot read the file's bytes");
  HeaderWalk(in, userblock, eof, static_cast<unsigned>(sizeof_addr),
             static_cast<unsigned>(sizeof_size), bad)
      .walk(address);
}

}  // namespace nbody::hdf5::detail
