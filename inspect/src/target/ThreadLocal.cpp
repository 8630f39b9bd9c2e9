#include "target/ThreadLocal.h"

#include "target/ModuleFiles.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cstring>
#include <set>
#include <utility>
#include <vector>

namespace dscope::inspect {

namespace {

constexpr uint64_t kMaxThreads = 1u << 20;  // a longer thread list is corrupt memory
constexpr uint64_t kMaxModules = 1u << 16;
constexpr uint64_t kDtvUnallocated = ~uint64_t{0};  // TLS_DTV_UNALLOCATED

// A libthread_db descriptor: {size in bits, element count, offset} (glibc's DB_STRUCT_FIELD and
// friends); for a DB_STRUCT sizeof entry only the first word is the size.
struct Descriptor {
  uint32_t bits = 0, count = 0, offset = 0;
};

std::string baseName(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// "libc10.so" of "/usr/lib/x86_64-linux-gnu/libc10.so.1.13.0": link_map names the file as it was
// opened (often the unversioned symlink), the mappings as it resolved.
std::string sharedObjectStem(const std::string& path) {
  std::string base = baseName(path);
  const auto so = base.find(".so");
  return so == std::string::npos ? base : base.substr(0, so + 3);
}

Descriptor descriptor(const Remote& mem, const std::string& field) {
  const std::string name = "_thread_db_" + field;
  // Defined by libc (glibc 2.34+) or libpthread: looked up in those files alone, where the front
  // end's lookup would index every module's symbols first (285 modules in a PyTorch process: half
  // of python-bt's time on a core). A static program has neither: the front end finds them.
  std::optional<uint64_t> addr;
  for (const ModuleMapping& m : mem.modules()) {
    const std::string stem = sharedObjectStem(m.path);
    if ((stem == "libc.so" || stem == "libpthread.so") && (addr = symbolInFile(m.path, m.start, name))) break;
  }
  if (!addr) addr = mem.findSymbol(name.c_str());
  if (!addr) fail("cannot find glibc's " + name + " (a libc without thread debugging descriptors?)");
  return mem.read<Descriptor>(*addr, "a glibc thread descriptor");
}

constexpr int64_t kMaxTargetThreads = 1 << 16;  // thread numbers asked of the front end (thread_tid) at most
constexpr int64_t kMaxGap = 256;
constexpr uint64_t kMaxStackSize = uint64_t{1} << 30;  // a thread's stack pointer lies this close below its struct pthread
constexpr int64_t kMaxThreadId = 1 << 22;        // the kernel's PID_MAX_LIMIT

// glibc's threads: the struct pthread (= the thread pointer on x86-64) of each thread on
// _rtld_global's thread lists (_dl_stack_user holds the initial thread and user stacks,
// _dl_stack_used the rest), and the id it holds, the thread's own.
//
// A list whose next pointer reads 0 ends there (its threads after it are not known), where a
// cycle or a longer list is corrupt memory: a core can hold zeros for a live struct pthread. GDB's
// gcore of a glibc 2.42+ process writes zeros for the stack blocks that hold guard regions
// (MADV_GUARD_INSTALL; smaps "gu"), and an ended thread's struct pthread stays on _dl_stack_used at
// the top of such a block, so the list leads into zeros.
struct GlibcThread {
  uint64_t thread;  // its struct pthread
  int64_t own;      // the id it holds
  // The last on _dl_stack_user: the initial thread (glibc adds it first, and each user stack's
  // thread before it), whose struct pthread lies in the dynamic linker's static TLS; every other
  // thread's is at the top of its stack (a block glibc made, or the user's stack).
  bool initial;
};

// *zeros (where given): the lists lead into zeros (a list that ends at a 0 pointer, a thread whose id reads 0).
std::vector<GlibcThread> glibcThreads(const Remote& mem, bool* zeros = nullptr) {
  auto rtld = mem.findSymbol("_rtld_global");
  if (!rtld) fail("cannot find the dynamic linker's _rtld_global (no process, or a static program)");
  const uint32_t next = descriptor(mem, "list_t_next").offset;
  const uint32_t list_in_thread = descriptor(mem, "pthread_list").offset;
  const uint32_t tid_in_thread = descriptor(mem, "pthread_tid").offset;
  std::vector<GlibcThread> threads;
  for (const auto& [list, user] : {std::pair<const char*, bool>{"rtld_global__dl_stack_user", true},
                                   std::pair<const char*, bool>{"rtld_global__dl_stack_used", false}}) {
    const size_t first = threads.size();
    const uint64_t head = *rtld + descriptor(mem, list).offset;
    uint64_t node = mem.readPointer(head + next, "glibc's thread list");
    for (uint64_t n = 0; node != head && node != 0; ++n) {
      if (n == kMaxThreads) fail("glibc's thread list at " + hex(head) + " does not end (corrupt memory)");
      const uint64_t thread = node - list_in_thread;
      threads.push_back({thread, mem.read<int32_t>(thread + tid_in_thread, "a glibc thread"), false});
      if (zeros && threads.back().own == 0) *zeros = true;
      node = mem.readPointer(node + next, "glibc's thread list");
    }
    if (zeros && node == 0) *zeros = true;
    if (user && node == head && threads.size() > first) threads.back().initial = true;
  }
  return threads;
}

// The struct pthread of the thread the process knows as `tid`, or 0 (*zeros: glibcThreads').
uint64_t threadPointer(const Remote& mem, int64_t tid, bool* zeros = nullptr) {
  for (const GlibcThread& t : glibcThreads(mem, zeros))
    if (t.own == tid) return t.thread;
  return 0;
}

// The TLS module id the dynamic linker gave the module file `path` mapped at `start`
// (l_tls_modid), or 0. A link_map is matched by its load bias (l_addr: a shared object's first
// byte is mapped at its bias), else by its file name; the name's bytes may be in a read-only
// mapping a core does not hold (a DT_NEEDED string), so names are read only when biases do not tell.
uint64_t tlsModuleId(const Remote& mem, const std::string& path, uint64_t start) {
  auto r_debug = mem.findSymbol("_r_debug");
  if (!r_debug) fail("cannot find the dynamic linker's _r_debug");
  const uint32_t modid = descriptor(mem, "link_map_l_tls_modid").offset;
  std::vector<uint64_t> maps;
  for (uint64_t map = mem.readPointer(*r_debug + 8, "r_debug"); map; map = mem.readPointer(map + 24, "a link_map")) {
    if (maps.size() == kMaxModules) fail("the dynamic linker's link_map list does not end (corrupt memory)");
    maps.push_back(map);  // r_map, then l_next
    if (mem.readPointer(map, "a link_map") == start) return mem.readPointer(map + modid, "a link_map");  // l_addr
  }
  const std::string wanted = sharedObjectStem(path);
  for (uint64_t map : maps) {
    const uint64_t name = mem.readPointer(map + 8, "a link_map");  // l_name
    if (name && sharedObjectStem(mem.readString(name, "a link_map name")) == wanted) return mem.readPointer(map + modid, "a link_map");
  }
  return 0;
}

}  // namespace

const std::vector<int64_t>& ThreadIds::numbered() const {
  if (numbered_) return *numbered_;
  numbered_.emplace();
  for (int64_t n = 1, misses = 0; n <= kMaxTargetThreads && misses < kMaxGap; ++n) {
    const auto tid = mem_.threadTid(n);
    misses = tid ? 0 : misses + 1;
    if (tid) numbered_->push_back(*tid);
  }
  return *numbered_;
}

std::optional<uint64_t> ThreadIds::pointerOf(int64_t tid) const {
  auto it = pointers_.find(tid);
  if (it != pointers_.end()) return it->second;
  std::optional<uint64_t> pointer = mem_.threadPointer(tid);
  if (pointer && !*pointer) pointer.reset();
  return pointers_[tid] = pointer;
}

std::optional<int64_t> ThreadIds::ownIdByThreadPointer(int64_t tid) const {
  const auto pointer = pointerOf(tid);
  if (!pointer) return std::nullopt;
  auto it = by_pointer_.find(tid);
  if (it == by_pointer_.end()) {
    std::optional<int64_t> own;
    try {
      const int32_t id = mem_.read<int32_t>(*pointer + descriptor(mem_, "pthread_tid").offset, "a glibc thread");
      // glibc's id of a thread that is ending (0) or is a fork()'s child being made (negative) tells
      // nothing; neither does a struct pthread the core holds as zeros.
      if (id > 0 && id <= kMaxThreadId) own = id;
    } catch (const InspectError&) {
      // A thread pointer aimed at memory the target lacks: that thread's own id is not known.
    }
    it = by_pointer_.emplace(tid, own).first;
  }
  if (it->second) return it->second;
  auto handle = handles_.find(*pointer);
  if (handle != handles_.end() && handle->second) return handle->second;
  return std::nullopt;
}

void ThreadIds::addHandles(const std::map<uint64_t, int64_t>& own_by_handle) const {
  bool added = false;
  for (const auto& [handle, own] : own_by_handle) {
    if (!handle || own <= 0 || own > kMaxThreadId) continue;
    auto [at, fresh] = handles_.emplace(handle, own);
    if (fresh) added = true;
    else if (at->second != own && at->second) at->second = 0, added = true;
  }
  if (!added) return;
  // What was worked out without them: worked out again on the next question.
  own_ids_.clear();
  by_own_.reset();
  complete_ = false;
  same_ids_.reset();
}

int64_t ThreadIds::ownId(int64_t tid) const {
  auto known = own_ids_.find(tid);
  if (known != own_ids_.end()) return known->second;
  return own_ids_[tid] = sameIds() ? tid : findOwnId(tid);
}

bool ThreadIds::sameIds() const {
  if (!same_ids_) {
    const int64_t selected = mem_.selectedTid();
    std::optional<int64_t> own;
    int64_t asked = selected;
    if (selected) own = ownIdByThreadPointer(selected);
    for (size_t i = 0; !own && mem_.target() && mem_.target()->thread_pointer && i < numbered().size(); ++i)
      own = ownIdByThreadPointer(asked = numbered()[i]);
    same_ids_ = own ? *own == asked : selected && findOwnId(selected) == selected;
  }
  return *same_ids_;
}

int64_t ThreadIds::findOwnId(int64_t tid) const {
  if (auto own = ownIdByThreadPointer(tid)) return *own;
  // Without thread pointers: a thread glibc knows by this very id is that thread (ids inside a
  // namespace are small, and never also the outer id of one of the process's threads).
  try {
    for (const GlibcThread& t : glibcThreads(mem_))
      if (t.own == tid) return tid;
  } catch (const InspectError&) {
    // No glibc threads to read: the stacks cannot tell either, unless the process told its threads.
    if (handles_.empty()) return tid;
  }
  for (const auto& [own, target_tid] : byOwnId())
    if (target_tid == tid) return own;
  return tid;
}

const std::map<int64_t, int64_t>& ThreadIds::byOwnId() const {
  if (by_own_) return *by_own_;
  by_own_.emplace();
  complete_ = true;
  for (const int64_t tid : numbered()) {
    const auto own = ownIdByThreadPointer(tid);
    if (!own) {
      complete_ = false;
      continue;
    }
    // Two threads of one own id: the debugger lists a thread twice, once under its namespace id
    // (GDB on a core of a namespaced process adds glibc's threads from libthread_db): the other
    // id is the thread's.
    auto [at, added] = by_own_->emplace(*own, tid);
    if (!added && at->second == *own) at->second = tid;
  }
  if (by_own_->empty()) {  // no thread pointers at all: the stacks tell
    complete_ = false;
    matchByStack();
    complete_ = !by_own_->empty() && by_own_->size() == std::set<int64_t>(numbered().begin(), numbered().end()).size();
  }
  return *by_own_;
}

// glibc puts a thread's struct pthread at the top of its stack: a thread's is the lowest one above
// its stack pointer, and where that one is the lowest above two threads (the other's is not known:
// a core's zeros), it is the higher thread's (stacks are disjoint); the lower one's id stays
// unknown. The initial thread's lies elsewhere (the dynamic linker's static TLS): it goes to the
// one thread with none above, when there is one. A struct pthread no thread lies below (a thread
// on an alternate signal stack), or an id at two struct pthreads, leaves the map empty.
void ThreadIds::matchByStack() const {
  const dscope_target* t = mem_.target();
  if (!t->stack_frame || !t->thread_tid) return;
  std::map<uint64_t, int64_t> top, elsewhere;  // struct pthread -> own id, of the living threads
  try {
    for (const GlibcThread& g : glibcThreads(mem_))
      if (g.own > 0 && g.own <= kMaxThreadId) (g.initial ? elsewhere : top).emplace(g.thread, g.own);
      else if (g.initial) elsewhere.emplace(g.thread, 0);  // its id, if any, from addHandles
  } catch (const InspectError&) {
    if (handles_.empty()) return;
  }
  // Those the process told (addHandles), where glibc's struct pthread holds no id (a core's zeros):
  // a struct pthread glibc's lists do not reach is one at the top of a block.
  for (const auto& [handle, own] : handles_) {
    if (!own) continue;
    auto initial = elsewhere.find(handle);
    if (initial != elsewhere.end()) {
      if (!initial->second) initial->second = own;
    } else {
      top.emplace(handle, own);
    }
  }
  std::set<int64_t> owns;
  for (const auto* list : {&top, &elsewhere})
    for (const auto& [thread, own] : *list)
      if (own && !owns.insert(own).second) return;  // one id at two struct pthreads
  std::map<uint64_t, std::pair<uint64_t, int64_t>> below;  // struct pthread -> the highest (sp, tid) under it
  std::vector<int64_t> none_above;
  for (const int64_t tid : numbered()) {
    uint64_t pc = 0, sp = 0;
    auto above = t->stack_frame(t->ctx, tid, 0, &pc, &sp) == 0 ? top.upper_bound(sp) : top.end();
    if (above == top.end() || above->first - sp > kMaxStackSize) {
      none_above.push_back(tid);
      continue;
    }
    auto [at, added] = below.emplace(above->first, std::make_pair(sp, tid));
    if (!added && sp > at->second.first) at->second = {sp, tid};
  }
  std::map<int64_t, int64_t> map;
  for (const auto& [thread, own] : top) {
    auto placed = below.find(thread);
    if (placed == below.end()) return;  // no thread on its stack
    map.emplace(own, placed->second.second);
  }
  std::vector<int64_t> left;  // the initial thread's, where its id is known
  for (const auto& [thread, own] : elsewhere)
    if (own) left.push_back(own);
  if (none_above.size() == 1 && left.size() == 1) map.emplace(left.front(), none_above.front());
  *by_own_ = std::move(map);
}

std::optional<bool> ThreadIds::ownIdExists(int64_t own) const {
  const auto direct = mem_.threadExists(own);
  // Outside a namespace the ids agree; inside one, the process's ids are the namespace's small ones,
  // none of which is also the outer id of one of its own threads.
  if (direct == true) return true;
  const auto& map = byOwnId();
  if (map.count(own)) return true;
  if (complete_) return false;
  // A thread whose own id is not known: outside a namespace the target's answer is the process's,
  // inside one the target cannot tell (a gcore core's zeros).
  return sameIds() ? direct : std::nullopt;
}

std::optional<int64_t> ThreadIds::targetTid(int64_t own) const {
  const bool exists = mem_.threadExists(own) == true;
  // A thread of that id is the one where the target tells no thread pointers (LLDB: the map would
  // come from the stacks). Else the map says: GDB on a core of a namespaced process lists glibc's
  // threads (libthread_db) a second time under their namespace ids, beside the core's threads.
  const dscope_target* t = mem_.target();
  if (exists && (!t || !t->thread_pointer || sameIds())) return own;
  const auto& map = byOwnId();
  auto it = map.find(own);
  if (it != map.end()) return it->second;
  return exists ? std::optional<int64_t>(own) : std::nullopt;
}

std::vector<int64_t> ThreadIds::threads() const {
  std::vector<int64_t> out;
  std::set<int64_t> seen;
  for (const int64_t tid : numbered())
    if (seen.insert(tid).second) out.push_back(tid);
  if (out.size() < 2 || sameIds()) return out;
  // A thread listed under the namespace id of another listed thread, with no thread pointer of its
  // own (GDB reads no registers for libthread_db's additions) or that thread's: the other's double.
  std::map<int64_t, int64_t> owner;  // own id -> the listed thread that holds it, where it differs
  for (const int64_t tid : out)
    if (auto own = ownIdByThreadPointer(tid); own && *own != tid) owner.emplace(*own, tid);
  std::vector<int64_t> once;
  for (const int64_t tid : out) {
    auto it = owner.find(tid);
    const bool twice = it != owner.end() && (!pointerOf(tid) || pointerOf(tid) == pointerOf(it->second));
    if (!twice) once.push_back(tid);
  }
  return once;
}

std::string ThreadIds::shown(int64_t tid) const {
  const int64_t own = ownId(tid);
  return std::to_string(tid) + (own == tid ? "" : " (tid " + std::to_string(own) + " in its pid namespace)");
}

std::optional<uint64_t> dynamicSymbolValue(const std::string& path, const std::string& name) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  std::optional<uint64_t> value;
  for (Elf_Scn* scn = nullptr; elf && !value && (scn = elf_nextscn(elf, scn));) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_DYNSYM || !shdr.sh_entsize) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    for (size_t i = 0; data && i < shdr.sh_size / shdr.sh_entsize; ++i) {
      GElf_Sym sym;
      const char* s = gelf_getsym(data, static_cast<int>(i), &sym) ? elf_strptr(elf, shdr.sh_link, sym.st_name) : nullptr;
      if (s && name == s && sym.st_shndx != SHN_UNDEF) {
        value = sym.st_value;
        break;
      }
    }
  }
  if (elf) elf_end(elf);
  close(fd);
  return value;
}

std::optional<uint64_t> threadLocalAddress(const Remote& mem, int64_t tid, const ModuleMapping& module,
                                           const std::string& symbol) {
  if (tid <= 0) fail(kNoProcess);
  auto offset = dynamicSymbolValue(module.path, symbol);
  if (!offset) fail(module.path + " exports no " + symbol);
  const auto block = threadLocalBlock(mem, tid, module);
  return block ? std::optional<uint64_t>(*block + *offset) : std::nullopt;
}

std::optional<uint64_t> threadLocalBlock(const Remote& mem, int64_t tid, const ModuleMapping& module) {
  const std::string& module_path = module.path;
  if (tid <= 0) fail(kNoProcess);
  bool zeros = false;
  const uint64_t thread = threadPointer(mem, mem.threadIds().ownId(tid), &zeros);
  // GDB's gcore of a glibc 2.42+ process writes zeros for a thread's stack block with guard pages,
  // which holds its struct pthread: the lists lead into zeros there.
  if (!thread)
    fail("thread tid " + mem.threadIds().shown(tid) + " is on none of glibc's thread lists" +
         (zeros ? " (they lead into zeros: in a core of glibc 2.42+ made by GDB's gcore, a thread's struct pthread "
                  "is lost with its stack block, which has guard pages)"
                : ""));
  const uint64_t modid = tlsModuleId(mem, module_path, module.start);
  if (!modid) fail(baseName(module_path) + " has no TLS module id (not loaded by the dynamic linker?)");
  const uint64_t dtv = mem.readPointer(thread + descriptor(mem, "pthread_dtvp").offset, "a thread's DTV");
  const uint64_t entry_size = descriptor(mem, "dtv_dtv").bits / 8;
  const uint32_t pointer_val = descriptor(mem, "dtv_t_pointer_val").offset;
  // dtv[-1].counter is the number of entries the DTV has room for.
  const uint64_t room = mem.readPointer(dtv - entry_size + descriptor(mem, "dtv_t_counter").offset, "a thread's DTV");
  if (modid > room) return std::nullopt;  // the thread's DTV predates the module: nothing allocated
  const uint64_t block = mem.readPointer(dtv + modid * entry_size + pointer_val, "a thread's DTV");
  if (block == 0 || block == kDtvUnallocated) return std::nullopt;
  return block;
}

}  // namespace dscope::inspect
