#include "target/Remote.h"

#include <sys/mman.h>

#include "target/ModuleFiles.h"
#include "target/TargetImage.h"
#include "target/ThreadLocal.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_set>
#include <vector>

namespace dscope::inspect {

std::string errorLine(const std::string& message) {
  // One line, always: a debugger prints it verbatim after its own prompt.
  std::string line = "dscope: " + message;
  for (char& c : line)
    if (c == '\n' || c == '\r') c = ' ';
  return line;
}

void terminate(dscope_value& value) {
  value.type[sizeof value.type - 1] = '\0';
  value.shown[sizeof value.shown - 1] = '\0';
}

std::string messageOf(const InspectError& e) {
  const std::string line = e.what();
  return line.rfind("dscope: ", 0) == 0 ? line.substr(8) : line;
}

std::string hex(uint64_t value) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(value));
  return buf;
}

std::string groupThousands(uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ' ';
    out += digits[i];
  }
  return out;
}

std::string counted(uint64_t n, const std::string& noun) { return groupThousands(n) + " " + noun + (n == 1 ? "" : "s"); }

std::string shown(const std::string& text) { return text.size() > 64 ? text.substr(0, 61) + "..." : text; }

// At most this many cached pages (128 MiB): a command that reads more starts over. The catalogue of
// a 2.x process's op-tables reads about 100 MiB (its kernels' type names among it), and a smaller
// cache read much of it again.
constexpr uint64_t kMaxCachedPages = 32768;
// The block a missed page is read with, in pages (16 KiB).
constexpr uint64_t kReadAheadPages = 4;

// The pages read so far, by page number: each one's bytes, or null for a page that cannot be read
// whole (reads touching it go direct). The bytes lie in blocks, each filled by one read of the
// front end (a page, a read-ahead block, a prefetched run) straight into it: no copy, and no
// allocation per page. Nothing zeroes a block: the read writes every byte before anything reads it.
struct Remote::PageCache {
  std::unordered_map<uint64_t, const unsigned char*> pages;
  // The read-ahead blocks (by first page) that could not be read whole: the edge of a mapping,
  // where every page missed would otherwise try its block again.
  std::unordered_set<uint64_t> partial_blocks;
  uint64_t block_pages = 0;  // the pages the blocks hold, forgotten ones included

  // The page found last: most reads fall in the page of the read before.
  uint64_t last_number = UINT64_MAX;
  const unsigned char* last_bytes = nullptr;

  void clear() {
    last_number = UINT64_MAX;
    pages.clear();
    partial_blocks.clear();
    chunks.clear();
    chunk_used = 0;
    block_pages = 0;
  }
  // Room for `count` more pages: past the bound everything read so far is dropped.
  void makeRoom(uint64_t count) {
    if (block_pages + count > kMaxCachedPages) clear();
  }
  // A block of `count` pages, to be filled by one read.
  unsigned char* newBlock(uint64_t count) {
    makeRoom(count);
    const uint64_t bytes = count * kPageSize;
    if (chunks.empty() || chunk_used + bytes > chunk_size) {
      chunk_size = std::max(kChunkBytes, bytes);
      void* chunk = std::aligned_alloc(kChunkBytes, (chunk_size + kChunkBytes - 1) / kChunkBytes * kChunkBytes);
      if (!chunk) throw std::bad_alloc();
      ::madvise(chunk, chunk_size, MADV_HUGEPAGE);  // a hint: without it, a fault per 4 KiB page
      chunks.emplace_back(static_cast<unsigned char*>(chunk));
      chunk_used = 0;
    }
    unsigned char* block = chunks.back().get() + chunk_used;
    chunk_used += bytes;
    block_pages += count;
    return block;
  }
  // The block just made, whose read failed, is given back.
  void dropLastBlock(uint64_t count) {
    chunk_used -= count * kPageSize;
    block_pages -= count;
  }

 private:
  // The blocks are carved in turn out of 2 MiB chunks (a larger block gets a chunk of its own),
  // which the kernel may back with huge pages: reading 40 MB of a core into 4 KiB pages cost
  // 10 000 page faults, a third of a `dscope core` summary.
  static constexpr uint64_t kChunkBytes = 2 << 20;
  struct Free {
    void operator()(unsigned char* p) const { std::free(p); }
  };
  std::vector<std::unique_ptr<unsigned char, Free>> chunks;
  uint64_t chunk_used = 0, chunk_size = 0;
};

// What the last command read, kept for the next one under the same memory generation.
struct Remote::Kept {
  uint64_t generation = 0;
  std::unique_ptr<PageCache> pages;
  std::unordered_map<uint64_t, std::string> symbols;
  std::unordered_map<std::string, std::optional<uint64_t>> addresses;
  KernelNames names_by_addresses;
  std::shared_ptr<const ModuleFiles> modules;
};

// The target's modules as modules() reads them: `found` by the file each is read from; `moved`,
// those found elsewhere than their own path (the debugger may not have their symbols); `missing`,
// those found nowhere.
struct Remote::ModuleFiles {
  std::vector<ModuleMapping> found;
  std::vector<ModuleMapping> moved;
  std::vector<MissingModuleFile> missing;
};

namespace {
std::mutex kept_mutex;
}  // namespace

Remote::Kept& Remote::kept() {
  static Kept k;
  return k;
}

Remote::Remote(const dscope_target* target) : target_(target) {
  recheckModuleFiles();  // a Remote is made per command
  const uint64_t generation = target ? target->memory_generation : 0;
  std::lock_guard lock(kept_mutex);
  Kept& k = kept();
  if (generation && k.generation == generation) {
    pages_ = std::move(k.pages);
    symbols_ = std::move(k.symbols);
    addresses_ = std::move(k.addresses);
    names_by_addresses_ = std::move(k.names_by_addresses);
    modules_ = std::move(k.modules);
  }
  k = Kept{};
  if (!pages_) pages_ = std::make_unique<PageCache>();
}

Remote::~Remote() {
  const uint64_t generation = target_ ? target_->memory_generation : 0;
  if (!generation) return;
  std::lock_guard lock(kept_mutex);
  kept() = Kept{generation, std::move(pages_), std::move(symbols_), std::move(addresses_), std::move(names_by_addresses_),
                std::move(modules_)};
}

void Remote::read(uint64_t addr, void* out, uint64_t size, const char* what) const {
  if (!target_) fail(kNoProcess);
  if (!target_->read_memory) fail("the debugger gave no way to read memory");
  if (addr == 0 || addr + size < addr) fail("cannot read memory at " + hex(addr) + " (" + what + ")");
  // Small reads (fields, strings) go through the page cache; a read of a page or more (a thread's
  // records, an operator's table) is one call either way, unless every page of it is cached
  // already (the tables of operators whose list was just walked).
  if ((size < kPageSize || cached(addr, size)) && readThroughPages(addr, out, size)) return;
  if (target_->read_memory(target_->ctx, addr, out, size) != 0)
    fail("cannot read memory at " + hex(addr) + " (" + what + ")");
}

bool Remote::readThroughPages(uint64_t addr, void* out, uint64_t size) const {
  auto* dst = static_cast<unsigned char*>(out);
  while (size > 0) {
    const unsigned char* p = page(addr / kPageSize);
    if (!p) return false;
    const uint64_t offset = addr % kPageSize, n = std::min(size, kPageSize - offset);
    std::memcpy(dst, p + offset, n);
    dst += n;
    addr += n;
    size -= n;
  }
  return true;
}

bool Remote::holds(uint64_t addr) const { return pages_->pages.count(addr / kPageSize) != 0; }

bool Remote::cached(uint64_t addr, uint64_t size) const {
  for (uint64_t n = addr / kPageSize; n <= (addr + size - 1) / kPageSize; ++n)
    if (!pages_->pages.count(n)) return false;
  return true;
}

const unsigned char* Remote::page(uint64_t number) const {
  PageCache& c = *pages_;
  if (number == c.last_number) return c.last_bytes;
  const unsigned char* bytes = readPage(number);
  c.last_number = number, c.last_bytes = bytes;
  return bytes;
}

const unsigned char* Remote::readPage(uint64_t number) const {
  if (auto it = pages_->pages.find(number); it != pages_->pages.end()) return it->second;
  // A missed page brings its aligned block with it when the block reads whole: the objects a
  // command reads next (an operator's kernels, their functors and strings) were mostly allocated
  // beside it, and each call into the front end costs more than the bytes. Else the page alone.
  const uint64_t block = number - number % kReadAheadPages;
  if (block != 0 && !pages_->partial_blocks.count(block)) {
    if (prefetch(block * kPageSize, kReadAheadPages * kPageSize)) {
      if (auto it = pages_->pages.find(number); it != pages_->pages.end()) return it->second;
    } else {
      pages_->partial_blocks.insert(block);
    }
  }
  unsigned char* bytes = pages_->newBlock(1);
  if (number == 0 || target_->read_memory(target_->ctx, number * kPageSize, bytes, kPageSize) != 0) {
    pages_->dropLastBlock(1);
    bytes = nullptr;
  }
  return pages_->pages[number] = bytes;
}

bool Remote::prefetch(uint64_t addr, uint64_t size) const {
  constexpr uint64_t kMaxPrefetch = 1 << 20;
  if (!target_ || !target_->read_memory || size == 0 || size > kMaxPrefetch || addr + size < addr) return false;
  uint64_t first = addr / kPageSize, last = (addr + size - 1) / kPageSize;
  // Only the run from the first page not cached to the last one is read (a walk that prefetched
  // the operators' pages leaves nothing for a later pass over their tables to read again).
  while (first <= last && pages_->pages.count(first)) ++first;
  if (first > last) return true;
  while (last > first && pages_->pages.count(last)) --last;
  if (first == 0) return false;
  const uint64_t count = last - first + 1;
  unsigned char* bytes = pages_->newBlock(count);
  if (target_->read_memory(target_->ctx, first * kPageSize, bytes, count * kPageSize) != 0) {
    pages_->dropLastBlock(count);
    return false;
  }
  for (uint64_t n = first; n <= last; ++n) {
    const unsigned char*& page = pages_->pages[n];
    if (!page) page = bytes + (n - first) * kPageSize;  // a page read before keeps its bytes: the same
  }
  pages_->last_number = UINT64_MAX;  // it may have been one found unreadable before
  return true;
}

void Remote::forgetPages(uint64_t addr, uint64_t size) const {
  if (size == 0) return;
  names_by_addresses_.clear();  // worked out from memory that may be among these bytes
  if (addr + size < addr || size > kMaxCachedPages * kPageSize) return pages_->clear();
  pages_->last_number = UINT64_MAX;
  for (uint64_t n = addr / kPageSize; n <= (addr + size - 1) / kPageSize; ++n) pages_->pages.erase(n);
}

std::string Remote::readString(uint64_t addr, const char* what) const {
  // Chunks that never cross a page boundary: a string near the end of a mapping must not fail
  // just because a fixed-size read would run past it.
  constexpr uint64_t kPage = 4096;
  std::string out;
  char chunk[256];
  while (out.size() <= kMaxStringLength) {
    uint64_t at = addr + out.size();
    uint64_t n = std::min<uint64_t>(sizeof chunk, kPage - at % kPage);
    read(at, chunk, n, what);
    const void* nul = std::memchr(chunk, '\0', n);
    if (nul) return out.append(chunk, static_cast<const char*>(nul) - chunk);
    out.append(chunk, n);
  }
  fail("string at " + hex(addr) + " (" + what + ") is not terminated within " + std::to_string(kMaxStringLength) +
       " bytes (corrupt memory?)");
}

void Remote::write(uint64_t addr, const void* data, uint64_t size, const char* what) const {
  if (!canWrite()) fail(std::string("cannot write ") + what + ": the target is not writable (a core file?)");
  forgetPages(addr, size);
  if (target_->write_memory(target_->ctx, addr, data, size) != 0)
    fail("cannot write memory at " + hex(addr) + " (" + what + "): a core file cannot be written; this needs a live process");
}

void Remote::placeBreakHook() const {
  if (target_ && target_->place_break_hook && target_->place_break_hook(target_->ctx) != 0)
    fail("cannot place the breakpoint on dscope_debug_break_hook");
}

std::optional<uint64_t> Remote::findSymbol(const char* name) const {
  if (!target_ || !target_->find_symbol) return std::nullopt;
  // Every command asks the same few (the runtimes' anchors), and a name no module defines costs a
  // look into every module file: each is asked once per memory generation.
  if (auto it = addresses_.find(name); it != addresses_.end()) return it->second;
  return addresses_[name] = lookUpSymbol(name);
}

std::optional<uint64_t> Remote::lookUpSymbol(const char* name) const {
  // A debugger that looked for a container's libraries on this machine's paths has no symbols of
  // theirs, or another build's (the host's libc at the path of the container's): the files found
  // in the process's root (or under the sysroot), checked by build-id, are asked first.
  modules();
  const auto& moved = modules_->moved;
  for (const auto& m : moved)
    if (auto found = symbolInFile(m.path, m.start, name)) return found;
  // A target whose files were found so (a container's root, a sysroot) and lacks none: the rest of
  // its files are searched the same way, and a name none of them defines is defined nowhere. The
  // front end would read every module's whole symbol table for it (a name no module defines,
  // dscope_debug_descriptor in a PyTorch process, is asked by every command).
  if (!moved.empty() && modules_->missing.empty()) {
    auto searched = [&](const ModuleMapping& m) {
      return std::any_of(moved.begin(), moved.end(), [&](const ModuleMapping& n) { return n.start == m.start; });
    };
    for (const auto& m : modules_->found)
      if (!searched(m))
        if (auto found = symbolInFile(m.path, m.start, name)) return found;
    return std::nullopt;
  }
  uint64_t addr = 0;
  if (target_->find_symbol(target_->ctx, name, &addr) != 0 || addr == 0) return std::nullopt;
  return addr;
}

std::string Remote::symbolize(uint64_t addr) const {
  if (addr == 0) return "";
  // op-table names the same few fallback kernels over and over: look each up once.
  if (auto it = symbols_.find(addr); it != symbols_.end()) return it->second;
  return symbols_[addr] = describeCodeAddress(modules(), addr);
}

const FramePc& Remote::functionsAt(uint64_t addr, bool return_address) const {
  // A deep stack repeats a few pcs thousands of times.
  auto& answers = functions_[return_address];
  if (auto it = answers.find(addr); it != answers.end()) return it->second;
  return answers[addr] = inspect::functionsAt(modules(), addr, return_address);
}

namespace {

FileRoots fileRoots(const dscope_target* target) {
  return {target && target->sysroot ? target->sysroot : "", target ? target->pid : 0};
}

}  // namespace

const std::vector<ModuleMapping>& Remote::modules() const {
  if (modules_) return modules_->found;
  auto files = std::make_shared<ModuleFiles>();
  modules_ = files;
  if (!target_ || !target_->module_at) return files->found;
  std::vector<ModuleMapping> listed;
  constexpr uint64_t kMaxModules = 4096;  // bounded: a front end answering forever ends here
  for (uint64_t i = 0; i < kMaxModules; ++i) {
    uint64_t start = 0;
    char path[4096] = {};
    if (target_->module_at(target_->ctx, i, &start, path, sizeof path) != 0) break;
    path[sizeof path - 1] = '\0';
    if (path[0]) listed.push_back({start, path});
  }
  // A debugger that read a file under its sysroot names it by that file's path (LLDB): the process
  // named it by the path below the sysroot.
  const FileRoots roots = fileRoots(target_);
  std::string sysroot = roots.sysroot;
  while (!sysroot.empty() && sysroot.back() == '/') sysroot.pop_back();
  for (ModuleMapping& m : listed)
    if (!sysroot.empty() && m.path.size() > sysroot.size() && m.path.compare(0, sysroot.size(), sysroot) == 0 &&
        m.path[sysroot.size()] == '/')
      m.path.erase(0, sysroot.size());
  // A debugger that found no file for a library may list no module for it (LLDB): the process's
  // link map names it all the same.
  const std::vector<ModuleMapping> libraries = linkMapModules(*this);
  for (const ModuleMapping& library : libraries)
    if (std::none_of(listed.begin(), listed.end(), [&](const ModuleMapping& m) { return m.start == library.start; }))
      listed.push_back(library);
  for (const ModuleMapping& m : listed) {
    MissingModuleFile missing;
    const std::string id = imageBuildId(*this, m.start);
    auto file = findModuleFile(m.path, id, roots, &missing);
    if (!file) {
      files->missing.push_back(missing);
      continue;
    }
    files->found.push_back({m.start, *file});
    // The debugger may not have this module's symbols, or another build's: it was found elsewhere
    // than the path given, or the link map's path (which debuggers load) holds another build here
    // (a chroot's libc named /usr/lib/..., where the host has its own).
    auto named = std::find_if(libraries.begin(), libraries.end(), [&](const ModuleMapping& l) { return l.start == m.start; });
    const bool link_map_elsewhere = named != libraries.end() && !id.empty() && fileBuildId(named->path) != id;
    if (*file != m.path || link_map_elsewhere) files->moved.push_back({m.start, *file});
  }
  return files->found;
}

std::string Remote::missingModuleFile(const std::string& prefix) const {
  modules();
  for (const auto& m : modules_->missing) {
    const std::string name = m.path.substr(m.path.rfind('/') + 1);
    if (name.rfind(prefix, 0) == 0)
      return missingFileLine(m, fileRoots(target_), target_ && target_->sysroot_setting ? target_->sysroot_setting : "");
  }
  return "";
}

std::optional<dscope_value> Remote::evaluate(const std::string& expr, std::string* error) const {
  if (!target_ || !target_->evaluate) return std::nullopt;
  pages_->clear();  // an expression may assign to the target's memory
  dscope_value value{};
  char err[512] = {};
  if (target_->evaluate(target_->ctx, expr.c_str(), &value, err, sizeof err) != 0) {
    err[sizeof err - 1] = '\0';
    *error = err[0] ? err : "cannot evaluate '" + shown(expr) + "'";
    return std::nullopt;
  }
  terminate(value);
  return value;
}

int Remote::frameVariable(const char* name, bool parameter, dscope_value* value, std::string* error) const {
  if (!target_ || !target_->frame_variable) return -1;
  *value = dscope_value{};
  char err[512] = {};
  const int status = target_->frame_variable(target_->ctx, name, parameter ? 1 : 0, value, err, sizeof err);
  err[sizeof err - 1] = '\0';
  terminate(*value);
  if (status == 2) *error = err[0] ? err : "unreadable";
  return status >= 0 && status <= 3 ? status : 2;
}

std::optional<int64_t> Remote::threadTid(int64_t n) const {
  if (!target_ || !target_->thread_tid) return std::nullopt;
  int64_t tid = 0;
  if (target_->thread_tid(target_->ctx, n, &tid) != 0) return std::nullopt;
  return tid;
}

int64_t Remote::askedThread(std::optional<int64_t> n) const {
  const int64_t tid = chosenThread(n);
  if (n && threadExists(tid) == false)
    fail("no thread " + std::to_string(*n) + " (neither a debugger thread number nor a thread id of the process)");
  return tid;
}

std::vector<int64_t> Remote::everyThread(size_t at_most) const {
  std::vector<int64_t> tids = threadIds().threads();
  if (tids.size() > at_most) tids.resize(at_most);
  if (tids.empty() && selectedTid() > 0) tids.push_back(selectedTid());
  return tids;
}

std::optional<bool> Remote::threadExists(int64_t tid) const {
  if (!target_ || !target_->thread_exists) return std::nullopt;
  const int answer = target_->thread_exists(target_->ctx, tid);
  if (answer != 0 && answer != 1) return std::nullopt;
  return answer == 1;
}

std::optional<uint64_t> Remote::threadPointer(int64_t tid) const {
  if (!target_ || !target_->thread_pointer) return std::nullopt;
  uint64_t addr = 0;
  if (target_->thread_pointer(target_->ctx, tid, &addr) != 0) return std::nullopt;
  return addr;
}

const ThreadIds& Remote::threadIds() const {
  if (!thread_ids_) thread_ids_ = std::make_unique<ThreadIds>(*this);
  return *thread_ids_;
}

std::vector<uint64_t> Remote::mappingStarts() const {
  constexpr uint64_t kMaxMappings = 1 << 16;
  if (!target_ || !target_->mapping_starts) return {};
  std::vector<uint64_t> starts(kMaxMappings);
  uint64_t count = 0;
  if (target_->mapping_starts(target_->ctx, starts.data(), starts.size(), &count) != 0) return {};
  starts.resize(std::min(count, kMaxMappings));
  return starts;
}

std::string Remote::executableBuildId() const {
  char id[129] = {};
  if (!target_ || !target_->executable_build_id || target_->executable_build_id(target_->ctx, id, sizeof id) != 0)
    return "";
  id[sizeof id - 1] = '\0';
  return id;
}

}  // namespace dscope::inspect
