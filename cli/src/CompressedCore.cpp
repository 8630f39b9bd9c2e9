#include "CompressedCore.h"

#include "Refusal.h"

#include <fcntl.h>
#include <lz4frame.h>
#include <lzma.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

namespace dscope::cli {

namespace {

enum class Compression { None, Zstd, Lz4, Xz };

constexpr size_t kChunk = 1u << 20;

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
      : in_(in), out_(out), path_(path), kind_(kind), where_(where), input_(kChunk), output_(kChunk) {}

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

  size_t readInput() {
    for (;;) {
      const ssize_t n = ::read(in_, input_.data(), input_.size());
      if (n >= 0) return static_cast<size_t>(n);
      if (errno != EINTR) refuse("cannot read " + path_ + ": " + std::strerror(errno));
    }
  }

  void write(const void* data, size_t size) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    while (size > 0) {
      const ssize_t n = ::write(out_, bytes, size);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) refuse("no room to decompress " + path_ + " in " + where_ + ": " + std::strerror(errno));
      bytes += n;
      size -= static_cast<size_t>(n);
    }
  }

  void zstd() {
    std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> ctx(ZSTD_createDCtx(), &ZSTD_freeDCtx);
    if (!ctx) refuse("out of memory decompressing " + path_);
    size_t pending = 0;  // nonzero: the current frame is not complete
    for (size_t n = readInput(); n > 0; n = readInput()) {
      ZSTD_inBuffer in{input_.data(), n, 0};
      while (in.pos < in.size) {
        ZSTD_outBuffer out{output_.data(), output_.size(), 0};
        pending = ZSTD_decompressStream(ctx.get(), &out, &in);
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
    for (size_t n = readInput(); n > 0; n = readInput()) {
      for (size_t at = 0; at < n;) {
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
    if (lzma_stream_decoder(&stream, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK)
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
      if (ret != LZMA_OK) corrupt(ret == LZMA_FORMAT_ERROR ? "not an xz stream" : "corrupt compressed data");
    }
  }

  int in_, out_;
  const std::string& path_;
  Compression kind_;
  const std::string& where_;
  std::vector<unsigned char> input_, output_;
};

}  // namespace

int openCoreBytes(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) refuse("cannot open " + path + ": " + std::strerror(errno));
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
