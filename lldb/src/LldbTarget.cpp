#include "LldbTarget.h"


#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <sstream>
#include <vector>

namespace dscope::lldb_plugin {

namespace {

void copyOut(const std::string& text, char* out, uint64_t size) {
  if (!out || size == 0) return;
  size_t n = std::min<uint64_t>(text.size(), size - 1);
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

std::string firstLine(const char* text) {
  std::string s = text ? text : "";
  auto nl = s.find('\n');
  if (nl != std::string::npos) s.resize(nl);
  return s;
}

// LLDB's diagnostics, one string per line.
std::vector<std::string> splitLines(const char* text) {
  std::vector<std::string> lines;
  std::istringstream in(text ? text : "");
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// LLDB's expression errors read "expression failed to parse:\nerror: <user expression 0>:1:9:
// expected expression\n...": the reason is the first error's text after its location, as GDB's
// reason is its whole one-line message. Some fail on a warning alone (`1/0`: "warning: <user
// expression 0>:1:2: division by zero is undefined"): then the first warning's.
std::string expressionReason(const char* error) {
  const std::vector<std::string> lines = splitLines(error);
  for (std::string severity : {"error: ", "warning: "}) {
    for (const std::string& line : lines) {
      if (line.rfind(severity, 0) != 0 || line.compare(severity.size(), 16, "<user expression") != 0) continue;
      const size_t close = line.find(">:");
      if (close == std::string::npos) continue;
      size_t i = close + 2;
      while (i < line.size() && (std::isdigit(static_cast<unsigned char>(line[i])) || line[i] == ':')) ++i;
      while (i < line.size() && line[i] == ' ') ++i;
      return line.substr(i);
    }
  }
  for (std::string line : lines) {  // no located diagnostic: the first line that says something
    if (line.rfind("error: ", 0) == 0) line.erase(0, 7);
    if (!line.empty() && line != "expression failed to parse:") return line;
  }
  return "cannot evaluate";
}

// Whether every error of a failed compile is clang's "is a pointer; did you mean to use '->'?".
bool onlyArrowFixIts(const char* diagnostics) {
  bool any = false;
  for (const std::string& line : splitLines(diagnostics)) {
    if (line.rfind("error: ", 0) != 0) continue;
    if (line.find("did you mean to use '->'?") == std::string::npos) return false;
    any = true;
  }
  return any;
}

// A scalar's 64 bits as GDB's int(value) & 0xFFFFFFFFFFFFFFFF gives them: signed types
// sign-extended (-1 is all ones), unsigned ones zero-extended.
bool bits64(lldb::SBValue v, uint64_t* out) {
  lldb::SBError error;
  if (v.GetType().GetCanonicalType().GetTypeFlags() & lldb::eTypeIsSigned) {
    int64_t signed_value = v.GetValueAsSigned(error, 0);
    if (error.Fail()) return false;
    *out = static_cast<uint64_t>(signed_value);
    return true;
  }
  uint64_t value = v.GetValueAsUnsigned(error, 0);
  if (error.Fail()) return false;
  *out = value;
  return true;
}

bool isStruct(lldb::SBType type) {
  auto kind = type.GetCanonicalType().GetTypeClass();
  return kind == lldb::eTypeClassStruct || kind == lldb::eTypeClassClass;
}

// The canonical, unqualified name of a type ("" for none: GetName can give NULL).
std::string typeName(lldb::SBType type) {
  const char* name = type.GetCanonicalType().GetUnqualifiedType().GetName();
  return name ? name : "";
}

bool isLive(lldb::SBProcess& process) {
  if (!process.IsValid()) return false;
  switch (process.GetState()) {
    case lldb::eStateStopped:
    case lldb::eStateSuspended:
    case lldb::eStateCrashed:
    case lldb::eStateRunning:
    case lldb::eStateStepping:
      return true;
    default:
      return false;
  }
}

// A module's global definition of `name` (never an undefined reference or a PLT stub).
bool definitionIn(lldb::SBModule module, const char* name, lldb::SBTarget& target, bool loaded, uint64_t* addr) {
  lldb::SBSymbolContextList list = module.FindSymbols(name, lldb::eSymbolTypeAny);
  for (uint32_t i = 0; i < list.GetSize(); ++i) {
    lldb::SBSymbol symbol = list.GetContextAtIndex(i).GetSymbol();
    if (!symbol.IsValid()) continue;
    switch (symbol.GetType()) {
      case lldb::eSymbolTypeCode:
      case lldb::eSymbolTypeData:
      case lldb::eSymbolTypeResolver:
        break;
      default:
        continue;  // undefined, trampoline (PLT), debug-only entries
    }
    lldb::SBAddress start = symbol.GetStartAddress();
    uint64_t a = loaded ? start.GetLoadAddress(target) : start.GetFileAddress();
    if (a == LLDB_INVALID_ADDRESS || a == 0) continue;
    *addr = a;
    return true;
  }
  return false;
}

}  // namespace

bool describeValue(lldb::SBValue value, dscope_value* out, std::string* error) {
  *out = dscope_value{};
  copyOut(value.GetTypeName() ? value.GetTypeName() : "value", out->shown, sizeof out->shown);
  lldb::SBValue v = value.GetNonSyntheticValue();
  lldb::SBType type = v.GetType().GetCanonicalType();
  uint64_t referent = 0;
  if (type.IsReferenceType()) {
    // The reference's own value is the referent's address wherever its DWARF puts it: where clang
    // emits the referent's type as a declaration only (defined in another module, as
    // OperatorEntry is in the runtime), the dereferenced value has no address at all.
    lldb::SBError e;
    referent = v.GetValueAsUnsigned(e, 0);
    if (e.Fail() || referent == 0) {
      *error = e.Fail() && e.GetCString() ? firstLine(e.GetCString()) : "the reference is null";
      return false;
    }
    type = type.GetDereferencedType().GetCanonicalType();
    v = v.Dereference();
  }
  copyOut(typeName(type), out->type, sizeof out->type);
  out->size = type.GetByteSize();
  if (isStruct(type)) {
    out->kind = DSCOPE_KIND_OBJECT;
    const uint64_t addr = referent ? referent : v.GetLoadAddress();
    if (addr != LLDB_INVALID_ADDRESS && addr != 0) {
      out->address = addr;
      return true;
    }
    uint8_t bytes[8] = {};
    lldb::SBError e;
    if (out->size == 0 || out->size > 8 || v.GetData().ReadRawData(e, 0, bytes, out->size) < out->size || e.Fail()) {
      *error = "the value is not in memory";
      return false;
    }
    for (uint64_t i = 0; i < out->size; ++i) out->bits |= static_cast<uint64_t>(bytes[i]) << (8 * i);
    return true;
  }
  const uint32_t flags = type.GetTypeFlags();
  lldb::SBType pointee = type.IsPointerType() ? type.GetPointeeType().GetCanonicalType() : lldb::SBType();
  // A function, which clang's expression decays to its address (`keyset abort`), is no integer.
  if ((type.IsPointerType() && pointee.GetTypeClass() == lldb::eTypeClassFunction) ||
      !(flags & (lldb::eTypeIsScalar | lldb::eTypeIsEnumeration | lldb::eTypeIsPointer)) || (flags & lldb::eTypeIsFloat)) {
    out->kind = DSCOPE_KIND_OTHER;
    return true;
  }
  if (!bits64(v, &out->bits)) {
    lldb::SBError e = v.GetError();
    *error = e.Fail() && e.GetCString() ? firstLine(e.GetCString()) : "the value cannot be read";
    return false;
  }
  out->kind = DSCOPE_KIND_INTEGER;
  if (type.IsPointerType() && isStruct(pointee)) {
    out->kind = DSCOPE_KIND_POINTER;
    copyOut(typeName(pointee), out->type, sizeof out->type);
    out->size = pointee.GetByteSize();
  }
  return true;
}

LldbTarget::LldbTarget(lldb::SBTarget target, lldb::SBFrame frame) : target_(target), frame_(frame) {
  if (target_.IsValid()) {
    process_ = target_.GetProcess();
    debugger_ = target_.GetDebugger();
  }
  if (process_.IsValid()) {
    const char* plugin = process_.GetPluginName();
    core_ = plugin && std::strstr(plugin, "core") != nullptr;  // "elf-core", "minidump" ...
    live_ = !core_ && isLive(process_);
  }
  c_.ctx = this;
  c_.read_memory = &LldbTarget::readMemory;
  c_.write_memory = &LldbTarget::writeMemory;
  c_.find_symbol = &LldbTarget::findSymbol;
  c_.module_at = &LldbTarget::moduleAt;
  c_.evaluate = &LldbTarget::evaluate;
  c_.thread_tid = &LldbTarget::threadTid;
  c_.stack_frame = &LldbTarget::stackFrame;
  c_.frame_walk_end = &LldbTarget::frameWalkEnd;
  c_.thread_exists = &LldbTarget::threadExists;
  c_.mapping_starts = &LldbTarget::mappingStarts;
  c_.executable_build_id = &LldbTarget::executableBuildId;
  // thread_pointer stays NULL: lldb-16 has no fs_base register, live or in a core (the library
  // matches threads by their stacks instead).
  c_.is_core = core_ ? 1 : 0;  // place_break_hook stays NULL: DispatchBreak.cpp places the hook pending
  c_.selected_tid = 0;
  c_.memory_generation = 0;
  if (live_ || core_) {
    lldb::SBThread thread = process_.GetSelectedThread();
    if (thread.IsValid()) c_.selected_tid = static_cast<int64_t>(thread.GetThreadID());
    // The memory is as it was while the process has not run since (its stop id, expression
    // evaluations included) and no module was added; the process's unique id tells targets apart.
    // (A `memory write` typed by hand bumps none of them: the next command may read the old bytes.)
    c_.memory_generation = ((uint64_t{process_.GetUniqueID()} << 40) ^ (uint64_t{target_.GetNumModules()} << 24) ^
                            process_.GetStopID(true)) |
                           (uint64_t{1} << 63);
  }
  c_.frame_cap = 0;  // filled by run(): reading a setting needs the debugger
  // Where the process's files are: the selected platform's sysroot, and a live process's own root.
  sysroot_ = platformSysroot();
  c_.sysroot = sysroot_.c_str();
  c_.pid = live_ ? static_cast<int64_t>(process_.GetProcessID()) : 0;
  c_.sysroot_setting =
      "platform select remote-linux --sysroot DIR (before the core: lldb-16 -O \"platform select remote-linux "
      "--sysroot DIR\" --core CORE)";
}

// The selected platform's sysroot (`platform select NAME --sysroot DIR`), "" when none: LLDB 16's
// API has no getter, `platform status` prints it. The host platform ignores a sysroot, so it is
// not asked: a target is made for every command and every breakpoint hit, and `platform status`
// of the host costs milliseconds (without a controlling terminal, minutes over a dispatch-break run).
std::string LldbTarget::platformSysroot() {
  if (!debugger_.IsValid()) return "";
  lldb::SBPlatform platform = debugger_.GetSelectedPlatform();
  if (!platform.IsValid() || std::string(platform.GetName() ? platform.GetName() : "") == "host") return "";
  lldb::SBCommandReturnObject result;
  debugger_.GetCommandInterpreter().HandleCommand("platform status", result, false);
  const std::string text = result.GetOutput() ? result.GetOutput() : "";
  const std::string label = "Sysroot: ";
  const size_t at = text.find(label);
  if (at == std::string::npos) return "";
  const size_t end = text.find('\n', at);
  return text.substr(at + label.size(), end == std::string::npos ? std::string::npos : end - at - label.size());
}

LldbTarget LldbTarget::forSelected(lldb::SBDebugger& debugger) {
  lldb::SBTarget target = debugger.GetSelectedTarget();
  lldb::SBFrame frame;
  if (target.IsValid()) {
    lldb::SBProcess process = target.GetProcess();
    if (process.IsValid()) frame = process.GetSelectedThread().GetSelectedFrame();
  }
  return LldbTarget(target, frame);
}

InspectResult LldbTarget::run(const std::string& command_line) {
  // Only dispatch-trace --frames asks for it: no other command reads a setting.
  if (command_line.rfind("dispatch-trace", 0) == 0) c_.frame_cap = frameCap();
  return answer([&](const dscope_target* t, int* is_error) { return dscope_inspect_run(t, command_line.c_str(), is_error); });
}

InspectResult LldbTarget::answer(const std::function<char*(const dscope_target*, int*)>& call) {
  InspectResult result;
  const lldb::StateType state = process_.IsValid() ? process_.GetState() : lldb::eStateInvalid;
  if (state == lldb::eStateRunning || state == lldb::eStateStepping) {
    // Async mode (lldb-dap): its memory is moving.
    result.text = std::string(dscope_inspect_message(DSCOPE_MESSAGE_PROCESS_RUNNING)) + "\n";
    result.is_error = true;
    return result;
  }
  int is_error = 0;
  char* text = call(&c_, &is_error);
  result.text = text ? text : "dscope: out of memory\n";
  result.is_error = is_error != 0 || !text;
  dscope_inspect_free(text);
  if (interrupted()) {  // the callbacks failed from the interrupt on: the text is no answer
    result.text = std::string(dscope_inspect_message(DSCOPE_MESSAGE_INTERRUPTED)) + "\n";
    result.is_error = result.interrupted = true;
  }
  if (!result.text.empty() && result.text.back() != '\n') result.text += '\n';  // "" (nothing to say) stays ""
  return result;
}

LldbTarget::Summary LldbTarget::summarize(lldb::SBValue value, std::string* error) {
  dscope_value v{};
  if (!describeValue(value, &v, error)) return {nullptr, &dscope_summary_free};
  return {dscope_value_summary(&c_, &v), &dscope_summary_free};
}

bool LldbTarget::interrupted() {
  if (!interrupted_ && debugger_.IsValid()) interrupted_ = debugger_.GetCommandInterpreter().WasInterrupted();
  return interrupted_;
}

// ---------------------------------------------------------------- addresses

namespace {

// Where the modules' top-level sections (segments) are loaded, sorted by start: made once per
// process and module count, and kept across commands. A core's heap address is in no section,
// and finding that out by asking every section of every module cost milliseconds per read in a
// process with hundreds of libraries (Python with torch).
struct LoadedSegment {
  uint64_t start = 0, end = 0;
  uint32_t module = 0, section = 0;
};
struct SegmentIndex {
  uint32_t process = 0, modules = 0;
  std::vector<LoadedSegment> segments;
};

const std::vector<LoadedSegment>& loadedSegments(lldb::SBTarget& target, lldb::SBProcess& process) {
  static SegmentIndex index;
  const uint32_t modules = target.GetNumModules();
  if (!index.segments.empty() && index.process == process.GetUniqueID() && index.modules == modules) return index.segments;
  index = {process.GetUniqueID(), modules, {}};
  for (uint32_t m = 0; m < modules; ++m) {
    lldb::SBModule module = target.GetModuleAtIndex(m);
    for (size_t i = 0; i < module.GetNumSections(); ++i) {
      lldb::SBSection segment = module.GetSectionAtIndex(i);
      const uint64_t base = segment.GetLoadAddress(target);
      if (base != LLDB_INVALID_ADDRESS && segment.GetByteSize())
        index.segments.push_back({base, base + segment.GetByteSize(), m, static_cast<uint32_t>(i)});
    }
  }
  std::sort(index.segments.begin(), index.segments.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
  return index.segments;
}

}  // namespace

lldb::SBAddress LldbTarget::resolveLoadAddress(uint64_t addr) {
  lldb::SBAddress a = target_.ResolveLoadAddress(addr);
  if (a.GetSection().IsValid()) return a;
  // LLDB 16 cannot map back addresses in a library's read-write segment when that segment also
  // holds thread-local sections (.tdata/.tbss get load addresses that shadow it): the runtime's
  // .data.rel.ro (vtables) and .data. Find the section by its load range instead.
  const auto& segments = loadedSegments(target_, process_);
  auto after = std::upper_bound(segments.begin(), segments.end(), addr,
                                [](uint64_t x, const LoadedSegment& s) { return x < s.start; });
  // The segment starting last at or below addr holds it; a few before it too, in case segments nest.
  for (int tried = 0; after != segments.begin() && tried < 8; ++tried) {
    const auto it = --after;
    if (addr >= it->end) continue;
    {
      lldb::SBSection segment = target_.GetModuleAtIndex(it->module).GetSectionAtIndex(it->section);
      const uint64_t base = it->start;
      for (size_t j = 0; j < segment.GetNumSubSections(); ++j) {
        lldb::SBSection section = segment.GetSubSectionAtIndex(j);
        const char* name = section.GetName();
        if (name && (std::strcmp(name, ".tdata") == 0 || std::strcmp(name, ".tbss") == 0)) continue;
        const uint64_t start = section.GetLoadAddress(target_);
        if (start != LLDB_INVALID_ADDRESS && addr >= start && addr - start < section.GetByteSize())
          return lldb::SBAddress(section, addr - start);
      }
      return lldb::SBAddress(segment, addr - base);
    }
  }
  return a;
}

// ---------------------------------------------------------------- memory

bool LldbTarget::readFromModuleFile(uint64_t addr, void* out, uint64_t size) {
  // With no process the modules are not loaded: addresses are file addresses of the executable
  // (as GDB reads its exec file before `run`); with a core they are load addresses.
  auto* dst = static_cast<uint8_t*>(out);
  while (size > 0) {
    lldb::SBAddress a = (live_ || core_) ? resolveLoadAddress(addr) : target_.ResolveFileAddress(addr);
    lldb::SBSection section = a.GetSection();
    if (!section.IsValid()) return false;
    const uint64_t base = (live_ || core_) ? section.GetLoadAddress(target_) : section.GetFileAddress();
    if (base == LLDB_INVALID_ADDRESS || addr < base) return false;
    const uint64_t offset = addr - base;
    const uint64_t in_section = section.GetByteSize();
    if (offset >= in_section) return false;
    const uint64_t n = std::min(size, in_section - offset);
    const uint64_t file_bytes = section.GetFileByteSize();
    // Zero-fill (.bss) bytes past the file contents read as zeros, as the loader maps them.
    uint64_t from_file = offset < file_bytes ? std::min(n, file_bytes - offset) : 0;
    if (from_file > 0) {
      lldb::SBData data = section.GetSectionData(offset, from_file);
      lldb::SBError error;
      if (!data.IsValid() || data.GetByteSize() < from_file || data.ReadRawData(error, 0, dst, from_file) < from_file ||
          error.Fail())
        return false;
    }
    std::memset(dst + from_file, 0, n - from_file);
    dst += n;
    addr += n;
    size -= n;
  }
  return true;
}

// Whether the file LLDB opened for `module` is the one the core's process mapped: its build-id
// (LLDB's UUID) is in the ELF header page the core holds of it (every core keeps those pages). A
// sysroot holding another build of a library makes LLDB 16 open that build all the same; its
// bytes are not the process's. Asked once per module and process.
bool LldbTarget::isProcessFile(lldb::SBModule module) {
  static std::map<std::pair<lldb::user_id_t, std::string>, bool> known;
  static std::mutex mutex;
  const char* uuid = module.GetUUIDString();
  const std::string key = uuid ? uuid : "";
  std::lock_guard lock(mutex);
  auto [it, added] = known.try_emplace({process_.GetUniqueID(), key}, true);
  if (!added) return it->second;
  const uint8_t* id = module.GetUUIDBytes();
  const size_t id_size = key.empty() ? 0 : (key.size() - std::count(key.begin(), key.end(), '-')) / 2;
  const uint64_t header = module.GetObjectFileHeaderAddress().GetLoadAddress(target_);
  unsigned char page[4096];
  lldb::SBError error;
  if (!id || id_size == 0 || header == LLDB_INVALID_ADDRESS ||
      process_.ReadMemory(header, page, sizeof page, error) != sizeof page || error.Fail())
    return true;  // nothing to compare: as before
  it->second = std::search(page, page + sizeof page, id, id + id_size) != page + sizeof page;
  return it->second;
}

bool LldbTarget::read(uint64_t addr, void* out, uint64_t size) {
  if (size == 0) return true;
  if (live_) {
    lldb::SBError error;
    size_t n = process_.ReadMemory(addr, out, size, error);
    return error.Success() && n == size;
  }
  if (!core_) return readFromModuleFile(addr, out, size);
  // A core: bytes of read-only, file-backed sections come from the module files (kernel cores
  // leave those pages out, and LLDB 16 reads them as zeros); everything else from the core.
  auto* dst = static_cast<uint8_t*>(out);
  while (size > 0) {
    lldb::SBAddress resolved = resolveLoadAddress(addr);
    lldb::SBSection section = resolved.GetSection();
    uint64_t n = size;
    bool from_file = false;
    if (section.IsValid()) {
      const uint64_t base = section.GetLoadAddress(target_);
      if (base != LLDB_INVALID_ADDRESS && addr >= base && addr - base < section.GetByteSize()) {
        n = std::min(size, section.GetByteSize() - (addr - base));
        from_file = (section.GetPermissions() & lldb::ePermissionsWritable) == 0 && section.GetFileByteSize() > 0 &&
                    isProcessFile(resolved.GetModule());
      }
    }
    if (from_file) {
      if (!readFromModuleFile(addr, dst, n)) return false;
    } else {
      lldb::SBError error;
      size_t got = process_.ReadMemory(addr, dst, n, error);
      if (error.Fail() || got != n) return false;
    }
    dst += n;
    addr += n;
    size -= n;
  }
  return true;
}

int LldbTarget::readMemory(void* ctx, uint64_t addr, void* out, uint64_t size) {
  try {
    auto* self = static_cast<LldbTarget*>(ctx);
    return !self->interrupted() && self->read(addr, out, size) ? 0 : 1;
  } catch (...) {
    return 1;
  }
}

int LldbTarget::writeMemory(void* ctx, uint64_t addr, const void* data, uint64_t size) {
  auto* self = static_cast<LldbTarget*>(ctx);
  if (!self->live_) return 1;  // a core file, or no process
  lldb::SBError error;
  size_t n = self->process_.WriteMemory(addr, data, size, error);
  return error.Success() && n == size ? 0 : 1;
}

// ---------------------------------------------------------------- symbols

bool LldbTarget::lookupSymbol(const std::string& name, uint64_t* addr) {
  // Answers, misses too, are kept while the process and its modules stay the same: a lookup
  // that finds nothing asks every module (300+ in a Python process with torch), and the commands
  // look up the same few names every time.
  static std::tuple<lldb::user_id_t, uint32_t, bool> owner;
  static std::unordered_map<std::string, std::optional<uint64_t>> known;
  const auto current = std::make_tuple(process_.IsValid() ? process_.GetUniqueID() : 0, target_.GetNumModules(),
                                       live_ || core_);
  if (current != owner) {
    known.clear();
    owner = current;
  }
  if (auto cached = known.find(name); cached != known.end()) {
    if (cached->second) *addr = *cached->second;
    return cached->second.has_value();
  }
  lldb::SBModule executable = target_.GetModuleAtIndex(0);
  const bool loaded = live_ || core_;
  // The dynamic linker's order: the executable's own definition first (a PIE executable that
  // uses dscope_debug_descriptor holds the live copy, by COPY relocation), then the libraries
  // in load order. Without a process only the executable is searched, as GDB does before `run`.
  bool found = executable.IsValid() && definitionIn(executable, name.c_str(), target_, loaded, addr);
  for (uint32_t i = 1; !found && loaded && i < target_.GetNumModules(); ++i)
    found = definitionIn(target_.GetModuleAtIndex(i), name.c_str(), target_, loaded, addr);
  known[name] = found ? std::optional<uint64_t>(*addr) : std::nullopt;
  return found;
}

int LldbTarget::findSymbol(void* ctx, const char* name, uint64_t* addr) {
  try {
    auto* self = static_cast<LldbTarget*>(ctx);
    // No process and no core: the files hold no runtime state (an executable's copy of the
    // descriptor is zeros until the program runs), as GDB's front end says.
    if (!name || !self->target_.IsValid() || !(self->live_ || self->core_)) return 1;
    return self->lookupSymbol(name, addr) ? 0 : 1;
  } catch (...) {
    return 1;
  }
}

int LldbTarget::moduleAt(void* ctx, uint64_t index, uint64_t* start, char* path, uint64_t path_size) {
  try {
    auto* self = static_cast<LldbTarget*>(ctx);
    if (self->interrupted() || !(self->live_ || self->core_)) return 1;  // no process: nothing is mapped
    if (index >= self->target_.GetNumModules()) return 1;
    lldb::SBModule module = self->target_.GetModuleAtIndex(static_cast<uint32_t>(index));
    const uint64_t header = module.GetObjectFileHeaderAddress().GetLoadAddress(self->target_);
    char file[4096] = {};
    module.GetFileSpec().GetPath(file, sizeof file);
    // A module LLDB has not placed in the process (its header unmapped) is reported without a
    // path: the library skips it.
    *start = header == LLDB_INVALID_ADDRESS ? 0 : header;
    copyOut(header == LLDB_INVALID_ADDRESS ? "" : file, path, path_size);
    return 0;
  } catch (...) {
    return 1;
  }
}

// ---------------------------------------------------------------- expressions, threads

bool LldbTarget::evaluateExpression(const std::string& expr, dscope_value* value, std::string* error) {
  if (!target_.IsValid()) {
    *error = "no target (load a program or a core file first)";
    return false;
  }
  // A variable path ("ks", "x.impl_.p_->key_set") is read without compiling anything, which
  // also works in core files; anything else is an expression.
  lldb::SBValue v;
  if (frame_.IsValid()) {
    v = frame_.GetValueForVariablePath(expr.c_str());
    if (v.IsValid() && v.GetError().Fail()) v = lldb::SBValue();
  }
  auto compile = [&](bool fix_its, const std::string& text) {
    lldb::SBExpressionOptions options;
    options.SetIgnoreBreakpoints(true);
    options.SetUnwindOnError(true);
    options.SetTryAllThreads(false);
    options.SetTimeoutInMicroSeconds(5 * 1000 * 1000);
    options.SetSuppressPersistentResult(true);
    options.SetAutoApplyFixIts(fix_its);
    // Never code in the inferior (a core cannot run any, and a live process must not: GDB 13 runs
    // none either). The IR interpreter evaluates what needs no code, and refuses what it cannot
    // compute (1/0) instead of leaving an undefined value.
    options.SetAllowJIT(false);
    return frame_.IsValid() ? frame_.EvaluateExpression(text.c_str(), options)
                            : target_.EvaluateExpression(text.c_str(), options);
  };
  if (!live_ && !core_) {
    // No process: LLDB reads the executable's file, as GDB reads its sections before `run`, but
    // through whole segments, so `*(long*)0` would decode the ELF header. An object in a segment
    // but in none of its sections (LLDB nests the ELF sections in their PT_LOAD segment) is
    // unreadable, as in GDB. (A constant with no address gets a made-up one in no section.)
    lldb::SBValue where = compile(false, "&(" + expr + ")");
    lldb::SBError read;
    const uint64_t addr = where.IsValid() && where.GetError().Success() ? where.GetValueAsUnsigned(read, 0) : 0;
    lldb::SBSection section = target_.ResolveFileAddress(addr).GetSection();
    if (where.IsValid() && where.GetError().Success() && read.Success() && section.IsValid() &&
        !section.GetParent().IsValid()) {
      char text[64];
      std::snprintf(text, sizeof text, "Cannot access memory at address 0x%" PRIx64, addr);
      *error = text;
      return false;
    }
  }
  if (!v.IsValid()) {
    // What the user wrote, not what clang's fix-its make of it ("0x1 0x2" is no "0x1; 0x2"),
    // with one exception: GDB lets `.` reach through a pointer (x.impl_.p_.key_set), and so does
    // the fix-it for exactly that.
    v = compile(false, expr);
    const lldb::SBError failure = v.IsValid() ? v.GetError() : lldb::SBError();
    if (failure.Fail() && onlyArrowFixIts(failure.GetCString())) v = compile(true, expr);
  }
  if (!v.IsValid() || v.GetError().Fail()) {
    *error = expressionReason(v.IsValid() ? v.GetError().GetCString() : nullptr);
    return false;
  }
  return describeValue(v, value, error);
}

int LldbTarget::evaluate(void* ctx, const char* expr, dscope_value* value, char* err, uint64_t err_size) {
  try {
    std::string error;
    if (static_cast<LldbTarget*>(ctx)->evaluateExpression(expr ? expr : "", value, &error)) return 0;
    copyOut(error, err, err_size);
    return 1;
  } catch (...) {
    copyOut("cannot evaluate", err, err_size);
    return 1;
  }
}

int LldbTarget::threadTid(void* ctx, int64_t n, int64_t* tid) {
  auto* self = static_cast<LldbTarget*>(ctx);
  if (!(self->live_ || self->core_) || n <= 0 || n > UINT32_MAX) return 1;
  // LLDB's thread number ("thread #3", `thread select 3`) is the thread's index id.
  lldb::SBThread thread = self->process_.GetThreadByIndexID(static_cast<uint32_t>(n));
  if (!thread.IsValid()) return 1;
  *tid = static_cast<int64_t>(thread.GetThreadID());
  return 0;
}

int LldbTarget::threadExists(void* ctx, int64_t tid) {
  auto* self = static_cast<LldbTarget*>(ctx);
  if (!(self->live_ || self->core_)) return -1;
  return self->process_.GetThreadByID(static_cast<lldb::tid_t>(tid)).IsValid() ? 1 : 0;
}

int LldbTarget::mappingStarts(void* ctx, uint64_t* starts, uint64_t max, uint64_t* count) {
  auto* self = static_cast<LldbTarget*>(ctx);
  if (!(self->live_ || self->core_)) return 1;
  // Every readable region's start: a superset of the file mappings' (LLDB names none in a core).
  lldb::SBMemoryRegionInfoList regions = self->process_.GetMemoryRegions();
  lldb::SBMemoryRegionInfo region;
  uint64_t n = 0;
  for (uint32_t i = 0; i < regions.GetSize() && n < max; ++i)
    if (regions.GetMemoryRegionAtIndex(i, region) && region.IsReadable()) starts[n++] = region.GetRegionBase();
  *count = n;
  return 0;
}

int LldbTarget::executableBuildId(void* ctx, char* out, uint64_t out_size) {
  auto* self = static_cast<LldbTarget*>(ctx);
  if (!self->target_.IsValid()) return 1;
  // LLDB spells a GNU build-id as a UUID: upper-case hex in dash-separated groups.
  const char* uuid = self->target_.FindModule(self->target_.GetExecutable()).GetUUIDString();
  std::string id;
  for (const char* p = uuid ? uuid : ""; *p; ++p)
    if (*p != '-') id += static_cast<char>(std::tolower(static_cast<unsigned char>(*p)));
  if (id.empty()) return 1;
  copyOut(id, out, out_size);
  return 0;
}

// ---------------------------------------------------------------- stack frames

lldb::SBFrame LldbTarget::stackFrameOf(int64_t tid, uint64_t level) {
  if (!(live_ || core_) || level > UINT32_MAX) return lldb::SBFrame();
  if (walk_.tid != tid || !walk_.thread.IsValid()) {
    walk_ = StackWalk();
    walk_.tid = tid;
    walk_.thread = process_.GetThreadByID(static_cast<lldb::tid_t>(tid));
    if (!walk_.thread.IsValid()) return lldb::SBFrame();
  }
  // Frames are read one index further at a time (GetFrameAtIndex unwinds only that far; never
  // GetNumFrames, which unwinds a whole overflowed stack). Inlined calls share the CFA of the stack
  // frame they were inlined into: a new CFA starts a stack frame.
  while (walk_.starts.size() <= level && !walk_.complete) {
    lldb::SBFrame frame = walk_.thread.GetFrameAtIndex(walk_.listed);
    if (!frame.IsValid() || interrupted()) {
      walk_.complete = true;
      break;
    }
    const uint64_t cfa = frame.GetCFA();
    if (walk_.listed == 0 || cfa != walk_.last_cfa) walk_.starts.push_back(walk_.listed);
    walk_.last_cfa = cfa;
    ++walk_.listed;
  }
  return level < walk_.starts.size() ? walk_.thread.GetFrameAtIndex(walk_.starts[level]) : lldb::SBFrame();
}

int LldbTarget::stackFrame(void* ctx, int64_t tid, uint64_t level, uint64_t* pc, uint64_t* sp) {
  try {
    auto* self = static_cast<LldbTarget*>(ctx);
    if (self->interrupted()) return 1;
    lldb::SBFrame frame = self->stackFrameOf(tid, level);
    if (!frame.IsValid()) return 1;
    *pc = frame.GetPC();
    *sp = frame.GetSP();
    return 0;
  } catch (...) {
    return 1;
  }
}

namespace {

// Whether a local process has exited or been killed since LLDB stopped it (LLDB notices only when
// it next hears from it; its memory reads fail until then): no /proc entry, or a zombie.
bool processGone(lldb::pid_t pid) {
  std::FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r");
  if (!f) return true;
  char buf[512] = {};
  const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  const char* close = std::strrchr(buf, ')');  // the command name, in parentheses, may hold anything
  if (n == 0 || !close) return true;
  char state = ' ';
  std::sscanf(close + 1, " %c", &state);
  return state == 'Z' || state == 'X' || state == 'x';
}

}  // namespace

// LLDB 16 says nothing of why its unwinder stopped. On x86-64 a caller's return address is the word
// just below its callee's CFA: when the last frame's is unreadable, the stack memory ran out there
// (a truncated core); when it is readable, LLDB found the outermost frame (_start, clone3), or
// stopped at its own limit (max-backtrace-depth, counting stack frames).
int LldbTarget::frameWalkEnd(void* ctx, int64_t tid, uint64_t /*level*/) {
  try {
    auto* self = static_cast<LldbTarget*>(ctx);
    if (self->interrupted() || self->walk_.tid != tid || self->walk_.listed == 0) return DSCOPE_FRAMES_OUTERMOST;
    if (self->live_ && processGone(self->process_.GetProcessID())) return DSCOPE_FRAMES_GONE;
    const uint64_t cfa = self->walk_.last_cfa;
    uint64_t return_address = 0;
    if (cfa == LLDB_INVALID_ADDRESS || cfa < 8 || !self->read(cfa - 8, &return_address, 8))
      return DSCOPE_FRAMES_UNREADABLE;
    if (self->c_.frame_cap && self->walk_.starts.size() >= self->c_.frame_cap) return DSCOPE_FRAMES_CAP;
    return DSCOPE_FRAMES_OUTERMOST;
  } catch (...) {
    return DSCOPE_FRAMES_OUTERMOST;
  }
}

uint64_t LldbTarget::frameCap() {
  lldb::SBDebugger debugger = target_.IsValid() ? target_.GetDebugger() : lldb::SBDebugger();
  if (!debugger.IsValid()) return 0;
  lldb::SBStringList value =
      lldb::SBDebugger::GetInternalVariableValue("target.process.thread.max-backtrace-depth", debugger.GetInstanceName());
  if (value.GetSize() == 0 || !value.GetStringAtIndex(0)) return 0;
  return std::strtoull(value.GetStringAtIndex(0), nullptr, 10);
}

void writeToDebugger(lldb::SBDebugger debugger, const std::string& text) {
  std::string line = text;
  if (line.empty() || line.back() != '\n') line += '\n';
  lldb::SBFile out = debugger.GetOutputFile();
  if (out.IsValid()) {
    size_t written = 0;
    out.Write(reinterpret_cast<const uint8_t*>(line.data()), line.size(), &written);
    out.Flush();
    return;
  }
  std::fputs(line.c_str(), stdout);
  std::fflush(stdout);
}

}  // namespace dscope::lldb_plugin
