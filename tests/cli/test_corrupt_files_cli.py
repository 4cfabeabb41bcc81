"""Corrupt, edited and unwritable HDF5 snapshots and checkpoints on the command line
(issue 32): each is refused with `nbody: error: FILE: /PATH[INDEX]: WHAT (got VALUE)` and a
non-zero exit, never read as other data, never a crash; a write that fails for lack of space
gives the system's reason, leaves the old file and no temporary, and exits without a signal.

The corrupt files are made here from a snapshot nbody writes: bytes of one object header
message are changed where the byte-level sweep (tests/cli/mutate_hdf5.py) found libhdf5 1.10
reading past its buffer or reading other data than h5py would. Needs h5py and numpy (the
project's .venv); skipped without them unless NBODY_PYTHON_TOOLS_REQUIRED=1.
"""
import os
import resource
import signal
import struct

from test_cli import nbody
from test_snapshot_files import SnapshotCase


def header_messages(data, address):
    """(type, offset of the message data, size) of each message of the version-1 object
    header at `address`, following continuation messages (8-byte addresses and lengths)."""
    assert data[address] == 1, "not a version-1 object header"
    chunks = [(address + 16, struct.unpack_from("<I", data, address + 8)[0])]
    found = []
    for start, length in chunks:
        pos = start
        while pos + 8 <= start + length:
            kind, size = struct.unpack_from("<HH", data, pos)
            found.append((kind, pos + 8, size))
            if kind == 0x10:
                chunks.append(struct.unpack_from("<QQ", data, pos + 8))
            pos += 8 + size
    return found


class CorruptCase(SnapshotCase):
    def setUp(self):
        super().setUp()
        self.h5py, self.np = self.need("h5py", "numpy")

    def snapshot(self, name="s.hdf5", *args):
        """A small 2-D snapshot written by nbody (4 bodies of the disk model)."""
        return self.gen(name, "disk", "-n", 4, "--dim", 2, "--seed", 1, *args)

    def address(self, path, obj):
        with self.h5py.File(path, "r") as f:
            return self.h5py.h5o.get_info(f[obj].id).addr

    def attribute_message(self, data, path, group, name):
        """Offset of the data of attribute message `name` of `group`."""
        for kind, at, size in header_messages(data, self.address(path, group)):
            if kind == 0x0C and data[at + 8:at + 8 + len(name) + 1] == name.encode() + b"\0":
                return at, size
        raise AssertionError(f"no attribute message {name} in {group}")

    def mutate(self, source, name, changes):
        """A copy of source with {offset: bytes} written over it."""
        data = bytearray(source.read_bytes())
        for offset, value in changes.items():
            data[offset:offset + len(value)] = value
        path = self.dir / name
        path.write_bytes(bytes(data))
        return path

    def refused(self, args, *fragments):
        proc = self.check_fails(args, *fragments)
        self.assertGreater(proc.returncode, 0, proc.stderr)  # an exit, not a signal
        self.assertNotIn("Sanitizer", proc.stderr)
        return proc


class TestCorruptHeaderMessages(CorruptCase):
    def test_corrupt_attribute_message_sizes_are_refused_not_read_past(self):
        good = self.snapshot()
        data = good.read_bytes()
        at, _ = self.attribute_message(data, good, "Header", "NumPart_Total")
        # The name, datatype and dataspace sizes of the attribute (libhdf5 1.10 copies that
        # many bytes from a buffer that is shorter: a crash under AddressSanitizer).
        for field, problem in ((2, "name runs past it"), (4, "datatype runs past it"),
                               (6, "dataspace runs past it")):
            bad = self.mutate(good, f"size{field}.hdf5", {at + field: b"\xff\xff"})
            self.refused(["info", bad], f"{bad}: /Header: ", problem, "(truncated or corrupt?)")

    def test_corrupt_message_type_does_not_turn_2d_into_3d(self):
        good = self.snapshot()
        data = good.read_bytes()
        at, _ = self.attribute_message(data, good, "Header", "Dimension")
        # The type of the message that holds Dimension: libhdf5 1.10 skips a message of an
        # unknown type, so the snapshot was read as 3-D (h5py refuses the file).
        bad = self.mutate(good, "type.hdf5", {at - 8: b"\xf3\xff"})
        self.refused(["info", bad], f"{bad}: /Header: header message", "has type 0xfff3")
        # One flipped bit makes it a fill value, layout, comment or modification time.
        for bit in (1, 2, 4, 8):
            bad = self.mutate(good, f"bit{bit}.hdf5", {at - 8: bytes([0x0C ^ bit])})
            self.refused(["info", bad], f"{bad}: /Header: header message",
                         f"(type {0x0C ^ bit:#x}) is not one")

    def test_corrupt_dataset_datatype_is_refused_not_read_as_zeros(self):
        good = self.snapshot()
        data = good.read_bytes()
        messages = header_messages(data, self.address(good, "PartType1/Coordinates"))
        at = next(at for kind, at, _ in messages if kind == 0x03)
        for name, changes, problem in (
                ("sign.hdf5", {at + 2: b"\xc0"}, "impossible floating-point fields"),
                ("exponent.hdf5", {at + 12: b"\xf4"}, "impossible floating-point fields"),
                ("size.hdf5", {at + 7: b"\xff"}, "bytes per number")):
            bad = self.mutate(good, name, changes)
            self.refused(["info", bad], f"{bad}: /PartType1/Coordinates: its datatype", problem)

    def test_corrupt_superblock_flags_are_refused(self):
        good = self.snapshot()
        bad = self.mutate(good, "flags.hdf5", {21: b"\xff"})
        self.refused(["info", bad], f"{bad}: the superblock's status flags are 0xff00")


class TestValidVariants(CorruptCase):
    def test_files_h5py_writes_in_other_layouts_still_read(self):
        # What the header checks must not refuse: version-2 headers (libver latest), a user
        # block, chunked and compressed datasets, string attributes of both kinds.
        np = self.np
        for name, options, chunked in (("latest.hdf5", {"libver": "latest"}, False),
                                       ("userblock.hdf5", {"userblock_size": 512}, False),
                                       ("chunked.hdf5", {}, True)):
            path = self.dir / name
            with self.h5py.File(path, "w", **options) as f:
                h = f.create_group("Header")
                h.attrs["NumPart_ThisFile"] = np.array([0, 3, 0, 0, 0, 0], dtype=np.uint32)
                h.attrs["Time"] = 0.5
                h.attrs["Comment"] = "a variable-length string"
                h.attrs["Fixed"] = np.bytes_("fixed")
                g = f.create_group("PartType1")
                extra = {"chunks": True, "compression": "gzip"} if chunked else {}
                g.create_dataset("Coordinates", data=np.arange(9.0).reshape(3, 3), **extra)
                g.create_dataset("Velocities", data=np.zeros((3, 3), dtype=np.float32), **extra)
                g.create_dataset("Masses", data=np.ones(3), **extra)
                g.create_dataset("ParticleIDs", data=np.array([1, 2, 3], dtype=np.int32), **extra)
            self.assertIn('"n": 3', nbody("info", path, "--json").stdout, name)


class TestBadValues(CorruptCase):
    def edit(self, name, change):
        path = self.snapshot(name)
        with self.h5py.File(path, "r+") as f:
            change(f)
        return path

    def test_massless_bodies_before_massive_ones_are_refused(self):
        # Mass 0 (or -0) marks a test particle, which must come after every body with mass.
        for value, shown in ((0.0, "0"), (-0.0, "-0")):
            def change(f, value=value):
                m = f["PartType1/Masses"][:]
                m[1] = value
                f["PartType1/Masses"][:] = m
            path = self.edit(f"m{shown}.hdf5", change)
            for args in (["info", path], ["run", "-i", path, "--steps", 1, "-q"]):
                self.refused(args, f"{path}: /PartType1/Masses[2]: a body with mass after the test "
                                   f"particles (mass 0 from /PartType1/Masses[1]): test particles "
                                   f"come last")

    def test_nan_and_negative_masses_are_refused(self):
        for value, shown in ((float("nan"), "nan"), (-1.0, "-1")):
            def change(f, value=value):
                m = f["PartType1/Masses"][:]
                m[3] = value
                f["PartType1/Masses"][:] = m
            path = self.edit(f"m{shown}.hdf5", change)
            for args in (["info", path], ["run", "-i", path, "--steps", 1, "-q"]):
                self.refused(args, f"{path}: /PartType1/Masses[3]: must be finite and >= 0 "
                                   f"(got {shown})")

    def test_trailing_massless_bodies_are_test_particles(self):
        def change(f):
            m = f["PartType1/Masses"][:]
            m[3] = 0.0
            f["PartType1/Masses"][:] = m
        path = self.edit("tail.hdf5", change)
        proc = nbody("run", "-i", path, "--steps", 1)
        self.assertIn("test particles: 1 of 4 bodies, type 0", proc.stdout)

    def test_fractional_count_is_refused(self):
        def change(f):
            f["Header"].attrs["NumPart_ThisFile"] = self.np.array([0, 4.5, 0, 0, 0, 0])
        path = self.edit("half.hdf5", change)
        self.refused(["info", path],
                     f"{path}: /Header/NumPart_ThisFile[1]: must be a non-negative integer (got 4.5)")

    def test_empty_snapshot_is_refused(self):
        path = self.dir / "empty.hdf5"
        with self.h5py.File(path, "w") as f:
            f.create_group("Header").attrs.update(
                {"NumPart_ThisFile": self.np.zeros(6, dtype=self.np.uint32), "Time": 0.0})
        self.refused(["info", path], f"{path}: /Header/NumPart_ThisFile: the snapshot holds no bodies")

    def test_huge_count_is_refused_with_the_bytes_needed(self):
        # 2^40 bodies in a 7 kB file: refused before anything is allocated (was bad_alloc).
        def change(f):
            f["Header"].attrs["NumPart_Total_HighWord"] = self.np.array([0, 256, 0, 0, 0, 0],
                                                                        dtype=self.np.uint32)
        path = self.edit("huge.hdf5", change)
        self.refused(["info", path], f"{path}: /Header/NumPart_ThisFile: 1099511627780 values need",
                     "bytes of memory")

    def test_nan_time_and_bad_dimension_are_refused(self):
        path = self.edit("time.hdf5", lambda f: f["Header"].attrs.__setitem__("Time", float("nan")))
        self.refused(["info", path], f"{path}: /Header/Time: must be finite (got nan)")
        path = self.edit("dim.hdf5", lambda f: f["Header"].attrs.__setitem__("Dimension", 2.5))
        self.refused(["info", path], f"{path}: /Header/Dimension: must be 2 or 3 (got 2.5)")


class TestEditedCheckpoints(CorruptCase):
    def checkpoint(self, *args):
        out = self.dir / "run"
        nbody("run", "--model", "plummer", "-n", 16, "--seed", 2, "--steps", 2, "--dt", 0.01,
              "--softening", 0.05, "--checkpoint-every", 1, "--output-dir", out, "-q", *args)
        return out / "checkpoint_00000002.h5"

    def restart_refuses(self, path, *fragments):
        out = self.dir / "again"
        proc = self.refused(["run", "--restart", path, "--steps", 4, "--output-dir", out, "-q"],
                            *fragments)
        self.assertFalse(list(out.glob("snapshot_*")) if out.exists() else [], proc.stderr)

    def test_edited_checkpoint_values_are_refused_at_restart(self):
        good = self.checkpoint()
        nan = float("nan")
        edits = [
            # The positions are the snapshot view's N x 3 rows (checkpoint format version 2).
            ("x", lambda f: f["PartType1/Coordinates"].__setitem__((5, 0), nan),
             "/PartType1/Coordinates[5, 0]: must be finite (got nan)"),
            ("mass", lambda f: f["Checkpoint/mass"].__setitem__(0, 0.0),
             "/Checkpoint/mass[0]: must be finite and > 0 (got 0)"),
            ("id", lambda f: f["Checkpoint/id"].__setitem__(7, f["Checkpoint/id"][3]),
             "/Checkpoint/id[7]: is used twice (also by body 3)"),
            ("time", lambda f: f["Checkpoint"].attrs.__setitem__("time", nan),
             "/Checkpoint/time: must be finite (got nan)"),
            ("format", lambda f: f["Checkpoint"].attrs.__setitem__("format", "other\x1b[31m"),
             '/Checkpoint/format: must be "nbody checkpoint" (got other\\x1b[31m)'),
        ]
        for name, edit, message in edits:
            path = self.dir / f"{name}.h5"
            path.write_bytes(good.read_bytes())
            with self.h5py.File(path, "r+") as f:
                edit(f)
            self.restart_refuses(path, f"{path}: {message}")

    def test_corrupt_parameters_heap_is_refused_at_restart(self):
        # The used parameters are a variable-length string in a global heap collection:
        # libhdf5 1.10 read a corrupt one with a segfault in H5HG_read.
        good = self.checkpoint()
        data = good.read_bytes()
        heap = data.index(b"GCOL")
        for name, offset, value, problem in (("index", heap + 16, b"\x07", "its value is not in its heap"),
                                             ("size", heap + 31, b"\x7f", "its value's heap is corrupt")):
            bad = self.mutate(good, f"{name}.h5", {offset: value})
            self.restart_refuses(bad, f"{bad}: /Checkpoint: attribute '", problem)

    def test_edited_ias15_state_is_refused_at_restart(self):
        good = self.checkpoint("--integrator", "ias15")
        path = self.dir / "ias15.h5"
        path.write_bytes(good.read_bytes())
        with self.h5py.File(path, "r+") as f:
            f["Checkpoint/integrator_state"][10] = float("inf")
        self.restart_refuses(path, f"{path}: /Checkpoint/integrator_state[10]: must be finite (got inf)")


def limit_file_size(limit):
    def apply():
        # Without SIGXFSZ the write fails with EFBIG ("File too large"), as a full disk fails
        # with ENOSPC: the same paths, without root or a small file system.
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


class TestFailedWrites(CorruptCase):
    def run_limited(self, *args):
        import subprocess
        from test_cli import EXE
        return subprocess.run([EXE, *map(str, args)], capture_output=True, text=True, timeout=300,
                              preexec_fn=limit_file_size(100_000))

    def check_failed_write(self, proc, folder):
        self.assertGreater(proc.returncode, 0, proc.stderr)  # no signal (was SIGSEGV at exit)
        self.assertIn("File too large", proc.stderr)
        self.assertNotIn("Sanitizer", proc.stderr)
        self.assertEqual([p.name for p in folder.iterdir() if ".tmp-" in p.name], [])

    def test_unwritable_snapshot_gives_the_reason_and_keeps_the_old_file(self):
        old = self.gen("old.hdf5", "plummer", "-n", 10, "--seed", 1)
        before = old.read_bytes()
        proc = self.run_limited("gen", "plummer", "-n", 5000, "--seed", 1, "-o", old, "-q")
        self.check_failed_write(proc, self.dir)
        self.assertIn(f"nbody: error: {old}: ", proc.stderr)
        self.assertEqual(old.read_bytes(), before)

    def test_unwritable_checkpoint_gives_the_reason(self):
        out = self.dir / "out"
        out.mkdir()
        proc = self.run_limited("run", "--model", "plummer", "-n", 5000, "--steps", 1,
                                "--checkpoint-every", 1, "--output-dir", out, "-q")
        self.check_failed_write(proc, out)
        self.assertIn("checkpoint_", proc.stderr)
        self.assertEqual(list(out.glob("checkpoint_*")), [])


if __name__ == "__main__":
    import unittest
    unittest.main()
