#include "dscope/cuda/CachingAllocator.h"

#include <algorithm>
#include <cstdio>
#include <limits>

namespace dscope::cuda {

std::string formatBytes(size_t nbytes) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  if (nbytes < 1024) return std::to_string(nbytes) + " B";
  double v = static_cast<double>(nbytes);
  size_t u = 0;
  while (v >= 1024 && u + 1 < std::size(units)) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f %s", v, units[u]);
  return buf;
}

size_t CachingAllocator::roundSize(size_t nbytes) {
  if (nbytes <= kMinBlockSize) return kMinBlockSize;
  if (nbytes <= kSmallSize) return (nbytes + kMinBlockSize - 1) / kMinBlockSize * kMinBlockSize;
  if (nbytes > std::numeric_limits<size_t>::max() - kLargeRounding)
    throw OutOfMemoryError("cannot allocate " + std::to_string(nbytes) + " bytes");
  return (nbytes + kLargeRounding - 1) / kLargeRounding * kLargeRounding;
}

CachingAllocator::~CachingAllocator() {
  std::lock_guard lock(mutex_);
  try {
    releaseCached();
  } catch (const std::exception&) {
    // Nothing to report to at destruction; the source keeps what it could not free.
  }
}

void* CachingAllocator::allocate(size_t nbytes, StreamId stream) {
  if (nbytes == 0) return nullptr;
  const size_t size = roundSize(nbytes);
  std::lock_guard lock(mutex_);
  Block block{nullptr, size, stream};
  // The smallest cached block of this stream with at least `size` bytes.
  auto it = cached_.lower_bound(Block{nullptr, size, stream});
  if (it != cached_.end() && it->stream == stream && it->size - size <= size) {
    block = *it;
    cached_.erase(it);
    ++stats_.num_cache_hits;
  } else {
    block.ptr = allocateFromSource(size);
  }
  in_use_.emplace(block.ptr, block);
  noteAllocated(block.size);
  return block.ptr;
}

void* CachingAllocator::allocateFromSource(size_t size) {
  void* ptr = nullptr;
  for (int attempt = 0;; ++attempt) {
    try {
      ptr = source_.allocate(size);
      break;
    } catch (const OutOfMemoryError& e) {
      ++stats_.num_ooms;
      if (attempt > 0 || cached_.empty())
        throw OutOfMemoryError(std::string(e.what()) + " (tried to allocate " + formatBytes(size) + "; " +
                               formatBytes(stats_.allocated_bytes) + " allocated, " +
                               formatBytes(stats_.reserved_bytes) + " reserved by the caching allocator)");
      releaseCached();  // then try once more
    }
  }
  DSCOPE_CHECK(ptr, "CUDA caching allocator: the memory source returned no memory for " + formatBytes(size));
  ++stats_.num_source_allocs;
  stats_.reserved_bytes += size;
  stats_.peak_reserved_bytes = std::max(stats_.peak_reserved_bytes, stats_.reserved_bytes);
  return ptr;
}

void CachingAllocator::noteAllocated(size_t size) {
  ++stats_.num_allocs;
  stats_.allocated_bytes += size;
  stats_.peak_allocated_bytes = std::max(stats_.peak_allocated_bytes, stats_.allocated_bytes);
}

void CachingAllocator::free(void* ptr) {
  if (!ptr) return;
  std::lock_guard lock(mutex_);
  auto it = in_use_.find(ptr);
  if (it == in_use_.end()) {
    char addr[32];
    std::snprintf(addr, sizeof addr, "%p", ptr);
    throw Error(std::string("CUDA caching allocator: free of ") + addr + ", which is not a block in use");
  }
  const Block block = it->second;
  in_use_.erase(it);
  stats_.allocated_bytes -= block.size;
  cached_.insert(block);
}

void CachingAllocator::releaseCached() {
  if (cached_.empty()) return;
  source_.synchronize();
  while (!cached_.empty()) {
    const Block block = *cached_.begin();
    cached_.erase(cached_.begin());
    stats_.reserved_bytes -= block.size;
    ++stats_.num_source_frees;
    source_.free(block.ptr);
  }
}

void CachingAllocator::emptyCache() {
  std::lock_guard lock(mutex_);
  releaseCached();
}

MemoryStats CachingAllocator::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void CachingAllocator::resetPeakStats() {
  std::lock_guard lock(mutex_);
  stats_.peak_allocated_bytes = stats_.allocated_bytes;
  stats_.peak_reserved_bytes = stats_.reserved_bytes;
}

size_t CachingAllocator::blockSize(void* ptr) const {
  std::lock_guard lock(mutex_);
  auto it = in_use_.find(ptr);
  return it == in_use_.end() ? 0 : it->second.size;
}

}  // namespace dscope::cuda
