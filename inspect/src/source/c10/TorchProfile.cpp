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

constexpr const char* kFormat = "dscope-profile 1";
constexpr const char* kDigest = "digest fnv1a64 ";

// Bounds on what a profile may say; anything beyond is a damaged file, refused before use.
constexpr uint64_t kMaxProfileBytes = 1u << 20;  // a profile is ~12 KB
constexpr uint64_t kMaxKeys = 4096;               // c10's DispatchKey is a uint16_t; builds have ~130
constexpr uint64_t kMaxTableSlots = 4096;
constexpr uint64_t kMaxOffset = 1u << 16;         // a member offset or a struct size
constexpr uint64_t kMaxFromSymbol = uint64_t{1} << 30;  // a static's distance from an exported function in one library

// What every reader looks up (TorchView, TorchSchema, C10Breaks, TorchTrace, TorchCommands):
// all present, checked once at load, so no command finds one missing half-way.
constexpr const char* kRequiredValues[] = {
    "Dispatcher_from_realSingleton", "sizeof_StdString", "StdList_size", "StdListNode_data", "Dispatcher_operators",
    "Dispatcher_backendFallbackKernels", "OperatorDef_op", "OperatorHandle_operatorDef", "OperatorEntry_name",
    "OperatorName_name", "OperatorName_overload_name", "OperatorEntry_schema", "OptionalSchema_engaged", "OptionalSchema_payload",
    "AnnotatedSchema_debug", "OperatorEntry_dispatchTable", "OperatorEntry_kernels", "OperatorEntry_dispatchKeyExtractor",
    "DispatchKeyExtractor_nonFallthroughKeys", "DispatchKeyExtractor_nonFallthroughKeysPerBackend",
    "DispatchKeyExtractor_requiresBitsetPerBackend", "sizeof_KernelFunction", "KernelFunction_functor",
    "KernelFunction_boxed", "KernelFunction_unboxed", "KernelFunction_sym_unboxed", "sizeof_AnnotatedKernel", "AnnotatedKernel_kernel",
    "AnnotatedKernel_debug", "KernelMap_entries", "KernelMap_num_slots_minus_one", "KernelMap_max_lookups",
    "KernelMap_num_elements", "sizeof_KernelMapEntry", "KernelMapEntry_key", "KernelMapEntry_list", "sizeof_DispatchKey",
    "TensorImpl_key_set", "OptionalTensor_engaged", "OptionalTensor_payload", "RuntimeFunctor_kernel_func", "PODLocalDispatchKeySet_included",
    "PODLocalDispatchKeySet_excluded", "Error_msg", "count_backends", "count_functionality_keys", "count_table_slots",
    "count_dispatch_keys", "set_default_included", "set_default_excluded", "set_autogradother_backends",
    "set_full_backend_mask", "AnnotatedSchema_schema", "AnnotatedKernel_inferred_function_schema", "StdVector_begin",
    "StdVector_end", "UniquePtr_pointer", "SharedPtr_pointer", "FunctionSchema_name", "FunctionSchema_arguments",
    "FunctionSchema_returns", "FunctionSchema_is_vararg", "FunctionSchema_is_varret", "FunctionSchema_alias_kind",
    "OptionalAliasKind_engaged", "OptionalAliasKind_payload", "AliasAnalysisKind_unset", "sizeof_Argument",
    "Argument_name", "Argument_real_type", "Argument_N", "OptionalInt32_engaged", "OptionalInt32_payload",
    "Argument_default_value", "OptionalIValue_engaged", "OptionalIValue_payload", "Argument_alias_info",
    "Argument_kwarg_only", "sizeof_AliasInfo", "AliasInfo_before", "AliasInfo_after", "AliasInfo_contained",
    "AliasInfo_is_write", "SymbolSet_first", "SymbolSetNode_next", "SymbolSetNode_symbol",
    "InternedStrings_from_realSingleton", "InternedStrings_sym_to_info", "sizeof_SymbolInfo", "SymbolInfo_unqual_name",
    "sizeof_TypePtr", "TypePtr_pointer", "Type_kind", "ListType_element", "FutureType_element", "RRefType_element",
    "OptionalType_element", "DictType_types", "TupleType_elements", "TupleType_schema", "NamedType_name",
    "OptionalQualifiedName_engaged", "OptionalQualifiedName_payload", "QualifiedName_qualified", "VarType_name",
    "sizeof_IValue", "IValue_payload", "IValue_tag", "ConstantString_str", "ListImpl_list",
    "THPVariable_cdata", "PyObject_ob_type", "PyTypeObject_tp_name", "PyTypeObject_tp_base"};
constexpr const char* kRequiredSymbols[] = {"realSingleton", "tls_dispatch_key_set", "fallthrough_kernel", "registerImpl",
                                            "registerFallback", "THPVariableClass"};
// The name-table entries the schema and break readers look up by name.
constexpr std::pair<const char*, const char*> kRequiredNames[] = {
    {"TypeKind", "ClassType"},   {"TypeKind", "DictType"},   {"TypeKind", "FutureType"},   {"TypeKind", "IntType"},
    {"TypeKind", "ListType"},    {"TypeKind", "OptionalType"}, {"TypeKind", "RRefType"},   {"TypeKind", "StringType"},
    {"TypeKind", "TupleType"},   {"TypeKind", "VarType"},    {"IValueTag", "Tensor"},      {"IValueTag", "Bool"},
    {"IValueTag", "Double"},     {"IValueTag", "GenericList"}, {"IValueTag", "Int"},       {"IValueTag", "None"},
    {"IValueTag", "String"}};
// Keys the readers name (c10's alias keys and the keys the checks rely on).
constexpr const char* kRequiredKeys[] = {"Undefined", "BackendSelect", "ADInplaceOrView", "AutogradOther", "Autograd",
                                         "CompositeImplicitAutograd", "CompositeExplicitAutograd"};

[[noreturn]] void badProfile(const std::string& path, const std::string& why) {
  fail("the layout profile " + path + " is unusable: " + why + " (regenerate it with dscope-profile)");
}

// Where a line-level complaint is: "line 57 ('key -5 CPU ...')".
struct Where {
  const std::string& path;
  size_t line = 0;
  const std::string* text = nullptr;
  [[noreturn]] void bad(const std::string& why) const {
    badProfile(path, "line " + std::to_string(line) + " ('" + shown(text ? *text : "") + "') " + why);
  }
};

// A decimal or 0x-hexadecimal number no larger than max (no sign, nothing after it).
uint64_t numberIn(const Where& at, const std::string& text, uint64_t max) {
  const bool hex_digits = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  const char* first = text.data() + (hex_digits ? 2 : 0);
  const char* last = text.data() + text.size();
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(first, last, v, hex_digits ? 16 : 10);
  if (text.empty() || ec == std::errc::invalid_argument || end != last || (ec != std::errc() && ec != std::errc::result_out_of_range))
    at.bad("has '" + shown(text) + "', which is not a number");
  if (ec == std::errc::result_out_of_range || v > max)
    at.bad("has " + shown(text) + ", out of range (at most " + std::to_string(max) + ")");
  return v;
}

// "key 43 CPU bits=0x4001 slot=1 in=118,120,121 autograd-backends=0x4001 [alias]"
KeyInfo keyLine(const Where& at, std::istringstream& in) {
  KeyInfo k;
  std::string value, word;
  if (!(in >> value >> k.name)) at.bad("is not 'key VALUE NAME FIELDS...'");
  k.value = static_cast<int>(numberIn(at, value, kMaxKeys - 1));
  std::set<std::string> seen;
  while (in >> word) {
    const auto eq = word.find('=');
    const std::string field = word.substr(0, eq), arg = eq == std::string::npos ? "" : word.substr(eq + 1);
    if (!seen.insert(field).second) at.bad("sets '" + shown(field) + "' twice");
    if (field == "alias" && eq == std::string::npos) k.alias = true;
    else if (field == "bits") k.bits = numberIn(at, arg, UINT64_MAX);
    else if (field == "slot") k.slot = arg == "-1" ? -1 : static_cast<int>(numberIn(at, arg, kMaxTableSlots - 1));
    else if (field == "autograd-backends") k.autograd_backends = numberIn(at, arg, UINT64_MAX);
    else if (field == "in") {
      std::istringstream list(arg);
      for (std::string v; std::getline(list, v, ',');) k.in_aliases.push_back(static_cast<int>(numberIn(at, v, kMaxKeys - 1)));
    } else at.bad("has an unknown key field '" + shown(field) + "'");
  }
  return k;
}

// The file's bytes: a regular file of bounded size only (a FIFO would block open() and read(),
// /dev/zero never ends), opened without blocking and never read past the size it had.
std::string profileBytes(const std::string& path) {
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

// The text before the digest line, after checking that it is printable ASCII lines ending in
// "digest fnv1a64 0x<FNV-1a 64 of everything before that line>" (dscope-profile writes it):
// a profile cut short, edited or damaged is refused here, whatever it still parses as.
std::string checkedText(const std::string& path, const std::string& bytes) {
  if (bytes.rfind(std::string(kFormat) + "\n", 0) != 0) badProfile(path, "it does not start with '" + std::string(kFormat) + "'");
  size_t line = 1;
  for (size_t i = 0; i < bytes.size(); ++i) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    if (c == '\n') ++line;
    else if (c < 0x20 || c > 0x7e) {
      char byte[8];
      std::snprintf(byte, sizeof byte, "0x%02x", c);
      badProfile(path, "line " + std::to_string(line) + " holds byte " + byte + ", which is not printable text");
    }
  }
  if (bytes.empty() || bytes.back() != '\n') badProfile(path, "its last line is cut short (no newline)");
  const size_t start = bytes.rfind('\n', bytes.size() - 2) + 1;
  const std::string last = bytes.substr(start, bytes.size() - 1 - start);
  if (last.rfind(kDigest, 0) != 0)
    badProfile(path, "it does not end with its digest line (cut short, or written by an older dscope-profile)");
  std::string text = bytes.substr(0, start);
  char expected[32];
  std::snprintf(expected, sizeof expected, "0x%016llx", static_cast<unsigned long long>(dscope_fnv1a64(text.c_str())));
  if (last.substr(std::strlen(kDigest)) != expected)
    badProfile(path, "its digest does not match its contents (edited or damaged)");
  return text;
}

bool isName(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

int popcount(uint64_t v) { return __builtin_popcountll(v); }

// The members of one struct, each [offset, offset + width): inside the struct and apart.
void checkStruct(const TorchProfile& p, const char* what, uint64_t size,
                 std::initializer_list<std::pair<const char*, uint64_t>> fields) {
  for (auto a = fields.begin(); a != fields.end(); ++a) {
    const uint64_t offset = p.at(a->first);
    if (a->second == 0 || offset + a->second > size)
      badProfile(p.path, std::string(a->first) + " " + std::to_string(offset) + " (" + std::to_string(a->second) +
                             " bytes) does not lie inside " + what + " (" + std::to_string(size) + " bytes)");
    for (auto b = fields.begin(); b != a; ++b)
      if (offset < p.at(b->first) + b->second && p.at(b->first) < offset + a->second)
        badProfile(p.path, std::string(a->first) + " overlaps " + b->first + " in " + what);
  }
}

// The bytes an optional<T> of a T of `size` bytes spans: its value and its engaged flag, in either
// order (c10::optional puts the flag first, std::optional after the value).
uint64_t optionalSize(const TorchProfile& p, const std::string& optional, uint64_t size) {
  return std::max(p.at(optional + "_payload") + size, p.at(optional + "_engaged") + 1);
}

void checkLayout(const TorchProfile& p) {
  // In name order, so that a profile with several bad values is refused for the same one each time.
  for (const auto& [name, v] : std::map<std::string, uint64_t>(p.values.begin(), p.values.end())) {
    const bool size = name.rfind("sizeof_", 0) == 0, count = name.rfind("count_", 0) == 0, set = name.rfind("set_", 0) == 0;
    const bool from_symbol = name.find("_from_") != std::string::npos;
    if (size && (v == 0 || v > kMaxOffset)) badProfile(p.path, name + " is " + std::to_string(v) + " bytes");
    if (from_symbol && v >= kMaxFromSymbol) badProfile(p.path, name + " " + std::to_string(v) + " is out of range");
    if (!size && !count && !set && !from_symbol && v >= kMaxOffset) badProfile(p.path, name + " " + std::to_string(v) + " is out of range");
  }
  const uint64_t string = p.at("sizeof_StdString"), kernel = p.at("sizeof_KernelFunction"), slots = p.at("count_table_slots");
  const uint64_t backends = p.at("count_backends");
  if (string < 16 || string > 64) badProfile(p.path, "sizeof_StdString is " + std::to_string(string) + " bytes");
  checkStruct(p, "a KernelFunction", kernel, {{"KernelFunction_functor", 8}, {"KernelFunction_boxed", 8}, {"KernelFunction_unboxed", 8},
                                                     {"KernelFunction_sym_unboxed", 8}});
  checkStruct(p, "an AnnotatedKernel", p.at("sizeof_AnnotatedKernel"),
              {{"AnnotatedKernel_kernel", kernel}, {"AnnotatedKernel_inferred_function_schema", 8}, {"AnnotatedKernel_debug", string}});
  checkStruct(p, "a kernel map entry", p.at("sizeof_KernelMapEntry"),
              {{"KernelMapEntry_key", p.at("sizeof_DispatchKey")}, {"KernelMapEntry_list", 16}});
  checkStruct(p, "a kernel map", kMaxOffset,
              {{"KernelMap_entries", 8}, {"KernelMap_num_slots_minus_one", 8}, {"KernelMap_max_lookups", 1}, {"KernelMap_num_elements", 8}});
  checkStruct(p, "an OperatorName", 2 * string, {{"OperatorName_name", string}, {"OperatorName_overload_name", string}});
  checkStruct(p, "a DispatchKeyExtractor", kMaxOffset,
              {{"DispatchKeyExtractor_nonFallthroughKeys", 8}, {"DispatchKeyExtractor_nonFallthroughKeysPerBackend", 8 * backends},
               {"DispatchKeyExtractor_requiresBitsetPerBackend", 1}});
  checkStruct(p, "an OperatorEntry", kMaxOffset,
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
  checkStruct(p, "an optional<IValue>", kMaxOffset, {{"OptionalIValue_engaged", 1}, {"OptionalIValue_payload", p.at("sizeof_IValue")}});
  checkStruct(p, "an optional<AliasAnalysisKind>", 8, {{"OptionalAliasKind_engaged", 1}, {"OptionalAliasKind_payload", 1}});
  checkStruct(p, "an optional<Tensor>", 16, {{"OptionalTensor_engaged", 1}, {"OptionalTensor_payload", 8}});
  checkStruct(p, "an Argument", p.at("sizeof_Argument"),
              {{"Argument_name", string}, {"Argument_real_type", p.at("sizeof_TypePtr")}, {"Argument_N", 8},
               {"Argument_default_value", optionalSize(p, "OptionalIValue", p.at("sizeof_IValue"))}, {"Argument_alias_info", 8},
               {"Argument_kwarg_only", 1}});
  checkStruct(p, "an AliasInfo", p.at("sizeof_AliasInfo"),
              {{"AliasInfo_before", 8}, {"AliasInfo_after", 8}, {"AliasInfo_contained", 24}, {"AliasInfo_is_write", 1}});
  checkStruct(p, "a FunctionSchema", kMaxOffset,
              {{"FunctionSchema_name", 2 * string}, {"FunctionSchema_arguments", 24}, {"FunctionSchema_returns", 24},
               {"FunctionSchema_is_vararg", 1}, {"FunctionSchema_is_varret", 1}, {"FunctionSchema_alias_kind", 2}});
  checkStruct(p, "a SymbolInfo", p.at("sizeof_SymbolInfo"), {{"SymbolInfo_unqual_name", string}});
  if (p.at("sizeof_DispatchKey") > 8) badProfile(p.path, "sizeof_DispatchKey is " + std::to_string(p.at("sizeof_DispatchKey")));
}

// The key table against itself and the counts (c10's DispatchKeySet rules): every value once,
// each key's bits one functionality bit and at most one backend bit inside the counts, a
// per-backend key named after its backend, runtime keys known and in distinct slots, and the
// default TLS sets c10 builds from named keys.
// The part of a BackendComponent's name that its per-backend keys end with: c10 names most
// components "<backend>Bit" ("CPUBit"), but 2.x's newer ones by the backend alone ("MTIA", "MAIA").
std::string backendSuffix(const std::string& bit_name) {
  const bool bit = bit_name.size() > 3 && bit_name.compare(bit_name.size() - 3, 3, "Bit") == 0;
  return bit ? bit_name.substr(0, bit_name.size() - 3) : bit_name;
}

void checkKeys(const TorchProfile& p, const std::vector<KeyInfo>& keys, const std::vector<int>& runtime_order) {
  const auto bad = [&](const std::string& why) { badProfile(p.path, why); };
  const uint64_t backends = p.at("count_backends"), functionalities = p.at("count_functionality_keys");
  const uint64_t count = p.at("count_dispatch_keys"), slots = p.at("count_table_slots");
  if (p.backend_names.size() != backends)
    bad("it names " + std::to_string(p.backend_names.size()) + " backends, count_backends says " + std::to_string(backends));
  const uint64_t backend_mask = (uint64_t{1} << backends) - 1;
  const uint64_t all_bits = backends + functionalities - 1 == 64 ? ~uint64_t{0} : (uint64_t{1} << (backends + functionalities - 1)) - 1;
  if (p.at("set_full_backend_mask") != backend_mask) bad("set_full_backend_mask is not the " + std::to_string(backends) + " backend bits");
  std::set<std::string> backend_seen;
  for (const auto& b : p.backend_names)
    if (backendSuffix(b).empty() || !isName(b) || !backend_seen.insert(b).second)
      bad("backend name '" + shown(b) + "' is not a distinct c10 BackendComponent name");
  if (keys.size() != count)
    bad("it lists " + std::to_string(keys.size()) + " keys, count_dispatch_keys says " + std::to_string(count) + " (cut short?)");
  std::vector<const KeyInfo*> by_value(count, nullptr);
  std::map<std::string, const KeyInfo*> by_name;
  for (const auto& k : keys) {
    const std::string key = "key " + std::to_string(k.value) + " (" + shown(k.name) + ")";
    if (static_cast<uint64_t>(k.value) >= count) bad(key + " is beyond count_dispatch_keys " + std::to_string(count));
    if (by_value[k.value]) bad("key " + std::to_string(k.value) + " is listed twice");
    by_value[k.value] = &k;
    // Names are distinct, but for the placeholder that starts a per-backend functionality's keys
    // (StartOfDenseBackends, ...): 2.x prints it as its functionality of the Undefined backend, so
    // Dense's is "Undefined" again (1.13 said "Unknown"). Lookups by name keep the first key.
    const bool placeholder = k.bits && !(k.bits & backend_mask) && k.slot >= 0 && by_name.count(k.name);
    if (!isName(k.name) || (!by_name.emplace(k.name, &k).second && !placeholder))
      bad(key + " has a name that is not a distinct key name");
    if (k.slot >= 0 && static_cast<uint64_t>(k.slot) >= slots) bad(key + " has slot " + std::to_string(k.slot) + ", beyond count_table_slots");
    if (k.alias && (k.bits || k.slot >= 0 || !k.in_aliases.empty())) bad(key + " is an alias with bits, a slot or aliases");
    if ((k.bits != 0) != (k.slot >= 0)) bad(key + " has " + (k.bits ? "bits but no slot" : "a slot but no bits"));
    const uint64_t backend = k.bits & backend_mask, functionality = k.bits & ~backend_mask;
    if ((k.bits & ~all_bits) || popcount(backend) > 1 || popcount(functionality) > 1 || (backend && !functionality))
      bad(key + " has bits " + hex(k.bits) + ", not one functionality bit and at most one of the " + std::to_string(backends) +
          " backend bits");
    // An autograd key's backends (getBackendKeySetFromAutograd) are its own backend's keys.
    if ((k.autograd_backends & ~all_bits) || (backend && k.autograd_backends && (k.autograd_backends & backend_mask) != backend))
      bad(key + " has autograd-backends " + hex(k.autograd_backends) + ", not its own backend's");
  }
  for (const auto& k : keys)
    for (int a : k.in_aliases)
      if (static_cast<uint64_t>(a) >= count || !by_value[a] || !by_value[a]->alias)
        bad("key " + k.name + " is in alias " + std::to_string(a) + ", which is no alias key");
  if (by_value[0]->name != "Undefined" || by_value[0]->bits) bad("key 0 is not Undefined");
  for (const char* name : kRequiredKeys)
    if (!by_name.count(name)) bad("its key table has no " + std::string(name) + " (cut short?)");
  // A per-backend key is its functionality's prefix and its backend's name ("QuantizedCPU",
  // "AutogradCUDA", Dense's "CPU"): the suffix is the backend's, the prefix the same for every
  // backend of one functionality and differs between functionalities.
  std::map<uint64_t, std::string> prefix_of;
  std::map<std::string, uint64_t> functionality_of;
  for (const auto& k : keys) {
    const uint64_t backend = k.bits & backend_mask, functionality = k.bits & ~backend_mask;
    if (k.alias || !backend) continue;
    const std::string& bit_name = p.backend_names[__builtin_ctzll(backend)];
    const std::string suffix = backendSuffix(bit_name);
    if (k.name.size() < suffix.size() || k.name.compare(k.name.size() - suffix.size(), suffix.size(), suffix) != 0)
      bad("key " + std::to_string(k.value) + " is named " + k.name + ", but its bits " + hex(k.bits) + " are backend " + bit_name);
    const std::string prefix = k.name.substr(0, k.name.size() - suffix.size());
    const auto [it, fresh] = prefix_of.emplace(functionality, prefix);
    const auto [jt, fresh_prefix] = functionality_of.emplace(prefix, functionality);
    if (it->second != prefix || jt->second != functionality)
      bad("key " + std::to_string(k.value) + " is named " + k.name + ", but its bits " + hex(k.bits) + " name another functionality");
  }
  if (runtime_order.empty() || runtime_order.front() != 0) bad("its runtime-keys do not start with Undefined");
  std::set<int> runtime_seen, slot_seen;
  std::set<uint64_t> bits_seen;
  for (int v : runtime_order) {
    if (static_cast<uint64_t>(v) >= count || !by_value[v] || by_value[v]->alias || !runtime_seen.insert(v).second)
      bad("runtime key " + std::to_string(v) + " is not a distinct runtime key of its key table");
    if (v != 0 && (by_value[v]->slot < 0 || !slot_seen.insert(by_value[v]->slot).second))
      bad("runtime key " + by_value[v]->name + " has no slot of its own");
    if (v != 0 && !bits_seen.insert(by_value[v]->bits).second)
      bad("runtime key " + by_value[v]->name + " has the bits of another runtime key (" + hex(by_value[v]->bits) + ")");
  }
  // c10's default TLS sets: included {BackendSelect, ADInplaceOrView}, excluded every Autocast key.
  uint64_t autocast = 0;
  for (const auto& k : keys)
    if (!k.alias && k.name.rfind("Autocast", 0) == 0) autocast |= k.bits;
  if (p.at("set_default_included") != (by_name["BackendSelect"]->bits | by_name["ADInplaceOrView"]->bits))
    bad("set_default_included " + hex(p.at("set_default_included")) + " is not {BackendSelect, ADInplaceOrView}");
  if (!autocast || p.at("set_default_excluded") != autocast)
    bad("set_default_excluded " + hex(p.at("set_default_excluded")) + " is not the Autocast keys' " + hex(autocast));
  if (p.at("set_autogradother_backends") & ~all_bits) bad("set_autogradother_backends has bits beyond its key set");
}

// The counts everything else is sized by, first: a zero or absurd one is named as such.
void checkCounts(const TorchProfile& p) {
  const auto bad = [&](const std::string& why) { badProfile(p.path, why); };
  const uint64_t backends = p.at("count_backends"), functionalities = p.at("count_functionality_keys");
  const uint64_t count = p.at("count_dispatch_keys"), slots = p.at("count_table_slots");
  if (backends == 0 || functionalities == 0 || backends + functionalities - 1 > 64)
    bad("count_backends " + std::to_string(backends) + " and count_functionality_keys " + std::to_string(functionalities) +
        " do not fit a 64-bit key set");
  if (count == 0 || count > kMaxKeys) bad("count_dispatch_keys is " + std::to_string(count));
  if (slots == 0 || slots > kMaxTableSlots) bad("count_table_slots is " + std::to_string(slots));
}

void checkRequired(const TorchProfile& p) {
  for (const char* name : kRequiredValues)
    if (!p.values.count(name)) badProfile(p.path, "it has no '" + std::string(name) + "' (cut short, or of another schema)");
  for (const char* role : kRequiredSymbols)
    if (!p.symbols.count(role)) badProfile(p.path, "it names no symbol for '" + std::string(role) + "'");
  if (!p.build_ids.count("libtorch_cpu")) badProfile(p.path, "it names no libtorch_cpu build-id");
  for (const auto& [table, name] : kRequiredNames) {
    bool found = false;
    if (auto t = p.names.find(table); t != p.names.end())
      for (const auto& [value, text] : t->second) found = found || text == name;
    if (!found) badProfile(p.path, "its " + std::string(table) + " table has no '" + name + "'");
  }
}

}  // namespace

uint64_t TorchProfile::at(std::string_view name) const {
  // A reader asks for a value by a literal name for every entry it reads: no string is made.
  auto it = values.find(name);
  if (it == values.end()) badProfile(path, "it has no '" + std::string(name) + "'");
  return it->second;
}

const std::string& TorchProfile::symbol(const std::string& role) const {
  auto it = symbols.find(role);
  if (it == symbols.end()) badProfile(path, "it names no symbol for '" + role + "'");
  return it->second;
}

const std::string* TorchProfile::nameOf(const std::string& table, uint64_t value) const {
  auto t = names.find(table);
  if (t == names.end()) return nullptr;
  auto it = t->second.find(value);
  return it == t->second.end() ? nullptr : &it->second;
}

uint64_t TorchProfile::valueNamed(const std::string& table, const std::string& name) const {
  if (auto t = names.find(table); t != names.end())
    for (const auto& [value, text] : t->second)
      if (text == name) return value;
  badProfile(path, "its " + table + " table has no '" + name + "'");
}

TorchProfile readTorchProfile(const std::string& path) {
  TorchProfile p;
  p.path = path;
  const std::string text = checkedText(path, profileBytes(path));
  std::vector<KeyInfo> keys;
  std::vector<int> runtime_order;
  bool runtime_keys = false;
  std::istringstream file(text);
  std::string line;
  std::getline(file, line);  // the format line, checked
  for (size_t number = 2; std::getline(file, line); ++number) {
    const Where at{path, number, &line};
    std::istringstream in(line);
    std::string word, a, b, extra;
    if (!(in >> word) || word[0] == '#') continue;
    auto words = [&](int n) {  // exactly n more words, into a (and b)
      if (!(n < 1 || in >> a) || !(n < 2 || in >> b) || (in >> extra)) at.bad("is not '" + word + "' followed by " + std::to_string(n) + (n == 1 ? " word" : " words"));
    };
    if (word == "runtime") {
      words(1);
      if (a != "c10") badProfile(path, "it describes runtime '" + shown(a) + "', not c10");
    } else if (word == "version") words(1), p.version = a;
    else if (word == "build-id" || word == "symbol") {
      words(2);
      if (!(word == "symbol" ? p.symbols : p.build_ids).emplace(a, b).second) at.bad("names '" + shown(a) + "' a second time");
    } else if (word == "backend") {
      words(2);
      if (numberIn(at, a, 63) != p.backend_names.size()) at.bad("is out of order (backend " + std::to_string(p.backend_names.size()) + " expected)");
      p.backend_names.push_back(b);
    } else if (word == "key") keys.push_back(keyLine(at, in));
    else if (word == "name") {  // "name TABLE VALUE TEXT": TEXT is the rest of the line
      std::string value_text, name;
      in >> a >> value_text;
      std::getline(in >> std::ws, name);
      if (name.empty()) at.bad("has no text");
      if (!p.names[a].emplace(numberIn(at, value_text, UINT64_MAX), name).second) at.bad("names a value a second time");
    } else if (word == "runtime-keys") {
      if (runtime_keys) at.bad("is a second runtime-keys line");
      runtime_keys = true;
      while (in >> a) runtime_order.push_back(static_cast<int>(numberIn(at, a, kMaxKeys - 1)));
    } else {
      if (!isName(word)) at.bad("is not 'NAME VALUE'");
      words(1);
      if (!p.values.emplace(word, numberIn(at, a, UINT64_MAX)).second) at.bad("sets " + word + " a second time");
    }
  }
  checkRequired(p);
  checkCounts(p);
  checkLayout(p);
  checkKeys(p, keys, runtime_order);
  p.keys = KeyTable(std::move(keys), std::move(runtime_order), p.backend_names,
                    {p.at("set_default_included"), p.at("set_default_excluded")});
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

std::shared_ptr<const TorchProfile> findTorchProfile(const std::string& build_id) {
  static std::mutex mutex;
  static std::map<std::string, std::pair<std::pair<int64_t, int64_t>, std::shared_ptr<const TorchProfile>>> parsed;  // by path
  for (const auto& dir : profileDirectories()) {
    const std::string path = dir + "/" + build_id + ".profile";
    struct stat st {};
    if (stat(path.c_str(), &st) != 0) {
      if (errno == ENOENT || errno == ENOTDIR) continue;  // no profile here
      fail("cannot read the layout profile " + path + ": " + std::strerror(errno));
    }
    const std::pair<int64_t, int64_t> version{st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec, st.st_size};
    std::lock_guard lock(mutex);
    if (auto it = parsed.find(path); it != parsed.end() && it->second.first == version) return it->second.second;
    auto profile = std::make_shared<const TorchProfile>(readTorchProfile(path));
    parsed[path] = {version, profile};
    return profile;
  }
  return nullptr;
}

}  // namespace dscope::inspect
