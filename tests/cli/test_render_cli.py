"""End-to-end tests of `nbody render`: PNG frames whose content changes, an MP4 with the right
number of frames, snapshot series, `-i FILE` drawn as it is, the time label, and clear errors.
Standard library only (PNG decoded with zlib).
"""
import os
import shutil
import subprocess
import unittest

from png_rgb import read_png
from test_cli import EXE, CliTestCase, nbody



def lit_pixels(rows, threshold=60):
    return {(x, y) for y, row in enumerate(rows) for x in range(len(row) // 3)
            if sum(row[3 * x:3 * x + 3]) > threshold}


def corner(rows, width=120, height=40):
    """The top-left pixels, where the time label goes."""
    return [row[:3 * width] for row in rows[:height]]


def outside_corner(rows, width=120, height=40):
    return [row[3 * width:] for row in rows[:height]] + list(rows[height:])


class TestRender(CliTestCase):
    def test_frames_are_pngs_whose_content_changes(self):
        out = self.dir / "frames"
        # The camera is fitted to the first frame (pericentre) and then fixed: --zoom 0.3 leaves
        # room for the apocentre.
        nbody("render", "--model", "kepler", "--e", 0.5, "--dt", 0.05, "--frames", 5, "--every", 10,
              "--zoom", 0.3, "--width", 96, "--height", 64, "--no-legend", "--no-time-label", "-q", "-o", out)
        files = sorted(out.iterdir())
        self.assertEqual([f.name for f in files], [f"frame_{k:06d}.png" for k in range(5)])
        frames = [read_png(f) for f in files]
        for width, height, rows in frames:
            self.assertEqual((width, height), (96, 64))
            self.assertTrue(lit_pixels(rows), "a frame is blank")
        self.assertNotEqual(lit_pixels(frames[0][2]), lit_pixels(frames[-1][2]),
                            "the bodies did not move between the first and the last frame")

    def test_png_output_is_one_picture_of_the_last_frame(self):
        common = ["--model", "figure-eight", "--dt", 0.01, "--every", 20, "--width", 64, "--height", 64, "-q"]
        nbody("render", *common, "--frames", 4, "-o", self.dir / "last.png")
        nbody("render", *common, "--frames", 4, "-o", self.dir / "all")
        self.assertEqual((self.dir / "last.png").read_bytes(), (self.dir / "all" / "frame_000003.png").read_bytes())
        self.assertEqual(sorted(p.name for p in self.dir.iterdir()), ["all", "last.png"])

    def test_snapshot_series_gives_one_frame_per_file(self):
        snaps = self.dir / "snaps"
        snaps.mkdir()
        nbody("run", "--model", "plummer", "-n", 50, "--steps", 30, "--every", 10, "--softening", 0.05,
              "-q", "-o", snaps / "out.txt")
        out = self.dir / "frames"
        proc = nbody("render", "--snapshots", snaps / "out_*.txt", "--width", 64, "--height", 64, "-o", out)
        self.assertIn("4 frames", proc.stdout)  # out_000000.txt to out_000030.txt
        self.assertEqual(len(list(out.glob("frame_*.png"))), 4)

    def test_input_file_is_drawn_as_it_is(self):
        # 3000 bodies: the old default (60 frames every 10 steps, direct sum) took minutes.
        cluster = self.dir / "cluster.txt"
        nbody("gen", "plummer", "-n", 3000, "--seed", 5, "-o", cluster)
        proc = nbody("render", "-i", cluster, "--width", 128, "--height", 128, "-o", self.dir / "file.png")
        self.assertIn("0 steps", proc.stdout)
        self.assertIn("3000 bodies at t = 0", proc.stdout)
        # The same picture as frame 0 of a run from the file (that run takes 1 step).
        nbody("render", "-i", cluster, "--frames", 2, "--every", 1, "--width", 128, "--height", 128,
              "-q", "-o", self.dir / "run")
        self.assertEqual((self.dir / "file.png").read_bytes(),
                         (self.dir / "run" / "frame_000000.png").read_bytes())
        self.assertNotEqual((self.dir / "file.png").read_bytes(),
                            (self.dir / "run" / "frame_000001.png").read_bytes())
        # A folder gets one frame; --every alone asks for the default 60 frames.
        nbody("render", "-i", cluster, "--width", 64, "--height", 64, "-q", "-o", self.dir / "one")
        self.assertEqual([p.name for p in (self.dir / "one").iterdir()], ["frame_000000.png"])
        proc = nbody("render", "-i", self.write("k.txt", "1 0 0 0 1 0 1e-3\n0 0 0 0 0 0 1\n"), "--every", 2,
                     "--width", 64, "--height", 64, "-o", self.dir / "many")
        self.assertIn("60 frames every 2 steps (118 steps)", proc.stdout)

    def test_time_label_changes_only_the_top_left_corner(self):
        common = ["--model", "figure-eight", "--dt", 0.01, "--frames", 2, "--every", 50, "--width", 160,
                  "--height", 160, "--no-legend", "-q"]
        nbody("render", *common, "-o", self.dir / "on")
        nbody("render", *common, "--no-time-label", "-o", self.dir / "off")
        on = [read_png(self.dir / "on" / f"frame_00000{k}.png")[2] for k in range(2)]
        off = [read_png(self.dir / "off" / f"frame_00000{k}.png")[2] for k in range(2)]
        for k in range(2):
            self.assertNotEqual(corner(on[k]), corner(off[k]), f"frame {k} has no time label")
            self.assertEqual(outside_corner(on[k]), outside_corner(off[k]))
        self.assertNotEqual(corner(on[0]), corner(on[1]), "t = 0 and t = 0.5 look the same")

    def test_snapshot_labels_are_times_or_file_names(self):
        snaps = self.dir / "snaps"
        snaps.mkdir()
        for ext in ("hdf5", "txt"):
            nbody("run", "--model", "kepler", "--dt", 0.01, "--steps", 150, "--every", 50, "-q",
                  "-o", snaps / f"out.{ext}")
        common = ["--width", 96, "--height", 96, "--no-legend", "-q"]
        for ext in ("hdf5", "txt"):
            nbody("render", "--snapshots", snaps / f"out_*.{ext}", *common, "-o", self.dir / ext)
            nbody("render", "--snapshots", snaps / f"out_*.{ext}", *common, "--no-time-label",
                  "-o", self.dir / f"{ext}-bare")
            frames = [read_png(p)[2] for p in sorted((self.dir / ext).iterdir())]
            bare = [read_png(p)[2] for p in sorted((self.dir / f"{ext}-bare").iterdir())]
            self.assertGreaterEqual(len(frames), 2, ext)  # steps 0, 50, 100 and 150
            for labelled, plain in zip(frames, bare):
                self.assertNotEqual(corner(labelled), corner(plain), f"{ext}: no label")
            self.assertNotEqual(corner(frames[0]), corner(frames[-1]), f"{ext}: the labels are the same")
        # HDF5 files store their time: their labels are times (t = 0.5, 1), not the file
        # names of the text series.
        hdf5 = [corner(read_png(p)[2]) for p in sorted((self.dir / "hdf5").iterdir())]
        text = [corner(read_png(p)[2]) for p in sorted((self.dir / "txt").iterdir())]
        self.assertNotEqual(hdf5, text)

    @unittest.skipUnless(shutil.which("ffmpeg") and shutil.which("ffprobe"), "ffmpeg/ffprobe not installed")
    def test_movie_has_the_expected_frame_count(self):
        movie = self.dir / "movie.mp4"
        nbody("render", "--model", "two-clusters", "-n", 200, "--softening", 0.05, "--frames", 7, "--every", 2,
              "--width", 128, "--height", 96, "--fps", 10, "-q", "-o", movie)
        probe = subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0",
                                "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", str(movie)],
                               capture_output=True, text=True, check=True)
        self.assertEqual(probe.stdout.strip(), "7")
        self.assertEqual([p.name for p in self.dir.iterdir()], ["movie.mp4"])  # no temporary left

    def test_movie_without_ffmpeg_says_so(self):
        proc = subprocess.run([os.path.abspath(EXE) if os.sep in EXE else shutil.which(EXE), "render",
                               "--model", "kepler", "-o", str(self.dir / "m.mp4")],
                              capture_output=True, text=True, env={"PATH": str(self.dir)}, timeout=60)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("ffmpeg", proc.stderr)
        self.assertFalse((self.dir / "m.mp4").exists())

    def test_bad_options_fail_clearly(self):
        out = self.dir / "frames"
        self.check_fails(["render", "--model", "kepler", "-o", out, "--color", "temperature"], "--color")
        self.check_fails(["render", "--model", "kepler", "-o", self.dir / "m.mp4", "--width", 101], "even", "101")
        self.check_fails(["render", "--model", "kepler", "-o", self.dir / "x.gif"], "-o", ".mp4")
        self.check_fails(["render", "--model", "kepler", "-o", out, "--frames", 0], "--frames")
        self.check_fails(["render", "--model", "kepler", "-o", out, "--zoom", 0], "--zoom")
        self.check_fails(["render", "--model", "kepler", "-o", out, "--width", 5], "--width")
        self.check_fails(["render", "--model", "kepler"], "--output")
        self.check_fails(["render", "-o", out], "--model")
        self.check_fails(["render", "--snapshots", self.dir / "none_*.txt", "-o", out], "--snapshots", "no file")
        self.check_fails(["render", "--snapshots", self.dir / "a.txt", "--model", "kepler", "-o", out],
                         "--snapshots")
        self.write("file.txt", "not a folder")
        self.check_fails(["render", "--model", "kepler", "-o", self.dir / "file.txt"], "not a folder")


if __name__ == "__main__":
    unittest.main()
