#!/usr/bin/env python3
"""The CPython layout dscope resolves, against the interpreter's own headers (the headers are the oracle).

profiles/probe/dscope-python-profile --print compiles python_probe.c against the interpreter's
headers (with --root, the root's) and prints every value of the reader's layout by name, and for
3.13 and later where _Py_DebugOffsets keeps each published value (debug_offset_NAME, offsetof in
the headers' struct). A live Python process of the same interpreter (a trivial program: it prints
"ready" and sleeps; in a root it runs as a container, scripts/torch-roots.sh run) is read by
`dscope pid PID python-bt --layout`, which prints "python VERSION", every resolved "NAME VALUE"
("absent" for an absent optional value) and, for a layout read from _Py_DebugOffsets, the
debug_offset_NAME place it read each value at. Then:

  * every value the probe measured equals the one dscope resolved, by name, and dscope resolved no
    value the probe did not measure (an absent one excepted, which must be optional): for 3.13 and
    3.14 this holds the compiled contracts (kContracts in PythonLayout.cpp: the places, and the
    constants _Py_DebugOffsets does not publish) against the headers; for 3.11 the shipped profile;
  * every debug_offset_NAME the probe measured equals the place dscope read (3.13+; a 3.11 layout
    has none on either side);
  * the version: the headers' PY_VERSION, the process's own platform.python_version() and dscope's;
  * host (3.11) only: the shipped profiles/BUILD-ID.profile equals, byte for byte, a fresh
    `dscope-python-profile --output TMP` (a stale profile fails), and dscope read that one
    (DSCOPE_PROFILE_PATH is the source tree's profiles/).

  python_layout_test.py --check {host,trixie,sid} --dscope D --profiles DIR --probe P
                        [--roots-script S] --workdir W
Exits 0 when every value agrees, 1 naming the differences, 77 when the check cannot run here (a root
needs root for its namespaces)."""

import argparse
import os
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "torch"))
sys.path.insert(0, str(HERE.parent / "e2e"))
import python_bt_test as bt  # noqa: E402  (the program's ready line)
import roots  # noqa: E402
import session  # noqa: E402

SKIP = 77
READY_S = 60
PROGRAM = 'import platform, time\nprint("ready", platform.python_version(), flush=True)\ntime.sleep(600)\n'
HEADER = {"dscope-profile", "runtime", "version", "build-id"}
# The values the reader may lack (PythonLayout.cpp optionalPythonValue).
OPTIONAL = {"cframe_current_frame", "interpreter_frame_is_entry", "frame_owner_hidden_from"}


def name_values(text, what):
    """{NAME: VALUE text} of "NAME VALUE" lines; the first line's header word pair apart."""
    values = {}
    for line in text.splitlines():
        words = line.split()
        if not words:
            continue
        if len(words) != 2 and words[0] != "build-id":
            raise SystemExit("%s: not a 'NAME VALUE' line: %r\n%s" % (what, line, text[-3000:]))
        if words[0] in values:
            raise SystemExit("%s names %s twice:\n%s" % (what, words[0], text[-3000:]))
        values[words[0]] = " ".join(words[1:])
    return values


def probe(a, root):
    argv = [sys.executable, a.probe, "--print"] + (["--root", str(root)] if root else [])
    out = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        raise SystemExit("%s failed (%d):\n%s" % (" ".join(argv), out.returncode, (out.stdout + out.stderr)[-3000:]))
    return name_values(out.stdout, "the probe")


def start_program(a, suite):
    """(popen, the interpreter's host pid, the version it prints) of the trivial program."""
    if suite:
        argv = [str(a.roots_script), "run", suite, "/usr/bin/python3", "-c", PROGRAM]
    else:
        argv = ["/usr/bin/python3", "-c", PROGRAM]
    popen = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             start_new_session=True)
    try:
        version = bt.wait_for_line(popen, r"^ready \S+$", "the program", READY_S).split()[1]
        pid = popen.pid
        if suite:  # the runner becomes unshare; its child (the namespace's init) runs python
            children = roots.runner_children(popen.pid)
            if len(children) != 1:
                raise SystemExit("the runner %d has children %s, not the one python" % (popen.pid, children))
            pid = children[0]
        comm = pathlib.Path("/proc/%d/comm" % pid).read_text().strip()
        if not comm.startswith("python3"):
            raise SystemExit("pid %d runs %s, not python3" % (pid, comm))
    except BaseException:
        session.kill_group(popen)
        raise
    return popen, pid, version


def dscope_layout(a, pid, env):
    argv = [a.dscope, "pid", str(pid), "python-bt", "--layout"]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env, stdin=subprocess.DEVNULL)
    if out.returncode != 0 or out.stderr.strip():
        raise SystemExit("%s exited %d:\n%s" % (" ".join(argv), out.returncode, (out.stdout + out.stderr)[-3000:]))
    return name_values(out.stdout, "dscope python-bt --layout")


def compare(measured, resolved):
    """The problems: every measured value (and place) against dscope's, by name."""
    problems = []
    for name, value in measured.items():
        if name in HEADER:
            continue
        if name not in resolved:
            problems.append("%s: the headers say %s; dscope resolved no such value" % (name, value))
        elif resolved[name] != value:
            problems.append("%s: the headers say %s, dscope resolved %s" % (name, value, resolved[name]))
    for name, value in resolved.items():
        if name == "python" or name in measured:
            continue
        if value != "absent":
            problems.append("%s: dscope resolved %s; the headers have no such value" % (name, value))
        elif name not in OPTIONAL:
            problems.append("%s: absent in dscope's layout, and not an optional value" % name)
    return problems


def check_profile(a, measured):
    """The shipped profile of this interpreter, byte for byte a fresh one."""
    build_id = measured.get("build-id", "").split()[-1]
    shipped = pathlib.Path(a.profiles) / (build_id + ".profile")
    if not shipped.exists():
        return ["no shipped profile %s for this interpreter (build-id %s)" % (shipped, build_id)]
    fresh_dir = a.workdir / "fresh"
    out = subprocess.run([sys.executable, a.probe, "--output", str(fresh_dir)], capture_output=True, text=True, timeout=300)
    fresh = fresh_dir / shipped.name
    if out.returncode != 0 or not fresh.exists():
        return ["dscope-python-profile --output %s failed (%d):\n%s" % (fresh_dir, out.returncode, out.stdout + out.stderr)]
    if fresh.read_bytes() != shipped.read_bytes():
        diff = subprocess.run(["diff", str(shipped), str(fresh)], capture_output=True, text=True).stdout
        return ["%s is stale: a fresh dscope-python-profile writes otherwise (regenerate it):\n%s" % (shipped, diff[-3000:])]
    return []


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--check", choices=["host", "trixie", "sid"], required=True)
    p.add_argument("--dscope", required=True)
    p.add_argument("--profiles", required=True, help="the source tree's profiles/ (the shipped ones)")
    p.add_argument("--probe", required=True, help="profiles/probe/dscope-python-profile")
    p.add_argument("--roots-script", type=pathlib.Path, default=HERE.parent.parent / "scripts" / "torch-roots.sh")
    p.add_argument("--workdir", type=pathlib.Path, required=True)
    a = p.parse_args()
    a.workdir.mkdir(parents=True, exist_ok=True)
    suite = None if a.check == "host" else a.check
    root = None
    if suite:
        if os.geteuid() != 0:
            print("python_layout %s: a container needs root (unshare)" % suite)
            return SKIP
        root = roots.root_dir(a.roots_script, suite)
        if not (root / ".dscope-root").exists():
            raise SystemExit("no %s root at %s: run scripts/torch-roots.sh ensure %s" % (suite, root, suite))
    measured = probe(a, root)
    env = dict(os.environ, DSCOPE_PROFILE_PATH=str(pathlib.Path(a.profiles).resolve()))
    popen, pid, version = start_program(a, suite)
    try:
        resolved = dscope_layout(a, pid, env)
    finally:
        session.kill_group(popen)
    problems = compare(measured, resolved)
    if not resolved.get("python") == measured.get("version") == version:
        problems.append("version: the headers say %s, the process %s, dscope %s" % (
            measured.get("version"), version, resolved.get("python")))
    places = [n for n in measured if n.startswith("debug_offset_")]
    if suite and not places:
        problems.append("the probe measured no _Py_DebugOffsets places for Python %s" % measured.get("version"))
    if not suite:
        problems += check_profile(a, measured)
    values = [n for n in measured if n not in HEADER and n not in places]
    print("python_layout %s: Python %s, %d values and %d _Py_DebugOffsets places from the headers, %d absent "
          "optional in dscope's layout: %d problems" % (a.check, measured.get("version"), len(values), len(places),
                                                        sum(1 for v in resolved.values() if v == "absent"), len(problems)))
    for problem in problems:
        print(problem[:4000])
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
