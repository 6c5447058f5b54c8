"""Zero-copy device views on a GPU (docs/python.md): CuPy, PyTorch and JAX see the solver's
memory (the same pointer) and read what the host copy holds, bit for bit. Skipped without a
GPU, without a CUDA build, or without the library a case reads through."""
import gc
import os

import numpy as np
import pytest

import cascade
from conftest import DECK

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # JAX: leave the GPU's memory to cascade

pytestmark = pytest.mark.skipif(cascade.cuda_unavailable_reason() != "",
                                reason="no GPU for cascade: " + cascade.cuda_unavailable_reason())
SET = {"grid.nx": 128, "grid.ny": 96}


@pytest.fixture(params=["double", "single"])
def sim(request):
    s = cascade.Simulation(DECK, set={**SET, "run.precision": request.param}, backend="cuda")
    s.step(20)
    return s


def bits(a):
    a = np.ascontiguousarray(a)
    return a.view(np.uint32 if a.dtype == np.float32 else np.uint64)


def check_view(sim, view, name):
    assert view.shape == sim.shape and view.dtype == sim.vorticity().dtype
    cai = view.__cuda_array_interface__
    assert cai["version"] == 3 and cai["data"][0] == view.ptr and "stream" in cai
    assert view.simulation is sim


def test_cupy_reads_the_solvers_memory(sim):
    cupy = pytest.importorskip("cupy")
    for name in ("vorticity", "streamfunction"):
        view = getattr(sim, name)(device=True)
        check_view(sim, view, name)
        a = cupy.asarray(view)
        assert a.data.ptr == view.ptr  # no copy
        assert np.array_equal(bits(cupy.asnumpy(a)), bits(getattr(sim, name)()))
        if cascade.HAVE_DLPACK:
            b = cupy.from_dlpack(view)
            assert b.data.ptr == view.ptr and bool((a == b).all())


def test_torch_reads_the_solvers_memory(sim):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no GPU")
    view = sim.vorticity(device=True)
    host = sim.vorticity()
    t = torch.as_tensor(view, device="cuda")  # __cuda_array_interface__
    assert t.data_ptr() == view.ptr and t.device.index == view.device
    assert np.array_equal(bits(t.cpu().numpy()), bits(host))
    if cascade.HAVE_DLPACK:
        d = torch.from_dlpack(view)
        assert d.data_ptr() == view.ptr and torch.equal(d, t)


def test_jax_reads_the_solvers_memory(sim):
    jax = pytest.importorskip("jax")
    if not cascade.HAVE_DLPACK:
        pytest.skip("built without dlpack/dlpack.h: no __dlpack__")
    jax.config.update("jax_enable_x64", True)
    if not any(d.platform == "gpu" for d in jax.devices()):
        pytest.skip("JAX sees no GPU")
    view = sim.vorticity(device=True)
    try:
        a = jax.dlpack.from_dlpack(view)
    except TypeError:  # older JAX takes the capsule
        a = jax.dlpack.from_dlpack(view.__dlpack__())
    assert np.array_equal(bits(np.asarray(a)), bits(sim.vorticity()))
    assert a.unsafe_buffer_pointer() == view.ptr


def test_the_view_keeps_the_simulation_alive_and_the_next_call_overwrites_it():
    cupy = pytest.importorskip("cupy")
    sim = cascade.Simulation(DECK, set=SET, backend="cuda")
    view = sim.vorticity(device=True)
    a = cupy.asarray(view)
    first = cupy.asnumpy(a)
    sim.step(5)
    assert np.array_equal(cupy.asnumpy(a), first)  # steps leave it alone
    later = sim.vorticity(device=True)  # the same buffer, overwritten
    assert later.ptr == view.ptr and not np.array_equal(cupy.asnumpy(a), first)
    assert np.array_equal(bits(cupy.asnumpy(a)), bits(sim.vorticity()))
    del sim, view, later
    gc.collect()
    assert np.isfinite(cupy.asnumpy(a)).all()  # the array still holds the Simulation's memory


def test_device_views_match_the_cpu_run_closely():
    cupy = pytest.importorskip("cupy")
    gpu = cascade.Simulation(DECK, set=SET, backend="cuda")
    cpu = cascade.Simulation(DECK, set=SET, backend="cpu")
    gpu.step(10), cpu.step(10)
    w = cupy.asnumpy(cupy.asarray(gpu.vorticity(device=True)))
    np.testing.assert_allclose(w, cpu.vorticity(), rtol=0, atol=1e-9 * np.abs(w).max())
