"""cmake --install of the build under test (docs/install.md): the nbody command, the headers
and the CMake package land under the prefix, and a project using find_package(nbody) (the one
of tests/install_consumer) configures, builds, links and runs against them.

Run by ctest (NBODY_EXE is <build>/src/nbody, so the build folder is two levels up).
"""
import os
import re
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

EXE = Path(os.environ.get("NBODY_EXE", "build/release/src/nbody")).resolve()
BUILD = EXE.parents[1]
CONSUMER = Path(__file__).resolve().parents[1] / "install_consumer"


def run(*args, cwd=None):
    proc = subprocess.run([*map(str, args)], capture_output=True, text=True, timeout=600, cwd=cwd)
    if proc.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, args))} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


@unittest.skipUnless((BUILD / "CMakeCache.txt").exists(), f"{BUILD} is not a CMake build folder")
class InstallTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory()
        cls.prefix = Path(cls._tmp.name) / "prefix"
        run("cmake", "--install", BUILD, "--prefix", cls.prefix)

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def test_installed_command_runs(self):
        proc = run(self.prefix / "bin" / "nbody", "--version")
        self.assertRegex(proc.stdout, r"^nbody \d+\.\d+\.\d+ ")

    def test_headers_library_and_package_config_are_installed(self):
        for header in ("simulation.hpp", "particles.hpp", "build_info.hpp", "physics/pair_force.hpp"):
            self.assertTrue((self.prefix / "include" / "nbody" / header).is_file(), header)
        libs = list(self.prefix.glob("lib*/libnbody.a"))
        self.assertEqual(len(libs), 1, libs)
        package = libs[0].parent / "cmake" / "nbody"
        for name in ("nbodyConfig.cmake", "nbodyConfigVersion.cmake", "nbodyTargets.cmake"):
            self.assertTrue((package / name).is_file(), name)
        self.assertIn("nbody::nbody", (package / "nbodyTargets.cmake").read_text())

    def test_find_package_project_builds_and_runs(self):
        build = Path(self._tmp.name) / "consumer"
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        run("cmake", "-S", CONSUMER, "-B", build, *generator, "-DCMAKE_BUILD_TYPE=Release",
            f"-DCMAKE_PREFIX_PATH={self.prefix}")
        run("cmake", "--build", build)
        out = run(build / "consumer").stdout
        version = run(EXE, "--version").stdout.split()[1]
        match = re.fullmatch(r"nbody (\S+) t=(\S+) dE/E=(\S+)\n", out)
        self.assertIsNotNone(match, out)
        self.assertEqual(match.group(1), version)
        self.assertAlmostEqual(float(match.group(2)), 1.0, places=9)
        self.assertLess(float(match.group(3)), 1e-4)  # the orbit was integrated, not garbage


if __name__ == "__main__":
    unittest.main()
