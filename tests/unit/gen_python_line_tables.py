#!/usr/bin/env python3
"""Writes tests/unit/python_line_tables.inc: real CPython location tables with the line CPython
itself gives each code unit, the oracle of test_python.cpp's line decoder (pythonLineAt).

  python3 tests/unit/gen_python_line_tables.py [--root SUITE=DIR ...] > tests/unit/python_line_tables.inc

Each interpreter (this one, and /usr/bin/python3 of each --root, run there with chroot) compiles
the source below and reports, for every code object in it (nested ones included), co_firstlineno,
co_linetable and the line of each code unit as co_lines() says (None: -1); co_positions()' start
line must say the same of every unit, else this script stops. The source is written to produce
every kind of location entry (Objects/locations.md): short forms (codes 0-9), one-line forms
(10-12), no-column entries (13, from an AST without columns), long forms (14), no-location entries
(15), line deltas both ways and of one, two and three varint bytes. The kinds each table holds are
counted from its entry headers and printed, for the reader of the data only: the expectations are
CPython's. Standard library only."""

import argparse
import json
import subprocess
import sys

SOURCE = '''
def simple(a, b):
    c = a + b
    return c * 2


def loops(n):
    total = 0
    for i in range(n):
        if i % 3 == 0:
            continue
        while total > 100:
            total -= 7
        total += i
    return [j for j in range(total) if j]


def handlers(x):
    try:
        y = 1 / x
    except ZeroDivisionError as e:
        y = None
    finally:
        x = 0
    with open(__file__) as f:
        pass
    return y


def wide(aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa, bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb):
    return                                                                                                                                                  aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.real + bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb.imag


def multiline(a,
              b):
    value = (a
             +
             b)
    return (lambda q:
            q + value)(
        a)


def columns(a, g):
    return g(a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a)


class Holder:
    def method(self, items):
        gen = (item * 2
               for item in items)
        return sum(gen)


async def coroutine(x):
    await x
    return x


def gaps(x):
    first = x
''' + "\n" * 40 + '''    second = first + 1
''' + "\n" * 3000 + '''    third = second + 1
    return third
''' + "\n" * 5000 + '''

def far_away(x):
    return x + 1
'''

# The same kind of function with no column anywhere: the compiler writes no-column entries (13).
NO_COLUMN = "def no_columns(x):\n    y = x + 1\n    z = y * 2\n\n\n    return z\n"

PROBE = r'''
import ast, json, sys
source, no_column = json.loads(sys.stdin.read())
def walk(code):
    yield code
    for k in code.co_consts:
        if hasattr(k, "co_code"):
            yield from walk(k)
def described(module):
    out = []
    for code in walk(module):
        units = len(code.co_code) // 2
        lines = [None] * units
        for start, end, line in code.co_lines():
            for unit in range(start // 2, end // 2):
                lines[unit] = line
        positions = [p[0] for p in code.co_positions()]
        if positions != lines:
            sys.exit("%s: co_positions and co_lines differ: %r / %r" % (code.co_qualname, positions, lines))
        out.append({"name": code.co_qualname, "first_line": code.co_firstlineno, "table": code.co_linetable.hex(),
                    "lines": [-1 if l is None else l for l in lines]})
    return out
tree = ast.parse(no_column)
for node in ast.walk(tree):
    if hasattr(node, "col_offset"):
        node.col_offset = node.end_col_offset = -1
print(json.dumps({"python": "%d.%d.%d" % sys.version_info[:3],
                  "codes": described(compile(source, "lines.py", "exec")) + described(compile(tree, "nocol.py", "exec"))}))
'''


def measure(argv):
    out = subprocess.run(argv + ["-c", PROBE], input=json.dumps([SOURCE, NO_COLUMN]), capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("%s failed: %s" % (" ".join(argv), out.stderr.strip()[-2000:]))
    return json.loads(out.stdout)


def kinds(table_hex):
    """{entry code: count} of a location table, from its entry headers (bit 7 set)."""
    table, found = bytes.fromhex(table_hex), {}
    for byte in table:
        if byte & 0x80:
            code = (byte >> 3) & 15
            found[code] = found.get(code, 0) + 1
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default="/usr/bin/python3")
    parser.add_argument("--root", action="append", default=[], help="SUITE=DIR: also /usr/bin/python3 of that root")
    args = parser.parse_args()
    runs = [measure([args.python])]
    for spec in args.root:
        _suite, root = spec.split("=", 1)
        runs.append(measure(["chroot", root, "/usr/bin/python3"]))
    print("// Generated by tests/unit/gen_python_line_tables.py; do not edit. Real CPython location tables")
    print("// and the line CPython gives each code unit (co_lines, co_positions agreeing; -1: None).")
    for run in runs:
        seen = {}
        for code in run["codes"]:
            for k, n in kinds(code["table"]).items():
                seen[k] = seen.get(k, 0) + n
        print("// Python %s: %d code objects; entries by kind %s" % (
            run["python"], len(run["codes"]), ", ".join("%d:%d" % kv for kv in sorted(seen.items()))))
        missing = sorted(set(range(16)) - set(seen))
        if missing:
            sys.exit("Python %s's tables have no entry of kind %s" % (run["python"], missing))
    for run in runs:
        for code in run["codes"]:
            print('{"%s", "%s", %d, "%s",\n {%s}},' % (run["python"], code["name"], code["first_line"], code["table"],
                                                       ", ".join(str(l) for l in code["lines"])))


if __name__ == "__main__":
    main()
