"""dispatch-trace --frames: the dispatch chain rebuilt from GDB's stack instead of the runtime's
records (for DSCOPE_DISPATCH_RECORDS=OFF builds, or to cross-check them).

Walks the selected thread's frames from the innermost outwards (at most MAX_FRAMES), recognises
the dispatcher's own frames (TypedOperatorHandle<...>::dispatch / call / redispatch and the boxed
dscope::dispatchBoxed, see runtime/include/dscope/Dispatcher.h and runtime/src/Dispatcher.cpp),
reads the operator (this->entry_->full_name_) and the key set (ks.repr_) from their DWARF
variables, and prints one "[call] op=[aten::mm], key=[AutogradCPU]" line per dispatch, oldest
first, with a repeating cycle folded as in the records-based trace. Key names come from the
inspect library ("keyset <raw>"), so no key table lives in Python."""

import json
import re

import gdb

MAX_FRAMES = 20000  # hard bound on the walk: a stack overflow has hundreds of thousands
_ENTRY_SHOWN = 16   # folded view: dispatches before the loop
_TOP_SHOWN = 3      # folded view: the innermost dispatches

_KIND_LABEL = {1: "call", 2: "redispatch", 3: "callBoxed", 4: "redispatchBoxed"}
_KIND_BY_ENUM = {"DSCOPE_RECORD_CALL": 1, "DSCOPE_RECORD_REDISPATCH": 2, "DSCOPE_RECORD_CALL_BOXED": 3,
                 "DSCOPE_RECORD_REDISPATCH_BOXED": 4}

# A frame's name without its parameter list (GDB gives "ns::f(int) const" for some inlined frames).
_PARAMS = re.compile(r"\((?:[^()]|\([^()]*\))*\)(?: const)?$")


def _base_name(name):
    return _PARAMS.sub("", name) if name.endswith(")") or name.endswith(") const") else name


def _classify(name):
    """'dispatch', 'call', 'redispatch' (a TypedOperatorHandle frame), 'boxed' (dispatchBoxed),
    'callBoxed'/'redispatchBoxed' (Dispatcher::callBoxed/redispatchBoxed, the boxed entry points),
    'wrapper' (an op struct's TypedOp<...>::call/redispatch, which passes ks through), or None."""
    if not name or not name.startswith("dscope::"):
        return None
    base = _base_name(name)
    if base.startswith("dscope::TypedOperatorHandle<"):
        for method in ("dispatch", "redispatch", "call"):
            if base.endswith(">::" + method):
                return method
        return None
    if base == "dscope::dispatchBoxed":
        return "boxed"
    if base in ("dscope::Dispatcher::callBoxed", "dscope::OperatorHandle::callBoxed"):
        return "callBoxed"
    if base in ("dscope::Dispatcher::redispatchBoxed", "dscope::OperatorHandle::redispatchBoxed"):
        return "redispatchBoxed"
    if "::_ops::TypedOp<" in base and (base.endswith(">::call") or base.endswith(">::redispatch")):
        return "wrapper"
    return None


def _is_kernel_plumbing(name):
    """Frames between a dispatch and its kernel that carry the same ks (KernelFunction::call,
    the unboxed/boxed trampolines, invokeKernel)."""
    return bool(name) and (name.startswith("dscope::KernelFunction::") or name.startswith("dscope::detail::"))


class _Frame:
    __slots__ = ("frame", "name", "kind", "level")

    def __init__(self, frame, level):
        self.frame = frame
        self.level = level
        try:
            self.name = frame.name() or ""
        except gdb.error:
            self.name = ""
        self.kind = _classify(self.name)


def _read(frame, expr):
    """Evaluates expr in frame; None when absent or optimized out."""
    try:
        if "@" in expr or "->" in expr or "." in expr:
            frame.select()
            value = gdb.parse_and_eval(expr)
        else:
            value = frame.read_var(expr)
        if value.is_optimized_out:
            return None
        value.fetch_lazy()
        return value
    except (gdb.error, RuntimeError, ValueError):
        return None


def _keyset_of(frame):
    for expr in ("ks", "ks@entry"):
        value = _read(frame, expr)
        if value is None:
            continue
        try:
            if value.type.strip_typedefs().code == gdb.TYPE_CODE_STRUCT:
                value = value["repr_"]
            if value.is_optimized_out:
                continue
            return int(value) & 0xFFFFFFFFFFFFFFFF
        except (gdb.error, RuntimeError, ValueError):
            continue
    return None


def _op_of(frame, boxed):
    for expr in (("op.entry_->full_name_", "op->entry_->full_name_") if boxed else ("this->entry_->full_name_",)):
        value = _read(frame, expr)
        if value is None:
            continue
        try:
            return value.string()
        except (gdb.error, RuntimeError, ValueError, UnicodeDecodeError):
            continue
    return None


def _kind_of(frame):
    value = _read(frame, "kind")
    if value is None:
        return None
    text = str(value)
    if text in _KIND_BY_ENUM:
        return _KIND_BY_ENUM[text]
    try:
        return int(value) if int(value) in _KIND_LABEL else None
    except (gdb.error, ValueError):
        return None


def _atomic_int(value):
    """An std::atomic<integral>'s value (libstdc++ keeps it in _M_i)."""
    try:
        return int(value)
    except gdb.error:
        pass
    for field in ("_M_i", "_M_base"):
        try:
            return _atomic_int(value[field])
        except gdb.error:
            continue
    raise gdb.error("cannot read %s" % value.type)


def _table_slot(entry, slot):
    """The AnnotatedKernel* in OperatorEntry::dispatchTable_[slot] (a C array or std::array of
    atomic pointers)."""
    table = entry["dispatchTable_"]
    if table.type.strip_typedefs().code != gdb.TYPE_CODE_ARRAY:
        table = table["_M_elems"]
    element = table[slot]
    if element.type.strip_typedefs().code == gdb.TYPE_CODE_PTR:
        return int(element)
    return _atomic_int(element["_M_b"]["_M_p"]) if "_M_b" in [f.name for f in element.type.strip_typedefs().fields()] \
        else _atomic_int(element)


def _tensor_keyset(tensor):
    impl = tensor["impl_"]["p_"]
    if int(impl) == 0:
        return 0
    return int(impl.dereference()["key_set"]["repr_"])


def _json(inspect, command):
    text, is_error = inspect.run(command)
    return None if is_error else json.loads(text)


_recovery_cache = {}  # (op, kernel, tensor keys, mask, included) -> key; cleared per command


def _recover_call_key(frame, op, inspect):
    """The key a [call] dispatched to, for when the optimizer dropped its key set: the kernel that
    ran (`k`, kept) decides. Candidates are the keys of the arguments' tensors plus the thread's
    included keys, under the operator's fallthrough mask (OperatorEntry.h:
    getDispatchKeySetUnboxed); the answer is the highest-priority candidate whose dispatch-table
    slot holds that kernel. Excluded keys are not needed (the kernel tells), nor is the TLS of
    the time. None when anything is unreadable or no candidate matches."""
    try:
        kernel = frame.read_var("k")
        if kernel.type.strip_typedefs().code == gdb.TYPE_CODE_REF:
            kernel = kernel.referenced_value()
        kernel_address = int(kernel.address)
        entry = frame.read_var("this")["entry_"].dereference()
        extractor = entry["extractor_"]
        if _atomic_int(extractor["requiresBitsetPerBackend_"]):
            return None  # the mask depends on the backend
        mask = _atomic_int(extractor["nonFallthroughKeys_"])
        keyset = 0
        for index in range(64):
            try:
                arg = frame.read_var("args#%d" % index)
            except ValueError:
                break
            if arg.is_optimized_out:
                return None
            if arg.type.strip_typedefs().code == gdb.TYPE_CODE_REF:
                arg = arg.referenced_value()
            tag = arg.type.strip_typedefs().tag or ""
            if tag == "dscope::Tensor":
                keyset |= _tensor_keyset(arg)
            elif "Tensor" in tag:
                return None  # optional<Tensor>, TensorList: not decoded here
        cache_key = (op, kernel_address, keyset, mask)
        if cache_key in _recovery_cache:
            return _recovery_cache[cache_key]
        _recovery_cache[cache_key] = None
        tls = _json(inspect, "keyset --tls --explain 0x%x --json" % keyset)
        if not tls:
            return None
        candidates = _json(inspect, "keyset 0x%x --json" % (int(tls["explain"]["with_included"], 0) & mask))
        table = _recovery_cache.get(("table", op)) or _json(inspect, "op-table %s --computed --json" % op)
        _recovery_cache[("table", op)] = table
        if not candidates or not table:
            return None
        slots = {row["key"]: row["slot"] for row in table.get("computed", []) if row.get("slot") is not None}
        for key in reversed(candidates.get("keys", [])):  # highest priority last
            if key in slots and _table_slot(entry, slots[key]) == kernel_address:
                _recovery_cache[cache_key] = key
                return key
        return None
    except (gdb.error, gdb.MemoryError, RuntimeError, ValueError, KeyError, TypeError, AttributeError):
        return None


class _Dispatch:
    __slots__ = ("kind", "op", "keyset", "level", "key")

    def __init__(self, kind, op, keyset, level, key=None):
        # key: the key name when recovered from the kernel that ran (keyset is then None)
        self.kind, self.op, self.keyset, self.level, self.key = kind, op, keyset, level, key

    def same(self, other):
        return (self.kind, self.op, self.keyset, self.key) == (other.kind, other.op, other.keyset, other.key)


def _walk(max_frames):
    """(frames innermost first, complete) for the selected thread."""
    frames = []
    frame = gdb.newest_frame()
    while frame is not None and len(frames) < max_frames:
        frames.append(_Frame(frame, len(frames)))
        try:
            frame = frame.older()
        except gdb.error:  # unwinder gave up (corrupt stack): what we have is the answer
            frame = None
            break
    return frames, frame is None


def _dispatches(frames, inspect):
    """The dispatches on the walked stack, innermost first. A dispatch is a `dispatch` (or
    `dispatchBoxed`) frame; a call/redispatch frame without one just inside it counts on its own
    (the dispatch body was not described as an inlined frame)."""
    found = []
    i = 0
    n = len(frames)
    while i < n:
        f = frames[i]
        if f.kind not in ("dispatch", "boxed", "call", "redispatch", "callBoxed", "redispatchBoxed"):
            i += 1
            continue
        boxed = f.kind in ("boxed", "callBoxed", "redispatchBoxed")
        body = f  # the frame holding kind/ks/this
        # The entry point just outside the body: call/redispatch (or the boxed twins), then op wrappers.
        outer = []
        j = i + 1
        if f.kind in ("dispatch", "boxed"):
            while j < n and frames[j].kind in (("callBoxed", "redispatchBoxed") if boxed else ("call", "redispatch")):
                outer.append(frames[j])
                j += 1
        while j < n and frames[j].kind == "wrapper":
            outer.append(frames[j])
            j += 1
        kind = _kind_of(body.frame) if f.kind in ("dispatch", "boxed") else None
        if kind is None:
            for o in [body] + outer:
                label = {"call": 1, "redispatch": 2, "callBoxed": 3, "redispatchBoxed": 4}.get(o.kind)
                if label:
                    kind = label
                    break
        op = None
        for o in [body] + outer:
            if o.kind != "wrapper":
                op = op or _op_of(o.frame, boxed)
        keyset = _keyset_of(body.frame)
        if keyset is None:
            for o in outer:
                if o.kind == "call" or o.kind == "callBoxed":
                    continue  # ks is computed inside call(): only the body has it
                keyset = _keyset_of(o.frame)
                if keyset is not None:
                    break
        if keyset is None:
            # The kernel plumbing just inside the dispatch passes the same ks to the kernel.
            k = i - 1
            while keyset is None and k >= 0 and _is_kernel_plumbing(frames[k].name):
                keyset = _keyset_of(frames[k].frame)
                k -= 1
        key = None
        if keyset is None and kind == 1 and f.kind == "dispatch" and op:
            key = _recover_call_key(body.frame, op, inspect)
        found.append(_Dispatch(kind or 0, op, keyset, body.level, key))
        i = j
    return found


def _find_cycle(chain):
    """(period, start) of the repeating top of chain (oldest first), as findDispatchCycle does:
    the shortest period whose top three repetitions match, extended downwards. (0, 0) if none."""
    n = len(chain)
    for p in range(1, n // 3 + 1):
        if all(chain[d].same(chain[d - p]) for d in range(n - 2 * p, n)):
            start = n - 3 * p
            while start > 0 and chain[start - 1].same(chain[start - 1 + p]):
                start -= 1
            return p, start
    return 0, 0


def _group(n):
    return "{:,}".format(n)


class _KeyNames:
    """Raw key set -> its dispatch key name, asked of the inspect library once per value."""

    def __init__(self, inspect):
        self._inspect = inspect
        self._cache = {}

    def __call__(self, keyset):
        if keyset is None:
            return "<key set optimized out>"
        if keyset not in self._cache:
            text, is_error = self._inspect.run("keyset 0x%x" % keyset)
            match = None if is_error else re.search(r"^highest key: (\S+)", text, re.M)
            self._cache[keyset] = match.group(1) if match else "?0x%x" % keyset
        return self._cache[keyset]


def _line(d, key_name):
    return "[%s] op=[%s], key=[%s]" % (_KIND_LABEL.get(d.kind, "?"), d.op or "<optimized out>",
                                       d.key or key_name(d.keyset))


def _has_runtime():
    return any("dscope_runtime" in (o.filename or "") for o in gdb.objfiles())


def _runtime_frames_without_dwarf(frames):
    """True when some walked frame is in libdscope_runtime but has no DWARF function."""
    for f in frames:
        try:
            lib = gdb.solib_name(f.frame.pc()) or ""
            if "dscope_runtime" in lib and f.frame.function() is None:
                return True
        except gdb.error:
            continue
    return False


def trace(inspect, argument):
    """Text of dispatch-trace --frames [--thread N] [--max-frames N]."""
    words = argument.split()
    thread_number = None
    max_frames = MAX_FRAMES
    i = 0
    while i < len(words):
        w = words[i]
        if w in ("--thread", "--max-frames") and i + 1 < len(words) and words[i + 1].isdigit():
            if w == "--thread":
                thread_number = int(words[i + 1])
            else:
                max_frames = max(1, int(words[i + 1]))
            i += 2
        elif w == "--frames":
            i += 1
        else:
            return "dscope: dispatch-trace --frames takes only --thread N and --max-frames N (not %s)\n" % w
    if gdb.selected_inferior().pid == 0 or gdb.selected_thread() is None:
        return "dscope: no process or core file: dispatch-trace --frames reads a live stack\n"
    if not _has_runtime():
        return "dscope: libdscope_runtime is not loaded in this program: no dispatch frames to read\n"
    _recovery_cache.clear()
    previous = gdb.selected_thread()
    previous_frame = gdb.selected_frame()
    try:
        if thread_number is not None:
            chosen = [t for t in gdb.selected_inferior().threads() if t.num == thread_number]
            if not chosen:
                return "dscope: no thread %d\n" % thread_number
            chosen[0].switch()
        thread = gdb.selected_thread()
        frames, complete = _walk(max_frames)
        chain = list(reversed(_dispatches(frames, inspect)))  # oldest first
    finally:
        try:
            previous.switch()
            previous_frame.select()
        except gdb.error:
            pass
    source = "dispatch chain from the native stack (%s frames walked%s)" % (
        _group(len(frames)),
        "" if complete else "; stopped at the %s-frame bound, older frames not read" % _group(max_frames))
    if not chain:
        if _runtime_frames_without_dwarf(frames):
            return ("dscope: libdscope_runtime has no DWARF (stripped?): --frames needs it to name dispatch frames; "
                    "dispatch-trace without --frames reads the dispatch records\n")
        return "%s:\nthread %d (LWP %d): no dispatch frame on the stack\n" % (source, thread.num, thread.ptid[1])

    key_name = _KeyNames(inspect)
    out = [source + ":", "thread %d (LWP %d): %s dispatch frame%s%s" % (
        thread.num, thread.ptid[1], _group(len(chain)), "" if len(chain) == 1 else "s",
        "" if complete else " in the frames walked (the chain's start was not reached)")]
    number = lambda d: "#%d" % d  # noqa: E731  position in the chain, 0 = oldest walked

    def numbered(d):
        return "    %s %s  (frame #%d%s)" % (number(d), _line(chain[d], key_name), chain[d].level,
                                          "; key from the kernel that ran" if chain[d].key else "")

    period, start = _find_cycle(chain)
    folded = len(chain)  # the cycle's repetitions end here
    if not period and len(chain) > 3:
        # The innermost dispatch may have been caught half-way, before its key set existed
        # (optimized out at -O2, uninitialized at -O0): fold below it.
        period, start = _find_cycle(chain[:-1])
        folded = len(chain) - 1
    if not period:
        for d in range(len(chain)):
            out.append(numbered(d) + ("  (innermost)" if d == len(chain) - 1 else ""))
    else:
        if start:
            out.append("  entry (before the loop):")
            for d in range(min(start, _ENTRY_SHOWN)):
                out.append(numbered(d))
            if start > _ENTRY_SHOWN:
                out.append("    ... %s more" % _group(start - _ENTRY_SHOWN))
        repeats = (folded - start) // period
        out.append("  loop: a cycle of %d %s from %s to the top%s:" % (
            period, "dispatch" if period == 1 else "dispatches", number(start),
            "" if complete else " (it may begin below the frames walked)"))
        top = start + (repeats - 1) * period
        repeated = " ... repeated %s times" % _group(repeats)
        if period == 1:
            out.append("    " + _line(chain[top], key_name) + repeated)
        else:
            for d in range(top, top + period):
                out.append("    " + _line(chain[d], key_name))
            out.append("   " + repeated)
        out.append("  top of the chain:")
        for d in range(max(start, len(chain) - _TOP_SHOWN), len(chain)):
            out.append(numbered(d))
    recovered = sum(1 for d in chain if d.key)
    if recovered:
        out.append("  note: the optimizer dropped the key set of %d [call] frame%s: the key is the one among the "
                   "arguments' keys whose table slot holds the kernel that ran" % (recovered, "" if recovered == 1 else "s"))
    missing = sum(1 for d in chain if (d.keyset is None and not d.key) or d.op is None)
    if missing:
        out.append("  note: %d dispatch frame%s had values optimized out (an -O0 build keeps them; "
                   "the records-based dispatch-trace does not need them)" % (missing, "" if missing == 1 else "s"))
    return "\n".join(out) + "\n"
