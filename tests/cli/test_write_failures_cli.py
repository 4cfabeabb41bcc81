"""Failed writes, torn lines, an interrupted `nbody gen`, and what messages echo (issue #32).

A full disk without root: nbody runs under a file size limit (RLIMIT_FSIZE) with SIGXFSZ
ignored, so its writes fail with EFBIG ("File too large") as they would with ENOSPC. Where a
character device can be made (root), a private copy of /dev/full gives a real ENOSPC.

Run by ctest (which sets NBODY_EXE); standard library only.
"""
import os
import resource
import signal
import stat
import subprocess
import time
import unittest

from test_cli import EXE, CliTestCase, nbody

BASE = ["--model", "plummer", "-n", 64, "--seed", 3, "--softening", 0.02, "--dt", 0.005, "-q"]
ENERGY_COLUMNS = 13


def limited_to(size):
    """A preexec_fn: files may grow to `size` bytes; past that write() fails with EFBIG."""
    def apply():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    return apply


def run_limited(size, *args):
    return subprocess.run([EXE, *map(str, args)], capture_output=True, text=True, timeout=300,
                          preexec_fn=limited_to(size))


class WriteFailureCase(CliTestCase):
    def hidden_files(self, directory=None):
        return sorted(p.name for p in (directory or self.dir).iterdir() if p.name.startswith("."))

    def assert_failed_cleanly(self, proc, *fragments):
        self.assertGreater(proc.returncode, 0, f"exit {proc.returncode} (negative: killed by a signal)\n"
                                               f"{proc.stderr}")
        self.assertNotIn("internal error", proc.stderr)
        for fragment in fragments:
            self.assertIn(fragment, proc.stderr)


class TestFullDisk(WriteFailureCase):
    def test_unwritable_text_and_csv_give_the_reason_and_keep_the_old_file(self):
        for name in ("out.txt", "out.csv"):
            path = self.write(name, "the old file\n")
            proc = run_limited(50_000, "gen", "plummer", "-n", 5000, "-o", path)
            self.assert_failed_cleanly(proc, f"nbody: error: {path}: cannot write file (File too large)")
            self.assertNotIn("unknown I/O error", proc.stderr)
            self.assertEqual(path.read_text(), "the old file\n")
            self.assertEqual(self.hidden_files(), [], "the temporary was left behind")

    def test_unwritable_new_file_is_not_created(self):
        path = self.dir / "new.txt"
        proc = run_limited(50_000, "gen", "plummer", "-n", 5000, "-o", path)
        self.assert_failed_cleanly(proc, "new.txt: cannot write file (File too large)")
        self.assertEqual(list(self.dir.iterdir()), [])

    def test_unwritable_final_file_of_a_run_gives_the_reason(self):
        out = self.dir / "final.csv"
        proc = run_limited(100_000, "run", "--model", "plummer", "-n", 3000, "--steps", 1, "-q", "-o", out)
        self.assert_failed_cleanly(proc, "final.csv: cannot write file (File too large)")
        self.assertFalse(out.exists())
        self.assertEqual(self.hidden_files(), [])

    def test_truncated_energy_log_ends_with_its_last_complete_row(self):
        out = self.dir / "run"
        proc = run_limited(20_000, "run", *BASE, "--steps", 2000, "--stats-every", 1, "--output-dir", out)
        self.assert_failed_cleanly(proc, "energy.csv: cannot write the energy log (File too large)")
        data = (out / "energy.csv").read_bytes()
        self.assertTrue(data.endswith(b"\n"), f"a partial last line: {data[-80:]!r}")
        rows = data.decode().splitlines()
        self.assertGreater(len(rows), 10)  # it did log until the limit
        self.assertTrue(rows[0].startswith("step,time,"))
        for row in rows[1:]:
            self.assertEqual(len(row.split(",")), ENERGY_COLUMNS, row)
        self.assertEqual(self.hidden_files(out), [])

    def real_full_device(self):
        """A character device that answers every write with ENOSPC, or None."""
        own = self.dir / "full"
        try:  # a private node (root): nothing outside the test can be harmed
            os.mknod(own, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
            with open(own, "wb", buffering=0) as f:
                f.write(b"x")
        except OSError as e:
            if own.exists() and e.errno == 28:  # ENOSPC: the node works
                return own
            if own.exists():
                own.unlink()
        if os.geteuid() != 0 and os.path.exists("/dev/full"):
            return "/dev/full"  # not root: nbody could not replace it even if it tried
        return None

    def test_unwritable_full_device_says_no_space_left(self):
        device = self.real_full_device()
        if device is None:
            self.skipTest("no character device with ENOSPC available")
        for fmt in ("text", "csv"):
            proc = nbody("gen", "plummer", "-n", 2000, "--format", fmt, "-o", device, check=False)
            self.assert_failed_cleanly(proc, f"{device}: cannot write file (No space left on device)")
        # HDF5 needs a file it can seek in: refused, and the device is still a device
        proc = nbody("gen", "plummer", "-n", 20, "--format", "hdf5", "-o", device, check=False)
        self.assert_failed_cleanly(proc, f"{device}: cannot write file (not a regular file")
        self.assertTrue(stat.S_ISCHR(os.stat(device).st_mode), "the device node was replaced")


    def test_unwritable_standard_output_is_reported(self):
        device = self.real_full_device()
        if device is None:
            self.skipTest("no character device with ENOSPC available")
        bodies = self.dir / "b.txt"
        nbody("gen", "plummer", "-n", 10, "-o", bodies, "-q")
        with open(device, "wb") as full:
            proc = subprocess.run([EXE, "info", str(bodies), "--json"], stdout=full, stderr=subprocess.PIPE,
                                  text=True, timeout=60)
        self.assert_failed_cleanly(proc, "nbody: error: standard output: cannot write (No space left on device)")


class TestSpecialTargets(WriteFailureCase):
    def test_a_symlink_keeps_pointing_at_the_rewritten_file(self):
        target = self.write("data.txt", "old\n")
        link = self.dir / "link.txt"
        link.symlink_to("data.txt")
        nbody("gen", "plummer", "-n", 10, "-o", link, "-q")
        self.assertTrue(link.is_symlink())
        self.assertEqual(len(target.read_text().splitlines()), 11)
        self.assertEqual(self.hidden_files(), [])

    def test_output_to_a_pipe_is_written_through(self):
        proc = nbody("gen", "plummer", "-n", 10, "-q", "-o", "/dev/stdout")
        self.assertEqual(len(proc.stdout.splitlines()), 11)


class TestInterruptedGen(WriteFailureCase):
    def interrupt_gen(self, sig, old=None):
        path = self.dir / "big.txt"
        if old is not None:
            path.write_text(old)
        # 3M bodies: the write takes seconds even on a fast machine, so the signal lands while
        # the temporary is being written (a race the test would lose with a short write).
        proc = subprocess.Popen([EXE, "gen", "plummer", "-n", "3000000", "-o", str(path)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 120
        while time.time() < deadline and proc.poll() is None and not self.hidden_files():
            time.sleep(0.005)
        if proc.poll() is not None:
            self.fail(f"gen ended before its temporary was seen: {proc.communicate()}")
        self.assertTrue(self.hidden_files()[0].startswith(".big.txt.tmp-"))
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
        self.assertEqual(proc.returncode, 128 + sig, err)
        name = "SIGINT" if sig == signal.SIGINT else "SIGTERM"
        self.assertIn(f"nbody: interrupted by {name}: {path} was not written", err)
        self.assertEqual(self.hidden_files(), [], "the temporary was left behind")
        return path, err

    def test_sigint_removes_the_temporary_and_keeps_the_old_file(self):
        path, err = self.interrupt_gen(signal.SIGINT, old="old bodies\n")
        self.assertEqual(path.read_text(), "old bodies\n")
        self.assertIn("the file there is unchanged", err)

    def test_sigterm_removes_the_temporary_and_writes_nothing(self):
        path, _ = self.interrupt_gen(signal.SIGTERM)
        self.assertFalse(path.exists())


class TestEchoedContent(WriteFailureCase):
    def test_bad_line_with_terminal_escapes_is_shown_escaped(self):
        path = self.dir / "f.txt"
        path.write_bytes(b"\x1b[31mRED 0 0 0 0 0 1\n")
        proc = self.check_fails(["info", path], "f.txt:1: column 1 (x): '\\x1b[31mRED' is not a number")
        self.assertNotIn("\x1b", proc.stderr)

    def test_bad_csv_header_field_of_100_kb_gives_a_short_message(self):
        path = self.write("h.csv", "x" * 100_000 + ",y,z,vx,vy,vz,m\n1,2,3,4,5,6,7\n")
        proc = self.check_fails(["info", path], "h.csv:1: column 1: unknown column 'xxxx", "(100000 bytes)")
        self.assertLess(len(proc.stderr), 500)

    def test_bad_csv_header_with_escapes_is_shown_escaped(self):
        path = self.dir / "e.csv"
        path.write_bytes(b"x,y,z,vx,vy,vz,m,\x1b]0;owned\x07\n1,2,3,4,5,6,7,8\n")
        proc = self.check_fails(["info", path], "unknown column '\\x1b]0;owned\\x07'")
        self.assertNotIn("\x1b", proc.stderr)
        self.assertNotIn("\x07", proc.stderr)


class TestEnergyLogOnRestart(WriteFailureCase):
    def first_part(self):
        out = self.dir / "run"
        nbody("run", *BASE, "--steps", 20, "--stats-every", 5, "--checkpoint-every", 10, "--output-dir", out)
        return out

    def test_truncated_last_row_is_dropped_on_restart(self):
        out = self.first_part()
        with open(out / "energy.csv", "a") as f:
            f.write("2")  # what a row for step 25 left when cut after one byte (older nbody)
        nbody("run", *BASE, "--steps", 30, "--stats-every", 5, "--checkpoint-every", 10, "--output-dir", out,
              "--restart", "latest")
        rows = (out / "energy.csv").read_text().splitlines()[1:]
        self.assertEqual([int(r.split(",")[0]) for r in rows], list(range(0, 31, 5)))
        for row in rows:
            self.assertEqual(len(row.split(",")), ENERGY_COLUMNS, row)

    def test_bad_energy_log_header_is_shown_escaped(self):
        out = self.first_part()
        (out / "energy.csv").write_bytes(b"\x1b[2Jnot a log\n1,2\n")
        proc = self.check_fails(["run", *BASE, "--steps", 30, "--stats-every", 5, "--output-dir", out,
                                 "--restart", "latest"], "energy.csv:1: not an nbody energy log (header '\\x1b[2J")
        self.assertNotIn("\x1b", proc.stderr)


if __name__ == "__main__":
    unittest.main()
