// ThreadIds (target/ThreadLocal.h) over a made-up process in a pid namespace of its own, laid out
// in this test's memory with glibc's own descriptors (_thread_db_*, this process's libc): the
// initial thread's struct pthread on _dl_stack_user, and two threads made by glibc whose struct
// pthread a gcore core of a glibc 2.42+ process holds as zeros (their stack blocks begin with guard
// pages): _dl_stack_used leads into those zeros. The target's threads are the host's tids 100 (the
// initial thread, 7 inside), 101 and 102 (8 and 9), 103 (10, a thread no record names), and, as GDB
// lists them on such a core, libthread_db's second copy of the initial thread under its namespace
// id 7, without registers.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <vector>

#include "target/Remote.h"
#include "target/ThreadLocal.h"
#include "test_util.h"

using namespace dscope::inspect;
using dscope::testing::TestTarget;

namespace {

struct Descriptor {
  uint32_t bits, count, offset;
};

uint32_t offsetOf(const char* field) {
  const void* addr = ::dlsym(RTLD_DEFAULT, (std::string("_thread_db_") + field).c_str());
  REQUIRE(addr);
  return static_cast<const Descriptor*>(addr)->offset;
}

constexpr uint64_t kPthread = 0x1000;  // room for one struct pthread (glibc's is about 2 KiB)

struct FakeProcess {
  TestTarget base;
  dscope_target t{};
  std::vector<unsigned char> rtld = std::vector<unsigned char>(1 << 16);
  std::vector<unsigned char> threads = std::vector<unsigned char>(4 * kPthread);  // initial, 101's, 102's, 103's
  std::vector<int64_t> numbered;                        // the debugger's thread numbers' tids
  std::map<int64_t, uint64_t> pointers, sps;             // thread pointers; stack pointers
  bool tells_pointers = true;

  uint64_t pthread(int i) { return reinterpret_cast<uint64_t>(threads.data()) + i * kPthread; }
  void setWord(uint64_t addr, uint64_t value) { std::memcpy(reinterpret_cast<void*>(addr), &value, 8); }

  explicit FakeProcess(bool gdb) {
    const uint32_t next = offsetOf("list_t_next"), in_thread = offsetOf("pthread_list"), tid = offsetOf("pthread_tid");
    REQUIRE(tid + 4 < kPthread);
    const uint64_t base_addr = reinterpret_cast<uint64_t>(rtld.data());
    const uint64_t user = base_addr + offsetOf("rtld_global__dl_stack_user");
    const uint64_t used = base_addr + offsetOf("rtld_global__dl_stack_used");
    REQUIRE(std::max(user, used) + 16 < base_addr + rtld.size());
    // _dl_stack_user: the initial thread alone (7); _dl_stack_used: into 102's zeros.
    setWord(user + next, pthread(0) + in_thread);
    setWord(pthread(0) + in_thread + next, user);
    int32_t seven = 7;
    std::memcpy(reinterpret_cast<void*>(pthread(0) + tid), &seven, 4);
    setWord(used + next, pthread(2) + in_thread);
    base.symbol_overrides["_rtld_global"] = base_addr;
    numbered = {100, 101, 102, 103};
    if (gdb) numbered.push_back(7);
    pointers = {{100, pthread(0)}, {101, pthread(1)}, {102, pthread(2)}, {103, pthread(3)}};
    // Each thread's stack below its struct pthread, 103's below 102's stack; the initial thread's far above.
    sps = {{100, pthread(3) + (uint64_t{1} << 40)}, {101, pthread(1) - 0x100}, {102, pthread(2) - 0x100},
           {103, pthread(1) + 0x10}};
    t = *base.get();
    t.ctx = this;
    t.read_memory = [](void* ctx, uint64_t addr, void* out, uint64_t size) {
      return TestTarget::read(&static_cast<FakeProcess*>(ctx)->base, addr, out, size);
    };
    t.find_symbol = [](void* ctx, const char* name, uint64_t* addr) {
      return TestTarget::findSymbol(&static_cast<FakeProcess*>(ctx)->base, name, addr);
    };
    t.selected_tid = 100;
    t.thread_tid = [](void* ctx, int64_t n, int64_t* out) {
      const auto& list = static_cast<FakeProcess*>(ctx)->numbered;
      if (n < 1 || static_cast<size_t>(n) > list.size()) return 1;
      *out = list[n - 1];
      return 0;
    };
    t.thread_exists = [](void* ctx, int64_t tid) {
      for (int64_t t : static_cast<FakeProcess*>(ctx)->numbered)
        if (t == tid) return 1;
      return 0;
    };
    t.stack_frame = [](void* ctx, int64_t tid, uint64_t level, uint64_t* pc, uint64_t* sp) {
      const auto& sps = static_cast<FakeProcess*>(ctx)->sps;
      auto it = sps.find(tid);
      if (level || it == sps.end()) return 1;
      *pc = 0x1000, *sp = it->second;
      return 0;
    };
    if (gdb)
      t.thread_pointer = [](void* ctx, int64_t tid, uint64_t* addr) {
        const auto& pointers = static_cast<FakeProcess*>(ctx)->pointers;
        auto it = pointers.find(tid);
        if (it == pointers.end()) return 1;  // libthread_db's copy: no registers
        *addr = it->second;
        return 0;
      };
  }
  // What Python's thread states say: native_thread_id by thread_id (pthread_self()).
  std::map<uint64_t, int64_t> handles() { return {{pthread(0), 7}, {pthread(1), 8}, {pthread(2), 9}}; }
};

}  // namespace

TEST_CASE("thread ids: a gcore core of a namespaced process, its threads' struct pthread zeros (GDB, dscope core)") {
  FakeProcess p(true);
  Remote mem(&p.t);
  const ThreadIds& ids = mem.threadIds();
  // glibc tells the initial thread's id alone; libthread_db's copy of it is listed once.
  CHECK(ids.threads() == std::vector<int64_t>{100, 101, 102, 103});
  CHECK(ids.shown(100) == "100 (tid 7 in its pid namespace)");
  CHECK(ids.shown(101) == "101");
  CHECK(ids.targetTid(7) == 100);
  CHECK(ids.ownIdExists(8) == std::nullopt);  // not every thread's id is known
  // The thread states name the threads by their thread pointers; 103 has none.
  ids.addHandles(p.handles());
  CHECK(ids.shown(101) == "101 (tid 8 in its pid namespace)");
  CHECK(ids.shown(102) == "102 (tid 9 in its pid namespace)");
  CHECK(ids.shown(103) == "103");
  CHECK(ids.targetTid(9) == 102);
  CHECK(ids.targetTid(7) == 100);
  CHECK(ids.threads() == std::vector<int64_t>{100, 101, 102, 103});
  // A pthread_t given two ids tells nothing.
  ids.addHandles({{p.pthread(1), 11}});
  CHECK(ids.shown(101) == "101");
  CHECK(ids.shown(102) == "102 (tid 9 in its pid namespace)");
}

TEST_CASE("thread ids: the same core where the target tells no thread pointers (lldb-16): by the stacks") {
  FakeProcess p(false);
  Remote mem(&p.t);
  const ThreadIds& ids = mem.threadIds();
  // Without the thread states nothing is on a stack: no thread is matched.
  CHECK(ids.shown(101) == "101");
  CHECK(ids.threads() == std::vector<int64_t>{100, 101, 102, 103});
  ids.addHandles(p.handles());
  // 101 and 102 under their own struct pthread; 103 under 102's too, but lower: its id stays
  // unknown; the initial thread is the one with none above.
  CHECK(ids.shown(100) == "100 (tid 7 in its pid namespace)");
  CHECK(ids.shown(101) == "101 (tid 8 in its pid namespace)");
  CHECK(ids.shown(102) == "102 (tid 9 in its pid namespace)");
  CHECK(ids.shown(103) == "103");
  CHECK(ids.targetTid(8) == 101);
  CHECK(ids.ownIdExists(10) == std::nullopt);
}

TEST_CASE("thread ids: a struct pthread no thread's stack lies below leaves the stacks' map empty") {
  FakeProcess p(false);
  p.sps[101] = p.pthread(3) + (uint64_t{1} << 41);  // 101 on no stack of glibc's (an alternate signal stack)
  Remote mem(&p.t);
  const ThreadIds& ids = mem.threadIds();
  ids.addHandles(p.handles());
  CHECK(ids.shown(101) == "101");
  CHECK(ids.shown(102) == "102");
  CHECK(ids.shown(100) == "100");
}
