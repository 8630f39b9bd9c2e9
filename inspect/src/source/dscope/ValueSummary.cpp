// The debuggers' value printers (GDB pretty-printers, LLDB summaries and synthetic children)
// decode nothing themselves: they describe a value (dscope_value) and print the one line this
// returns, and an IDE expands the children. See docs/DEBUG-INTERFACE.md (value printers).
//
//   decoded from the value's bits         decoded from the object at its address
//   DispatchKey        uint16             OperatorName, OperatorHandle (and TypedOperatorHandle)
//   BackendComponent   uint8              OperatorEntry, KernelFunction
//   DispatchKeySet     repr_              Tensor, TensorImpl
//   ScalarType         int8 (as unsigned) PODLocalDispatchKeySet, dscope_dispatch_record
//   Device             2 bytes, little endian: type | index << 8
//
// A value type's bits are the value's own (an enumerator, a key set in registers), or read at its
// address. Objects are read through the named offsets of the runtime's layout profile (its
// descriptor's), every read bounded; names come from the runtime's own toString and formatters
// (dscope_common).
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "target/Containers.h"
#include "target/Remote.h"
#include "Session.h"
#include "source/dscope/Values.h"

#include "dscope/LocalDispatchKeySet.h"
#include "dscope/format/DispatchRecord.h"
#include "dscope/format/Tensor.h"

namespace dscope::inspect {

namespace {

Child keyChild(std::string name, DispatchKey k) {
  return {std::move(name), toString(k), "dscope::DispatchKey", static_cast<uint16_t>(k), {}};
}
Child keySetChild(std::string name, DispatchKeySet ks) {
  return {std::move(name), toString(ks), "dscope::DispatchKeySet", ks.raw_repr(), {}};
}

// ---------------------------------------------------------------- values (no memory read)

void checkRange(uint64_t word, uint64_t max, const char* what) {
  if (word > max) fail(std::string(what) + " value " + hex(word) + " is out of range (at most " + hex(max) + ")");
}

Summary dispatchKeySummary(uint64_t word) {
  checkRange(word, 0xffff, "DispatchKey");  // a uint16_t; toString names values past the alias keys
  return {toString(static_cast<DispatchKey>(word)), {}};
}

Summary backendComponentSummary(uint64_t word) {
  checkRange(word, 0xff, "BackendComponent");
  return {toString(static_cast<BackendComponent>(word)), {}};
}

Summary keySetSummary(uint64_t word) {
  const auto ks = DispatchKeySet::from_raw_repr(word);
  Summary s{toString(ks), {}};
  int i = 0;
  for (DispatchKey k : ks) s.children.push_back(keyChild("[" + std::to_string(i++) + "]", k));
  return s;
}

std::string scalarTypeName(uint8_t bits, bool with_value) {
  const auto t = static_cast<ScalarType>(static_cast<int8_t>(bits));
  std::string name = toString(t);
  if (name == "unknown" && with_value) name += " (" + std::to_string(static_cast<int8_t>(bits)) + ")";
  return name;
}

Summary scalarTypeSummary(uint64_t word) {
  checkRange(word, 0xff, "ScalarType");
  return {scalarTypeName(static_cast<uint8_t>(word), true), {}};
}

Device deviceOf(uint16_t bits) {
  return Device(static_cast<DeviceType>(static_cast<int8_t>(bits & 0xff)), static_cast<int8_t>(bits >> 8));
}
uint16_t deviceBits(Device d) {
  return static_cast<uint16_t>(static_cast<uint8_t>(d.type) | static_cast<uint8_t>(d.index) << 8);
}

Summary deviceSummary(uint64_t word) {
  checkRange(word, 0xffff, "Device");
  return {deviceOf(static_cast<uint16_t>(word)).str(), {}};
}

// ---------------------------------------------------------------- objects in the target

// A libstdc++ std::string member, at most kMaxStringLength bytes.
std::string memberString(const RuntimeView& rt, uint64_t addr, const char* what) {
  const StdStringLayout layout{.data = rt.layout().StdString_data, .size = rt.layout().StdString_length};
  return readStdString(rt.mem(), addr, layout, kMaxStringLength, what, [&](uint64_t length) {
    return std::string(what) + " at " + hex(addr) + " claims " + std::to_string(length) + " bytes (corrupt memory?)";
  });
}

Summary operatorNameSummary(const RuntimeView& rt, uint64_t addr) {
  std::string name = memberString(rt, addr + rt.layout().OperatorName_name, "operator name");
  std::string overload = memberString(rt, addr + rt.layout().OperatorName_overload_name, "overload name");
  return {overload.empty() ? name : name + "." + overload, {}};
}

// "schema: aten::mm(Tensor self, Tensor mat2) -> Tensor", or why there is none.
std::string schemaText(const RuntimeView& rt, uint64_t op) {
  const uint64_t schema = rt.mem().readPointer(op + rt.layout().OperatorEntry_schema, "operator schema");
  if (!schema) return "no schema (no def() registered)";
  return "schema: " + rt.mem().readString(rt.mem().readPointer(schema + rt.layout().RegisteredSchema_text, "schema"),
                                          "schema text");
}

Summary operatorHandleSummary(const RuntimeView& rt, uint64_t addr) {
  const uint64_t op = rt.mem().readPointer(addr + rt.layout().OperatorHandle_entry, "operator handle");
  if (!op) return {"OperatorHandle(null)", {}};
  const std::string name = rt.operatorName(op);
  return {"OperatorHandle(" + name + ", " + schemaText(rt, op) + ")", {}};
}

uint32_t kernelCount(const RuntimeView& rt, uint64_t op) {
  const uint32_t count = rt.mem().read<uint32_t>(op + rt.layout().OperatorEntry_num_kernels, "kernel count");
  if (count > kMaxKernelsPerOperator)
    fail("operator " + rt.operatorName(op) + " claims " + std::to_string(count) + " kernels (corrupt memory?)");
  return count;
}

Summary operatorEntrySummary(const RuntimeView& rt, uint64_t op) {
  const std::string name = rt.operatorName(op);
  const uint32_t count = kernelCount(rt, op);
  Summary s{"OperatorEntry(" + name + ", " + schemaText(rt, op) + ", " + std::to_string(count) + " registered kernel" +
                (count == 1 ? "" : "s") + ")",
            {}};
  // The registered kernels, newest first ("CPU: registered at FILE:LINE"): bounded by the count.
  walkChain(rt.mem().readPointer(op + rt.layout().OperatorEntry_kernels, "kernel list"), count,
            [&](uint64_t k) {
              RemoteKernel rk = rt.kernel(k);
              s.children.push_back({"[" + std::to_string(s.children.size()) + "]",
                                    rt.keys().name(rk.key) + ": " + rk.debug, "", 0, {}});
              return rk.next;
            },
            [&](uint64_t k) { return "the kernel list of " + name + " loops back to " + hex(k) + " (corrupt memory?)"; });
  return s;
}

std::string symbolOr(const Remote& mem, uint64_t pc) {
  std::string name = mem.symbolize(pc);
  return name.empty() ? hex(pc) : name;
}

Summary kernelFunctionSummary(const RuntimeView& rt, uint64_t addr) {
  const Remote& mem = rt.mem();
  const dscope_layout_profile& layout = rt.layout();
  RemoteKernel k;
  k.functor = mem.readPointer(addr + layout.KernelFunction_functor, "kernel function");
  k.boxed_fn = mem.readPointer(addr + layout.KernelFunction_boxed_fn, "kernel function");
  k.unboxed_fn = mem.readPointer(addr + layout.KernelFunction_unboxed_fn, "kernel function");
  if (!k.boxed_fn) return {"invalid (no kernel)", {}};
  if (rt.isFallthrough(k)) return {"fallthrough", {}};
  if (rt.isMissing(k)) return {"missing", {}};
  if (rt.isAmbiguousAutogradOther(k)) return {"ambiguous autogradother", {}};
  if (!k.unboxed_fn) return {"boxed " + symbolOr(mem, k.functor), {}};  // functor_: the user's boxed function
  const uint64_t owned = mem.readPointer(addr + layout.KernelFunction_owned_functor + layout.SharedPtr_pointer,
                                         "kernel function");
  // A stateful functor lives on the heap: the typed trampoline's name names its type.
  if (owned) return {"functor at " + hex(k.functor) + " via " + symbolOr(mem, k.unboxed_fn), {}};
  return {symbolOr(mem, k.functor), {}};
}

// "vtable for dscope::autograd::(anonymous namespace)::MmBackward0 + 16" -> "MmBackward0": the
// class name as PyTorch's repr shows it (grad_fn=<MmBackward0>).
std::optional<std::string> classOfVtableSymbol(std::string symbol) {
  const std::string prefix = "vtable for ";
  const auto at = symbol.find(prefix);
  if (at == std::string::npos) return std::nullopt;
  symbol.erase(0, at + prefix.size());
  for (const char* tail : {" + ", " at ", " in "})
    if (auto end = symbol.find(tail); end != std::string::npos) symbol.resize(end);
  size_t start = 0;
  int depth = 0;  // "::" inside template arguments is not a scope of the class itself
  for (size_t i = 0; i + 1 < symbol.size(); ++i) {
    if (symbol[i] == '<') ++depth;
    if (symbol[i] == '>') --depth;
    if (depth == 0 && symbol[i] == ':' && symbol[i + 1] == ':') start = i + 2;
  }
  std::string name = symbol.substr(start);
  if (name.empty()) return std::nullopt;
  return name;
}

// An autograd node's class: its vtable pointer (at offset 0 of a polymorphic object), named by
// the debugger's symbols.
std::string nodeClass(const Remote& mem, uint64_t node) {
  const uint64_t vptr = mem.readPointer(node, "autograd node");
  if (auto name = classOfVtableSymbol(mem.symbolize(vptr))) return *name;
  return "autograd node at " + hex(node);  // no symbols for its vtable (a stripped runtime)
}

std::string listText(const std::vector<int64_t>& values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + std::to_string(values[i]);
  return s + "]";
}

Summary tensorImplSummary(const RuntimeView& rt, uint64_t impl) {
  const Remote& mem = rt.mem();
  const dscope_layout_profile& layout = rt.layout();
  const auto ks = DispatchKeySet::from_raw_repr(mem.read<uint64_t>(impl + layout.TensorImpl_key_set, "tensor"));
  const auto dtype_bits = mem.read<uint8_t>(impl + layout.TensorImpl_dtype, "tensor");
  const auto device_type = mem.read<uint8_t>(impl + layout.TensorImpl_device + layout.Device_type, "tensor");
  const auto device_index = mem.read<uint8_t>(impl + layout.TensorImpl_device + layout.Device_index, "tensor");
  const auto device_bits = static_cast<uint16_t>(device_type | device_index << 8);
  const auto dim = mem.read<uint8_t>(impl + layout.TensorImpl_dim, "tensor");
  if (dim > TensorImpl::kMaxDim)
    fail("tensor of " + std::to_string(dim) + " dimensions (at most " + std::to_string(TensorImpl::kMaxDim) +
         "; corrupt memory?)");
  std::vector<int64_t> sizes(dim), strides(dim);
  if (dim) {
    mem.read(impl + layout.TensorImpl_sizes, sizes.data(), dim * sizeof(int64_t), "tensor sizes");
    mem.read(impl + layout.TensorImpl_strides, strides.data(), dim * sizeof(int64_t), "tensor strides");
  }
  // Tensor::requires_grad(): set by the user on a leaf, or implied by a grad_fn.
  bool requires_grad = false;
  uint64_t grad_fn = 0;
  if (uint64_t meta = mem.readPointer(impl + layout.TensorImpl_autograd_meta + layout.UniquePtr_pointer, "tensor")) {
    grad_fn = mem.readPointer(meta + layout.AutogradMeta_grad_fn + layout.SharedPtr_pointer, "autograd meta");
    requires_grad = mem.read<uint8_t>(meta + layout.AutogradMeta_requires_grad, "autograd meta") != 0 || grad_fn;
  }
  const auto dtype = static_cast<ScalarType>(static_cast<int8_t>(dtype_bits));
  const Device device = deviceOf(device_bits);
  const std::string node = grad_fn ? nodeClass(mem, grad_fn) : "";
  Summary s{format::tensorLine(sizes, dtype, device, requires_grad) + " keys=" + toString(ks), {}};
  if (grad_fn) s.text += " grad_fn=<" + node + ">";
  s.children.push_back({"sizes", listText(sizes), "int64[]", 0, sizes});
  s.children.push_back({"strides", listText(strides), "int64[]", 0, strides});
  s.children.push_back({"dtype", scalarTypeName(dtype_bits, false), "dscope::ScalarType", dtype_bits, {}});
  s.children.push_back({"device", device.str(), "dscope::Device", deviceBits(device), {}});
  s.children.push_back(keySetChild("key_set", ks));
  s.children.push_back({"requires_grad", requires_grad ? "true" : "false", "bool", requires_grad ? 1u : 0u, {}});
  s.children.push_back({"grad_fn", grad_fn ? node : "(none)", "dscope::autograd::Node*", grad_fn, {}});
  return s;
}

Summary tensorSummary(const RuntimeView& rt, uint64_t addr) {
  const uint64_t impl = rt.mem().readPointer(addr + rt.layout().Tensor_impl, "tensor");
  if (!impl) return {"Tensor(undefined)", {}};
  return tensorImplSummary(rt, impl);
}

Summary localKeySetSummary(const RuntimeView& rt, uint64_t addr) {
  // Stored XOR the defaults (docs/DEBUG-INTERFACE.md): the runtime's own accessors decode them.
  impl::PODLocalDispatchKeySet raw{};
  const dscope_layout_profile& layout = rt.layout();
  raw.included_ = rt.mem().read<uint64_t>(addr + layout.PODLocalDispatchKeySet_included, "thread-local key sets");
  raw.excluded_ = rt.mem().read<uint64_t>(addr + layout.PODLocalDispatchKeySet_excluded, "thread-local key sets");
  return {"included=" + toString(raw.included()) + ", excluded=" + toString(raw.excluded()),
          {keySetChild("included", raw.included()), keySetChild("excluded", raw.excluded())}};
}

Summary dispatchRecordSummary(const RuntimeView& rt, uint64_t addr) {
  const Remote& mem = rt.mem();
  const dscope_layout_profile& layout = rt.layout();
  const uint64_t op = mem.readPointer(addr + layout.DispatchRecord_op, "dispatch record");
  if (!op) return {"(empty record)", {}};
  const auto ks =
      DispatchKeySet::from_raw_repr(mem.read<uint64_t>(addr + layout.DispatchRecord_keyset, "dispatch record"));
  const auto kind = mem.read<uint8_t>(addr + layout.DispatchRecord_kind, "dispatch record");
  return {format::recordLine(kind, rt.operatorName(op), ks.highestPriorityTypeId()), {}};
}

struct TypeDecoder {
  const char* name;
  uint32_t size;                                              // a value type's size in bytes
  Summary (*of_value)(uint64_t bits);                         // a value type: from its bits
  Summary (*of_object)(const RuntimeView& rt, uint64_t addr);  // from the object's address
};

constexpr TypeDecoder kDecoders[] = {
    {"DispatchKey", sizeof(DispatchKey), dispatchKeySummary, nullptr},
    {"BackendComponent", sizeof(BackendComponent), backendComponentSummary, nullptr},
    {"DispatchKeySet", sizeof(DispatchKeySet), keySetSummary, nullptr},
    {"ScalarType", sizeof(ScalarType), scalarTypeSummary, nullptr},
    {"Device", sizeof(Device), deviceSummary, nullptr},
    {"OperatorName", 0, nullptr, operatorNameSummary},
    {"OperatorHandle", 0, nullptr, operatorHandleSummary},
    {"OperatorEntry", 0, nullptr, operatorEntrySummary},
    {"KernelFunction", 0, nullptr, kernelFunctionSummary},
    {"Tensor", 0, nullptr, tensorSummary},
    {"TensorImpl", 0, nullptr, tensorImplSummary},
    {"PODLocalDispatchKeySet", 0, nullptr, localKeySetSummary},
    {"dscope_dispatch_record", 0, nullptr, dispatchRecordSummary},
};

// The types debuggers print (inspect.h: dscope_value_type). A value type's
// word_size is its size (checked below); the expanding ones are those whose decoder lists children.
constexpr uint32_t kExpands = DSCOPE_VALUE_EXPANDS, kElements = DSCOPE_VALUE_ELEMENTS;
constexpr dscope_value_type kValueTypes[] = {
    {"dscope::DispatchKey", "DispatchKey", sizeof(DispatchKey), 0},
    {"dscope::BackendComponent", "BackendComponent", sizeof(BackendComponent), 0},
    {"dscope::DispatchKeySet", "DispatchKeySet", sizeof(DispatchKeySet), kExpands | kElements},
    {"dscope::ScalarType", "ScalarType", sizeof(ScalarType), 0},
    {"dscope::Device", "Device", sizeof(Device), 0},
    {"dscope::OperatorName", "OperatorName", 0, 0},
    {"dscope::OperatorHandle", "OperatorHandle", 0, 0},
    {"dscope::TypedOperatorHandle<", "OperatorHandle", 0, 0},
    {"dscope::impl::OperatorEntry", "OperatorEntry", 0, kExpands | kElements},
    {"dscope::KernelFunction", "KernelFunction", 0, 0},
    {"dscope::Tensor", "Tensor", 0, kExpands},
    {"dscope::TensorImpl", "TensorImpl", 0, kExpands},
    {"dscope::impl::PODLocalDispatchKeySet", "PODLocalDispatchKeySet", 0, kExpands},
    {"dscope_dispatch_record", "dscope_dispatch_record", 0, 0},
    // Real PyTorch's (TorchView): key names from the process's own build.
    {"c10::DispatchKeySet", "c10::DispatchKeySet", 8, kExpands | kElements},
    {"at::Tensor", "at::Tensor", 0, kExpands},
    {"at::TensorBase", "at::Tensor", 0, kExpands},
    {"c10::TensorImpl", "c10::TensorImpl", 0, kExpands},
};
static_assert(sizeof(DispatchKeySet) == 8 && sizeof(Device) == 2 && sizeof(DispatchKey) == 2);

// Whether a debugger's type name is the table row's (a template row: any of its instances).
bool namesRow(const dscope_value_type& row, const std::string& type) {
  const std::string name = row.type_name;
  if (name.back() == '<') return type.size() > name.size() && type.compare(0, name.size(), name) == 0 && type.back() == '>';
  return type == name;
}

// A type of the table, by its C++ name or its short name.
const TypeDecoder& decoderFor(const std::string& type) {
  std::string summary_type = type;
  for (const auto& row : kValueTypes)
    if (namesRow(row, type)) summary_type = row.summary_type;
  for (const auto& t : kDecoders)
    if (summary_type == t.name) return t;
  std::string names;
  for (const auto& t : kDecoders) names += (names.empty() ? "" : ", ") + std::string(t.name);
  fail("unknown type '" + shown(type) + "' for a summary; types: " + names);
}

// A value type's bits: the value's own, or read at the object's address.
uint64_t valueBits(Session& s, const dscope_value& v, uint32_t size) {
  if (v.kind == DSCOPE_KIND_OBJECT && v.address) {
    uint8_t bytes[8] = {};
    s.mem().read(v.address, bytes, size, "value");
    uint64_t bits = 0;
    for (uint32_t i = 0; i < size; ++i) bits |= static_cast<uint64_t>(bytes[i]) << (8 * i);
    return bits;
  }
  if (v.kind != DSCOPE_KIND_INTEGER && v.kind != DSCOPE_KIND_OBJECT) fail("not a value of that type");
  return v.bits;
}

// ---- real PyTorch's own types (c10, ATen), where the user's code has DWARF: decoded through the
// process's layout profile (TorchView), with that build's key names.

bool isTorchType(const std::string& type) {
  return type == "c10::DispatchKeySet" || type == "at::Tensor" || type == "at::TensorBase" || type == "c10::TensorImpl";
}

Summary torchKeySetSummary(const TorchView& tv, uint64_t bits) {
  Summary out{tv.keys().keySetString(bits), {}};
  int index = 0;
  for (int k : tv.keys().keysOf(bits))
    out.children.push_back({"[" + std::to_string(index++) + "]", tv.keys().name(k), "", 0, {}});
  return out;
}

Summary torchSummary(Session& s, const dscope_value& v) {
  const TorchView& tv = s.torch();
  const std::string type = v.type;
  if (type == "c10::DispatchKeySet") return torchKeySetSummary(tv, valueBits(s, v, 8));
  if (v.kind != DSCOPE_KIND_OBJECT || !v.address) fail("not in memory (no address to read the object at)");
  uint64_t impl = v.address;
  if (type != "c10::TensorImpl") {
    impl = s.mem().readPointer(v.address, "a tensor");  // TensorBase::impl_, an intrusive_ptr's only member
    if (!impl) return {"Tensor(undefined)", {}};
  }
  const uint64_t keys = tv.tensorKeySet(impl);
  return {"Tensor keys=" + tv.keys().keySetString(keys), {{"key_set", tv.keys().keySetString(keys), "c10::DispatchKeySet", keys, {}}}};
}

}  // namespace

Summary summarize(Session& s, const dscope_value& v) {
  if (isTorchType(v.type)) return torchSummary(s, v);
  const TypeDecoder& decoder = decoderFor(v.type);
  if (decoder.of_value) return decoder.of_value(valueBits(s, v, decoder.size));
  if (v.kind != DSCOPE_KIND_OBJECT || !v.address) fail("not in memory (no address to read the object at)");
  return decoder.of_object(s.runtime(), v.address);
}

const dscope_value_type* valueTypeAt(uint64_t index) {
  return index < std::size(kValueTypes) ? &kValueTypes[index] : nullptr;
}

}  // namespace dscope::inspect
