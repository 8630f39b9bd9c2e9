// The CUDA caching allocator's bookkeeping, over host memory (no GPU needed): rounding, reuse
// within a stream only, best fit, empty_cache, statistics, and the out-of-memory retry. Expected
// values follow from the rules in CachingAllocator.h.
#include <doctest/doctest.h>

#include <cstdlib>
#include <set>

#include "dscope/cuda/CachingAllocator.h"

using dscope::cuda::CachingAllocator;
using dscope::cuda::OutOfMemoryError;

namespace {

constexpr size_t KiB = 1024, MiB = 1024 * 1024;

// Host memory with a capacity, counting what it hands out (cudaMalloc's stand-in).
struct HostSource final : dscope::cuda::RawMemorySource {
  size_t capacity = SIZE_MAX;
  size_t in_use = 0;
  int allocs = 0, frees = 0, syncs = 0;
  std::set<void*> live;
  std::unordered_map<void*, size_t> sizes;

  void* allocate(size_t nbytes) override {
    if (nbytes > capacity - in_use) throw OutOfMemoryError("host source: out of memory");
    void* p = std::malloc(nbytes);
    REQUIRE(p);
    live.insert(p);
    sizes[p] = nbytes;
    in_use += nbytes;
    ++allocs;
    return p;
  }
  void free(void* p) override {
    REQUIRE(live.count(p) == 1);
    live.erase(p);
    in_use -= sizes[p];
    ++frees;
    std::free(p);
  }
  void synchronize() override { ++syncs; }
};

constexpr dscope::cuda::StreamId S1 = 1, S2 = 2;

}  // namespace

TEST_SUITE_BEGIN("host");

TEST_CASE("requests round up to 512 bytes up to 1 MiB, to 2 MiB above") {
  CHECK(CachingAllocator::roundSize(1) == 512);
  CHECK(CachingAllocator::roundSize(512) == 512);
  CHECK(CachingAllocator::roundSize(513) == 1024);
  CHECK(CachingAllocator::roundSize(1000) == 1024);
  CHECK(CachingAllocator::roundSize(1 * MiB) == 1 * MiB);
  CHECK(CachingAllocator::roundSize(1 * MiB + 1) == 2 * MiB);
  CHECK(CachingAllocator::roundSize(5 * MiB) == 6 * MiB);
  CHECK_THROWS_AS(CachingAllocator::roundSize(SIZE_MAX - 10), OutOfMemoryError);
}

TEST_CASE("a freed block is reused by the next request of the same size on the same stream") {
  HostSource source;
  CachingAllocator alloc(source);
  void* a = alloc.allocate(1000, S1);
  auto st = alloc.stats();
  CHECK(st.allocated_bytes == 1024);
  CHECK(st.reserved_bytes == 1024);
  CHECK(source.allocs == 1);
  CHECK(alloc.blockSize(a) == 1024);

  alloc.free(a);
  st = alloc.stats();
  CHECK(st.allocated_bytes == 0);
  CHECK(st.reserved_bytes == 1024);  // cached, not returned
  CHECK(source.frees == 0);

  void* b = alloc.allocate(1000, S1);
  CHECK(b == a);
  st = alloc.stats();
  CHECK(st.reserved_bytes == 1024);
  CHECK(st.num_cache_hits == 1);
  CHECK(st.num_allocs == 2);
  CHECK(source.allocs == 1);
  alloc.free(b);
}

TEST_CASE("a block freed on one stream is not reused for another stream") {
  HostSource source;
  CachingAllocator alloc(source);
  void* a = alloc.allocate(4 * KiB, S1);
  alloc.free(a);
  void* b = alloc.allocate(4 * KiB, S2);
  CHECK(b != a);
  CHECK(source.allocs == 2);
  CHECK(alloc.stats().reserved_bytes == 8 * KiB);
  void* c = alloc.allocate(4 * KiB, S1);  // S1's cached block
  CHECK(c == a);
  CHECK(source.allocs == 2);
  alloc.free(b);
  alloc.free(c);
}

TEST_CASE("best fit: the smallest cached block that fits, at most twice the request") {
  HostSource source;
  CachingAllocator alloc(source);
  void* small = alloc.allocate(1 * KiB, S1);
  void* big = alloc.allocate(4 * KiB, S1);
  alloc.free(small);
  alloc.free(big);

  void* p = alloc.allocate(900, S1);  // rounds to 1 KiB: the 1 KiB block, not the 4 KiB one
  CHECK(p == small);
  void* q = alloc.allocate(3 * KiB, S1);  // 4 KiB <= 2 x 3 KiB: reused
  CHECK(q == big);
  alloc.free(q);
  void* r = alloc.allocate(1536, S1);  // 4 KiB > 2 x 1.5 KiB: a new block
  CHECK(r != big);
  CHECK(alloc.blockSize(r) == 1536);
  CHECK(source.allocs == 3);
  alloc.free(p);
  alloc.free(r);
}

TEST_CASE("empty_cache returns the cached blocks to the source and keeps blocks in use") {
  HostSource source;
  CachingAllocator alloc(source);
  void* kept = alloc.allocate(2 * KiB, S1);
  void* freed1 = alloc.allocate(1 * KiB, S1);
  void* freed2 = alloc.allocate(3 * MiB, S2);
  alloc.free(freed1);
  alloc.free(freed2);
  CHECK(alloc.stats().reserved_bytes == 2 * KiB + 1 * KiB + 4 * MiB);

  alloc.emptyCache();
  auto st = alloc.stats();
  CHECK(st.reserved_bytes == 2 * KiB);
  CHECK(st.allocated_bytes == 2 * KiB);
  CHECK(st.num_source_frees == 2);
  CHECK(source.frees == 2);
  CHECK(source.syncs == 1);  // once, before the blocks go back
  CHECK(source.live == std::set<void*>{kept});

  alloc.emptyCache();  // nothing cached: no synchronization
  CHECK(source.syncs == 1);
  alloc.free(kept);
}

TEST_CASE("peaks follow the highest allocated and reserved totals until reset") {
  HostSource source;
  CachingAllocator alloc(source);
  void* a = alloc.allocate(512, S1);
  void* b = alloc.allocate(1024, S1);
  void* c = alloc.allocate(2048, S1);
  alloc.free(a);
  alloc.free(b);
  alloc.free(c);
  auto st = alloc.stats();
  CHECK(st.allocated_bytes == 0);
  CHECK(st.peak_allocated_bytes == 3584);
  CHECK(st.peak_reserved_bytes == 3584);
  alloc.emptyCache();
  alloc.resetPeakStats();
  st = alloc.stats();
  CHECK(st.peak_allocated_bytes == 0);
  CHECK(st.peak_reserved_bytes == 0);
}

TEST_CASE("out of memory: the cache is released and the request retried once") {
  HostSource source;
  source.capacity = 8 * MiB;
  CachingAllocator alloc(source);
  void* a = alloc.allocate(6 * MiB, S1);
  alloc.free(a);  // cached: 6 MiB of the 8 held
  void* b = alloc.allocate(4 * MiB, S2);  // another stream: needs the source, which is full until the cache goes
  CHECK(b != nullptr);
  auto st = alloc.stats();
  CHECK(st.num_ooms == 1);
  CHECK(st.reserved_bytes == 4 * MiB);
  CHECK(source.frees == 1);

  // Nothing left to release: the error says what was asked and what is held.
  try {
    alloc.allocate(6 * MiB, S2);
    FAIL("expected OutOfMemoryError");
  } catch (const OutOfMemoryError& e) {
    CHECK(std::string(e.what()).find("host source: out of memory (tried to allocate 6.00 MiB; 4.00 MiB allocated, "
                                     "4.00 MiB reserved by the caching allocator)") != std::string::npos);
  }
  CHECK(alloc.stats().num_ooms == 2);
  alloc.free(b);
}

TEST_CASE("zero bytes is no block, and freeing an unknown pointer is an error") {
  HostSource source;
  CachingAllocator alloc(source);
  CHECK(alloc.allocate(0, S1) == nullptr);
  CHECK(alloc.stats().num_allocs == 0);
  alloc.free(nullptr);  // ignored, like std::free
  int not_a_block = 0;
  CHECK_THROWS_WITH_AS(alloc.free(&not_a_block), doctest::Contains("which is not a block in use"), dscope::Error);
  void* a = alloc.allocate(10, S1);
  alloc.free(a);
  CHECK_THROWS_AS(alloc.free(a), dscope::Error);  // freed twice
}

TEST_CASE("destroying the allocator returns its cached blocks") {
  HostSource source;
  {
    CachingAllocator alloc(source);
    alloc.free(alloc.allocate(100, S1));
    alloc.free(alloc.allocate(100 * KiB, S2));
  }
  CHECK(source.allocs == 2);
  CHECK(source.live.empty());
}

TEST_CASE("sizes in messages") {
  CHECK(dscope::cuda::formatBytes(512) == "512 B");
  CHECK(dscope::cuda::formatBytes(1536) == "1.50 KiB");
  CHECK(dscope::cuda::formatBytes(64 * MiB) == "64.00 MiB");
}

TEST_SUITE_END();
