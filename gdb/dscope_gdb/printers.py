"""GDB pretty-printers for the runtime's types.

Names and formats come from the inspect library (the runtime's own toString, key-set repr and
record formatter), so a printed value reads exactly like the commands' output:

  dscope::DispatchKey              AutogradCPU                       (inspect: key-name)
  dscope::BackendComponent         CPUBit                            (inspect: key-name --backend)
  dscope::DispatchKeySet           DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)
                                   children: one DispatchKey per key  (inspect: keyset RAW --json)
  dscope::OperatorName             aten::add.Tensor
  dscope::OperatorHandle,
  dscope::TypedOperatorHandle<Sig> OperatorHandle(aten::mm, schema: aten::mm(Tensor self, Tensor mat2) -> Tensor)
  dscope::impl::OperatorEntry      OperatorEntry(aten::mm, schema: ..., 3 registered kernels)
                                   children: "CPU: registered at FILE:LINE", newest first
  dscope::KernelFunction           the kernel's symbol, "fallthrough", "missing", "boxed <symbol>"
  dscope::Tensor, dscope::TensorImpl
                                   Tensor[2, 3] float32 cpu requires_grad keys=DispatchKeySet(...)
                                   (and grad_fn=<MmBackward0> when autograd recorded one)
                                   children: sizes, strides, dtype, device, key_set, requires_grad, grad_fn
  dscope::impl::PODLocalDispatchKeySet
                                   included=DispatchKeySet(...), excluded=DispatchKeySet(...)
  dscope_dispatch_record           [call] op=[aten::mm], key=[AutogradCPU]  (inspect: record-line)
  dscope::ScalarType, dscope::Device
                                   float32, cpu / cuda:1

A printer never raises into GDB: any failure prints "<error: ...>" (one line). Every read is
bounded: strings by _MAX_STRING bytes, kernel lists by their count and _MAX_KERNELS, tensor
ranks by TensorImpl::kMaxDim."""

import json

import gdb
import gdb.printing

from .inspect import describe_address

_inspect = None  # set by install()

_MAX_STRING = 4096       # as the inspect library's kMaxStringLength
_MAX_KERNELS = 4096      # as the inspect library's kMaxKernelsPerOperator
_MAX_DIM = 8             # TensorImpl::kMaxDim
_MASK64 = 0xFFFFFFFFFFFFFFFF
_CACHE_LIMIT = 4096

# docs/DEBUG-INTERFACE.md §5: the thread-local words are stored XOR these defaults.
_DEFAULT_INCLUDED = 0x804000000
_DEFAULT_EXCLUDED = 0x3FF0000000000

# c10's names (runtime/src/ScalarType.cpp, Device.cpp: the runtime's toString), by enum value.
_DTYPE_NAMES = {4: "int64", 5: "float16", 6: "float32", 7: "float64", 15: "bfloat16"}
_DEVICE_NAMES = {0: "cpu", 1: "cuda", 14: "meta", 20: "privateuseone"}


class _Failure(Exception):
    """A decode that cannot go on; its text is what the printer shows after "<error: "."""


def _error_text(e):
    text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    if text.startswith("dscope: "):
        text = text[len("dscope: "):]
    return "<error: %s>" % text


# ---------------------------------------------------------------- the inspect library

_key_names = {}
_keysets = {}


def _run(command_line):
    if _inspect is None:
        raise _Failure("the DispatchScope inspect library is not loaded")
    text, is_error = _inspect.run(command_line)
    if is_error:
        raise _Failure(text)
    return text


def _remember(cache, key, value):
    if len(cache) >= _CACHE_LIMIT:
        cache.clear()
    cache[key] = value
    return value


def key_name(value, backend=False):
    """c10's name of a DispatchKey (or BackendComponent) value."""
    cache_key = (backend, value)
    if cache_key not in _key_names:
        text = _run("key-name %d%s" % (value, " --backend" if backend else ""))
        _remember(_key_names, cache_key, text.strip())
    return _key_names[cache_key]


def keyset_info(raw):
    """The inspect library's decode of a raw key set: {"repr", "keys", "highest_key", ...}."""
    raw &= _MASK64
    if raw not in _keysets:
        _remember(_keysets, raw, json.loads(_run("keyset 0x%x --json" % raw)))
    return _keysets[raw]


# ---------------------------------------------------------------- bounded reads

def _read_cstring(address, limit=_MAX_STRING):
    """A NUL-terminated string at address, read in chunks that never cross a 64-byte boundary
    (so never past the page the string ends in), at most `limit` bytes."""
    address = int(address) & _MASK64
    if address == 0:
        return None
    inferior = gdb.selected_inferior()
    data = b""
    while len(data) < limit:
        chunk = 64 - (address + len(data)) % 64
        try:
            block = bytes(inferior.read_memory(address + len(data), chunk))
        except gdb.MemoryError:
            raise _Failure("cannot read memory at 0x%x" % (address + len(data)))
        end = block.find(b"\0")
        if end >= 0:
            return (data + block[:end]).decode(errors="replace")
        data += block
    raise _Failure("string at 0x%x is longer than %d bytes (corrupt memory?)" % (address, limit))


def _std_string(value):
    """A libstdc++ std::string member, bounded."""
    length = int(value["_M_string_length"])
    if length < 0 or length > _MAX_STRING:
        raise _Failure("std::string of length %d (corrupt memory?)" % length)
    if length == 0:
        return ""
    pointer = int(value["_M_dataplus"]["_M_p"])
    try:
        return bytes(gdb.selected_inferior().read_memory(pointer, length)).decode(errors="replace")
    except gdb.MemoryError:
        raise _Failure("cannot read memory at 0x%x" % pointer)


def _pointer_in(value):
    """The raw pointer a one-pointer smart pointer (std::unique_ptr with the default deleter)
    holds: its first 8 bytes, as the runtime's layout hash assumes."""
    return int(value.address.cast(gdb.lookup_type("unsigned long").pointer()).dereference())


def _lookup_type(name):
    try:
        return gdb.lookup_type(name)
    except gdb.error:
        return None


def _keyset_value(raw):
    """A dscope::DispatchKeySet value holding raw (so GDB prints it with the key-set printer),
    or the number when the type is unknown."""
    ks_type = _lookup_type("dscope::DispatchKeySet")
    if ks_type is None or ks_type.sizeof != 8:
        return gdb.Value(raw & _MASK64).cast(gdb.lookup_type("unsigned long"))
    return gdb.Value((raw & _MASK64).to_bytes(8, "little"), ks_type)


def _key_value(name, key_type, enumerators):
    """A dscope::DispatchKey value for a c10 key name (printed by the key printer), else the name."""
    if key_type is not None and name in enumerators:
        return gdb.Value(enumerators[name]).cast(key_type)
    return name


def _key_enumerators():
    key_type = _lookup_type("dscope::DispatchKey")
    enumerators = {}
    if key_type is not None:
        for field in key_type.strip_typedefs().fields():
            short = field.name.split("::")[-1]
            enumerators.setdefault(short, field.enumval)  # the first spelling of each value
    return key_type, enumerators


# ---------------------------------------------------------------- printers

class _Printer:
    """Catches everything: to_string and children never raise into GDB."""

    def __init__(self, value):
        self.value = value

    def to_string(self):
        try:
            return self.summary()
        except Exception as e:  # gdb.error, gdb.MemoryError, _Failure, a corrupt value
            return _error_text(e)

    def summary(self):
        raise NotImplementedError


class _WithChildren(_Printer):
    def children(self):
        try:
            return iter(list(self.child_list()))
        except Exception:  # the summary already says what went wrong
            return iter([])

    def child_list(self):
        return []


class DispatchKeyPrinter(_Printer):
    def summary(self):
        return key_name(int(self.value) & 0xFFFF)


class BackendComponentPrinter(_Printer):
    def summary(self):
        return key_name(int(self.value) & 0xFF, backend=True)


class DispatchKeySetPrinter(_WithChildren):
    def raw(self):
        return int(self.value["repr_"]) & _MASK64

    def summary(self):
        return keyset_info(self.raw())["repr"]

    def child_list(self):
        key_type, enumerators = _key_enumerators()
        for i, name in enumerate(keyset_info(self.raw())["keys"]):
            yield "[%d]" % i, _key_value(name, key_type, enumerators)

    def display_hint(self):
        return "array"


class OperatorNamePrinter(_Printer):
    def summary(self):
        name = _std_string(self.value["name"])
        overload = _std_string(self.value["overload_name"])
        return name + ("." + overload if overload else "")


def _entry_parts(entry_pointer):
    """(full name, schema text or None) of an impl::OperatorEntry*."""
    if int(entry_pointer) == 0:
        raise _Failure("null OperatorEntry")
    entry = entry_pointer.dereference()
    name = _read_cstring(entry["full_name_"])
    schema = None
    schema_pointer = entry["schema_"]
    if int(schema_pointer) != 0:
        schema = _read_cstring(schema_pointer.dereference()["text"])
    return name, schema


def _schema_text(schema):
    return "schema: " + schema if schema is not None else "no schema (no def() registered)"


class OperatorHandlePrinter(_Printer):
    def summary(self):
        entry = self.value["entry_"]
        if int(entry) == 0:
            return "OperatorHandle(null)"
        name, schema = _entry_parts(entry)
        return "OperatorHandle(%s, %s)" % (name, _schema_text(schema))


def _kernels(entry):
    """The registered kernels of an OperatorEntry, newest first: [(key name, debug)]."""
    count = int(entry["num_kernels_"])
    if count > _MAX_KERNELS:
        raise _Failure("%d registered kernels (corrupt memory?)" % count)
    kernels, seen = [], set()
    kernel = entry["kernels_"]
    while int(kernel) != 0 and len(kernels) < count:
        if int(kernel) in seen:
            raise _Failure("the kernel list loops back to 0x%x (corrupt memory?)" % int(kernel))
        seen.add(int(kernel))
        k = kernel.dereference()
        kernels.append((key_name(int(k["key"]) & 0xFFFF), _read_cstring(k["debug"]) or ""))
        kernel = k["next"]
    return count, kernels


class OperatorEntryPrinter(_WithChildren):
    def summary(self):
        name, schema = _entry_parts(self.value.address)
        count = int(self.value["num_kernels_"])
        return "OperatorEntry(%s, %s, %d registered kernel%s)" % (name, _schema_text(schema), count,
                                                                  "" if count == 1 else "s")

    def child_list(self):
        _count, kernels = _kernels(self.value)
        for i, (key, debug) in enumerate(kernels):
            yield "[%d]" % i, "%s: %s" % (key, debug)

    def display_hint(self):
        return "array"


def _symbol(address):
    try:
        return describe_address(address)
    except Exception:  # no symbol, unreadable
        return ""


# The runtime's sentinel boxed functions (KernelFunction.h), by the name GDB gives them.
_SENTINELS = (("dscope::detail::fallthroughKernel", "fallthrough"),
              ("dscope::detail::missingKernel", "missing"),
              ("dscope::detail::ambiguousAutogradOtherKernel", "ambiguous autogradother"))


class KernelFunctionPrinter(_Printer):
    def summary(self):
        functor = int(self.value["functor_"]) & _MASK64
        boxed = int(self.value["boxed_fn_"]) & _MASK64
        unboxed = int(self.value["unboxed_fn_"]) & _MASK64
        if boxed == 0:
            return "invalid (no kernel)"
        boxed_name = _symbol(boxed)
        for prefix, label in _SENTINELS:
            if boxed_name.startswith(prefix):
                return label
        if unboxed == 0:  # a boxed function: functor_ is the user's function
            return "boxed " + (_symbol(functor) or "0x%x" % functor)
        owned = 0
        try:
            owned = int(self.value["owned_functor_"]["_M_ptr"])
        except gdb.error:
            pass
        if owned:  # a stateful functor on the heap: the trampoline's name names its type
            return "functor at 0x%x via %s" % (functor, _symbol(unboxed) or "0x%x" % unboxed)
        return _symbol(functor) or "0x%x" % functor


def _tensor_parts(impl):
    """What a TensorImpl (a gdb.Value of the struct) shows: (summary, children)."""
    dim = int(impl["dim"])
    if dim > _MAX_DIM:
        raise _Failure("tensor of %d dimensions (at most %d; corrupt memory?)" % (dim, _MAX_DIM))
    sizes = [int(impl["sizes"][i]) for i in range(dim)]
    dtype = int(impl["dtype"])
    device = _device_text(impl["device"])
    meta = _pointer_in(impl["autograd_meta"])
    requires_grad, grad_fn = False, None
    if meta:
        meta_type = _lookup_type("dscope::AutogradMeta")
        if meta_type is not None:
            m = gdb.Value(meta).cast(meta_type.pointer()).dereference()
            grad_fn = m["grad_fn"]["_M_ptr"]
            requires_grad = bool(m["requires_grad"]) or int(grad_fn) != 0
    keys = keyset_info(int(impl["key_set"]["repr_"]))["repr"]
    text = "Tensor[%s] %s %s%s keys=%s" % (", ".join(str(s) for s in sizes), _DTYPE_NAMES.get(dtype, "unknown"),
                                          device, " requires_grad" if requires_grad else "", keys)
    node = _node_class(grad_fn)
    if node:
        text += " grad_fn=<%s>" % node  # as PyTorch's repr: the node's class, MmBackward0

    def children():
        element = impl["sizes"].type.strip_typedefs().target()
        for field in ("sizes", "strides"):
            if dim:
                yield field, impl[field].address.cast(element.array(dim - 1).pointer()).dereference()
            else:
                yield field, "[]"
        yield "dtype", impl["dtype"]
        yield "device", impl["device"]
        yield "key_set", impl["key_set"]
        yield "requires_grad", requires_grad
        if grad_fn is not None and int(grad_fn) != 0:
            try:
                node = grad_fn.cast(grad_fn.type.strip_typedefs().target().strip_typedefs().pointer())
                yield "grad_fn", node.cast(node.dynamic_type)  # the node's class: MmBackward0
            except gdb.error:
                yield "grad_fn", grad_fn
        else:
            node = _lookup_type("dscope::autograd::Node")
            yield "grad_fn", gdb.Value(0).cast(node.pointer()) if node is not None else "(none)"

    return text, children


def _node_class(pointer):
    """The class name of an autograd node (its dynamic type, from the vtable), or None."""
    if pointer is None or int(pointer) == 0:
        return None
    try:
        pointer = pointer.cast(pointer.type.strip_typedefs().target().strip_typedefs().pointer())
        name = pointer.dynamic_type.strip_typedefs().target().name or ""
    except gdb.error:
        return None
    return name.split("::")[-1] or None


def _device_text(device):
    kind = int(device["type"])
    index = int(device["index"])
    name = _DEVICE_NAMES.get(kind, "unknown")
    return "%s:%d" % (name, index) if index >= 0 else name


class TensorImplPrinter(_WithChildren):
    def impl(self):
        return self.value

    def summary(self):
        impl = self.impl()
        if impl is None:
            return "Tensor(undefined)"
        return _tensor_parts(impl)[0]

    def child_list(self):
        impl = self.impl()
        if impl is None:
            return []
        return list(_tensor_parts(impl)[1]())


class TensorPrinter(TensorImplPrinter):
    def impl(self):
        pointer = self.value["impl_"]["p_"]
        return None if int(pointer) == 0 else pointer.dereference()


class LocalDispatchKeySetPrinter(_WithChildren):
    def sets(self):
        included = (int(self.value["included_"]) ^ _DEFAULT_INCLUDED) & _MASK64
        excluded = (int(self.value["excluded_"]) ^ _DEFAULT_EXCLUDED) & _MASK64
        return included, excluded

    def summary(self):
        included, excluded = self.sets()
        return "included=%s, excluded=%s" % (keyset_info(included)["repr"], keyset_info(excluded)["repr"])

    def child_list(self):
        included, excluded = self.sets()
        yield "included", _keyset_value(included)
        yield "excluded", _keyset_value(excluded)


class DispatchRecordPrinter(_Printer):
    def summary(self):
        op = int(self.value["op"]) & _MASK64
        if op == 0:
            return "(empty record)"
        return _run("record-line 0x%x 0x%x %d" % (op, int(self.value["keyset"]) & _MASK64,
                                                  int(self.value["kind"]) & 0xFF)).strip()


class ScalarTypePrinter(_Printer):
    def summary(self):
        return _DTYPE_NAMES.get(int(self.value), "unknown (%d)" % int(self.value))


class DevicePrinter(_Printer):
    def summary(self):
        return _device_text(self.value)


# ---------------------------------------------------------------- registration

class DscopePrettyPrinter(gdb.printing.PrettyPrinter):
    """Matches type.strip_typedefs().tag exactly (templates by prefix); `info pretty-printer`
    lists each subprinter, and `disable pretty-printer` works on them."""

    _EXACT = {
        "dscope::DispatchKey": DispatchKeyPrinter,
        "dscope::BackendComponent": BackendComponentPrinter,
        "dscope::DispatchKeySet": DispatchKeySetPrinter,
        "dscope::OperatorName": OperatorNamePrinter,
        "dscope::OperatorHandle": OperatorHandlePrinter,
        "dscope::impl::OperatorEntry": OperatorEntryPrinter,
        "dscope::KernelFunction": KernelFunctionPrinter,
        "dscope::Tensor": TensorPrinter,
        "dscope::TensorImpl": TensorImplPrinter,
        "dscope::impl::PODLocalDispatchKeySet": LocalDispatchKeySetPrinter,
        "dscope_dispatch_record": DispatchRecordPrinter,
        "dscope::ScalarType": ScalarTypePrinter,
        "dscope::Device": DevicePrinter,
    }
    _PREFIXES = {"dscope::TypedOperatorHandle<": OperatorHandlePrinter}

    class _Sub(gdb.printing.SubPrettyPrinter):
        pass

    def __init__(self):
        super().__init__("dscope", [self._Sub(name) for name in list(self._EXACT) + list(self._PREFIXES)])
        self._enabled = {sub.name: sub for sub in self.subprinters}

    def __call__(self, value):
        try:
            tag = value.type.strip_typedefs().tag
        except Exception:
            return None
        if not tag:
            return None
        printer, name = self._EXACT.get(tag), tag
        if printer is None:
            for prefix, candidate in self._PREFIXES.items():
                if tag.startswith(prefix):
                    printer, name = candidate, prefix
                    break
        if printer is None or not self._enabled[name].enabled:
            return None
        return printer(value)


def _register(progspace):
    if progspace is None:
        return
    if any(getattr(p, "name", None) == "dscope" for p in progspace.pretty_printers):
        return
    gdb.printing.register_pretty_printer(progspace, DscopePrettyPrinter(), replace=True)


def _on_new_objfile(event):
    try:
        _register(event.new_objfile.progspace)
    except Exception:
        pass


def install(inspect):
    global _inspect
    _inspect = inspect
    _register(gdb.current_progspace())
    gdb.events.new_objfile.connect(_on_new_objfile)
