#!/usr/bin/env python3
"""A minimal Debug Adapter Protocol client (standard library only) that drives lldb-vscode the
way an IDE does, and checks what its variables view shows (tests/e2e/dap_tests.cmake):

  dap_client.py --adapter lldb-vscode-16 --program P [--arg A ...] [--init CMD ...]
                --break FUNCTION [--frame NAME] [--expect NAME=TEXT ...] [--expect-exact NAME=TEXT ...]
                [--expect-children NAME=V1|V2 ...]

initialize, launch (initCommands: --init, e.g. `plugin load`, which also imports the synthetic
children), a function breakpoint, configurationDone; at the first stop: threads, stackTrace,
scopes, and the variables of the first scope (locals and arguments) of the stopped frame, or of
the first frame whose name contains --frame.

  --expect NAME=TEXT           the variable NAME's value contains TEXT
  --expect-exact NAME=TEXT     the variable NAME shows exactly TEXT (as a child is compared below)
  --expect-children NAME=V1|V2 NAME expands (variablesReference > 0) into exactly these children,
                               in order, each showing exactly V1, V2, ... (lldb-vscode shows a
                               value that has only a summary as " SUMMARY": that space is not
                               compared); a V ending in "..." is a prefix
  --expect-children NAME=      NAME does not expand (variablesReference 0), as GDB's printer
                               has no children for it

Every wait is bounded; a failure prints one "FAIL: ..." line (after the transcript of what the
adapter said) and exits 1. The adapter is always killed at the end."""

import argparse
import json
import os
import queue
import subprocess
import sys
import threading
import time


class Failure(Exception):
    pass


class Adapter:
    """One lldb-vscode process, spoken to over stdin/stdout."""

    def __init__(self, command, timeout):
        self.timeout = timeout
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        self.messages = queue.Queue()
        self.seq = 0
        self.transcript = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        stream = self.proc.stdout
        try:
            while True:
                length = None
                while True:  # headers, then a blank line
                    line = stream.readline()
                    if not line:
                        self.messages.put(None)
                        return
                    line = line.strip()
                    if not line:
                        break
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                if length is None:
                    continue
                self.messages.put(json.loads(stream.read(length)))
        except Exception as e:  # a broken pipe, bad JSON: end of the conversation
            self.messages.put({"type": "reader-error", "message": str(e)})
            self.messages.put(None)

    def send(self, command, arguments=None):
        self.seq += 1
        message = {"seq": self.seq, "type": "request", "command": command}
        if arguments is not None:
            message["arguments"] = arguments
        body = json.dumps(message).encode()
        self.transcript.append("-> " + json.dumps(message))
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()
        return self.seq

    def wait(self, accept, what):
        """The first message accept() takes, within the timeout (others are logged and skipped)."""
        deadline = time.monotonic() + self.timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Failure("no %s from the adapter within %.0f s" % (what, self.timeout))
            try:
                message = self.messages.get(timeout=left)
            except queue.Empty:
                continue
            if message is None:
                raise Failure("the adapter closed the connection while waiting for %s" % what)
            self.transcript.append("<- " + json.dumps(message)[:2000])
            if accept(message):
                return message

    def request(self, command, arguments=None):
        seq = self.send(command, arguments)
        response = self.wait(lambda m: m.get("type") == "response" and m.get("request_seq") == seq,
                             "response to %s" % command)
        if not response.get("success"):
            raise Failure("%s failed: %s" % (command, response.get("message") or response.get("body")))
        return response.get("body") or {}

    def event(self, name):
        return self.wait(lambda m: m.get("type") == "event" and m.get("event") == name, "'%s' event" % name)

    def close(self):
        try:
            if self.proc.poll() is None:
                self.send("disconnect", {"terminateDebuggee": True})
                self.proc.wait(timeout=5)
        except Exception:
            pass
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def pairs(items, option):
    out = []
    for item in items:
        if "=" not in item:
            raise SystemExit("%s wants NAME=TEXT, not %r" % (option, item))
        out.append(tuple(item.split("=", 1)))
    return out


def check_variables(dap, variables, expects, expect_exact, expect_children):
    by_name = {v["name"]: v for v in variables}
    shown = ", ".join("%s = %s" % (v["name"], v.get("value")) for v in variables)
    for name, text in expects + expect_exact:
        if name not in by_name:
            raise Failure("no variable %s in the frame (the adapter shows: %s)" % (name, shown))
    for name, text in expects:
        if text not in by_name[name].get("value", ""):
            raise Failure("%s shows %r, expected it to contain %r" % (name, by_name[name].get("value"), text))
    for name, text in expect_exact:
        if child_text(by_name[name]) != text:
            raise Failure("%s shows %r, expected exactly %r" % (name, by_name[name].get("value"), text))
    for name, wanted in expect_children:
        variable = by_name.get(name)
        if variable is None:
            raise Failure("no variable %s in the frame (the adapter shows: %s)" % (name, shown))
        if not wanted:
            if variable.get("variablesReference"):
                children = dap.request("variables", {"variablesReference": variable["variablesReference"]})["variables"]
                raise Failure("%s expands into %s, expected no children" % (name, [c.get("name") for c in children]))
            continue
        if not variable.get("variablesReference"):
            raise Failure("%s does not expand (variablesReference 0; no synthetic children?)" % name)
        children = dap.request("variables", {"variablesReference": variable["variablesReference"]})["variables"]
        shown_children = [child_text(c) for c in children]
        expected = wanted.split("|")
        if len(shown_children) != len(expected) or not all(map(child_matches, shown_children, expected)):
            raise Failure("%s's children show %s, expected exactly %s" % (name, shown_children, expected))


def child_text(variable):
    """What a variable shows: its value; lldb-vscode writes a summary-only value as " SUMMARY"."""
    value = variable.get("value", "")
    return value[1:] if value.startswith(" ") else value


def child_matches(shown, expected):
    if expected.endswith("..."):
        return shown.startswith(expected[:-3])
    return shown == expected


def run(a):
    dap = Adapter([a.adapter], a.timeout)
    try:
        dap.request("initialize", {"clientID": "dscope-dap-test", "adapterID": "lldb-vscode", "linesStartAt1": True,
                                   "columnsStartAt1": True, "pathFormat": "path", "supportsVariableType": True})
        launch = dap.send("launch", {"program": os.path.abspath(a.program), "args": a.args, "initCommands": a.init,
                                     "stopOnEntry": False, "cwd": os.getcwd()})
        seen = set()
        while "initialized" not in seen:  # the launch response and the initialized event, in either order
            m = dap.wait(lambda m: m.get("request_seq") == launch or m.get("event") == "initialized",
                         "launch response and 'initialized' event")
            if m.get("type") == "response" and not m.get("success"):
                raise Failure("launch failed: %s" % (m.get("message") or m.get("body")))
            seen.add(m.get("event") or "launch")
        breakpoints = dap.request("setFunctionBreakpoints", {"breakpoints": [{"name": a.break_at}]})["breakpoints"]
        if not breakpoints or not breakpoints[0].get("verified"):
            raise Failure("the breakpoint on %s was not resolved: %s" % (a.break_at, breakpoints))
        dap.request("configurationDone")
        stopped = dap.wait(lambda m: m.get("type") == "event" and m.get("event") in ("stopped", "exited", "terminated"),
                           "stop at %s" % a.break_at)
        if stopped["event"] != "stopped":
            raise Failure("the program ended (%s) before stopping at %s" % (stopped["event"], a.break_at))
        thread_id = stopped["body"].get("threadId")
        threads = dap.request("threads")["threads"]
        if thread_id is None:
            thread_id = threads[0]["id"]
        frames = dap.request("stackTrace", {"threadId": thread_id, "startFrame": 0, "levels": 20})["stackFrames"]
        if not frames or a.break_at not in frames[0].get("name", ""):
            raise Failure("stopped in %s, not in %s" % (frames[0].get("name") if frames else "no frame", a.break_at))
        frame = next((f for f in frames if (a.frame or a.break_at) in f.get("name", "")), None)
        if frame is None:
            raise Failure("no frame %s in the first %d frames" % (a.frame, len(frames)))
        scopes = dap.request("scopes", {"frameId": frame["id"]})["scopes"]
        if not scopes:
            raise Failure("the frame %s has no scopes" % frame.get("name"))
        variables = dap.request("variables", {"variablesReference": scopes[0]["variablesReference"]})["variables"]
        check_variables(dap, variables, pairs(a.expect, "--expect"), pairs(a.expect_exact, "--expect-exact"),
                        pairs(a.expect_children, "--expect-children"))
        print("\n".join(dap.transcript))
        print("PASS: %s shows %s" % (frame.get("name"), ", ".join("%s = %s" % (v["name"], v.get("value")) for v in variables)))
        return 0
    except Failure as e:
        print("\n".join(dap.transcript))
        print("FAIL: %s" % e)
        return 1
    finally:
        dap.close()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--adapter", default="lldb-vscode-16")
    p.add_argument("--program", required=True)
    p.add_argument("--arg", dest="args", action="append", default=[])
    p.add_argument("--init", action="append", default=[])
    p.add_argument("--break", dest="break_at", required=True)
    p.add_argument("--frame", help="look at the first frame whose name contains this (default: the stopped one)")
    p.add_argument("--expect", action="append", default=[])
    p.add_argument("--expect-exact", action="append", default=[])
    p.add_argument("--expect-children", action="append", default=[])
    p.add_argument("--timeout", type=float, default=60)
    return run(p.parse_args())


if __name__ == "__main__":
    sys.exit(main())
