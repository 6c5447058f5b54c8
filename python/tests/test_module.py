"""The cascade module against the command line: the same states bit for bit, the same files,
the same one-line errors; restart, set_vorticity, Ctrl-C (docs/python.md)."""
import os
import signal
import threading

import numpy as np
import pytest

import cascade
from conftest import DECK

h5py = pytest.importorskip("h5py")

SMALL = {"grid.nx": 64, "grid.ny": 64}
SMALL_CLI = ["--set", "grid.nx=64", "--set", "grid.ny=64"]
BACKENDS = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    cascade.cuda_unavailable_reason() != "", reason="cuda: " + cascade.cuda_unavailable_reason()))]


def state(path):
    """A checkpoint's state as stored, and its step and time."""
    with h5py.File(path, "r") as f:
        return f["state/omega_hat"][...], int(f.attrs["step"]), float(f.attrs["time"])


def assert_same_state(a, b):
    (sa, na, ta), (sb, nb, tb) = state(a), state(b)
    assert (na, ta) == (nb, tb)
    assert sa.dtype == sb.dtype and np.array_equal(sa.view(np.uint8), sb.view(np.uint8)), \
        "states differ: max |diff| = %g" % np.abs(sa.astype(float) - sb.astype(float)).max()


def assert_same_end(a, b):
    """Two run directories end in the same state, after the same diagnostics rows (but the
    wall-clock columns)."""
    last = sorted(os.listdir(a / "checkpoints"))[-1]
    assert_same_state(a / "checkpoints" / last, b / "checkpoints" / last)
    rows = lambda d: [",".join(l.split(",")[:11]) for l in open(d / "diagnostics.csv").read().splitlines()]
    assert rows(a) == rows(b)


def files_of(run_dir):
    return sorted(os.path.relpath(os.path.join(d, f), run_dir) for d, _, fs in os.walk(run_dir) for f in fs)


@pytest.mark.parametrize("backend", BACKENDS)
def test_100_steps_match_the_command_line(tmp_path, cli, backend):
    rc, _, err = cli("run", DECK, "--backend", backend, *SMALL_CLI, "--set", "time.max_steps=100", "--quiet",
                     "--output", str(tmp_path / "cli"))
    assert rc == 0, err
    sim = cascade.Simulation(DECK, set=SMALL, backend=backend)  # no files: the same steps
    assert sim.step(100) == 100 and sim.step_count == 100
    sim.checkpoint(tmp_path / "py.h5")
    assert_same_state(tmp_path / "cli" / "checkpoints" / "ckpt_000100.h5", tmp_path / "py.h5")
    assert sim.vorticity().shape == (64, 64) and sim.vorticity().dtype == np.float64


def test_output_directory_is_the_command_lines(tmp_path, cli):
    common = {"grid.nx": 32, "grid.ny": 32, "time.t_end": 0.5, "output.snapshot_every": 0.25,
              "output.spectra_every": 0.25, "output.checkpoint_every": 0.25}
    args = [a for k, v in common.items() for a in ("--set", "%s=%s" % (k, v))]
    rc, _, err = cli("run", DECK, "--backend", "cpu", *args, "--quiet", "--output", str(tmp_path / "cli"))
    assert rc == 0, err
    with cascade.Simulation(DECK, set=common, backend="cpu", output=tmp_path / "py") as sim:
        assert sim.output == str(tmp_path / "py")
        sim.run(until=0.3)
        sim.run()
        assert sim.t == 0.5
    assert files_of(tmp_path / "cli") == files_of(tmp_path / "py")
    assert_same_end(tmp_path / "cli", tmp_path / "py")
    for snap in os.listdir(tmp_path / "cli" / "snapshots"):
        with h5py.File(tmp_path / "cli" / "snapshots" / snap) as a, h5py.File(tmp_path / "py" / "snapshots" / snap) as b:
            assert np.array_equal(a["vorticity"][...], b["vorticity"][...]), snap


def test_output_directory_of_another_run_is_refused(tmp_path):
    with cascade.Simulation(DECK, set={"grid.nx": 16, "grid.ny": 16, "time.t_end": 0.1}, output=tmp_path / "run") as sim:
        sim.run()
    with pytest.raises(cascade.DeckError, match="already holds a run's output"):
        cascade.Simulation(DECK, set={"grid.nx": 16, "grid.ny": 16}, output=tmp_path / "run")
    cascade.Simulation(DECK, set={"grid.nx": 16, "grid.ny": 16}, output=tmp_path / "run", overwrite=True).close()


def test_bad_decks_raise_deck_error_with_the_command_lines_line(tmp_path, cli):
    bad = tmp_path / "bad.yaml"
    bad.write_text(open(DECK).read().replace("nx: 256", "nx: 255"))
    rc, _, err = cli("run", str(bad), "--output", str(tmp_path / "never"))
    assert rc == 2
    with pytest.raises(cascade.DeckError) as e:
        cascade.Simulation(bad)
    assert err.strip() == "cascade: error: " + str(e.value)
    assert "\n" not in str(e.value) and "grid.nx" in str(e.value)
    assert isinstance(e.value, ValueError)
    for deck, kwargs in [(tmp_path / "missing.yaml", {}), (DECK, {"set": {"grid.nx": 63}}),
                         (DECK, {"set": {"physics.no_such_key": 1}}), ({"grid": {"nx": "many"}}, {})]:
        with pytest.raises(cascade.DeckError):
            cascade.Simulation(deck, **kwargs)
    assert not (tmp_path / "never").exists()


def test_an_ensemble_is_refused_with_one_line(tmp_path):
    ensemble = os.path.join(os.path.dirname(DECK), "ensemble.yaml")
    with pytest.raises(cascade.DeckError, match="ensemble.members: the Python module runs one member") as e:
        cascade.Simulation(ensemble, output=tmp_path / "never")
    assert "\n" not in str(e.value)
    assert not (tmp_path / "never").exists()


def test_deck_from_a_dict_is_the_file(tmp_path):
    text = {"grid": {"nx": 32, "lx": "2pi"}, "physics": {"nu": 5.0e-4},
            "initial": {"type": "random", "seed": 3, "k0": 6.0}, "time": {"t_end": 0.2, "cfl": 0.5}}
    deck = tmp_path / "deck.yaml"
    deck.write_text("grid:\n  nx: 32\n  lx: 2pi\nphysics:\n  nu: 5.0e-4\ninitial:\n  type: random\n  seed: 3\n"
                    "  k0: 6\ntime:\n  t_end: 0.2\n  cfl: 0.5\n")
    a, b = cascade.Simulation(text), cascade.Simulation(deck)
    a.run(), b.run()
    assert a.step_count == b.step_count > 0 and np.array_equal(a.vorticity(), b.vorticity())


def test_set_vorticity_and_vorticity_round_trip():
    sim = cascade.Simulation(DECK, set={"grid.nx": 32, "grid.ny": 32, "run.precision": "single"})
    w = sim.vorticity()
    assert w.dtype == np.float32 and w.shape == (32, 32)
    sim.set_vorticity(w)
    np.testing.assert_allclose(sim.vorticity(), w, rtol=0, atol=1e-5 * np.abs(w).max())
    # A field with modes the dealiasing removes comes back filtered, once: then it is kept.
    rng = np.random.default_rng(1)
    sim.set_vorticity(rng.standard_normal((32, 32)))
    once = sim.vorticity()
    sim.set_vorticity(once)
    np.testing.assert_allclose(sim.vorticity(), once, rtol=0, atol=1e-5 * np.abs(once).max())
    for bad in (np.zeros((32, 16)), np.full((32, 32), np.nan), "text"):
        with pytest.raises(ValueError):
            sim.set_vorticity(bad)
    assert sim.streamfunction().shape == (32, 32) and sim.field("u").dtype == np.float32


def test_restart_continues_bit_for_bit(tmp_path):
    full = cascade.Simulation(DECK, set=SMALL)
    full.step(60)
    full.checkpoint(tmp_path / "full.h5")
    half = cascade.Simulation(DECK, set=SMALL)
    half.step(25)
    half.diagnostics(), half.vorticity()  # reading the state changes nothing
    half.checkpoint(tmp_path / "half.h5")
    again = cascade.Simulation.restart(tmp_path / "half.h5")
    assert (again.step_count, again.t, again.dt) == (half.step_count, half.t, half.dt)
    again.step(35)
    again.checkpoint(tmp_path / "again.h5")
    assert_same_state(tmp_path / "full.h5", tmp_path / "again.h5")


def test_restart_in_its_run_directory_continues_the_run(tmp_path):
    common = {"grid.nx": 32, "grid.ny": 32, "time.t_end": 0.4, "output.checkpoint_every": 0.2,
              "output.keep_checkpoints": 10}
    with cascade.Simulation(DECK, set=common, output=tmp_path / "full") as a:
        a.run()
    with cascade.Simulation(DECK, set={**common, "time.t_end": 0.3}, output=tmp_path / "split") as b:
        b.run()
    first = sorted(os.listdir(tmp_path / "split" / "checkpoints"))[0]  # t = 0.2
    with cascade.Simulation.restart(tmp_path / "split" / "checkpoints" / first, set={"time.t_end": 0.4},
                                    output=True) as c:
        assert c.output == str(tmp_path / "split") and c.t == 0.2
        c.run()
    # The same files but the checkpoint the abandoned continuation wrote at t = 0.3 (as the command).
    kept = lambda d: [f for f in files_of(d) if not f.startswith("checkpoints/")]
    assert kept(tmp_path / "full") == kept(tmp_path / "split")
    assert_same_end(tmp_path / "full", tmp_path / "split")


def test_ctrl_c_stops_between_steps_and_the_simulation_goes_on(tmp_path):
    sim = cascade.Simulation(DECK, set={"grid.nx": 128, "grid.ny": 128, "time.t_end": 1000}, output=tmp_path / "run")
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            sim.run()
    finally:
        timer.cancel()
    n = sim.step_count
    assert 0 < n and sim.t < 1000
    # As the command on a signal: a checkpoint of the step it stopped at.
    assert "ckpt_%06d.h5" % n in os.listdir(tmp_path / "run" / "checkpoints")
    assert sim.step(3) == 3 and sim.step_count == n + 3
    sim.close()
    with pytest.raises(cascade.RunError, match="closed"):
        sim.step()


def test_blow_up_is_its_own_run_error():
    sim = cascade.Simulation(DECK, set={"grid.nx": 32, "grid.ny": 256, "time.cfl": 5, "time.dt_max": 10,
                                        "time.growth": 10, "physics.nu": 0})
    with pytest.raises(cascade.BlowUp, match="dt_min") as e:
        sim.run(until=20)
    assert isinstance(e.value, cascade.RunError) and "\n" not in str(e.value)


def test_device_views_on_the_cpu_are_refused():
    sim = cascade.Simulation(DECK, set={"grid.nx": 16, "grid.ny": 16}, backend="cpu")
    with pytest.raises(ValueError, match="CPU"):
        sim.vorticity(device=True)


def test_a_call_from_a_signal_handler_while_stepping_is_refused():
    sim = cascade.Simulation(DECK, set={"grid.nx": 64, "grid.ny": 64, "time.t_end": 1000})
    old = signal.signal(signal.SIGUSR1, lambda *_: sim.vorticity())
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGUSR1))
    timer.start()
    try:
        with pytest.raises(cascade.RunError, match="busy"):
            sim.run()
    finally:
        timer.cancel()
        signal.signal(signal.SIGUSR1, old)
    assert sim.step(2) == 2
