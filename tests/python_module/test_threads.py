"""Long calls release the GIL: other Python threads run while a step runs; a second call
on the same simulation meanwhile is refused; Ctrl-C stops a long step."""
import signal
import threading
import time

import pytest

import nbody


def busy_simulation():
    return nbody.generate("plummer", n=2500, seed=1, dt=1e-4)


def steps_lasting(sim, seconds):
    """How many steps of sim take about `seconds` on this machine (at least 40)."""
    start = time.perf_counter()
    sim.step(2)
    per_step = (time.perf_counter() - start) / 2
    return max(40, int(seconds / max(per_step, 1e-6)))


def test_other_threads_run_during_a_step():
    sim = busy_simulation()
    ticks = 0
    stop = threading.Event()

    def count():
        nonlocal ticks
        while not stop.is_set():
            ticks += 1

    counter = threading.Thread(target=count)
    counter.start()
    try:
        time.sleep(0.05)
        before = ticks
        steps = steps_lasting(sim, 0.5)
        start = time.perf_counter()
        sim.step(steps)
        seconds = time.perf_counter() - start
        during = ticks - before
    finally:
        stop.set()
        counter.join()
    assert seconds > 0.1, "the step was too quick to tell"
    # With the GIL held the counter would be frozen for the whole call (at most a few
    # ticks around the switch); released, it counts freely.
    assert during > 10000, f"{during} ticks in {seconds:.2f} s"


def test_a_second_call_while_stepping_is_refused():
    sim = busy_simulation()
    steps = steps_lasting(sim, 1.0)
    done_before = sim.steps_done
    worker = threading.Thread(target=sim.step, args=(steps,))
    worker.start()
    try:
        time.sleep(0.05)
        assert worker.is_alive(), "the steps ended before the second call could be tried"
        with pytest.raises(RuntimeError, match="busy in another thread"):
            sim.energy()
    finally:
        worker.join()
    assert sim.steps_done == done_before + steps
    sim.energy()  # free again


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs signal.setitimer")
def test_keyboard_interrupt_stops_a_long_step():
    sim = busy_simulation()

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        with pytest.raises(KeyboardInterrupt):
            sim.step(10**9)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert 0 < sim.steps_done < 10**9
    sim.step(1)  # still usable
