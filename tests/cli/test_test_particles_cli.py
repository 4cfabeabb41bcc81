"""Test particles on the command line (docs/test-particles.md): massless bodies after the
others in a file, --n-active and --test-particle-type, the header and the JSON, the bad
values refused, and the files written keeping them."""
import json

from test_cli import CliTestCase, nbody

try:
    import h5py
except ImportError:  # pragma: no cover - reported by the test that needs it
    h5py = None

SUN_AND_PLANET = ["0 0 0 0 0 0 1", "1 0 0 0 1 0 0.001"]


def dust(count):
    return [f"{2 + 0.1 * k} 0 0 0 {(2 + 0.1 * k) ** -0.5} 0 0" for k in range(count)]


class TestTestParticles(CliTestCase):
    def test_massless_bodies_at_the_end_are_test_particles(self):
        path = self.write("system.txt", "\n".join([*SUN_AND_PLANET, *dust(10)]) + "\n")
        proc = nbody("run", "-i", path, "--steps", 20, "--dt", 0.01)
        self.assertIn("test particles: 10 of 12 bodies, type 0 (they feel the active bodies only)",
                      proc.stdout)
        report = json.loads(nbody("run", "-i", path, "--steps", 20, "--dt", 0.01, "--json").stdout)
        self.assertEqual(report["test_particles"], {"n_active": 2, "count": 10, "type": 0})

    def test_the_active_bodies_move_as_without_the_dust(self):
        with_dust = self.write("dust.txt", "\n".join([*SUN_AND_PLANET, *dust(50)]) + "\n")
        alone = self.write("alone.txt", "\n".join(SUN_AND_PLANET) + "\n")
        for path, out in ((with_dust, "a.txt"), (alone, "b.txt")):
            nbody("run", "-i", path, "--steps", 200, "--dt", 0.01, "-q", "-o", self.dir / out)
        a = (self.dir / "a.txt").read_text().splitlines()
        b = (self.dir / "b.txt").read_text().splitlines()
        self.assertEqual(a[:3], b[:3])  # the header and the two bodies, digit for digit
        self.assertEqual(len(a), 53)
        self.assertTrue(all(line.endswith(" 0") for line in a[3:]), a[3])  # still massless

    def test_n_active_marks_massive_test_particles(self):
        report = json.loads(nbody("run", "--model", "plummer", "-n", 500, "--n-active", 20,
                                  "--test-particle-type", 1, "--steps", 5, "--json").stdout)
        self.assertEqual(report["test_particles"], {"n_active": 20, "count": 480, "type": 1})

    def test_test_particles_counts_from_the_end(self):
        report = json.loads(nbody("run", "--model", "plummer", "-n", 500, "--test-particles", 480,
                                  "--steps", 5, "--json").stdout)
        self.assertEqual(report["test_particles"], {"n_active": 20, "count": 480, "type": 0})
        self.check_fails(["run", "--model", "plummer", "-n", 500, "--test-particles", 501,
                          "--steps", 1],
                         "--test-particles: must be at most the number of bodies (500) (got 501)")
        self.check_fails(["run", "--model", "plummer", "-n", 500, "--test-particles", 5,
                          "--n-active", 3, "--steps", 1], "--test-particles")

    def test_bad_values_are_refused(self):
        self.check_fails(["run", "--model", "plummer", "-n", 100, "--n-active", 101, "--steps", 1],
                         "--n-active: must be at most the number of bodies (100) (got 101)")
        self.check_fails(["run", "--model", "plummer", "-n", 100, "--n-active", 10,
                          "--test-particle-type", 2, "--steps", 1],
                         "--test-particle-type")
        self.check_fails(["run", "--model", "plummer", "-n", 100, "--n-active", -1, "--steps", 1],
                         "--n-active")
        path = self.write("massless.txt", "\n".join([*SUN_AND_PLANET, *dust(3)]) + "\n")
        self.check_fails(["run", "-i", path, "--n-active", 4, "--steps", 1],
                         "--n-active: active bodies need mass > 0, but body 2 has mass 0 (got 4)")
        path = self.write("order.txt", "\n".join([SUN_AND_PLANET[0], dust(1)[0],
                                                  SUN_AND_PLANET[1]]) + "\n")
        self.check_fails(["run", "-i", path, "--steps", 1],
                         "a body with mass after the test particles (mass 0 from line 2)")

    def test_config_keys_are_checked_where_they_stand(self):
        config = self.write("run.toml", 'model = "plummer"\ncount = 105\nsteps = 2\n'
                                        "n-active = 200\n")
        self.check_fails(["run", "--config", config],
                         "run.toml:4: n-active: must be at most the number of bodies (105) (got 200)")
        config = self.write("bad.toml", 'model = "giants"\ncount = 105\nsteps = 2\n'
                                        "test-particle-type = 3\n")
        self.check_fails(["run", "--config", config], "bad.toml:4: test-particle-type")
        config = self.write("good.toml", 'model = "giants"\ncount = 105\nsteps = 2\n'
                                         "test-particle-type = 1\n")
        report = json.loads(nbody("run", "--config", config, "--json").stdout)
        self.assertEqual(report["test_particles"], {"n_active": 5, "count": 100, "type": 1})

    def test_snapshots_keep_them(self):
        if h5py is None:
            self.skipTest("h5py is not installed (pip install h5py)")
        path = self.write("system.txt", "\n".join([*SUN_AND_PLANET, *dust(5)]) + "\n")
        out = self.dir / "final.hdf5"
        nbody("run", "-i", path, "--steps", 3, "-q", "-o", out)
        with h5py.File(out, "r") as f:
            self.assertEqual(len(f["PartType1/Masses"]), 2)
            self.assertEqual(len(f["PartType3/Masses"]), 5)
        info = json.loads(nbody("info", out, "--json").stdout)
        self.assertEqual(info["n"], 7)
        self.assertEqual(info["test_particles"], {"n_active": 2, "count": 5, "type": 0})
        self.assertIn("test particles    5 (type 0; the first 2 bodies are active)",
                      nbody("info", out).stdout)
