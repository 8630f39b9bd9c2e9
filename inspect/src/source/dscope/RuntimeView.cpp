#include "source/dscope/RuntimeView.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <unordered_set>

#include "target/Remote.h"
#include "target/TargetImage.h"
#include "target/ThreadLocal.h"

namespace dscope::inspect {

namespace {

// Text as the runtime stores it (schemas, debug strings, file paths): UTF-8 without control
// characters. Anything else is bytes that were never a string (corrupt memory).
bool isText(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if (c < 0x20 && c != '\t') return false;
      if (c == 0x7f) return false;
      ++i;
      continue;
    }
    const size_t n = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
    if (n == 0 || (c >= 0xe0 && n == 3 && c > 0xef) || i + n > s.size()) return false;
    for (size_t j = 1; j < n; ++j)
      if ((static_cast<unsigned char>(s[i + j]) & 0xc0) != 0x80) return false;
    i += n;
  }
  return true;
}


}  // namespace

void RuntimeView::noRuntime(NoRuntime kind, const std::string& message) const {
  // A core opened with another program has no runtime where the debugger looks, or garbage there:
  // say what is wrong rather than what it looks like.
  if (std::string mismatch = programMismatch(mem_); !mismatch.empty()) fail(mismatch);
  // A truncated core can have lost the library list, and with it the runtime's symbols: that is
  // why, not a runtime that is not loaded yet.
  if (kind == kNotLoaded && mem_.isCore())
    if (std::string lost = libraryListLost(mem_); !lost.empty()) fail("no DispatchScope runtime can be found: " + lost);
  if (kind == kNotLoaded) fail<RuntimeNotLoaded>(message);
  fail(message);
}

RuntimeView::RuntimeView(const Remote& mem) : mem_(mem) {
  auto addr = mem_.findSymbol("dscope_debug_descriptor");  // none without a target
  if (!addr)
    noRuntime(kNotLoaded, mem_.selectedTid() ? "no DispatchScope runtime in this process (symbol "
                                                         "dscope_debug_descriptor not found; is libdscope_runtime loaded yet?)"
                                                       : kNoProcess);
  descriptor_addr_ = *addr;
  try {
    descriptor_ = mem_.read<struct dscope_debug_descriptor_t>(*addr, "dscope_debug_descriptor");
  } catch (const InspectError& e) {
    noRuntime(kUnusable, messageOf(e));
  }
  // An executable's copy of the descriptor (a copy relocation, in .bss) is all zeros until the
  // dynamic linker has loaded the runtime and copied it in (`starti` stops before that).
  static constexpr struct dscope_debug_descriptor_t kZero{};
  if (std::memcmp(&descriptor_, &kZero, sizeof kZero) == 0)
    noRuntime(kNotLoaded, "dscope_debug_descriptor at " + hex(*addr) + " is all zeros: the runtime is not "
              "loaded yet (a process stopped before its libraries load), or the core file does not match the program");
  if (std::memcmp(descriptor_.magic, DSCOPE_DEBUG_MAGIC, sizeof descriptor_.magic) != 0)
    noRuntime(kUnusable, "dscope_debug_descriptor at " + hex(*addr) + " has no DSCOPEDD magic (corrupt memory, "
              "or not a DispatchScope runtime)");
  if (descriptor_.version != DSCOPE_DEBUG_INTERFACE_VERSION)
    fail("the runtime in this process speaks debug interface version " + std::to_string(descriptor_.version) +
         ", these tools speak version " + std::to_string(DSCOPE_DEBUG_INTERFACE_VERSION) +
         "; rebuild the tools from the same source");
  if (descriptor_.pointer_size != sizeof(void*))
    fail("the runtime in this process has " + std::to_string(descriptor_.pointer_size) + "-byte pointers, these tools " +
         "read " + std::to_string(sizeof(void*)) + "-byte pointers");
  // A runtime built like this library has its profile (equal digests); another's is read.
  profile_ = descriptor_.layout_hash == ownProfileDigest() ? ownProfile() : readProfile();
}

std::shared_ptr<const DscopeProfile> RuntimeView::readProfile() const {
  const std::string origin = "the layout profile in dscope_debug_descriptor at " + hex(descriptor_addr_);
  // The parser's own reasons say what is wrong ("cut short, or of another schema"); the checks
  // here are of the descriptor's fields, which only corrupt memory breaks.
  const std::string remedy = " (corrupt memory)";
  const auto text = reinterpret_cast<uint64_t>(descriptor_.profile_text);
  const uint64_t size = descriptor_.profile_size;
  if (!text || size == 0 || size > kMaxProfileBytes)
    fail(origin + " is unusable: it is " + std::to_string(size) + " bytes at " + hex(text) + remedy);
  std::string bytes(size, '\0');
  mem_.read(text, bytes.data(), size, "the runtime's layout profile");
  auto profile = dscopeProfile(bytes, origin, "");
  // The digest the parser checked is the one the descriptor states: the text is the runtime's.
  char digest[48];
  std::snprintf(digest, sizeof digest, "digest fnv1a64 0x%016llx\n", static_cast<unsigned long long>(descriptor_.layout_hash));
  if (!bytes.ends_with(digest))
    fail(origin + " is unusable: its digest is not the descriptor's layout hash " + hex(descriptor_.layout_hash) + remedy);
  return profile;
}

uint64_t RuntimeView::dispatcher() const {
  auto d = reinterpret_cast<uint64_t>(descriptor_.dispatcher);
  if (!d) fail("the dispatcher does not exist yet (nothing has been registered or dispatched)");
  return d;
}

void RuntimeView::warn(std::string line) const { warnings_.push_back(std::move(line)); }

std::string RuntimeView::readText(uint64_t addr, const char* what) const {
  std::string s = mem_.readString(addr, what);
  if (!isText(s)) fail(std::string("the ") + what + " at " + hex(addr) + " is not text (corrupt memory)");
  return s;
}

// ---------------------------------------------------------------- operators

namespace {
// The operator list of the last target read, kept across commands: walking 3 693 operators costs
// ~11 000 debugger reads, and a session asks for it on every command. Entries are never freed
// and their names never change while the process lives, so the process (the descriptor's
// instance: another process, a re-run, another core is another instance), the dispatcher, the head
// and the count identify the same list; a new registration changes the count.
struct OperatorListCache {
  std::mutex mutex;
  uint64_t instance = 0, dispatcher = 0, head = 0;
  uint32_t count = 0;
  std::shared_ptr<const OperatorList> list;
};
OperatorListCache& operatorListCache() {
  static OperatorListCache cache;
  return cache;
}
}  // namespace

const std::vector<Operator>& RuntimeView::operators() const {
  if (operators_) return operators_->ops;
  const uint64_t d = dispatcher();
  const uint32_t count = mem_.read<uint32_t>(d + layout().Dispatcher_num_operators, "operator count");
  if (count > kMaxOperators)
    fail("the dispatcher claims " + std::to_string(count) + " operators (corrupt memory?)");
  const uint64_t head = mem_.readPointer(d + layout().Dispatcher_operators_head, "operator list");
  const uint64_t instance = descriptor_.instance;  // 0: the runtime never said which process this is
  auto& cache = operatorListCache();
  std::lock_guard lock(cache.mutex);
  if (instance && cache.instance == instance && cache.dispatcher == d && cache.head == head && cache.count == count &&
      cache.list) {
    operators_ = cache.list;
    for (const auto& w : operators_->warnings) warn(w);
    return operators_->ops;
  }
  auto list = std::make_shared<OperatorList>();
  auto& ops = list->ops;
  std::unordered_set<uint64_t> seen;
  // Bounded by the count; a walk that ends before it, or revisits an entry, met a corrupt link.
  // Entries whose name is no operator name are left out (their link may still be sound).
  uint64_t op = head, walked = 0;
  std::string broken;
  for (; walked < count; ++walked) {
    if (!op) {
      broken = "a null link";
      break;
    }
    if (!seen.insert(op).second) {
      broken = "a link back to " + hex(op);
      break;
    }
    try {
      if (auto name = tryOperatorName(op)) {
        list->by_addr.emplace(op, ops.size());
        ops.push_back({op, std::move(*name)});
      } else {
        list->warnings.push_back("the operator at " + hex(op) + " has no operator name (corrupt memory): left out");
      }
      op = mem_.readPointer(op + layout().OperatorEntry_next, "operator list");
    } catch (const InspectError& e) {
      broken = messageOf(e);
      break;
    }
  }
  if (walked < count)
    list->warnings.push_back("the operator list ends after " + groupThousands(walked) + " of the " +
                             groupThousands(count) + " operators the dispatcher counts (" + broken +
                             ": corrupt memory): the rest are not shown");
  if (instance) {
    cache.instance = instance;
    cache.dispatcher = d;
    cache.head = head;
    cache.count = count;
    cache.list = list;
  }
  operators_ = std::move(list);
  for (const auto& w : operators_->warnings) warn(w);
  return operators_->ops;
}

std::shared_ptr<const std::vector<Operator>> RuntimeView::operatorList() const {
  operators();
  return {operators_, &operators_->ops};
}

std::string RuntimeView::incompleteListNote() const {
  operators();
  return operators_->warnings.empty() ? "" : operators_->warnings.back();
}

std::string RuntimeView::operatorName(uint64_t op) const {
  if (auto name = tryOperatorName(op)) return *name;
  fail(hex(op) + " is no operator: its name is unreadable or no operator name (corrupt memory)");
}

std::optional<std::string> RuntimeView::tryOperatorName(uint64_t op) const {
  if (operators_)
    if (auto it = operators_->by_addr.find(op); it != operators_->by_addr.end()) return operators_->ops[it->second].name;
  if (auto it = names_.find(op); it != names_.end()) return it->second;
  std::string name;
  try {
    name = mem_.readString(mem_.readPointer(op + layout().OperatorEntry_full_name, "operator name"), "operator name");
  } catch (const InspectError&) {
    return std::nullopt;
  }
  if (!isOperatorName(name)) return std::nullopt;
  names_[op] = name;
  return name;
}

format::OperatorSnapshot RuntimeView::snapshot(uint64_t op, bool with_table) const {
  format::OperatorSnapshot s;
  s.name = operatorName(op);
  if (uint64_t schema = mem_.readPointer(op + layout().OperatorEntry_schema, "operator schema")) {
    s.has_schema = true;
    s.schema = readText(mem_.readPointer(schema + layout().RegisteredSchema_text, "schema"), "schema text");
    s.debug = readText(mem_.readPointer(schema + layout().RegisteredSchema_debug, "schema"), "schema debug string");
    auto alias = mem_.read<uint8_t>(schema + layout().RegisteredSchema_schema + layout().FunctionSchema_alias_analysis,
                                    "alias analysis kind");
    if (alias > static_cast<uint8_t>(AliasAnalysisKind::PURE_FUNCTION))
      fail("operator " + s.name + " has alias analysis kind " + std::to_string(alias) + " (corrupt memory?)");
    s.alias_analysis = toString(static_cast<AliasAnalysisKind>(alias));
  }
  // Registered kernels, newest first: bounded by num_kernels_ and by a hard cap.
  const uint32_t count = mem_.read<uint32_t>(op + layout().OperatorEntry_num_kernels, "kernel count");
  if (count > kMaxKernelsPerOperator)
    fail("operator " + s.name + " claims " + std::to_string(count) + " kernels (corrupt memory?)");
  std::unordered_set<uint64_t> seen;
  std::vector<RemoteKernel> kernels;
  for (uint64_t k = mem_.readPointer(op + layout().OperatorEntry_kernels, "kernel list"); k && kernels.size() < count;) {
    if (!seen.insert(k).second) fail("the kernel list of " + s.name + " loops back to " + hex(k) + " (corrupt memory?)");
    kernels.push_back(kernel(k));
    k = kernels.back().next;
  }
  // The formatter's order: by key, each key's newest first (the list's order, kept by a stable sort).
  std::stable_sort(kernels.begin(), kernels.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
  for (const RemoteKernel& rk : kernels)
    s.kernels.push_back({keys().name(rk.key), keys().byValue(rk.key)->alias, rk.debug, rk.inferred_schema.value_or(""),
                         isFallthrough(rk), rk.boxed_fn != 0, rk.unboxed_fn != 0});
  if (kernels.size() < count)
    warn("the kernel list of " + s.name + " ends after " + groupThousands(kernels.size()) + " of the " +
         groupThousands(count) + " kernels the operator counts (a null link: corrupt memory): the rest are not shown");
  if (with_table)
    for (const RemoteTableEntry& e : validTableEntries(op))
      s.table.push_back({keys().name(e.key), e.kernel.debug, impl::toString(e.source), isFallthrough(e.kernel)});
  return s;
}

std::vector<RemoteTableEntry> RuntimeView::tableEntries(uint64_t op) const {
  std::vector<RemoteTableEntry> entries;
  for (int key : keys().runtimeKeys()) entries.push_back(tableEntry(op, key));
  return entries;
}

std::vector<RemoteTableEntry> RuntimeView::validTableEntries(uint64_t op) const {
  std::vector<RemoteTableEntry> entries = tableEntries(op);
  std::erase_if(entries, [this](const RemoteTableEntry& e) { return isMissing(e.kernel); });
  return entries;
}

const RuntimeView::RemoteTable& RuntimeView::table(uint64_t op) const {
  if (auto it = tables_.find(op); it != tables_.end()) return it->second;
  const uint64_t slots = profile_->table_slots;
  RemoteTable t{std::vector<uint64_t>(slots), std::vector<uint8_t>(slots)};
  mem_.read(op + layout().OperatorEntry_dispatchTable, t.kernels.data(), slots * 8, "dispatch table");
  mem_.read(op + layout().OperatorEntry_dispatchTableSource, t.sources.data(), slots, "dispatch table source");
  return tables_.emplace(op, t).first->second;
}

RemoteTableEntry RuntimeView::tableEntry(uint64_t op, int key) const {
  RemoteTableEntry e;
  e.key = key;
  const KeyInfo* info = keys().byValue(key);
  e.slot = key == 0 ? 0 : info ? info->slot : -1;  // Undefined's computed entry is slot 0
  const RemoteTable& t = table(op);
  if (e.slot < 0 || static_cast<size_t>(e.slot) >= t.kernels.size())
    fail("dispatch key " + std::to_string(key) + " has no dispatch-table slot in the runtime's key table");
  auto source = t.sources[e.slot];
  if (source > static_cast<uint8_t>(impl::TableEntrySource::BackendFallback))
    fail("dispatch table source " + std::to_string(source) + " at slot " + std::to_string(e.slot) + " of " +
         operatorName(op) + " (corrupt memory?)");
  e.source = static_cast<impl::TableEntrySource>(source);
  e.kernel = kernel(t.kernels[e.slot]);
  return e;
}

// ---------------------------------------------------------------- kernels

RemoteKernel RuntimeView::kernel(uint64_t addr) const {
  if (auto it = kernels_.find(addr); it != kernels_.end()) return it->second;
  RemoteKernel k;
  k.addr = addr;
  k.functor = mem_.readPointer(addr + layout().AnnotatedKernel_kernel + layout().KernelFunction_functor, "kernel");
  k.boxed_fn = mem_.readPointer(addr + layout().AnnotatedKernel_kernel + layout().KernelFunction_boxed_fn, "kernel");
  k.unboxed_fn =
      mem_.readPointer(addr + layout().AnnotatedKernel_kernel + layout().KernelFunction_unboxed_fn, "kernel");
  k.debug = readText(mem_.readPointer(addr + layout().AnnotatedKernel_debug, "kernel"), "kernel debug string");
  if (uint64_t schema = mem_.readPointer(addr + layout().AnnotatedKernel_inferred_schema, "kernel"))
    k.inferred_schema = readText(schema, "inferred schema");
  auto key = mem_.read<uint16_t>(addr + layout().AnnotatedKernel_key, "kernel");
  if (!keys().byValue(key)) fail("kernel at " + hex(addr) + " has dispatch key " + std::to_string(key) + " (corrupt memory?)");
  k.key = key;
  k.next = mem_.readPointer(addr + layout().AnnotatedKernel_next, "kernel list");
  kernels_[addr] = k;
  return k;
}

std::string RuntimeView::kernelSymbol(const RemoteKernel& k) const {
  // functor_ is the user's function, unless it is a heap functor (stateful lambda): then the
  // typed trampoline's name (which names the lambda type) or the boxed entry is the best we have.
  for (uint64_t pc : {k.functor, k.unboxed_fn, k.boxed_fn}) {
    std::string name = mem_.symbolize(pc);
    if (!name.empty()) return name;
  }
  return hex(k.functor ? k.functor : k.boxed_fn);
}

uint64_t RuntimeView::sentinel(const void* address, const char* field) const {
  // Set by the descriptor's static initializer: a null one is no runtime's.
  if (!address)
    fail(std::string("dscope_debug_descriptor at ") + hex(descriptor_addr_) + " holds no " + field +
         " address (corrupt memory)");
  // Kernels are decoded from the runtime library's memory too (the sentinels' AnnotatedKernels
  // are its static data), which a debugger that has not loaded the library does not serve as
  // the process had it: GDB reads the file's unrelocated bytes, LLDB nothing. The descriptor
  // alone is no proof: an executable can hold it (a COPY relocation), and a core whose
  // shared-library list is lost (truncated) is read that way. The hook is the library's own.
  if (!runtime_library_found_) {
    if (!mem_.findSymbol("dscope_debug_break_hook"))
      fail("cannot find dscope_debug_break_hook in the runtime's dynamic symbols, and kernels are decoded from the "
           "runtime library's memory: is libdscope_runtime loaded? (GDB: info sharedlibrary, LLDB: image list; a "
           "truncated core loses the shared-library list)");
    runtime_library_found_ = true;
  }
  return reinterpret_cast<uint64_t>(address);
}

// ---------------------------------------------------------------- threads

namespace {
// Why a block with the right magic cannot describe a thread, or "".
std::string corruptBlock(const dscope_thread_records& r) {
  if (r.tid <= 0 || r.tid > kMaxThreadId) return "tid " + std::to_string(r.tid) + " is no thread id";
  if (r.state != DSCOPE_THREAD_ALIVE && r.state != DSCOPE_THREAD_DEAD)
    return "state " + std::to_string(r.state) + " is neither alive nor dead";
  if (r.depth > kMaxPlausibleDepth) return "dispatch depth " + groupThousands(r.depth) + " is more than any stack holds";
  return "";
}
}  // namespace

std::vector<ThreadBlock> RuntimeView::threadBlocks() const {
  std::vector<ThreadBlock> blocks;
  const uint32_t count = std::min(descriptor_.thread_records_count, kMaxThreadBlocks);
  std::unordered_set<uint64_t> seen;
  std::string broken = "a null link";
  for (auto addr = reinterpret_cast<uint64_t>(descriptor_.thread_records); blocks.size() < count;) {
    if (!addr) break;
    if (!seen.insert(addr).second) {
      broken = "a link back to " + hex(addr);
      break;
    }
    ThreadBlock b;
    b.addr = addr;
    try {
      b.records = mem_.read<dscope_thread_records>(addr, "thread dispatch records");
    } catch (const InspectError& e) {
      broken = messageOf(e);
      break;
    }
    // The contract: a block without the magic is not the runtime's, and neither is its link.
    if (b.records.magic != DSCOPE_THREAD_RECORDS_MAGIC) {
      broken = "the block at " + hex(addr) + " has no DRECORDS magic";
      break;
    }
    b.corrupt = corruptBlock(b.records);
    b.tid = b.records.tid;
    b.shown_tid = std::to_string(b.tid);
    // An alive block belongs to a thread of this process (a child of fork() keeps its parent's).
    // Its tid is the thread's own (in a pid namespace, not the debugger's): ThreadIds maps it.
    if (b.corrupt.empty() && b.records.state == DSCOPE_THREAD_ALIVE) {
      const ThreadIds& ids = mem_.threadIds();
      if (ids.ownIdExists(b.records.tid) == false)
        b.corrupt = "tid " + std::to_string(b.records.tid) + " is alive, but the process has no such thread "
                    "(corrupt memory, or a block a fork() copied)";
      else if (auto tid = ids.targetTid(b.records.tid); tid && *tid != b.tid) {
        b.tid = *tid;
        b.shown_tid = ids.shown(*tid);
      }
    }
    addr = reinterpret_cast<uint64_t>(b.records.next);
    blocks.push_back(std::move(b));
  }
  if (blocks.size() < count)
    warn("the thread record list ends after " + groupThousands(blocks.size()) + " of the " + groupThousands(count) +
         " blocks the runtime counts (" + broken + ": corrupt memory): threads in the rest are not shown");
  return blocks;
}

std::pair<uint64_t, uint64_t> RuntimeView::threadTls(const ThreadBlock& b) const {
  const dscope_thread_records& r = b.records;
  const std::string who = "thread tid " + b.shown_tid;
  if (r.state != DSCOPE_THREAD_ALIVE) fail(who + " has ended (its record block is dead): its thread-local key sets are gone");
  // Where the records pointer of the thread whose TLS `tls` is lies; it holds this block's address.
  // Unreadable there: a wild pointer, or a truncated core that lacks the thread's TLS (which of the
  // two, a reader of the core cannot tell from the pointer).
  const auto tls = reinterpret_cast<uint64_t>(r.tls);
  uint64_t own_block = 0;
  try {
    own_block = mem_.readPointer(tls + descriptor_.tls_records_offset, "thread-local records pointer");
  } catch (const InspectError&) {
    fail(who + ": the TLS pointer " + hex(tls) + " of its record block points to memory that cannot be read "
         "(corrupt memory, or memory the core lacks)");
  }
  if (own_block != b.addr)
    fail(who + ": the TLS pointer " + hex(tls) + " of its record block is not that thread's TLS (corrupt memory)");
  // Stored XOR the defaults, as c10's PODLocalDispatchKeySet keeps them (zeroed TLS is the defaults).
  const uint64_t included = mem_.read<uint64_t>(tls + layout().PODLocalDispatchKeySet_included, "thread-local key sets") ^
                            keys().defaults().included;
  const uint64_t excluded = mem_.read<uint64_t>(tls + layout().PODLocalDispatchKeySet_excluded, "thread-local key sets") ^
                            keys().defaults().excluded;
  for (uint64_t set : {included, excluded})
    if (keys().unknownBits(set))
      fail(who + ": its thread-local key sets hold bits no dispatch key has (" + hex(set) + "; corrupt memory)");
  return {included, excluded};
}

std::string corruptBlockLine(const ThreadBlock& b) {
  return errorLine("the record block at " + hex(b.addr) + " is corrupt (" + b.corrupt + ")");
}

const ThreadBlock& selectThread(const RuntimeView& rt, const std::vector<ThreadBlock>& blocks, int64_t tid) {
  const Remote& mem = rt.mem();
  const ThreadIds& ids = mem.threadIds();
  // A block holds the id its thread knows itself by (in a pid namespace, not the debugger's tid).
  auto byTid = [&](int64_t tid) -> const ThreadBlock* {
    const ThreadBlock* dead = nullptr;
    const int64_t own = ids.ownId(tid);
    for (const auto& b : blocks) {
      if (b.records.tid != own && b.tid != tid) continue;
      if (!b.corrupt.empty()) fail("thread tid " + ids.shown(tid) + ": " + corruptBlockLine(b).substr(8));
      if (b.records.state == DSCOPE_THREAD_ALIVE) return &b;
      if (!dead) dead = &b;  // a dead block keeps its last owner's tid
    }
    return dead;
  };
  // Not found: it has not dispatched, unless its block may be one that could not be read.
  auto noBlock = [&](int64_t tid) {
    // A number that is no thread at all (not the debugger's, no OS thread of the process).
    if (mem.threadExists(tid) == false)
      fail("no thread " + std::to_string(tid) + " (neither a debugger thread number nor a thread id that dispatched)");
    std::string why;
    for (const auto& b : blocks)
      if (!b.corrupt.empty()) why = corruptBlockLine(b).substr(8);
    if (!rt.warnings().empty()) why = rt.warnings().back();
    if (!why.empty()) fail("thread tid " + ids.shown(tid) + " has no readable dispatch records: " + why);
    fail("thread tid " + ids.shown(tid) + " has no dispatch records (it has not dispatched yet); "
         "`dispatch-trace --all` lists the threads that have");
  };
  if (tid) {
    if (const auto* b = byTid(tid)) return *b;
    noBlock(tid);
  }
  for (const auto& b : blocks)
    if (b.corrupt.empty() && b.records.state == DSCOPE_THREAD_ALIVE) return b;
  if (!rt.warnings().empty()) fail("no readable thread dispatch records: " + rt.warnings().back());
  fail("no thread has dispatched yet (no dispatch records)");
}

}  // namespace dscope::inspect
