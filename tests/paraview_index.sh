#!/usr/bin/env bash
# The XDMF index snapshots.xmf in a real ParaView (pvpython, offscreen): every time step, the
# field in the x-y plane with its bounds, the arrays named as the fields (tests/paraview_index.py);
# for a new run, the same run restarted, and a run from before the netCDF layout restarted now
# (its index mixes (y, x) fields and (t, y, x) ones); an ensemble of 3 members (an array a member
# and field), new and restarted. Exit 77 (ctest: skipped) where pvpython is not installed.
#   paraview_index.sh CASCADE SOURCE_DIR
set -u
bin=$1 src=$2
pvpython=$(command -v pvpython) || { echo "SKIPPED: no pvpython (install paraview)"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pv() { "$pvpython" --force-offscreen-rendering "$src/tests/paraview_index.py" "$@" 2>"$work/pv.err" ||
         { cat "$work/pv.err"; exit 1; }; }
"$bin" run "$src/input/decaying.yaml" --backend cpu --output "$work/run" --set grid.nx=32 --set grid.ny=24 \
  --set grid.ly=1.5pi --set time.t_end=0.2 --set output.snapshot_every=0.1 \
  --set "output.fields=[vorticity, streamfunction, velocity]" >"$work/log" 2>&1 || { cat "$work/log"; exit 1; }
pv "$work/run/snapshots.xmf" 0,0.1,0.2 32 24 6.283185307179586 4.71238898038469 streamfunction,u,v,vorticity
# A restart keeps the index's entries and adds its own.
"$bin" run --restart "$(ls "$work"/run/checkpoints/ckpt_*.h5 | sort | tail -1)" --set time.t_end=0.3 >"$work/log" 2>&1 ||
  { cat "$work/log"; exit 1; }
pv "$work/run/snapshots.xmf" 0,0.1,0.2,0.3 32 24 6.283185307179586 4.71238898038469 streamfunction,u,v,vorticity
tar -xzf "$src/tests/data/before_netcdf.tar.gz" -C "$work" && mv "$work/before_netcdf" "$work/old"
"$bin" run --restart "$work/old/checkpoints/ckpt_000004.h5" --set time.t_end=0.3 >"$work/log" 2>&1 ||
  { cat "$work/log"; exit 1; }
pv "$work/old/snapshots.xmf" 0,0.1,0.2,0.3 16 16 6.283185307179586 6.283185307179586 vorticity
# An ensemble: member b's field NAME is the array NAME_memberB of the same grid.
"$bin" run "$src/input/decaying.yaml" --backend cpu --output "$work/ens" --set grid.nx=32 --set grid.ny=24 \
  --set grid.ly=1.5pi --set time.t_end=0.2 --set output.snapshot_every=0.1 --set ensemble.members=3 \
  --set "output.fields=[vorticity, velocity]" >"$work/log" 2>&1 || { cat "$work/log"; exit 1; }
arrays=u_member0,u_member1,u_member2,v_member0,v_member1,v_member2,vorticity_member0,vorticity_member1,vorticity_member2
pv "$work/ens/snapshots.xmf" 0,0.1,0.2 32 24 6.283185307179586 4.71238898038469 "$arrays"
truncate -s -20 "$work/ens/snapshots.xmf"  # cut short: the restart rebuilds it from the files
"$bin" run --restart "$(ls "$work"/ens/checkpoints/ckpt_*.h5 | sort | tail -1)" --set time.t_end=0.3 >"$work/log" 2>&1 ||
  { cat "$work/log"; exit 1; }
pv "$work/ens/snapshots.xmf" 0,0.1,0.2,0.3 32 24 6.283185307179586 4.71238898038469 "$arrays"
