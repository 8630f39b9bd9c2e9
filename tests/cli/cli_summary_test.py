#!/usr/bin/env python3
"""dscope core's summary, JSON and crash signature on the samples' kernel cores:

  * each sample crashes a second time here; both cores give the signature its source says (the same
    line for two crashes, whatever the addresses, depths and thread ids), in text and in JSON;
  * every JSON record is valid against docs/dscope-core.schema.json (python3-jsonschema);
  * a batch of good and bad cores (`--json -j 2`, files and a directory) gives one record per core,
    in order, the bad ones as error records, and exits 1.

  cli_summary_test.py --dscope DSCOPE --programs DIR --cores DIR --schema SCHEMA --workdir DIR
"""

import argparse
import json
import os
import pathlib
import resource
import shutil
import subprocess
import sys

import jsonschema

# What each sample's crash is, from its source (samples/*.cpp): the arguments that crash it and the
# signature its bug must get.
SAMPLES = {
    # my_add_autograd calls op.call(...) on its own operator: AutogradCPU re-entered.
    "infinite_redispatch": ([], "infinite-redispatch myops::my_add AutogradCPU kernel=my_add_autograd"),
    # Thread 5's loop_autograd does the same on myops::loop; the other threads are healthy.
    "multithread": ([], "infinite-redispatch myops::loop AutogradCPU kernel=loop_autograd"),
    # myops::only_cpu has a CPU kernel only, called on a Meta tensor: Meta's fallback throws.
    "missing_kernel": ([], "missing-kernel myops::only_cpu Meta"),
    # AutogradCPU excluded by hand and never restored; it aborts outside any dispatch.
    "tls_leak": (["--core"], "tls-not-restored excluded+AutogradCPU"),
    # A plain abort with nothing dispatching.
    "op_catalog": (["--core"], "no-dispatch"),
}


def crash(program, args, workdir):
    """Runs program to its crash with kernel cores on; the core's path."""
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)

    def cores_on():
        resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        with open("/proc/self/coredump_filter", "w") as f:
            f.write("0x37")

    subprocess.run([str(program)] + args, cwd=workdir, preexec_fn=cores_on, capture_output=True, timeout=120,
                   stdin=subprocess.DEVNULL)
    cores = sorted(workdir.glob("core*"))
    return cores[0] if cores else None


def dscope(a, *argv):
    return subprocess.run([a.dscope, "core"] + [str(x) for x in argv], capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dscope", required=True)
    p.add_argument("--programs", type=pathlib.Path, required=True)
    p.add_argument("--cores", type=pathlib.Path, required=True, help="the crash tests' cores (crash_NAME.core)")
    p.add_argument("--schema", type=pathlib.Path, required=True)
    p.add_argument("--workdir", type=pathlib.Path, required=True)
    a = p.parse_args()
    schema = json.loads(a.schema.read_text())
    validator = jsonschema.Draft202012Validator(schema)
    problems = []

    def check_record(text, what):
        try:
            record = json.loads(text)
        except ValueError as e:
            problems.append("%s: not JSON (%s): %r" % (what, e, text[:300]))
            return None
        for error in validator.iter_errors(record):
            problems.append("%s: against the schema: %s at %s" % (what, error.message, list(error.absolute_path)))
        return record

    good, signatures = [], {}
    for name, (args, signature) in SAMPLES.items():
        program = a.programs / name
        second = crash(program, args, a.workdir / name)
        if not second:
            problems.append("%s: no core from its second crash" % name)
            continue
        for core in (a.cores / ("crash_%s.core" % name), second):
            good.append(core)
            signatures[str(core)] = signature
            text = dscope(a, core, program)
            lines = text.stdout.splitlines()
            if text.returncode != 0 or not lines or lines[-1] != "signature: " + signature:
                problems.append("%s (%s): text ends %r, expected 'signature: %s' (exit %d, %s)" % (
                    name, core, lines[-1:], signature, text.returncode, text.stderr.strip()))
            out = dscope(a, "--json", core, program)
            record = check_record(out.stdout, "%s (%s) --json" % (name, core))
            if record and record.get("summary", {}).get("signature", {}).get("line") != signature:
                problems.append("%s (%s): JSON signature %r, expected %r" % (
                    name, core, record.get("summary", {}).get("signature"), signature))

    # A batch: the good cores (each names its program), a directory of two cores and a text file
    # (named with the trailing '/' a shell's completion gives: its files are DIR/NAME, no "//"),
    # a file that is no core and a path that does not exist.
    batch_dir = a.workdir / "batch"
    shutil.rmtree(batch_dir, ignore_errors=True)
    batch_dir.mkdir()
    shutil.copy(good[0], batch_dir / "a.core")
    (batch_dir / "b.txt").write_text("no core\n")
    shutil.copy(good[-1], batch_dir / "c.core")
    inputs = [str(c) for c in good] + [str(batch_dir) + "/", __file__, "/nonexistent/core"]
    expected = [str(c) for c in good] + [str(batch_dir / n) for n in ("a.core", "b.txt", "c.core")] + inputs[-2:]
    bad = {str(batch_dir / "b.txt"): "is not a core file", __file__: "is not a core file",
           "/nonexistent/core": "cannot open"}
    out = dscope(a, "--json", "-j", "2", *inputs)
    records = [check_record(line, "batch line %d" % i) for i, line in enumerate(out.stdout.splitlines())]
    if [r and r.get("core") for r in records] != expected:
        problems.append("batch: records for %s, expected %s" % ([r and r.get("core") for r in records], expected))
    for r in records:
        if not r:
            continue
        why = bad.get(r["core"])
        if why and why not in r.get("error", ""):
            problems.append("batch: %s: expected an error record with %r, got %s" % (r["core"], why, r))
        if not why and "error" in r:
            problems.append("batch: %s: an error record: %s" % (r["core"], r["error"]))
        # Each core names its program: the same signature as with the program given.
        signature = signatures.get(r["core"]) or signatures.get(str(good[0] if r["core"].endswith("a.core") else good[-1]))
        if not why and r.get("summary", {}).get("signature", {}).get("line") != signature:
            problems.append("batch: %s: signature %r, expected %r" % (
                r["core"], r.get("summary", {}).get("signature", {}).get("line"), signature))
    if out.returncode != 1 or out.stderr:
        problems.append("batch: exit %d (expected 1: some cores are bad), stderr %r" % (out.returncode, out.stderr))
    # One bad core alone in JSON: one error record, nothing else.
    out = dscope(a, "--json", __file__)
    record = check_record(out.stdout, "one bad core --json")
    if out.returncode != 1 or len(out.stdout.splitlines()) != 1 or not record or "error" not in record or out.stderr:
        problems.append("one bad core --json: exit %d, stdout %r, stderr %r" % (out.returncode, out.stdout, out.stderr))

    print("dscope core summaries, signatures and batches: %d problems" % len(problems))
    for problem in problems[:10]:
        print(problem[:2000])
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
