#!/usr/bin/env bash
# Files written before the netCDF layout (tests/data/before_netcdf.tar.gz: a 16 x 16 run to t = 0.2 by
# cascade 0.1.0 at 2f52acd, whose snapshots hold (y, x) fields, with no dimension scales) are
# still read: the run restarts from its checkpoint and continues as a new run does (t = 0.3, the
# final field as a run from the start gives it); snapshots.xmf is rebuilt in the x-y plane
# with the old (y, x) entries and the new (t, y, x) ones; initial.type file takes an old
# snapshot and an old checkpoint; `cascade check` verifies the old checkpoint;
# postprocess/cascade_io.py reads old and new snapshots alike, as (ny, nx).
#   before_netcdf.sh CASCADE PYTHON SOURCE_DIR
set -u
bin=$1 py=$2 src=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The fixture travels as one archive (tests/data/before_netcdf.tar.gz), unpacked here.
tar -xzf "$src/tests/data/before_netcdf.tar.gz" -C "$work" || { echo "FAIL: unpacking the fixture"; exit 1; }
fixture="$work/before_netcdf"
fail() { echo "FAIL: $*"; [[ -f "$work/log" ]] && cat "$work/log"; exit 1; }
cp -r "$fixture" "$work/old"
"$bin" check "$work/old/checkpoints/ckpt_000004.h5" >"$work/log" 2>&1 || fail "cascade check of the old checkpoint"
"$bin" run --restart "$work/old/checkpoints/ckpt_000004.h5" --set time.t_end=0.3 >"$work/log" 2>&1 ||
  fail "restart from the old checkpoint"
"$bin" run "$fixture/deck.yaml" --backend cpu --output "$work/fresh" --set time.t_end=0.3 >"$work/log" 2>&1 ||
  fail "the same run from the start"
for init in snapshots/snap_000002.h5 checkpoints/ckpt_000004.h5; do
  "$bin" run "$fixture/deck.yaml" --backend cpu --output "$work/init" --overwrite --set initial.type=file \
    --set "initial.path=$fixture/$init" --set time.t_end=0.1 >"$work/log" 2>&1 || fail "initial.type file from the old $init"
done
PYTHONPATH="$src/postprocess" "$py" - "$work/old" "$work/fresh" <<'PY' || exit 1
import os, sys, xml.etree.ElementTree as ET
import h5py
import numpy as np
import cascade_io as io
old, fresh = sys.argv[1:]
paths = io.list_snapshots(old)
assert len(paths) == 4, paths
ranks = []
for p in paths:
    with h5py.File(p, "r") as f:
        ranks.append(f["vorticity"].ndim)
    assert io.read_snapshot(p)["vorticity"].shape == (16, 16), p
assert ranks == [2, 2, 2, 3], ranks  # three from before, one written by the restart
last, want = io.read_snapshot(paths[-1]), io.read_snapshot(io.list_snapshots(fresh)[-1])
assert last["attrs"]["time"] == want["attrs"]["time"] == 0.3
scale = np.abs(want["vorticity"]).max()
assert np.abs(last["vorticity"] - want["vorticity"]).max() < 1e-12 * scale, "the restart departs from the run"
root = ET.parse(os.path.join(old, "snapshots.xmf")).getroot()
grids = [g for g in root.iter("Grid") if g.get("GridType") == "Uniform"]
assert len(grids) == 4, len(grids)
assert all(g.find("Topology").get("TopologyType") == "3DCoRectMesh" for g in grids), "index not rebuilt"
dims = [g.find("Attribute/DataItem").get("Dimensions") for g in grids]
assert dims == ["16 16"] * 3 + ["1 16 16"], dims
d = io.read_diagnostics(old)
assert np.allclose(d["t"], [0, 0.1, 0.2, 0.3], rtol=0, atol=1e-15), d["t"]
print("files from before the netCDF layout: restart, index, initial fields and reader ok")
PY
