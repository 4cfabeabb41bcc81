"""End-to-end tests of `nbody view` (issue 8): screenshots under Xvfb with Mesa's software
OpenGL, scripted spawning, and a clear failure without a display.

Standard library only: the PNG is decoded here with zlib. The window tests skip (saying why)
when xvfb-run is missing or nbody was built without the viewer.
"""
import os
import re
import shutil
import subprocess
import unittest
import zlib

from png_rgb import read_png
from test_cli import EXE, CliTestCase, nbody


def viewer_built():
    return "viewer: yes" in nbody("--version").stdout


def run_view(args, env=None, timeout=180):
    """nbody view ARGS in a virtual X server (xvfb-run) with Mesa's software OpenGL."""
    env = dict(os.environ if env is None else env)
    env["LIBGL_ALWAYS_SOFTWARE"] = "1"
    # Sanitizer builds: Mesa unloads its driver at exit, so LeakSanitizer sees a few hundred
    # bytes from an "<unknown module>" that no suppression can name. Our code's leaks are
    # checked by every other test.
    env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":")
    cmd = ["xvfb-run", "-a", "-s", "-screen 0 1024x768x24", EXE, "view", *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)


def blobs(width, height, rows, threshold=40):
    """Connected groups of pixels brighter than threshold: (pixel count, brightness sum, cx, cy)."""
    lit = [[max(rows[y][3 * x:3 * x + 3]) > threshold for x in range(width)] for y in range(height)]
    seen, found = set(), []
    for y0 in range(height):
        for x0 in range(width):
            if not lit[y0][x0] or (x0, y0) in seen:
                continue
            stack, pixels = [(x0, y0)], []
            seen.add((x0, y0))
            while stack:
                x, y = stack.pop()
                pixels.append((x, y))
                for nx, ny in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
                    if 0 <= nx < width and 0 <= ny < height and lit[ny][nx] and (nx, ny) not in seen:
                        seen.add((nx, ny))
                        stack.append((nx, ny))
            weight = sum(sum(rows[y][3 * x:3 * x + 3]) for x, y in pixels)
            # Pixel centres are at +0.5 (the camera's convention).
            cx = sum(x + 0.5 for x, _ in pixels) / len(pixels)
            cy = sum(y + 0.5 for _, y in pixels) / len(pixels)
            found.append((len(pixels), weight, cx, cy))
    return sorted(found, key=lambda b: -b[1])


def camera_of(stderr):
    m = re.search(r"camera: center (\S+) (\S+) (\S+), half_width (\S+), azimuth (\S+), "
                  r"elevation (\S+), (\d+)x(\d+)", stderr)
    if not m:
        raise AssertionError(f"no camera line in: {stderr!r}")
    values = [float(v) for v in m.groups()[:6]]
    return values[:3], values[3], values[4], values[5], int(m.group(7)), int(m.group(8))


class TestViewWindow(CliTestCase):
    def setUp(self):
        super().setUp()
        if shutil.which("xvfb-run") is None:
            self.skipTest("xvfb-run not installed (Debian: apt-get install xvfb xauth)")
        if not viewer_built():
            self.skipTest("nbody was built without the viewer (GLFW, OpenGL, Dear ImGui)")

    def test_two_body_screenshot_shows_the_bodies_where_the_camera_puts_them(self):
        # Two bodies at rest, off the axes so that a flipped image or swapped axes show.
        bodies = self.write("two.txt", "-1 0.5 0.3 0 0 0 1\n1 -0.5 -0.2 0 0 0 1\n")
        png = self.dir / "two.png"
        width, height = 320, 240
        proc = run_view(["-i", bodies, "--paused", "--hide-ui", "--width", width, "--height", height,
                         "--frames", 3, "--screenshot", png])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("bodies: 2", proc.stderr)
        w, h, rows = read_png(png)
        self.assertEqual((w, h), (width, height))
        lit = sum(1 for row in rows for v in row[0::3] if v > 40)
        self.assertGreater(lit, 0, "the screenshot is blank")
        found = blobs(w, h, rows)
        self.assertEqual(len(found), 2, f"expected two bright spots, found {found}")
        # Where the documented orthographic camera (azimuth = elevation = 0: x right, y up)
        # puts the bodies, from the centre and zoom the viewer reports.
        centre, half_width, azimuth, elevation, cw, ch = camera_of(proc.stderr)
        self.assertEqual((azimuth, elevation, cw, ch), (0, 0, width, height))
        units_per_pixel = 2 * half_width / width
        expected = [(width / 2 + (x - centre[0]) / units_per_pixel,
                     height / 2 - (y - centre[1]) / units_per_pixel) for x, y in ((-1, 0.5), (1, -0.5))]
        for ex, ey in expected:
            self.assertTrue(0 < ex < width and 0 < ey < height, "the camera does not frame the bodies")
            nearest = min(found, key=lambda b: (b[2] - ex) ** 2 + (b[3] - ey) ** 2)
            self.assertLess(abs(nearest[2] - ex), 1.5, f"spot {nearest} vs expected ({ex}, {ey})")
            self.assertLess(abs(nearest[3] - ey), 1.5, f"spot {nearest} vs expected ({ex}, {ey})")

    def test_adaptive_time_steps_run_in_the_viewer(self):
        # The settings' time-step choice and the Performance panel's bin histogram drawn
        # while the bodies step in bins.
        png = self.dir / "adaptive.png"
        proc = run_view(["--model", "plummer", "-n", 500, "--softening", 0.01, "--dt", 0.05,
                         "--timestep", "adaptive", "--width", 480, "--height", 360, "--frames", 6,
                         "--screenshot", png])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertTrue(png.exists())

    def test_scripted_spawn_adds_the_expected_bodies(self):
        script = self.write("spawn.txt", "# one click, then a disc of 50 bodies\n"
                                         "frame 2 click 100 100\nframe 3 disc 200 150 50\n")
        proc = run_view(["--model", "kepler", "--softening", 0.01, "--width", 320, "--height", 240,
                         "--frames", 5, "--script", script])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("bodies: 53", proc.stderr)  # 2 + 1 + 50
        self.assertIn("frames: 5, steps: 5", proc.stderr)

    def test_spawned_body_is_drawn_at_the_click(self):
        # Paused, one body at the centre; a click at another pixel puts a second spot there.
        bodies = self.write("one.txt", "0 0 0 0 0 0 1\n")
        script = self.write("click.txt", "frame 1 click 60 50\n")
        png = self.dir / "click.png"
        proc = run_view(["-i", bodies, "--paused", "--hide-ui", "--width", 200, "--height", 160,
                         "--frames", 2, "--script", script, "--screenshot", png])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("bodies: 2", proc.stderr)
        found = blobs(*read_png(png))
        self.assertEqual(len(found), 2, found)
        self.assertTrue(any(abs(b[2] - 60.5) < 1.5 and abs(b[3] - 50.5) < 1.5 for b in found), found)


class TestViewWithoutDisplay(CliTestCase):
    def test_no_display_fails_with_a_clear_message(self):
        env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
        proc = subprocess.run([EXE, "view", "--model", "kepler", "--frames", "1"], capture_output=True,
                              text=True, timeout=60, env=env)
        self.assertGreater(proc.returncode, 0, "expected a non-zero exit, not a crash")
        self.assertNotIn("internal error", proc.stderr)
        if viewer_built():
            self.assertIn("cannot open a window", proc.stderr)
            self.assertIn("DISPLAY", proc.stderr)
        else:
            self.assertIn("libglfw3-dev", proc.stderr)

    def test_bad_script_names_file_and_line(self):
        if not viewer_built():
            self.skipTest("nbody was built without the viewer")
        script = self.write("bad.txt", "frame 1 click 10 10\nframe 2 klick 1 2\n")
        self.check_fails(["view", "--model", "kepler", "--script", script], "bad.txt:2:", "klick")

    def test_bad_options_fail_before_a_window_opens(self):
        if not viewer_built():
            self.skipTest("nbody was built without the viewer")
        self.check_fails(["view"], "needs bodies")
        self.check_fails(["view", "--model", "kepler", "--restitution", 0.5], "--restitution")


if __name__ == "__main__":
    unittest.main()
