#include "Remote.h"

#include "ModuleFiles.h"
#include "TargetImage.h"
#include "ThreadLocal.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
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

// Made with make_unique_for_overwrite: bytes are written by the read before anything reads them
// (zeroing them first was 8 % of `dscope core`'s summary on a PyTorch core).
struct Remote::Page {
  bool readable = false;  // false: this page cannot be read whole; reads touching it go direct
  unsigned char bytes[kPageSize];
};

// What the last command read, kept for the next one under the same memory generation.
struct Remote::Kept {
  uint64_t generation = 0;
  std::unordered_map<uint64_t, std::unique_ptr<Page>> pages;
  std::unordered_map<uint64_t, std::string> symbols;
  std::unordered_map<std::string, std::optional<uint64_t>> addresses;
  std::map<std::array<uint64_t, 4>, std::string> names_by_addresses;
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
  // Small reads (fields, strings, an operator's table) go through the page cache; a read of a
  // page or more (a thread's records) is one call either way.
  if (size < kPageSize && readThroughPages(addr, out, size)) return;
  if (target_->read_memory(target_->ctx, addr, out, size) != 0)
    fail("cannot read memory at " + hex(addr) + " (" + what + ")");
}

bool Remote::readThroughPages(uint64_t addr, void* out, uint64_t size) const {
  auto* dst = static_cast<unsigned char*>(out);
  while (size > 0) {
    const Page* p = page(addr / kPageSize);
    if (!p->readable) return false;
    const uint64_t offset = addr % kPageSize, n = std::min(size, kPageSize - offset);
    std::memcpy(dst, p->bytes + offset, n);
    dst += n;
    addr += n;
    size -= n;
  }
  return true;
}

const Remote::Page* Remote::page(uint64_t number) const {
  if (auto it = pages_.find(number); it != pages_.end()) return it->second.get();
  if (pages_.size() >= kMaxCachedPages) pages_.clear();
  auto p = std::make_unique_for_overwrite<Page>();
  p->readable = number != 0 && target_->read_memory(target_->ctx, number * kPageSize, p->bytes, kPageSize) == 0;
  return pages_.emplace(number, std::move(p)).first->second.get();
}

bool Remote::prefetch(uint64_t addr, uint64_t size) const {
  constexpr uint64_t kMaxPrefetch = 1 << 20;
  if (!target_ || !target_->read_memory || size == 0 || size > kMaxPrefetch || addr + size < addr) return false;
  const uint64_t first = addr / kPageSize, last = (addr + size - 1) / kPageSize;
  if (pages_.size() + (last - first + 1) > kMaxCachedPages) pages_.clear();
  const uint64_t size_read = (last - first + 1) * kPageSize;
  const auto bytes = std::make_unique_for_overwrite<unsigned char[]>(size_read);
  if (first == 0 || target_->read_memory(target_->ctx, first * kPageSize, bytes.get(), size_read) != 0) return false;
  for (uint64_t n = first; n <= last; ++n) {
    auto& page = pages_[n];
    if (page) continue;  // kept: the same bytes
    page = std::make_unique_for_overwrite<Page>();
    page->readable = true;
    std::memcpy(page->bytes, bytes.get() + (n - first) * kPageSize, kPageSize);
  }
  return true;
}

void Remote::forgetPages(uint64_t addr, uint64_t size) const {
  if (size == 0) return;
  names_by_addresses_.clear();  // worked out from memory that may be among these bytes
  if (addr + size < addr || size > kMaxCachedPages * kPageSize) return pages_.clear();
  for (uint64_t n = addr / kPageSize; n <= (addr + size - 1) / kPageSize; ++n) pages_.erase(n);
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
  for (const auto& m : modules_->moved)
    if (auto found = symbolInFile(m.path, m.start, name)) return found;
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
  pages_.clear();  // an expression may assign to the target's memory
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
