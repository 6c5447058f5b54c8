"""pvpython check of a run's XDMF index (tests/paraview_index.sh): ParaView opens it with every
time step; each step is a grid in the x-y plane (z bounds 0..0) with x over nx points spaced
lx/nx and y over ny points spaced ly/ny; the point arrays are the snapshot's fields, and the
value at point (i, j) is the file's field at row j, column i (an ensemble's member b: the array
NAME_memberB, the file's field NAME[0, b]).
    pvpython paraview_index.py INDEX TIMES NX NY LX LY FIELDS   (TIMES, FIELDS: comma-separated)"""
import os
import sys

import h5py
import numpy as np
from paraview import servermanager
from paraview.simple import OpenDataFile

index, times, nx, ny, lx, ly, fields = sys.argv[1:]
times = [float(t) for t in times.split(",")]
nx, ny, lx, ly = int(nx), int(ny), float(lx), float(ly)
fields = sorted(fields.split(","))
reader = OpenDataFile(index)
got = list(reader.TimestepValues)
assert np.allclose(got, times, rtol=0, atol=1e-12), ("time steps", got, times)
want_bounds = (0.0, (nx - 1) * lx / nx, 0.0, (ny - 1) * ly / ny, 0.0, 0.0)
run = os.path.dirname(os.path.abspath(index))
for step, t in enumerate(times):
    reader.UpdatePipeline(t)
    info = reader.GetDataInformation()
    bounds = info.GetBounds()
    assert np.allclose(bounds, want_bounds, rtol=1e-12, atol=1e-12), ("bounds at t = %g" % t, bounds, want_bounds)
    assert info.GetNumberOfPoints() == nx * ny, info.GetNumberOfPoints()
    names = sorted(reader.PointData.GetArray(i).GetName() for i in range(reader.PointData.GetNumberOfArrays()))
    assert names == fields, ("arrays", names, fields)
    data = servermanager.Fetch(reader)
    block = data.GetBlock(0) if data.IsA("vtkMultiBlockDataSet") else data
    dims = block.GetDimensions()
    assert dims == (nx, ny, 1), ("dimensions (x, y, z)", dims)
    with h5py.File(os.path.join(run, "snapshots", "snap_%06d.h5" % step), "r") as f:
        for name in fields:
            # An ensemble's member b is the array NAME_memberB, of the (1, member, ny, nx) field.
            base, _, member = name.partition("_member")
            stored = (f[base][0, int(member)] if member else f[name][...]).reshape(ny, nx)
            array = block.GetPointData().GetArray(name)
            shown = np.array([array.GetValue(k) for k in range(nx * ny)]).reshape(ny, nx)  # point i + nx j
            assert np.array_equal(shown, stored), (name, t)
print("paraview ok: %s: %d time steps, bounds %s, arrays %s" % (os.path.basename(index), len(times),
                                                                 want_bounds, ", ".join(fields)))
