#!/usr/bin/env python3
"""session.py's own checks: which lldb-16 transcripts count as LLDB's teardown abort (the only
crash a test may run again), and that a crash report that never ends is cut short.

data/lldb16_kill_abort.txt is a real transcript: plain lldb-16 (no plugin) aborting after
`process kill` on basic_dispatch (debug build), 2026-11-21."""

import os
import sys
import tempfile
import unittest

import session

HERE = os.path.dirname(os.path.abspath(__file__))


class TeardownAbort(unittest.TestCase):
    def setUp(self):
        with open(os.path.join(HERE, "data", "lldb16_kill_abort.txt")) as f:
            self.crash = f.read()

    def test_the_real_abort_counts(self):
        self.assertTrue(session.lldb_teardown_abort(self.crash))

    def test_a_clean_kill_does_not(self):
        clean = self.crash[:self.crash.index("free(): corrupted")]
        self.assertFalse(session.lldb_teardown_abort(clean))

    def test_an_abort_before_the_kill_completed_does_not(self):
        self.assertFalse(session.lldb_teardown_abort(self.crash.replace("exited with status = 9", "stopped")))

    def test_an_abort_during_a_later_command_does_not(self):
        later = self.crash.replace("free(): corrupted", "(lldb) dispatch-trace\nfree(): corrupted")
        self.assertFalse(session.lldb_teardown_abort(later))

    def test_a_crash_that_is_not_a_heap_abort_does_not(self):
        segv = self.crash.replace("free(): corrupted unsorted chunks", "Segmentation fault")
        self.assertFalse(session.lldb_teardown_abort(segv))


class RunLldbAware(unittest.TestCase):
    """A stand-in debugger that prints the real abort transcript on its first run only."""

    def session(self, transcript_path, marker):
        script = 'if [ -e "$2" ]; then echo clean; else : > "$2"; cat "$1"; fi'
        return session.run_lldb_aware(["sh", "-c", script, "sh", transcript_path, marker], 30)

    def test_runs_again_after_the_teardown_abort(self):
        with tempfile.TemporaryDirectory() as work:
            result, aborted = self.session(os.path.join(HERE, "data", "lldb16_kill_abort.txt"),
                                           os.path.join(work, "ran"))
        self.assertIn("free(): corrupted unsorted chunks", aborted)
        self.assertEqual(result.text, "clean\n")

    def test_runs_once_otherwise(self):
        with tempfile.TemporaryDirectory() as work:
            clean = os.path.join(work, "clean.txt")
            with open(clean, "w") as f:
                f.write("(lldb) process kill\nProcess 1 exited with status = 9 (0x00000009) killed\n")
            result, aborted = self.session(clean, os.path.join(work, "ran"))
        self.assertIsNone(aborted)
        self.assertIn("exited with status = 9", result.text)


class Run(unittest.TestCase):
    def test_transcript_and_exit_status(self):
        r = session.run(["sh", "-c", "echo out; echo err >&2; exit 3"], 30)
        self.assertEqual((r.returncode, r.text, r.timed_out, r.hung_after_crash), (3, "out\nerr\n", False, False))

    def test_a_crash_report_that_hangs_is_cut_short(self):
        r = session.run(["sh", "-c", "echo 'PLEASE submit a bug report'; sleep 60"], 120, crash_grace=0.5)
        self.assertTrue(r.hung_after_crash)
        self.assertFalse(r.timed_out)

    def test_time_limit(self):
        r = session.run(["sleep", "30"], 0.5)
        self.assertTrue(r.timed_out)
        self.assertIsNone(r.returncode)


if __name__ == "__main__":
    sys.exit(unittest.main())
