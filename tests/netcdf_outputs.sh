#!/usr/bin/env bash
# Every HDF5 file cascade writes is netCDF-4 (docs/output-format.md, Dimensions): named
# dimensions and coordinate variables through HDF5 dimension scales.
#   netcdf_outputs.sh CASCADE PYTHON SOURCE_DIR ncdump   (PYTHON unused) `ncdump -h` reads each file (snapshot,
#       checkpoint, diagnostics.h5, spectra.h5, poisson.h5) and finds the dimensions named
#   netcdf_outputs.sh CASCADE PYTHON SOURCE_DIR xarray   xarray (engine h5netcdf) opens them with
#       named dimensions and coordinates, values equal to what postprocess/cascade_io.py reads;
#       cascade_io.open_run gives the snapshots over t, across a restart
# Exit 77 (ctest: skipped) where ncdump, or xarray and h5netcdf, are missing.
set -u
bin=$1 py=$2 src=$3 mode=$4
case $mode in
  ncdump) command -v ncdump >/dev/null || { echo "SKIPPED: no ncdump (install netcdf-bin)"; exit 77; } ;;
  xarray) "$py" -c "import xarray, h5netcdf" 2>/dev/null ||
            { echo "SKIPPED: $py lacks xarray or h5netcdf (install python3-xarray python3-h5netcdf)"; exit 77; } ;;
  *) echo "usage: netcdf_outputs.sh CASCADE PYTHON SOURCE_DIR ncdump|xarray"; exit 2 ;;
esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run="$work/run"
# nx != ny and lx != ly, so that a transposed axis shows; a restart in the middle.
"$bin" run "$src/input/decaying.yaml" --backend cpu --output "$run" --set grid.nx=32 --set grid.ny=24 \
  --set grid.ly=1.5pi --set time.t_end=0.2 --set output.diagnostics_every=0.1 --set output.snapshot_every=0.1 \
  --set output.spectra_every=0.1 --set output.checkpoint_every=0.1 --set output.keep_checkpoints=5 \
  --set "output.fields=[vorticity, streamfunction, velocity]" >"$work/log" 2>&1 || { cat "$work/log"; exit 1; }
"$bin" run --restart "$(ls "$run"/checkpoints/ckpt_*.h5 | sort | tail -1)" --set time.t_end=0.3 >>"$work/log" 2>&1 ||
  { cat "$work/log"; exit 1; }
"$bin" poisson "$src/input/poisson_gaussian.yaml" --backend cpu --output "$work/poisson" >>"$work/log" 2>&1 ||
  { cat "$work/log"; exit 1; }
ckpt=$(ls "$run"/checkpoints/ckpt_*.h5 | sort | tail -1)

if [[ $mode == ncdump ]]; then
  fails=0
  # expect FILE PATTERN...: ncdump -h exits 0 and prints every pattern (a line of its header).
  expect() {
    local file=$1 out
    shift
    if ! out=$(ncdump -h "$file" 2>&1); then echo "FAIL: ncdump -h $file: $out"; fails=$((fails + 1)); return; fi
    for p in "$@"; do
      grep -qE "$p" <<<"$out" || { echo "FAIL: ncdump -h $file: no line matching '$p'"; fails=$((fails + 1)); }
    done
    echo "ok: ncdump -h ${file#"$work"/} ($(grep -c '^\s*\(double\|float\|int64\) ' <<<"$out") variables)"
  }
  expect "$run/snapshots/snap_000003.h5" '^\s+t = 1 ;' '^\s+x = 32 ;' '^\s+y = 24 ;' 'double vorticity\(t, y, x\)' \
    'double u\(t, y, x\)' 'double x\(x\)' 'x:units = "length"' 'vorticity:long_name = ' 't:axis = "T"'
  expect "$run/diagnostics.h5" 't = UNLIMITED ; // \(4 currently\)' 'double E\(t\)' 'int64 step\(t\)' \
    'int64 cfl_limit\(t\)' 'E:units = "length\^2/time\^2"' 'E:long_name = '
  expect "$run/spectra.h5" 't = UNLIMITED ; // \(4 currently\)' '^\s+k = [0-9]+ ;' 'double E\(t, k\)' \
    'double Pi_Z\(t, k\)' 'double k\(k\)' 'k:units = "1/length"'
  expect "$ckpt" 'group: state' 'double omega_hat\(ky, kx, part\)' '^\s+kx = 17 ;' '^\s+ky = 24 ;' \
    ':checksum = "fnv1a64w:' 'group: budget'
  expect "$work/poisson/poisson.h5" 'double phi\(y, x\)' 'double exact\(y, x\)' 'double rhs\(y, x\)' 'double x\(x\)'
  exit $((fails > 0))
fi

PYTHONPATH="$src/postprocess" "$py" - "$run" "$ckpt" "$work/poisson/poisson.h5" <<'PY'
import sys
import numpy as np
import xarray as xr
import cascade_io as io
run, ckpt, poisson = sys.argv[1:]

def check_xy(ds, nx, ny, lx, ly):
    assert np.array_equal(ds.x.values, np.arange(nx) * (lx / nx)), ds.x.values
    assert np.array_equal(ds.y.values, np.arange(ny) * (ly / ny)), ds.y.values
    for name in ("x", "y"):
        assert ds[name].attrs["units"] == "length" and ds[name].attrs["long_name"], ds[name].attrs

# Each snapshot: the fields (t, y, x) with coordinates, t of length 1 at the snapshot's time.
paths = io.list_snapshots(run)
assert len(paths) == 4, paths
for p in paths:
    s = io.read_snapshot(p)
    with xr.open_dataset(p, engine="h5netcdf") as ds:
        assert dict(ds.sizes) == {"t": 1, "y": 24, "x": 32}, dict(ds.sizes)
        assert set(ds.coords) == {"t", "y", "x"}, list(ds.coords)
        assert float(ds.t[0]) == s["attrs"]["time"], (float(ds.t[0]), s["attrs"]["time"])
        check_xy(ds, 32, 24, s["attrs"]["lx"], s["attrs"]["ly"])
        for name in ("vorticity", "streamfunction", "u", "v"):
            assert ds[name].dims == ("t", "y", "x"), (name, ds[name].dims)
            assert np.array_equal(ds[name].values[0], s[name]), name
            assert ds[name].attrs["units"] == s["units"][name] and ds[name].attrs["long_name"], ds[name].attrs
        for name in ds.variables:
            assert "units" in ds[name].attrs and "long_name" in ds[name].attrs, name

# The run: snapshots over t (across the restart), diagnostics over t, spectra over (t, k).
r = io.open_run(run)
snaps = r["snapshots"]
assert snaps.vorticity.dims == ("t", "y", "x") and snaps.sizes["t"] == 4, snaps
assert np.allclose(snaps.t.values, [0, 0.1, 0.2, 0.3], rtol=0, atol=1e-15), snaps.t.values
for i, p in enumerate(paths):
    assert np.array_equal(snaps.vorticity.values[i], io.read_snapshot(p)["vorticity"]), p
try:
    import dask  # noqa: F401
    mf = xr.open_mfdataset(paths, engine="h5netcdf", combine="nested", concat_dim="t",
                           data_vars="minimal", coords="minimal", combine_attrs="drop_conflicts")
    assert np.array_equal(mf.vorticity.values, snaps.vorticity.values)
    print("open_mfdataset: the same time series")
except ImportError:
    print("open_mfdataset needs dask, which is absent here: open_run concatenated with xarray.concat")
d, ds = io.read_diagnostics(run), r["diagnostics"]
assert ds.E.dims == ("t",) and list(ds.coords) == ["t"], ds
assert np.array_equal(ds.t.values, d["t"]) and len(d["t"]) == 4, d["t"]
for name in d:
    if name == "cfl_limit":
        names = io._limit_names(ds.cfl_limit.attrs["description"])
        assert [names[int(c)] for c in ds.cfl_limit.values] == list(d[name])
    elif name != "t":
        assert ds[name].dims == ("t",) and np.array_equal(ds[name].values, d[name]), name
sp, xs = io.read_spectra(run), r["spectra"]
assert set(xs.coords) == {"t", "k"} and xs.E.dims == ("t", "k"), xs
assert np.array_equal(xs.k.values, sp["k"]) and np.array_equal(xs.t.values, sp["t"])
for name in ("E", "Z", "Pi", "Pi_Z", "step"):
    assert np.array_equal(xs[name].values, sp[name]), name
assert xs.attrs["dk"] == sp["dk"]

# The checkpoint's state over (ky, kx, part); poisson.h5 over (y, x).
c = io.read_checkpoint(ckpt)
with xr.open_dataset(ckpt, engine="h5netcdf", group="state") as st:
    assert st.omega_hat.dims == ("ky", "kx", "part"), st.omega_hat.dims
    assert np.array_equal(st.omega_hat.values[..., 0] + 1j * st.omega_hat.values[..., 1], c["omega_hat"])
    assert np.allclose(st.kx.values, 2 * np.pi * np.fft.rfftfreq(32, 2 * np.pi / 32), rtol=0, atol=1e-12)
    assert np.allclose(np.abs(st.ky.values), np.abs(2 * np.pi * np.fft.fftfreq(24, 1.5 * np.pi / 24)),
                       rtol=0, atol=1e-12)
pz = io.read_poisson(poisson)
with xr.open_dataset(poisson, engine="h5netcdf") as ds:
    for name in ("phi", "rhs", "exact"):
        assert ds[name].dims == ("y", "x") and np.array_equal(ds[name].values, pz[name]), name
    check_xy(ds, pz["phi"].shape[1], pz["phi"].shape[0], 1.0, 1.0)
print("xarray ok: %d snapshots over t, %d diagnostics rows, %d spectra over %d shells; checkpoint, poisson"
      % (snaps.sizes["t"], len(d["t"]), xs.sizes["t"], xs.sizes["k"]))
PY
