"""cascade: the 2D turbulence solver, driven from Python (docs/python.md).

    import cascade
    sim = cascade.Simulation("input/decaying.yaml", set={"grid.nx": 128})
    sim.run(until=1.0)
    w = sim.vorticity()          # numpy (ny, nx), the solver's precision
    print(sim.t, sim.step_count, sim.diagnostics()["E"])
"""
import atexit as _atexit
import os as _os
import weakref as _weakref

# FFTW's measured plans are kept beside the program that runs them; for Python that is this
# package's folder, not the interpreter's (CASCADE_FFTW_WISDOM set by the user wins).
_os.environ.setdefault("CASCADE_FFTW_WISDOM", _os.path.dirname(_os.path.abspath(__file__)))

from ._cascade import (  # noqa: E402
    BlowUp,
    DeckError,
    DeviceArray,
    HAVE_DLPACK,
    RunError,
    Simulation,
    __version__,
    cuda_unavailable_reason,
)

__all__ = ["Simulation", "DeviceArray", "DeckError", "RunError", "BlowUp", "HAVE_DLPACK",
           "cuda_unavailable_reason", "__version__"]

# Simulations still open when Python exits leave their final outputs, as when they are closed.
_open = _weakref.WeakSet()
_init, _restart = Simulation.__init__, Simulation.restart


def _tracked_init(self, *args, **kwargs):
    _init(self, *args, **kwargs)
    _open.add(self)


def _tracked_restart(*args, **kwargs):
    sim = _restart(*args, **kwargs)
    _open.add(sim)
    return sim


Simulation.__init__ = _tracked_init
Simulation.restart = staticmethod(_tracked_restart)
_tracked_restart.__doc__ = _restart.__doc__


@_atexit.register
def _close_all():
    for sim in list(_open):
        try:
            sim.close()
        except Exception as e:  # noqa: BLE001 - at exit, say it and go on
            print("cascade: closing a simulation at exit:", e)
