#include "CompressedCore.h"

#include "Refusal.h"

#include <fcntl.h>
#include <lz4frame.h>
#include <lzma.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

namespace dscope::cli {

namespace {

enum class Compression { None, Zstd, Lz4, Xz };

constexpr size_t kChunk = 1u << 20;
// What a compressed core may expand to: 256 times its size, plus 1 GiB. Real cores compress 4 to
// 6 times (zstd -1 and -19 on the samples' kernel cores and a PyTorch process's); zeros compress
// 32 000 times (zstd's RLE blocks), so a few hundred KiB can say 10 GB: a file that expands past
// this is refused before it fills the disk. Who has such a core decompresses it (zstd -d) and
// names the plain file.
constexpr uint64_t kMaxExpansion = 256;
constexpr uint64_t kExpansionAllowance = uint64_t{1} << 30;
// The decoders' own memory: a zstd window of at most 2^27 bytes (zstd's default limit, made
// explicit: --long=31 frames are refused), an xz dictionary of at most 256 MiB (xz -9 uses 64 MiB;
// a header may declare 4 GiB), LZ4 blocks of at most 4 MiB (the format's limit).
constexpr int kZstdWindowLogMax = 27;
constexpr uint64_t kXzMemoryLimit = uint64_t{256} << 20;
// Disk (or memory) a decompression leaves free for everything else.
constexpr uint64_t kFreeReserve = uint64_t{256} << 20;

std::string sizeText(uint64_t bytes) {
  const char* unit = "KiB";
  double value = static_cast<double>(bytes) / 1024.0;
  for (const char* next : {"MiB", "GiB", "TiB"}) {
    if (value < 1024.0) break;
    value /= 1024.0;
    unit = next;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", value, unit);
  return text;
}

// What the machine can take: the free space of the file system the core is decompressed into (or,
// for memory, the free memory), less a reserve.
uint64_t roomIn(int fd) {
  uint64_t free = 0;
  struct statvfs fs{};
  struct stat st{};
  if (::fstat(fd, &st) == 0 && st.st_nlink == 0 && ::fstatvfs(fd, &fs) == 0 && fs.f_frsize > 0 && fs.f_blocks > 0)
    free = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
  else
    free = static_cast<uint64_t>(::sysconf(_SC_AVPHYS_PAGES)) * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  return free > kFreeReserve ? free - kFreeReserve : 0;
}

Compression compressionOf(int fd) {
  std::array<unsigned char, 6> magic{};
  if (::pread(fd, magic.data(), magic.size(), 0) != static_cast<ssize_t>(magic.size())) return Compression::None;
  auto starts = [&](std::initializer_list<unsigned char> bytes) {
    return std::equal(bytes.begin(), bytes.end(), magic.begin());
  };
  if (starts({0x28, 0xb5, 0x2f, 0xfd})) return Compression::Zstd;
  if (starts({0x04, 0x22, 0x4d, 0x18})) return Compression::Lz4;  // a frame (not the legacy format)
  if (starts({0xfd, '7', 'z', 'X', 'Z', 0x00})) return Compression::Xz;
  return Compression::None;
}

const char* nameOf(Compression c) {
  switch (c) {
    case Compression::Zstd: return "zstd";
    case Compression::Lz4: return "LZ4";
    case Compression::Xz: return "xz";
    case Compression::None: break;
  }
  return "";
}

// Where the decompressed core goes: a file no name leads to, gone when the last descriptor closes.
int unnamedFile(std::string& where) {
  const char* dir = std::getenv("TMPDIR");
  where = dir && *dir ? dir : "/var/tmp";
  int fd = ::open(where.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) {  // a file system without O_TMPFILE: memory
    where = "memory";
    fd = ::memfd_create("dscope-core", MFD_CLOEXEC);
  }
  return fd;
}

// Decompresses `in` into `out`, both positioned at their start; throws with the reason.
class Decompressor {
 public:
  Decompressor(int in, int out, const std::string& path, Compression kind, const std::string& where)
      : in_(in), out_(out), path_(path), kind_(kind), where_(where), input_(kChunk), output_(kChunk) {
    struct stat st{};
    compressed_ = ::fstat(in, &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
    room_ = roomIn(out);
  }

  void run() {
    switch (kind_) {
      case Compression::Zstd: return zstd();
      case Compression::Lz4: return lz4();
      case Compression::Xz: return xz();
      case Compression::None: return;
    }
  }

 private:
  [[noreturn]] void corrupt(const std::string& why) const {
    refuse("cannot decompress " + path_ + " (" + nameOf(kind_) + "): " + why);
  }
  [[noreturn]] void cut() const { corrupt("the file ends inside its compressed data (a cut or partial copy)"); }

  // Refuses a decompressed size (claimed by a frame header, or written so far) that no core of the
  // compressed file's size has, or that the machine has no room for.
  void checkSize(uint64_t size, bool claimed) const {
    const uint64_t plausible = compressed_ * kMaxExpansion + kExpansionAllowance;
    const uint64_t limit = std::min(plausible, room_);
    if (size <= limit) return;
    const std::string expands =
        claimed ? "it says it expands to " + sizeText(size) : "it expands to more than " + sizeText(limit);
    if (limit == plausible)
      corrupt(expands + ", more than a core compressed into " + sizeText(compressed_) +
              " holds; decompress it yourself to read it");
    corrupt(expands + ", more than the " + sizeText(room_) + " that " + where_ +
            " can spare (TMPDIR names where dscope decompresses)");
  }

  size_t readInput() {
    for (;;) {
      const ssize_t n = ::read(in_, input_.data(), input_.size());
      if (n >= 0) return static_cast<size_t>(n);
      if (errno != EINTR) refuse("cannot read " + path_ + ": " + std::strerror(errno));
    }
  }

  void write(const void* data, size_t size) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    written_ += size;
    if (size > 0) checkSize(written_, false);
    while (size > 0) {
      const ssize_t n = ::write(out_, bytes, size);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EFBIG)  // SIGXFSZ is ignored (main): the write fails instead
        refuse("cannot decompress " + path_ + " into " + where_ + ": the file size limit (ulimit -f) is smaller than the core");
      if (n <= 0) refuse("no room to decompress " + path_ + " in " + where_ + ": " + std::strerror(errno));
      bytes += n;
      size -= static_cast<size_t>(n);
    }
  }

  void zstd() {
    std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> ctx(ZSTD_createDCtx(), &ZSTD_freeDCtx);
    if (!ctx) refuse("out of memory decompressing " + path_);
    ZSTD_DCtx_setParameter(ctx.get(), ZSTD_d_windowLogMax, kZstdWindowLogMax);
    size_t pending = 0;  // nonzero: the current frame is not complete
    for (size_t n = readInput(), first = 1; n > 0; n = readInput(), first = 0) {
      if (first) {
        const unsigned long long claimed = ZSTD_getFrameContentSize(input_.data(), n);
        if (claimed != ZSTD_CONTENTSIZE_UNKNOWN && claimed != ZSTD_CONTENTSIZE_ERROR) checkSize(claimed, true);
      }
      ZSTD_inBuffer in{input_.data(), n, 0};
      while (in.pos < in.size) {
        ZSTD_outBuffer out{output_.data(), output_.size(), 0};
        pending = ZSTD_decompressStream(ctx.get(), &out, &in);
        if (ZSTD_getErrorCode(pending) == ZSTD_error_frameParameter_windowTooLarge)
          corrupt("its frames need a window of more than " + sizeText(uint64_t{1} << kZstdWindowLogMax) +
                  " (zstd --long=31); decompress it yourself to read it");
        if (ZSTD_isError(pending)) corrupt(ZSTD_getErrorName(pending));
        write(output_.data(), out.pos);
      }
    }
    // All input is in: what the decoder still holds comes out until it has none.
    for (size_t produced = 1; pending != 0 && produced > 0;) {
      ZSTD_inBuffer in{nullptr, 0, 0};
      ZSTD_outBuffer out{output_.data(), output_.size(), 0};
      pending = ZSTD_decompressStream(ctx.get(), &out, &in);
      if (ZSTD_isError(pending)) corrupt(ZSTD_getErrorName(pending));
      write(output_.data(), produced = out.pos);
    }
    if (pending != 0) cut();
  }

  void lz4() {
    LZ4F_dctx* raw = nullptr;
    if (LZ4F_isError(LZ4F_createDecompressionContext(&raw, LZ4F_VERSION))) refuse("out of memory decompressing " + path_);
    std::unique_ptr<LZ4F_dctx, LZ4F_errorCode_t (*)(LZ4F_dctx*)> ctx(raw, &LZ4F_freeDecompressionContext);
    size_t pending = 0;  // nonzero: the current frame is not complete
    auto step = [&](const unsigned char* src, size_t& src_size) {
      size_t dst_size = output_.size();
      pending = LZ4F_decompress(ctx.get(), output_.data(), &dst_size, src, &src_size, nullptr);
      if (LZ4F_isError(pending)) corrupt(LZ4F_getErrorName(pending));
      write(output_.data(), dst_size);
      return dst_size;
    };
    for (size_t n = readInput(), first = 1; n > 0; n = readInput(), first = 0) {
      size_t at = 0;
      if (first) {  // the frame's header: its content size, where it says one
        LZ4F_frameInfo_t info{};
        size_t used = n;
        const size_t rc = LZ4F_getFrameInfo(ctx.get(), &info, input_.data(), &used);
        if (LZ4F_isError(rc)) corrupt(LZ4F_getErrorName(rc));
        if (info.contentSize > 0) checkSize(info.contentSize, true);
        at = used;
      }
      for (; at < n;) {
        size_t used = n - at;
        step(input_.data() + at, used);
        at += used;
      }
    }
    for (size_t produced = 1; pending != 0 && produced > 0;) {
      size_t none = 0;
      produced = step(nullptr, none);
    }
    if (pending != 0) cut();
  }

  void xz() {
    lzma_stream stream = LZMA_STREAM_INIT;
    if (lzma_stream_decoder(&stream, kXzMemoryLimit, LZMA_CONCATENATED) != LZMA_OK)
      refuse("out of memory decompressing " + path_);
    std::unique_ptr<lzma_stream, void (*)(lzma_stream*)> guard(&stream, &lzma_end);
    lzma_action action = LZMA_RUN;
    for (;;) {
      if (stream.avail_in == 0 && action == LZMA_RUN) {
        stream.next_in = input_.data();
        stream.avail_in = readInput();
        if (stream.avail_in == 0) action = LZMA_FINISH;
      }
      stream.next_out = output_.data();
      stream.avail_out = output_.size();
      const lzma_ret ret = lzma_code(&stream, action);
      write(output_.data(), output_.size() - stream.avail_out);
      if (ret == LZMA_STREAM_END) return;
      if (ret == LZMA_BUF_ERROR) cut();  // LZMA_FINISH with the stream not ended
      if (ret == LZMA_MEM_ERROR) refuse("out of memory decompressing " + path_);
      if (ret == LZMA_MEMLIMIT_ERROR)
        corrupt("its dictionary needs " + sizeText(lzma_memusage(&stream)) + " of memory, more than the " +
                sizeText(kXzMemoryLimit) + " dscope gives a decoder (xz -9 needs 65 MiB); decompress it yourself to read it");
      if (ret != LZMA_OK) corrupt(ret == LZMA_FORMAT_ERROR ? "not an xz stream" : "corrupt compressed data");
    }
  }

  int in_, out_;
  const std::string& path_;
  Compression kind_;
  const std::string& where_;
  std::vector<unsigned char> input_, output_;
  uint64_t written_ = 0;
  uint64_t compressed_ = 0;  // the compressed file's size
  uint64_t room_ = 0;        // the most the machine can take
};

// What a file that is not a regular file is, for the line that refuses it.
std::string fileKind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a pipe (FIFO)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISDIR(mode)) return "a directory";
  return "no regular file";
}

}  // namespace

int openCoreBytes(const std::string& path) {
  // O_NONBLOCK: a FIFO opens at once (no waiting for a writer), to be refused below.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) refuse("cannot open " + path + ": " + std::strerror(errno));
  struct stat st{};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    refuse(path + " is " + fileKind(st.st_mode) +
           ", not a file: dscope reads a core from a file it can seek (save a piped core to a file first)");
  }
  const Compression kind = compressionOf(fd);
  if (kind == Compression::None) return fd;
  std::string where;
  const int out = unnamedFile(where);
  if (out < 0) {
    ::close(fd);
    refuse("cannot make a file to decompress " + path + " into: " + std::strerror(errno));
  }
  try {
    Decompressor(fd, out, path, kind, where).run();
  } catch (...) {
    ::close(fd);
    ::close(out);
    throw;
  }
  ::close(fd);
  return out;
}

}  // namespace dscope::cli
