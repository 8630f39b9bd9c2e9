#!/usr/bin/env python3
"""The LLDB plugin's source lines against GDB's, on every address of an ELF file's line table.

  lines_vs_gdb.py PROBE ELF

PROBE is dscope_lldb_lines_probe (the plugin's GdbLineTable, lldb/src/GdbLines.h); GDB's answer
is gdb.find_pc_line on the same file address. Every row address of .debug_line is asked (readelf
lists them). Exits 0 when all agree, 1 otherwise, naming the first differences."""

import os
import re
import subprocess
import sys
import tempfile


def main():
    probe, elf = sys.argv[1], sys.argv[2]
    rows = subprocess.run(["readelf", "--debug-dump=decodedline", elf], stdout=subprocess.PIPE, check=True,
                          text=True).stdout
    addresses = sorted({int(m.group(1), 16) for m in re.finditer(r"\s(0x[0-9a-f]+)\s", rows)} - {0})
    if len(addresses) < 100:
        print("FAIL: only %d line-table addresses in %s (no debug info?)" % (len(addresses), elf))
        return 1
    with tempfile.TemporaryDirectory() as work:
        wanted = os.path.join(work, "addresses")
        answers = os.path.join(work, "gdb")
        with open(wanted, "w") as f:
            f.write("\n".join(hex(a) for a in addresses) + "\n")
        script = os.path.join(work, "lines.py")
        with open(script, "w") as f:
            f.write("import gdb\n"
                    "out = open(%r, 'w')\n"
                    "for word in open(%r).read().split():\n"
                    "    line = gdb.find_pc_line(int(word, 16))\n"
                    "    where = '%%s:%%d' %% (line.symtab.filename, line.line) if line.symtab is not None and line.line else '-'\n"
                    "    out.write('%%s %%s\\n' %% (word, where))\n"
                    "out.close()\n" % (answers, wanted))
        subprocess.run(["gdb", "-nx", "-batch", "-ex", "source " + script, elf], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=True)
        with open(answers) as f:
            gdb_lines = f.read().splitlines()
        with open(wanted) as f:
            mine = subprocess.run([probe, elf], stdin=f, stdout=subprocess.PIPE, check=True,
                                  text=True).stdout.splitlines()
    if len(gdb_lines) != len(addresses) or len(mine) != len(addresses):
        print("FAIL: %d addresses, GDB answered %d, the probe %d" % (len(addresses), len(gdb_lines), len(mine)))
        return 1
    different = [(g, m) for g, m in zip(gdb_lines, mine) if g != m]
    print("%s: %d line-table addresses, %d agree with GDB" % (elf, len(addresses), len(addresses) - len(different)))
    for g, m in different[:20]:
        print("  GDB: %s | plugin: %s" % (g, m))
    return 1 if different else 0


if __name__ == "__main__":
    sys.exit(main())
