#!/usr/bin/env python3
"""The probe against every torch the roots hold: dscope-profile --root makes each root's profile.

  profile_roots_test.py --source-dir DIR --workdir DIR SUITE...

For each Debian root (scripts/torch-roots.sh; made when missing), dscope-profile --root writes the
profile of the root's torch. Where profiles/ ships one for that build-id, the two must be
byte-identical (the shipped profile is what this probe measures). Where it ships none (sid moved on
to another torch build), the new profile goes to the per-user profile cache, where the tools look
after the shipped ones, so the 2.x tests read sid's torch whatever it is today; the test says so.
Exits 1 naming the differences."""

import argparse
import difflib
import os
import pathlib
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import roots as torch_roots


def user_cache():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return pathlib.Path(base) / "dscope" / "profiles"


def profile_of_root(source, suite, out):
    roots = source / "scripts" / "torch-roots.sh"
    made = subprocess.run([str(roots), "ensure", suite], capture_output=True, text=True)
    if made.returncode != 0:
        return None, "%s: the root could not be made:\n%s" % (suite, made.stdout + made.stderr)
    root = str(torch_roots.root_dir(roots, suite))
    out.mkdir(parents=True, exist_ok=True)
    ran = subprocess.run([sys.executable, str(source / "profiles" / "probe" / "dscope-profile"), "--root", root,
                          "--output", str(out)], capture_output=True, text=True, timeout=900)
    made = sorted(out.glob("*.profile"))
    if ran.returncode != 0 or len(made) != 1:
        return None, "%s: dscope-profile --root failed (%d):\n%s" % (suite, ran.returncode, ran.stdout + ran.stderr)
    return made[0], None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source-dir", type=pathlib.Path, required=True)
    parser.add_argument("--workdir", type=pathlib.Path, required=True)
    parser.add_argument("suites", nargs="+")
    a = parser.parse_args()
    shutil.rmtree(a.workdir, ignore_errors=True)
    with ThreadPoolExecutor(len(a.suites)) as pool:
        results = list(pool.map(lambda s: (s, *profile_of_root(a.source_dir, s, a.workdir / s)), a.suites))
    problems = []
    for suite, made, problem in results:
        if problem:
            problems.append(problem)
            continue
        shipped = a.source_dir / "profiles" / made.name
        if shipped.is_file():
            if shipped.read_text() != made.read_text():
                diff = difflib.unified_diff(shipped.read_text().splitlines(), made.read_text().splitlines(),
                                            "shipped", "probe", lineterm="", n=0)
                problems.append("%s: the shipped %s differs from what the probe measures:\n%s"
                                % (suite, shipped.name, "\n".join(list(diff)[:40])))
            else:
                print("%s: %s equals the shipped profile" % (suite, made.name))
        else:
            user_cache().mkdir(parents=True, exist_ok=True)
            shutil.copy(made, user_cache() / made.name)
            print("%s: no shipped profile for %s (the root's torch moved on): installed in %s"
                  % (suite, made.name, user_cache()))
    for p in problems:
        print("FAIL: " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
