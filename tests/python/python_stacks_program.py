"""A PyTorch process whose threads stand still at known Python stacks, and its own account of them,
for `python-bt` (tests/python/python_bt_test.py): the process is the oracle.

    python3 python_stacks_program.py ORACLE_JSON

Runs under each interpreter the tests read: Debian's /usr/bin/python3 on the host (3.11, torch 1.13)
and in the roots of scripts/torch-roots.sh (trixie: 3.13 and torch 2.6; sid: 3.14 and torch 2.14).
It imports torch (a real PyTorch process, its own threads and libraries mapped; python-bt reads none
of torch) and starts:

  nested     three nested functions, the innermost waiting on a threading.Event (the innermost
             frames are threading.py's Event.wait and Condition.wait)
  method     a method of a class calling itself three deep, then a nested function of it
             (qualname Walker.walk.<locals>.step), blocked on a lock
  modules    torch.nn.Module subclasses calling each other through Module.__call__, stopped inside
             the innermost forward (Inner.forward)
  generator  a generator's body running (next() of a for loop), waiting on the Event
  coroutine  a coroutine awaiting another, driven by send(None), blocked on a lock
  no frames  a Python thread running a C function (_thread.start_new_thread(time.sleep, ...)): a
             thread state with no frame
  native     a thread made with pthread_create (ctypes) that runs pause(): Python never ran on it
  main       <module> -> main -> stop_main, asleep in time.sleep (a C function: no frame of its own)

Once every thread is at its stop, it writes ORACLE_JSON (atomically): for every Python thread, by
native thread id (threading's native_id: the ids of the process's own pid namespace, in a
container), each frame innermost first as traceback.format_stack() prints it (its first line) with
co_name, co_qualname, co_filename and f_lineno; the no-frame thread's and the native thread's ids;
platform.python_version(). Then prints "ready" and stays as it is until killed.
"""
import _thread
import ctypes
import inspect
import json
import linecache
import os
import platform
import sys
import threading
import time
import traceback

import torch

out_path = sys.argv[1]

STOP = threading.Event()  # never set: the Event waiters wait here
PARK = threading.Lock()   # never released: the lock waiters block in its acquire (C: no frame of its own)
PARK.acquire()
READY_S = 60


# ---- the workers' stacks


def nested_one():
    nested_two()


def nested_two():
    nested_three()


def nested_three():
    STOP.wait()


def nested_worker():
    nested_one()


class Walker:
    def walk(self, depth):
        if depth > 0:
            return self.walk(depth - 1)

        def step():
            PARK.acquire()
        step()


def method_worker():
    Walker().walk(3)


class Inner(torch.nn.Module):
    def forward(self, x):
        y = x + 1
        PARK.acquire()
        return y


class Middle(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Inner()

    def forward(self, x):
        return self.inner(x * 2)


class Outer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.middle = Middle()

    def forward(self, x):
        return self.middle(x) + 1


def modules_worker():
    with torch.no_grad():
        Outer()(torch.ones(2))


def produce():
    yield 1
    STOP.wait()
    yield 2


def generator_worker():
    for _value in produce():
        pass


async def awaited():
    PARK.acquire()


async def awaiting():
    await awaited()


def coroutine_worker():
    coroutine = awaiting()
    coroutine.send(None)


WORKERS = [("nested", nested_worker, ["nested_worker", "nested_one", "nested_two", "nested_three", "wait"]),
           ("method", method_worker, ["method_worker", "walk", "step"]),
           ("modules", modules_worker, ["modules_worker", "forward"]),
           ("generator", generator_worker, ["generator_worker", "produce", "wait"]),
           ("coroutine", coroutine_worker, ["coroutine_worker", "awaiting", "awaited"])]
# Qualified names that must be among the thread's frames (co_qualname).
QUALNAMES = {"method": ["Walker.walk", "Walker.walk.<locals>.step"],
             "modules": ["Outer.forward", "Middle.forward", "Inner.forward"],
             "nested": ["Condition.wait", "Event.wait"]}


def blocking_wait_line():
    """The line of Condition.wait's blocking waiter.acquire() (the one after `if timeout is None:`;
    the first acquire of a fresh lock never blocks)."""
    lines, first = inspect.getsourcelines(threading.Condition.wait)
    after = next(i for i, line in enumerate(lines) if line.strip() == "if timeout is None:")
    return first + next(i for i in range(after, len(lines)) if lines[i].strip() == "waiter.acquire()")


WAIT_CODE = threading.Condition.wait.__code__
WAIT_LINE = blocking_wait_line()


def stopped(frame):
    """Whether a thread whose innermost frame this is stands at its stop for good: in Condition.wait's
    blocking acquire, or at a line of its own that only calls PARK.acquire()."""
    if frame.f_code is WAIT_CODE:
        return frame.f_lineno == WAIT_LINE
    return linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip() == "PARK.acquire()"


# ---- threads that run no Python code


def tasks():
    return set(int(t) for t in os.listdir("/proc/self/task"))


def new_task(before, what):
    """The one thread that appeared since `before` (nothing else starts threads meanwhile)."""
    deadline = time.monotonic() + READY_S
    while time.monotonic() < deadline:
        new = tasks() - before
        if len(new) == 1:
            return new.pop()
        if len(new) > 1:
            raise SystemExit("python_stacks_program: more than one new thread (%s) for %s" % (sorted(new), what))
        time.sleep(0.01)
    raise SystemExit("python_stacks_program: no new thread for %s" % what)


def start_frameless_thread():
    """A Python thread whose function is C (time.sleep): a thread state, never a frame."""
    before = tasks()
    _thread.start_new_thread(time.sleep, (10.0 ** 7,))
    return new_task(before, "the frameless Python thread")


def start_native_thread():
    """A thread Python never runs on: pthread_create(pause)."""
    libc = ctypes.CDLL(None, use_errno=True)
    thread = ctypes.c_ulong()
    start = ctypes.cast(libc.pause, ctypes.c_void_p)
    before = tasks()
    if libc.pthread_create(ctypes.byref(thread), None, start, None) != 0:
        raise SystemExit("python_stacks_program: pthread_create failed")
    start_native_thread.keep = thread
    return new_task(before, "the native thread")


# ---- the oracle


def frames_of(frame):
    """Innermost first: each frame as traceback.format_stack() prints it (its first line) and its code."""
    texts = [text.splitlines()[0] for text in reversed(traceback.format_stack(frame))]
    frames = []
    for text in texts:
        frames.append({"text": text, "name": frame.f_code.co_name, "qualname": frame.f_code.co_qualname,
                       "file": frame.f_code.co_filename, "line": frame.f_lineno})
        frame = frame.f_back
    if frame is not None:
        raise SystemExit("python_stacks_program: format_stack and f_back disagree")
    return frames


def wait_until_stopped(threads):
    """Until each worker thread's innermost frame is at its stop, twice in a row 20 ms apart."""
    deadline = time.monotonic() + READY_S
    seen = {}
    while True:
        current = sys._current_frames()
        positions = {t.ident: (current[t.ident].f_code, current[t.ident].f_lineno) if t.ident in current else None
                     for t in threads}
        if all(t.ident in current and stopped(current[t.ident]) for t in threads) and positions == seen:
            return
        seen = positions
        if time.monotonic() > deadline:
            raise SystemExit("python_stacks_program: the threads did not reach their stops: %s" % {
                t.name: traceback.format_stack(current[t.ident])[-1:] if t.ident in current else None for t in threads})
        time.sleep(0.02)


written = False


def write_report(frameless, native, workers):
    """The oracle, once: every Python thread's stack. The main thread's is its caller's (stop_main,
    whose line is the same while this runs and while time.sleep, a C function, sleeps)."""
    global written
    if written:
        return 10.0 ** 7
    wait_until_stopped(workers)
    current = sys._current_frames()
    names = {t.ident: t for t in threading.enumerate()}
    main = threading.main_thread()
    threads = [{"native_id": main.native_id, "role": "main", "frames": frames_of(sys._getframe(1)),
                "names": ["<module>", "main", "stop_main"]}]
    for t in workers:
        role = t.name.split("-", 1)[1]
        threads.append({"native_id": t.native_id, "role": role, "frames": frames_of(current[t.ident]),
                        "names": next(n for r, _, n in WORKERS if r == role), "qualnames": QUALNAMES.get(role, [])})
    # Any other thread state with a frame (none is expected): its ident has no native id here.
    unknown = [ident for ident in current if ident not in names]
    report = {"python": platform.python_version(), "version_info": list(sys.version_info[:3]),
              "executable": os.path.realpath(sys.executable), "torch": torch.__version__, "pid": os.getpid(),
              "threads": threads, "frameless": frameless, "native": native, "unknown_thread_states": len(unknown),
              "program": os.path.abspath(__file__)}
    for thread in threads:
        frames = [f["name"] for f in thread["frames"]]
        qualnames = [f["qualname"] for f in thread["frames"]]
        missing = [n for n in thread["names"] if n not in frames] + [q for q in thread.get("qualnames", []) if q not in qualnames]
        if missing:
            raise SystemExit("python_stacks_program: thread %s lacks %s in %s" % (thread["role"], missing, frames))
    with open(out_path + ".partial", "w") as f:
        json.dump(report, f, indent=1)
    os.replace(out_path + ".partial", out_path)
    written = True
    print("ready", flush=True)
    return 10.0 ** 7


def stop_main(frameless, native, workers):
    while True:
        time.sleep(write_report(frameless, native, workers))


def main():
    frameless = start_frameless_thread()
    native = start_native_thread()
    workers = []
    for role, function, _names in WORKERS:
        thread = threading.Thread(target=function, name="worker-" + role, daemon=True)
        thread.start()
        workers.append(thread)
    stop_main(frameless, native, workers)


main()
