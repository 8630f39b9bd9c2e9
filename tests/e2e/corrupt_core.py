#!/usr/bin/env python3
"""Writes a copy of a real kernel core with one named field damaged, for the end-to-end tests of
issue 21's failure classes (tests/e2e/reliability_tests.cmake), which then run both debuggers on
it and check what each class must say.

  corrupt_core.py --sample S --program P --core C --out OUT KIND

Targets are found as core_fuzz.py finds them (its Target: plain gdb for the DWARF-only offsets,
the core's own bytes for the rest), never with DispatchScope. KIND is one of KINDS below."""

import argparse
import sys

import core_fuzz as fz


def middle_block(t):
    """A block in the middle of the registry list, not the overflowing thread's."""
    others = [x for x in t.blocks[1:] if x is not t.main]
    return others[len(others) // 2]


def registered_at(t, needle):
    """Every heap copy of a kernel's or schema's debug string that contains needle (bytes)."""
    vaddr, off, filesz = t.heap
    data, found, at = t.core.data, [], off
    while True:
        at = data.find(needle, at, off + filesz)
        if at < 0:
            return found
        found.append(at)
        at += len(needle)


# KIND -> (sample, the patches): each damages what one failure class of issue 21 is about.
KINDS = {
    # 1: a pop at depth 0 underflows to 2^64 - 1.
    "depth-underflow": ("infinite_redispatch", lambda t: [fz.field(t, t.main["addr"] + fz.BLOCK_DEPTH, fz.U64 - 1)]),
    # 4: a block in the middle of the registry loses its magic: the walk ends there.
    "block-magic": ("multithread", lambda t: [fz.field(t, middle_block(t)["addr"] + fz.BLOCK_MAGIC, 0)]),
    # 4: the operator list's 600th link is null.
    "op-next-null": ("op_catalog", lambda t: [fz.field(t, t.ops[599]["addr"] + t.next_off, 0)]),
    # 5: fields that cannot be a thread's, or garbage where text or an operator belongs.
    "block-state": ("infinite_redispatch", lambda t: [fz.field(t, t.main["addr"] + fz.BLOCK_STATE, 7, 4)]),
    "block-tid": ("infinite_redispatch", lambda t: [fz.field(t, t.main["addr"] + fz.BLOCK_TID, 0, 4)]),
    "block-tls": ("tls_leak", lambda t: [fz.field(t, t.main["addr"] + fz.BLOCK_TLS, fz.WILD)]),
    # The TLS pointer aimed at readable memory that is no thread's TLS: an operator entry (the block
    # itself is no good: in a debug build, the word where the TLS keeps its records pointer falls on
    # a block field that holds the block's own address).
    "block-tls-other": ("tls_leak", lambda t: [fz.field(t, t.main["addr"] + fz.BLOCK_TLS, t.ops[0]["addr"])]),
    "op-name": ("op_catalog", lambda t: [(t.core.offset(t.op_named("aten::linear")["name_ptr"] + 6), b"\x80")]),
    "registered-at": ("infinite_redispatch",
                      lambda t: [(at + len(b"registered at "), b"\xff")
                                 for at in registered_at(t, b"registered at ")]),
    "record-op": ("multithread", lambda t: [fz.field(t, t.record(t.main, t.main["depth"] - 1) + fz.REC_OP,
                                                     t.ops[0]["addr"] + 8)]),
    "record-keyset": ("infinite_redispatch",
                      lambda t: [fz.field(t, t.record(t.main, t.main["depth"] - 1) + fz.REC_KEYSET, fz.U64 - 1)]),
    # 6: the innermost record half-written (kind 0), or one in the middle of the loop flipped.
    "innermost-kind": ("infinite_redispatch",
                       lambda t: [fz.field(t, t.record(t.main, t.main["depth"] - 1) + fz.REC_KIND, 0, 1)]),
    "middle-slot": ("infinite_redispatch",
                    lambda t: [fz.field(t, t.record(t.main, t.main["depth"] - 100) + fz.REC_SLOT, 7, 2)]),
}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--program", required=True)
    p.add_argument("--core", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("kind", choices=sorted(KINDS))
    a = p.parse_args()
    sample, patches = KINDS[a.kind]
    try:
        t = fz.Target(sample, a.program, a.core, 60)
    except fz.Setup as e:
        print("corrupt_core.py: cannot use %s: %s" % (a.core, e))
        return 1
    data = bytearray(t.core.data)
    applied = patches(t)
    if not applied:
        print("corrupt_core.py: nothing to damage for %s in %s" % (a.kind, a.core))
        return 1
    for off, patch in applied:
        data[off:off + len(patch)] = patch
    fz.write_sparse(a.out, data)
    print("corrupt_core.py: %s: %d patch(es) -> %s" % (a.kind, len(applied), a.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
