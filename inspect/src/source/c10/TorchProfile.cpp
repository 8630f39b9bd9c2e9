#include "source/c10/TorchProfile.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <mutex>
#include <set>
#include <sstream>

#include "target/Remote.h"
#include "dscope/DebugInterface.h"

namespace dscope::inspect {

namespace {

// What every reader looks up (TorchView, TorchSchema, C10Breaks, TorchTrace): its typed layout's
// names, all present, checked once at load, so no command finds one missing half-way.
constexpr std::string_view kRequiredValues[] = {
#define DSCOPE_C10_LAYOUT_NAME(name) #name,
    DSCOPE_C10_LAYOUT(DSCOPE_C10_LAYOUT_NAME)
#undef DSCOPE_C10_LAYOUT_NAME
};
constexpr const char* kRequiredSymbols[] = {"realSingleton", "tls_dispatch_key_set", "fallthrough_kernel", "registerImpl",
                                            "registerFallback", "THPVariableClass"};
// The name-table entries the schema and break readers look up by name.
constexpr std::pair<const char*, const char*> kRequiredNames[] = {
    {"TypeKind", "ClassType"},   {"TypeKind", "DictType"},   {"TypeKind", "FutureType"},   {"TypeKind", "IntType"},
    {"TypeKind", "ListType"},    {"TypeKind", "OptionalType"}, {"TypeKind", "RRefType"},   {"TypeKind", "StringType"},
    {"TypeKind", "TupleType"},   {"TypeKind", "VarType"},    {"IValueTag", "Tensor"},      {"IValueTag", "Bool"},
    {"IValueTag", "Double"},     {"IValueTag", "GenericList"}, {"IValueTag", "Int"},       {"IValueTag", "None"},
    {"IValueTag", "String"}};
[[noreturn]] void badProfile(const std::string& path, const std::string& why) {
  fail("the layout profile " + path + " is unusable: " + why + " (regenerate it with dscope-profile)");
}

// The file's bytes: a regular file of bounded size only (a FIFO would block open() and read(),
// /dev/zero never ends), opened without blocking and never read past the size it had.
}  // namespace

std::string readProfileText(const std::string& path) {
  auto kindOf = [](mode_t mode) -> std::string {
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a regular file";
  };
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) fail("cannot read the layout profile " + path + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) badProfile(path, "it is " + kindOf(st.st_mode) + ", not a regular file");
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) fail("cannot read the layout profile " + path + ": " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  if (fstat(fd, &st) != 0) fail("cannot read the layout profile " + path + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) badProfile(path, "it is " + kindOf(st.st_mode) + ", not a regular file");
  if (static_cast<uint64_t>(st.st_size) > kMaxProfileBytes)
    badProfile(path, "it is " + std::to_string(st.st_size) + " bytes, more than a profile holds (" +
                         std::to_string(kMaxProfileBytes) + ")");
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = read(fd, bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("cannot read the layout profile " + path + ": " + std::strerror(errno));
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  bytes.resize(got);
  return bytes;
}

namespace {

// The members of one struct, each [offset, offset + width): inside the struct and apart.
void checkStruct(const Profile& p, const char* what, uint64_t size,
                 std::initializer_list<std::pair<const char*, uint64_t>> fields) {
  for (auto a = fields.begin(); a != fields.end(); ++a) {
    const uint64_t offset = p.at(a->first);
    if (a->second == 0 || offset + a->second > size)
      p.refuse(std::string(a->first) + " " + std::to_string(offset) + " (" + std::to_string(a->second) +
                             " bytes) does not lie inside " + what + " (" + std::to_string(size) + " bytes)");
    for (auto b = fields.begin(); b != a; ++b)
      if (offset < p.at(b->first) + b->second && p.at(b->first) < offset + a->second)
        p.refuse(std::string(a->first) + " overlaps " + b->first + " in " + what);
  }
}

// The bytes an optional<T> of a T of `size` bytes spans: its value and its engaged flag, in either
// order (c10::optional puts the flag first, std::optional after the value).
uint64_t optionalSize(const Profile& p, const std::string& optional, uint64_t size) {
  return std::max(p.at(optional + "_payload") + size, p.at(optional + "_engaged") + 1);
}

// The optional groups (C10Layout.h), each by its name and its values' names.
struct OptionalGroup {
  std::string_view group;
  std::vector<std::string_view> names;
};
const std::vector<OptionalGroup>& optionalGroups() {
  static const std::vector<OptionalGroup> groups = {
#define DSCOPE_C10_GROUP_NAME(name) #name,
#define DSCOPE_C10_GROUP(group, list) {#group, {list(DSCOPE_C10_GROUP_NAME)}},
      DSCOPE_C10_OPTIONAL_LAYOUT(DSCOPE_C10_GROUP)
#undef DSCOPE_C10_GROUP
#undef DSCOPE_C10_GROUP_NAME
  };
  return groups;
}

// Whether the profile states the group: all of its values (true), none (false), else refused.
bool hasGroup(const Profile& p, std::string_view group) {
  for (const auto& g : optionalGroups()) {
    if (g.group != group) continue;
    std::string_view present, missing;
    for (std::string_view name : g.names) (p.values.count(name) ? present : missing) = name;
    if (!present.empty() && !missing.empty())
      p.refuse("it has " + std::string(present) + " but not " + std::string(missing) + ", of its " + std::string(group) +
               " values (a group is stated whole or not at all)");
    return !present.empty();
  }
  return false;
}

// The members of the optional groups the profile states, as checkLayout checks the others.
void checkOptionalLayout(const Profile& p) {
  if (hasGroup(p, "dispatch_modes")) {
    const uint64_t infra = p.at("count_infra_modes"), optional = p.at("sizeof_OptionalModePtr"), shared = p.at("sizeof_SharedPtr");
    if (infra == 0 || infra > 8) p.refuse("count_infra_modes is " + std::to_string(infra));
    checkStruct(p, "a TorchDispatchModeTLS", p.at("sizeof_TorchDispatchModeTLS"),
                {{"TorchDispatchModeTLS_stack", 24}, {"TorchDispatchModeTLS_infra_modes", infra * optional}});
    checkStruct(p, "an optional<shared_ptr>", optional, {{"OptionalModePtr_engaged", 1}, {"OptionalModePtr_payload", shared}});
    checkStruct(p, "a shared_ptr", shared, {{"SharedPtr_pointer", 8}});
    checkStruct(p, "a SafePyObject", 16, {{"SafePyObject_data", 8}});
  }
  hasGroup(p, "python_dispatcher");
  if (hasGroup(p, "autograd_state")) {
    for (const char* flag : {"grad_mode", "inference_mode"}) {
      const std::string name = std::string("AutogradState_") + flag;
      checkStruct(p, "an AutogradState", p.at("sizeof_AutogradState"), {{name.c_str(), 1}});
      if (p.at(name + "_bit") > 7) p.refuse(name + "_bit is " + std::to_string(p.at(name + "_bit")));
    }
    if (p.at("AutogradState_grad_mode") == p.at("AutogradState_inference_mode") &&
        p.at("AutogradState_grad_mode_bit") == p.at("AutogradState_inference_mode_bit"))
      p.refuse("grad mode and inference mode are one bit of its AutogradState");
  }
  if (hasGroup(p, "functorch")) checkStruct(p, "a FuncTorchTLS", kMaxProfileOffset, {{"FuncTorchTLS_dynamicLayerStack", 24}});
}

// Every member of the structs the readers index lies inside its struct, apart from the others.
void checkLayout(const Profile& p) {
  const uint64_t string = p.at("sizeof_StdString"), kernel = p.at("sizeof_KernelFunction"), slots = p.at("count_table_slots");
  const uint64_t backends = p.at("count_backends");
  if (string < 16 || string > 64) p.refuse("sizeof_StdString is " + std::to_string(string) + " bytes");
  checkStruct(p, "a KernelFunction", kernel, {{"KernelFunction_functor", 8}, {"KernelFunction_boxed", 8}, {"KernelFunction_unboxed", 8},
                                                     {"KernelFunction_sym_unboxed", 8}});
  checkStruct(p, "an AnnotatedKernel", p.at("sizeof_AnnotatedKernel"),
              {{"AnnotatedKernel_kernel", kernel}, {"AnnotatedKernel_inferred_function_schema", 8}, {"AnnotatedKernel_debug", string}});
  checkStruct(p, "a kernel map entry", p.at("sizeof_KernelMapEntry"),
              {{"KernelMapEntry_key", p.at("sizeof_DispatchKey")}, {"KernelMapEntry_list", 16}});
  checkStruct(p, "a kernel map", kMaxProfileOffset,
              {{"KernelMap_entries", 8}, {"KernelMap_num_slots_minus_one", 8}, {"KernelMap_max_lookups", 1}, {"KernelMap_num_elements", 8}});
  checkStruct(p, "an OperatorName", 2 * string, {{"OperatorName_name", string}, {"OperatorName_overload_name", string}});
  checkStruct(p, "a DispatchKeyExtractor", kMaxProfileOffset,
              {{"DispatchKeyExtractor_nonFallthroughKeys", 8}, {"DispatchKeyExtractor_nonFallthroughKeysPerBackend", 8 * backends},
               {"DispatchKeyExtractor_requiresBitsetPerBackend", 1}});
  checkStruct(p, "an OperatorEntry", kMaxProfileOffset,
              {{"OperatorEntry_name", 2 * string}, {"OperatorEntry_dispatchTable", kernel * slots},
               {"OperatorEntry_dispatchKeyExtractor", p.at("DispatchKeyExtractor_requiresBitsetPerBackend") + 1},
               {"OperatorEntry_kernels", p.at("KernelMap_num_elements") + 8}});
  checkStruct(p, "the Dispatcher", uint64_t{1} << 24,
              {{"Dispatcher_operators", p.at("StdList_size") + 8}, {"Dispatcher_backendFallbackKernels", p.at("sizeof_AnnotatedKernel") * slots}});
  checkStruct(p, "a std::list", 24, {{"StdList_size", 8}});
  checkStruct(p, "a std::vector", 24, {{"StdVector_begin", 8}, {"StdVector_end", 8}});
  checkStruct(p, "a thread's PODLocalDispatchKeySet", 16, {{"PODLocalDispatchKeySet_included", 8}, {"PODLocalDispatchKeySet_excluded", 8}});
  checkStruct(p, "an IValue", p.at("sizeof_IValue"), {{"IValue_payload", 8}, {"IValue_tag", 4}});
  checkStruct(p, "a TypePtr", p.at("sizeof_TypePtr"), {{"TypePtr_pointer", 8}});
  checkStruct(p, "an optional<int32_t>", 8, {{"OptionalInt32_engaged", 1}, {"OptionalInt32_payload", 4}});
  checkStruct(p, "an optional<IValue>", kMaxProfileOffset, {{"OptionalIValue_engaged", 1}, {"OptionalIValue_payload", p.at("sizeof_IValue")}});
  checkStruct(p, "an optional<AliasAnalysisKind>", 8, {{"OptionalAliasKind_engaged", 1}, {"OptionalAliasKind_payload", 1}});
  checkStruct(p, "an optional<Tensor>", 16, {{"OptionalTensor_engaged", 1}, {"OptionalTensor_payload", 8}});
  checkStruct(p, "an Argument", p.at("sizeof_Argument"),
              {{"Argument_name", string}, {"Argument_real_type", p.at("sizeof_TypePtr")}, {"Argument_N", 8},
               {"Argument_default_value", optionalSize(p, "OptionalIValue", p.at("sizeof_IValue"))}, {"Argument_alias_info", 8},
               {"Argument_kwarg_only", 1}});
  checkStruct(p, "an AliasInfo", p.at("sizeof_AliasInfo"),
              {{"AliasInfo_before", 8}, {"AliasInfo_after", 8}, {"AliasInfo_contained", 24}, {"AliasInfo_is_write", 1}});
  checkStruct(p, "a FunctionSchema", kMaxProfileOffset,
              {{"FunctionSchema_name", 2 * string}, {"FunctionSchema_arguments", 24}, {"FunctionSchema_returns", 24},
               {"FunctionSchema_is_vararg", 1}, {"FunctionSchema_is_varret", 1}, {"FunctionSchema_alias_kind", 2}});
  checkStruct(p, "a SymbolInfo", p.at("sizeof_SymbolInfo"), {{"SymbolInfo_unqual_name", string}});
  if (p.at("sizeof_DispatchKey") > 8) p.refuse("sizeof_DispatchKey is " + std::to_string(p.at("sizeof_DispatchKey")));
  checkOptionalLayout(p);
}

}  // namespace

C10Profile readTorchProfile(const std::string& path) {
  static const ProfileNeeds needs = [] {
    ProfileNeeds n;
    n.runtime = "c10";
    n.values.assign(std::begin(kRequiredValues), std::end(kRequiredValues));
    n.symbols.assign(std::begin(kRequiredSymbols), std::end(kRequiredSymbols));
    n.build_ids = {"libtorch_cpu"};
    n.names.assign(std::begin(kRequiredNames), std::end(kRequiredNames));
    n.check_layout = checkLayout;
    return n;
  }();
  C10Profile p{parseProfile(readProfileText(path), "the layout profile " + path, " (regenerate it with dscope-profile)", needs), {}};
#define DSCOPE_C10_LAYOUT_RESOLVE(name) p.layout.name = p.profile.at(#name);
  DSCOPE_C10_LAYOUT(DSCOPE_C10_LAYOUT_RESOLVE)
#define DSCOPE_C10_OPTIONAL_RESOLVE(group, list)        \
  if ((p.layout.has_##group = hasGroup(p.profile, #group))) { \
    list(DSCOPE_C10_LAYOUT_RESOLVE)                      \
  }
  DSCOPE_C10_OPTIONAL_LAYOUT(DSCOPE_C10_OPTIONAL_RESOLVE)
#undef DSCOPE_C10_OPTIONAL_RESOLVE
#undef DSCOPE_C10_LAYOUT_RESOLVE
  return p;
}

std::vector<std::string> profileDirectories() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("DSCOPE_PROFILE_PATH")) {
    std::istringstream list(env);
    for (std::string d; std::getline(list, d, ':');)
      if (!d.empty()) dirs.push_back(d);
    return dirs;
  }
  dirs.push_back(DSCOPE_INSTALLED_PROFILES);
  dirs.push_back(DSCOPE_SOURCE_PROFILES);
  if (const char* cache = std::getenv("XDG_CACHE_HOME"); cache && *cache) dirs.push_back(std::string(cache) + "/dscope/profiles");
  else if (const char* home = std::getenv("HOME")) dirs.push_back(std::string(home) + "/.cache/dscope/profiles");
  return dirs;
}

std::optional<ProfileFile> findProfileFile(const std::string& build_id) {
  for (const auto& dir : profileDirectories()) {
    const std::string path = dir + "/" + build_id + ".profile";
    struct stat st {};
    if (stat(path.c_str(), &st) != 0) {
      if (errno == ENOENT || errno == ENOTDIR) continue;  // no profile here
      fail("cannot read the layout profile " + path + ": " + std::strerror(errno));
    }
    return ProfileFile{path, {st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec, st.st_size}};
  }
  return std::nullopt;
}

std::shared_ptr<const C10Profile> findTorchProfile(const std::string& build_id) {
  static std::mutex mutex;
  static std::map<std::string, std::pair<ProfileFileVersion, std::shared_ptr<const C10Profile>>> parsed;  // by path
  const auto file = findProfileFile(build_id);
  if (!file) return nullptr;
  std::lock_guard lock(mutex);
  if (auto it = parsed.find(file->path); it != parsed.end() && it->second.first == file->version) return it->second.second;
  auto profile = std::make_shared<const C10Profile>(readTorchProfile(file->path));
  parsed[file->path] = {file->version, profile};
  return profile;
}

}  // namespace dscope::inspect
