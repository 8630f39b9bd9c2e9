#!/usr/bin/env python3
"""The library's symbolizer against GDB itself: for every function of a module (each FUNC symbol
of its ELF symbol table), the name, file and definition line the library prints (symbolize_probe)
must be GDB's: the print_name, symtab file and line of the function GDB finds at that address
(the function that starts there, not a call inlined at its entry).

  symbols_vs_gdb.py PROBE MODULE SOURCE_DIR

Compared: the functions defined under SOURCE_DIR (the runtime's and the samples' kernels among
them). Left out, each counted in the summary line, only where GDB's own answer is not a name it
could build: an artificial function with no line (static initializers: "at FILE:0"), a name GDB's
C++ parser could not canonicalize (it keeps clang-style "const T &" or "struct {...}", as around
lambdas), a lambda's operator() (GDB names its enclosing function at some lambdas' entries),
and std::ostream parameters, which GDB alone expands to std::basic_ostream<...>."""

import subprocess
import sys

GDB_SCRIPT = r'''
import gdb
def describe(addr):
    try:
        block = gdb.block_for_pc(addr)
    except RuntimeError:
        return ""
    # The function that starts at addr (a lambda's block is nested in its enclosing function's,
    # a call inlined at the entry in the function's): the outermost function block starting there.
    # A function split into hot and cold parts starts at its entry, not at its block's start (the
    # cold part's, placed lower): its symbol's address says where it is entered.
    def entry(f):
        try:
            return int(f.value().address)
        except (gdb.error, TypeError):
            return None
    function = starting = None
    while block is not None and not block.is_static and not block.is_global:
        if block.function is not None:
            function = block.function
            if block.start == addr or entry(block.function) == addr:
                starting = block.function
        block = block.superblock
    function = starting or function
    if function is None or function.symtab is None:
        return ""
    return "%s at %s:%d" % (function.print_name, function.symtab.filename, function.line)
for addr in ADDRESSES:
    print("0x%x\t%s" % (addr, describe(addr)))
'''


def functions(module):
    out = subprocess.run(["readelf", "-sWC", module], capture_output=True, text=True, check=True).stdout
    addrs = set()
    for line in out.splitlines():
        words = line.split()
        # A split function's cold part (NAME.cold) is no entry point: no kernel starts there.
        if len(words) >= 8 and words[3] == "FUNC" and words[6] != "UND" and int(words[1], 16) \
                and "[clone .cold]" not in line and "{lambda(" not in line:
            addrs.add(int(words[1], 16))
    return sorted(addrs)


def answers(lines):
    return dict(line.split("\t", 1) for line in lines.splitlines() if "\t" in line)


def gdb_quirk(text):
    return text.endswith(":0") or " &" in text or "{...}" in text or "std::basic_ostream<" in text


def main():
    probe, module, source_dir = sys.argv[1:4]
    addrs = functions(module)
    ours = answers(subprocess.run([probe, module], input="\n".join(hex(a) for a in addrs), capture_output=True,
                                  text=True, check=True).stdout)
    script = GDB_SCRIPT.replace("ADDRESSES", "[%s]" % ",".join(str(a) for a in addrs))
    gdb = subprocess.run(["gdb", "-nx", "-batch", "-ex", "python\n" + script + "\nend", module],
                         capture_output=True, text=True, timeout=600)
    theirs = answers(gdb.stdout)
    compared, quirks, failures = 0, 0, []
    for addr in map(hex, addrs):
        expected = theirs.get(addr, "")
        if " at " + source_dir + "/" not in expected:
            continue
        if gdb_quirk(expected):
            quirks += 1
            continue
        compared += 1
        if ours.get(addr) != expected:
            failures.append("%s\n  library: %s\n  GDB:     %s" % (addr, ours.get(addr), expected))
    print("%s: %d functions of %s compared with GDB, %d left out (GDB's own spelling), %d differ"
          % (module, compared, source_dir, quirks, len(failures)))
    for f in failures:
        print(f)
    if compared == 0:
        print("FAIL: no function compared (GDB answered %d of %d addresses)\n%s" % (len(theirs), len(addrs), gdb.stderr[-2000:]))
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
