"""Byte-level mutation sweep of nbody's HDF5 readers (issue 32): writes a valid snapshot (or
checkpoint) with nbody, mutates its bytes at many offsets, runs `nbody info FILE` (or
`nbody run --restart FILE`) on each mutant and reports every one that

  - exits with a code other than 0 or 1, or by a signal (a crash, an abort),
  - prints a sanitizer report (AddressSanitizer, UndefinedBehaviorSanitizer, LeakSanitizer;
    not a leak whose every allocation is libhdf5's own),
  - prints "internal error" (an exception that is not a clear message),
  - runs past the timeout (a hang),
  - is accepted (exit 0) although h5py cannot read every attribute and dataset of it.

Not a unit test (it takes minutes): run it by hand after changing the HDF5 readers, e.g.

  .venv/bin/python tests/cli/mutate_hdf5.py --nbody build/debug/src/nbody --keep /tmp/bad

With --keep, the flagged mutants are copied there (a regression test can then use them).
Standard library, numpy and h5py (the project's .venv).
"""
import argparse
import concurrent.futures
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SANITIZER_WORDS = ("AddressSanitizer", "runtime error:", "LeakSanitizer", "UndefinedBehaviorSanitizer")


def libhdf5_leak_only(stderr):
    """True for a LeakSanitizer report whose allocations are all libhdf5's own (libhdf5 1.10
    leaks 424 bytes when H5Fopen fails on some corrupt superblocks, with or without nbody)."""
    if "LeakSanitizer" not in stderr or "AddressSanitizer: " in stderr.replace(
            "SUMMARY: AddressSanitizer: ", ""):
        return False
    frames = [ln for ln in stderr.splitlines() if ln.strip().startswith("#")]
    return bool(frames) and all("libhdf5" in ln or "libsanitizer" in ln for ln in frames)


def h5py_reads(path):
    """True when h5py opens the file and reads every attribute and dataset in it."""
    import h5py
    import numpy as np

    try:
        with h5py.File(path, "r") as f:
            def visit(obj):
                for key in obj.attrs:
                    np.asarray(obj.attrs[key])
                if isinstance(obj, h5py.Dataset):
                    obj[()]
                elif isinstance(obj, h5py.Group):
                    for key in obj:
                        visit(obj[key])
            visit(f)
        return True
    except Exception:  # noqa: BLE001 - any failure counts as "h5py refuses it"
        return False


def mutants(data, offsets, values):
    for offset in offsets:
        for kind, value in values:
            out = bytearray(data)
            out[offset] = (out[offset] ^ value) if kind == "xor" else value
            if out != data:
                yield offset, f"{kind}{value:#04x}", bytes(out)


def check(args, workdir, offset, label, blob):
    path = Path(workdir) / f"m{offset}_{label}.hdf5"
    path.write_bytes(blob)
    command = [args.nbody, *args.command.split(), str(path)]
    if args.command.startswith("run"):
        command += ["-o", str(Path(workdir) / f"out{offset}_{label}"), "-q"]
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout,
                              errors="replace")
    except subprocess.TimeoutExpired:
        return offset, label, path, "hang", ""
    problem = None
    if proc.returncode not in (0, 1):
        problem = f"exit {proc.returncode}"
    elif any(w in proc.stderr for w in SANITIZER_WORDS) and not libhdf5_leak_only(proc.stderr):
        problem = "sanitizer report"
    elif "internal error" in proc.stderr:
        problem = "internal error"
    elif proc.returncode == 0 and not h5py_reads(path):
        problem = "accepted, but h5py refuses it"
    if problem is None:
        path.unlink()
    return offset, label, path, problem, proc.stderr[-2000:]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nbody", default="build/release/src/nbody")
    parser.add_argument("--file", help="mutate this file (default: a 2-D snapshot nbody writes)")
    parser.add_argument("--command", default="info", help="'info' or 'run --steps 1 --restart'")
    parser.add_argument("--first", type=int, default=0)
    parser.add_argument("--last", type=int, default=-1)
    parser.add_argument("--stride", type=int, default=1)
    parser.add_argument("--values", default="xor:0xff,xor:0x01,xor:0x80,set:0x00",
                        help="mutations per offset, e.g. xor:0xff,set:0x00")
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    parser.add_argument("--timeout", type=float, default=20)
    parser.add_argument("--keep", help="copy flagged mutants into this folder")
    args = parser.parse_args()

    values = [(kind, int(v, 0)) for kind, v in (item.split(":") for item in args.values.split(","))]
    with tempfile.TemporaryDirectory() as workdir:
        if args.file:
            source = Path(args.file)
        else:
            source = Path(workdir) / "source.hdf5"
            subprocess.run([args.nbody, "gen", "disk", "-n", "4", "--dim", "2", "--seed", "1", "-o",
                            str(source), "-q"], check=True)
        data = source.read_bytes()
        last = len(data) if args.last < 0 else min(args.last, len(data))
        offsets = range(args.first, last, args.stride)
        flagged = 0
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            futures = [pool.submit(check, args, workdir, o, label, blob)
                       for o, label, blob in mutants(data, offsets, values)]
            for future in concurrent.futures.as_completed(futures):
                offset, label, path, problem, stderr = future.result()
                if problem is None:
                    continue
                flagged += 1
                first_line = next((ln for ln in stderr.splitlines() if ln.strip()), "")
                print(f"offset {offset} {label}: {problem}: {first_line[:200]}", flush=True)
                if args.keep:
                    Path(args.keep).mkdir(parents=True, exist_ok=True)
                    shutil.copy(path, Path(args.keep) / path.name)
        print(f"{len(futures)} mutants, {flagged} flagged", flush=True)
    return 1 if flagged else 0


if __name__ == "__main__":
    sys.exit(main())
