// The bookkeeping of the CUDA caching allocator (PyTorch's CUDACachingAllocator, reduced), kept
// apart from CUDA so that a test can run it over host memory.
//
// Rules:
//  * A request is rounded up: to a multiple of 512 bytes up to 1 MiB, to a multiple of 2 MiB
//    above (so that similar sizes share blocks).
//  * A freed block is cached, not returned: it serves a later request of the SAME stream, the
//    smallest cached block that fits and is at most twice the rounded request (a big block is
//    not tied up by a small tensor). Reuse on the same stream needs no synchronization: the
//    stream runs the new user's work after the old one's (stream-ordered reuse).
//  * Otherwise a new block of the rounded size comes from the raw source (cudaMalloc). When the
//    source is out of memory, the cache is released and the request tried once more.
//  * emptyCache() returns every cached block to the source; blocks in use stay.
// Blocks are never split or merged (PyTorch splits large segments; this is the simple form).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>

#include "dscope/Error.h"

namespace dscope::cuda {

// A stream as the allocator sees it (a cudaStream_t's value; 0 is the default stream).
using StreamId = uintptr_t;

// Thrown by a RawMemorySource when it has no memory left (the caching allocator then releases
// its cache and retries once).
class OutOfMemoryError : public Error {
 public:
  using Error::Error;
};

// Where blocks come from and go back to: cudaMalloc/cudaFree on the GPU, host memory in tests.
struct RawMemorySource {
  virtual ~RawMemorySource() = default;
  // Throws OutOfMemoryError when out of memory, dscope::Error on any other failure.
  virtual void* allocate(size_t nbytes) = 0;
  virtual void free(void* ptr) = 0;
  // Called once before cached blocks are freed: work queued on them must be done.
  virtual void synchronize() {}
};

struct MemoryStats {
  size_t allocated_bytes = 0;       // in blocks handed out (rounded sizes)
  size_t reserved_bytes = 0;        // in blocks held from the source: handed out + cached
  size_t peak_allocated_bytes = 0;  // since construction or resetPeakStats()
  size_t peak_reserved_bytes = 0;
  uint64_t num_allocs = 0;          // allocate() calls that returned a block
  uint64_t num_cache_hits = 0;      // ... of which were served from the cache
  uint64_t num_source_allocs = 0;   // blocks taken from the source (cudaMalloc calls that succeeded)
  uint64_t num_source_frees = 0;    // blocks given back to the source
  uint64_t num_ooms = 0;            // source out-of-memory errors (each retried after releasing the cache)
};

class CachingAllocator {
 public:
  static constexpr size_t kMinBlockSize = 512;          // granularity of small requests
  static constexpr size_t kSmallSize = 1 << 20;         // requests up to 1 MiB are small
  static constexpr size_t kLargeRounding = 2 << 20;     // large requests round to 2 MiB

  explicit CachingAllocator(RawMemorySource& source) : source_(source) {}
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;
  ~CachingAllocator();  // returns the cached blocks to the source (blocks in use are left alone)

  static size_t roundSize(size_t nbytes);

  // A block of at least nbytes for work on `stream`; nullptr for 0 bytes. Throws
  // OutOfMemoryError (with the statistics) when the source has nothing left even after the
  // cache is released.
  void* allocate(size_t nbytes, StreamId stream);
  // Caches the block for its stream. Throws dscope::Error for a pointer it did not hand out.
  void free(void* ptr);
  void emptyCache();

  MemoryStats stats() const;
  void resetPeakStats();
  // The size of the block behind ptr (0 when ptr is not a block in use).
  size_t blockSize(void* ptr) const;

 private:
  struct Block {
    void* ptr;
    size_t size;
    StreamId stream;
  };
  // Cached blocks ordered by (stream, size, address): lower_bound finds the best fit.
  struct ByStreamSizeAddress {
    bool operator()(const Block& a, const Block& b) const {
      if (a.stream != b.stream) return a.stream < b.stream;
      if (a.size != b.size) return a.size < b.size;
      return reinterpret_cast<uintptr_t>(a.ptr) < reinterpret_cast<uintptr_t>(b.ptr);
    }
  };

  void* allocateFromSource(size_t size);  // mutex held
  void releaseCached();                   // mutex held
  void noteAllocated(size_t size);        // mutex held

  RawMemorySource& source_;
  mutable std::mutex mutex_;
  std::set<Block, ByStreamSizeAddress> cached_;
  std::unordered_map<void*, Block> in_use_;
  MemoryStats stats_;
};

// "1.50 MiB", "512 B": sizes in the allocator's messages.
std::string formatBytes(size_t nbytes);

}  // namespace dscope::cuda
