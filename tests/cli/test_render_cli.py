"""End-to-end tests of `nbody render`: PNG frames whose content changes, an MP4 with the right
number of frames, snapshot series, and clear errors. Standard library only (PNG decoded with zlib).
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


class TestRender(CliTestCase):
    def test_frames_are_pngs_whose_content_changes(self):
        out = self.dir / "frames"
        # The camera is fitted to the first frame (pericentre) and then fixed: --zoom 0.3 leaves
        # room for the apocentre.
        nbody("render", "--model", "kepler", "--e", 0.5, "--dt", 0.05, "--frames", 5, "--every", 10,
              "--zoom", 0.3, "--width", 96, "--height", 64, "--no-legend", "-q", "-o", out)
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
