// How libdscope_inspect reads a target: whole pages, once per command. A page that cannot be read
// whole (the edge of a mapping) falls back to the exact read; nothing read survives the command.
// The target here serves two page-aligned pages of this test's memory laid out as the runtime's
// objects, and counts the calls.
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "dscope/DebugInterface.h"
#include "dscope/debug/Layout.h"
#include "dscope/inspect.h"
#include "test_util.h"

using namespace dscope;
using testing::breakStop;

namespace {

constexpr size_t kPage = 4096;

// Page 0: a copy of the descriptor at 0, an operator entry's name pointer at 2048, its name at 3072.
// Four pages, aligned as the block a missed page is read with (16 KiB). On the heap: a static
// object so aligned gives the test program a bss-only PT_LOAD at file offset 0, which the test
// target's module list (test_util.h) takes for the program's first segment.
constexpr size_t kBlock = 4 * kPage;

struct PagedMemory {
  std::unique_ptr<unsigned char, decltype(&std::free)> block{static_cast<unsigned char*>(std::aligned_alloc(kBlock, kBlock)),
                                                             &std::free};
  unsigned char* bytes = static_cast<unsigned char*>(std::memset(block.get(), 0, kBlock));
  bool whole_pages_fail = false;  // as at the end of a mapping: only smaller reads succeed
  int calls = 0;
  dscope_target t{};

  PagedMemory() {
    static_assert(sizeof dscope_debug_descriptor <= 2048);
    std::memcpy(bytes, &dscope_debug_descriptor, sizeof dscope_debug_descriptor);
    const char* name = reinterpret_cast<const char*>(bytes + 3072);
    std::memcpy(bytes + 2048 + debug::Layout::OperatorEntry_full_name, &name, sizeof name);
    setName("fake::op");
    t.ctx = this;
    t.read_memory = [](void* ctx, uint64_t addr, void* out, uint64_t size) {
      auto* self = static_cast<PagedMemory*>(ctx);
      ++self->calls;
      auto base = reinterpret_cast<uint64_t>(self->bytes);
      if (addr < base || addr + size > base + kBlock) return 1;
      if (self->whole_pages_fail && size >= kPage) return 1;
      std::memcpy(out, reinterpret_cast<const void*>(addr), size);
      return 0;
    };
    t.find_symbol = [](void* ctx, const char* name, uint64_t* addr) {
      if (std::strcmp(name, "dscope_debug_break_hook") == 0) {
        *addr = reinterpret_cast<uint64_t>(&dscope_debug_break_hook);
        return 0;
      }
      if (std::strcmp(name, "dscope_debug_descriptor") != 0) return 1;
      *addr = reinterpret_cast<uint64_t>(static_cast<PagedMemory*>(ctx)->bytes);
      return 0;
    };
  }
  void setName(const char* name) { std::strcpy(reinterpret_cast<char*>(bytes + 3072), name); }
  std::string describe() {
    return testing::breakStopLine(&t, bytes + 2048, 0x10001, static_cast<uint64_t>(DispatchKey::CPU));
  }
};

}  // namespace

TEST_SUITE("remote") {
  TEST_CASE("reads: the descriptor and an operator name in one page cost one read") {
    static PagedMemory m;
    m.calls = 0;
    CHECK(m.describe() == "dispatch-break: fake::op at CPU (keyset DispatchKeySet(CPU))\n");
    CHECK(m.calls == 1);  // descriptor, name pointer and name: all in page 0, read with its block
  }

  TEST_CASE("reads: a page that cannot be read whole falls back to exact reads") {
    static PagedMemory m;
    m.whole_pages_fail = true;
    m.calls = 0;
    CHECK(m.describe() == "dispatch-break: fake::op at CPU (keyset DispatchKeySet(CPU))\n");
    CHECK(m.calls == 7);  // the failed block and page reads, then descriptor, name pointer, name, and the kernel table (2)
  }

  TEST_CASE("reads: nothing cached outlives the command") {
    static PagedMemory m;
    CHECK(m.describe() == "dispatch-break: fake::op at CPU (keyset DispatchKeySet(CPU))\n");
    m.setName("fake::renamed");  // the target changed between two commands (it ran, or it is another one)
    m.calls = 0;
    CHECK(m.describe() == "dispatch-break: fake::renamed at CPU (keyset DispatchKeySet(CPU))\n");
    CHECK(m.calls == 1);
  }
}
