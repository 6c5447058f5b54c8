#!/usr/bin/env bash
# An ensemble's run directory (docs/output-format.md): 3 members of a 32^2 ring-forced deck
# varying physics.nu, run to t = 1 with checkpoints every 0.25.
#  (a) the files' shapes: the member dimension in every HDF5 file (ncdump -h where installed),
#      diagnostics.csv in long form (3 rows a time, members 0, 1, 2), xarray (open_run) sees it;
#      each member's own cfl, (t, member), the row's dt times its own velocity's max rate;
#  (b) a restart from t = 0.5 into the same directory ends with the same final state bit for bit
#      and the same diagnostics.csv rows (all but the wall-clock columns);
#  (c) cascade extract takes member 1 out of the t = 0.5 checkpoint; restarted as a single run to
#      t = 1 it ends at member 1's final state (to round-off), with member 1's rows after t = 0.5;
#  (d) member 1's diagnostics rows are those of a single run of member 1's deck;
#  (e) bad extract inputs: exit 2, one line, nothing written.
#   ensemble_runs.sh CASCADE PYTHON SOURCE_DIR
set -u
bin=$1 py=$2 src=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# Members 3, nu 2e-3, 3e-3, 5e-3; the checkpoints (every 0.25) fall inside the diagnostics
# intervals (every 0.2), so that a restart must carry each member's budget; dt_max binds every step (the CFL's dt is about 0.03), so that a
# member run alone takes the ensemble's steps.
deck() {  # members, nu (member 0's), initial seed, forcing seed
  cat <<EOF
grid: {nx: 32, ny: 32}
physics: {nu: $2}
forcing: {type: ring, epsilon: 0.1, k_f: 6, dk: 2, seed: $4}
initial: {type: random, seed: $3, k0: 4, energy: 0.5}
time: {t_end: 1, cfl: 0.5, dt_max: 0.01}
output: {diagnostics_every: 0.2, snapshot_every: 0.5, spectra_every: 0.25, checkpoint_every: 0.25,
         keep_checkpoints: 10, print_every: 100000, fields: [vorticity, streamfunction]}
EOF
  if [ "$1" -gt 1 ]; then printf 'ensemble:\n  members: %s\n  vary:\n    physics.nu: [2.0e-3, 3.0e-3, 5.0e-3]\n' "$1"; fi
}
deck 3 2.0e-3 7 11 >"$work/ensemble.yaml"
# member_config(deck, 1): members 1, nu 3e-3, seeds 7 + 1 and 11 + 1
deck 1 3.0e-3 8 12 >"$work/member1.yaml"
run() { "$bin" run "$@" --backend cpu >"$work/log" 2>&1 || { cat "$work/log"; fail "cascade run $*"; }; }
run "$work/ensemble.yaml" --output "$work/full"
run "$work/ensemble.yaml" --output "$work/split" --set time.t_end=0.75
run --restart "$work/split/checkpoints/$(ls "$work/split/checkpoints" | sed -n 2p)" --set time.t_end=1
run "$work/member1.yaml" --output "$work/single"
mid=$(ls "$work"/full/checkpoints/ckpt_*.h5 | sed -n 2p)  # t = 0.5
"$bin" extract "$mid" --member 1 --output "$work/m1.h5" >"$work/log" 2>&1 || { cat "$work/log"; fail "extract"; }
run --restart "$work/m1.h5" --output "$work/m1run"

# (e) bad extract inputs: exit 2, one line on stderr, nothing written
bad() {
  local out=$1; shift
  "$bin" extract "$@" >"$work/out" 2>"$work/err"; local rc=$?
  [ "$rc" = 2 ] || fail "extract $* exited $rc, expected 2"
  [ "$(wc -l <"$work/err")" = 1 ] || { cat "$work/err"; fail "extract $*: expected one line"; }
  [ -s "$work/out" ] && fail "extract $*: wrote to stdout"
  [ -n "$out" ] && [ -e "$out" ] && fail "extract $*: wrote $out"
  true
}
bad "$work/x.h5" "$mid" --member 3 --output "$work/x.h5"
bad "$work/x.h5" "$mid" --member -1 --output "$work/x.h5"
bad "$work/x.h5" "$work/single/diagnostics.h5" --member 0 --output "$work/x.h5"
bad "$work/x.h5" "$work/nothing.h5" --member 0 --output "$work/x.h5"
bad "$work/x.h5" "$(ls "$work"/single/checkpoints/ckpt_*.h5 | tail -1)" --member 0 --output "$work/x.h5"
cp "$work/ensemble.yaml" "$work/exists.h5"
bad "" "$mid" --member 0 --output "$work/exists.h5"
cmp -s "$work/ensemble.yaml" "$work/exists.h5" || fail "extract overwrote an existing file"
bad "$work/x.h5" "$mid" --output "$work/x.h5"
bad "$work/none/x.h5" "$mid" --member 0 --output "$work/none/x.h5"

# netCDF: ncdump sees the member dimension
if command -v ncdump >/dev/null; then
  for f in diagnostics.h5 spectra.h5 snapshots/snap_000000.h5 "checkpoints/$(basename "$mid")"; do
    ncdump -h "$work/full/$f" | grep -q 'member = 3 ;' || { ncdump -h "$work/full/$f"; fail "ncdump $f: no member"; }
  done
  ncdump -h "$work/full/snapshots/snap_000000.h5" | grep -q 'vorticity(t, member, y, x)' || fail "ncdump snapshot"
  ncdump -h "$work/full/diagnostics.h5" | grep -q 'double E(t, member)' || fail "ncdump diagnostics"
  ncdump -h "$work/full/spectra.h5" | grep -q 'double E(t, member, k)' || fail "ncdump spectra"
  ncdump -h "$work/full/checkpoints/$(basename "$mid")" | grep -q 'omega_hat(member, ky, kx, part)' ||
    fail "ncdump checkpoint"
fi

PYTHONPATH="$src/postprocess" "$py" - "$work" "$mid" <<'PY' || exit 1
import glob, os, sys
import h5py
import numpy as np
import cascade_io as io
work, mid = sys.argv[1], sys.argv[2]
full, split, single, m1run = (os.path.join(work, d) for d in ("full", "split", "single", "m1run"))
last = lambda d: sorted(glob.glob(os.path.join(d, "checkpoints", "ckpt_*.h5")))[-1]

# (a) shapes
with h5py.File(os.path.join(full, "snapshots", "snap_000000.h5"), "r") as f:
    assert f["vorticity"].shape == (1, 3, 32, 32), f["vorticity"].shape
    assert list(f["member"][...]) == [0, 1, 2] and f["member"].dtype.kind == "i"
with h5py.File(os.path.join(full, "diagnostics.h5"), "r") as f:
    assert f["E"].shape == (6, 3) and f["step"].shape == (6, 3) and f["t"].shape == (6,), (f["E"].shape, f["t"].shape)
with h5py.File(os.path.join(full, "spectra.h5"), "r") as f:
    assert f["E"].shape[:2] == (5, 3) and f["Pi_Z"].shape == f["E"].shape and f["t"].shape == (5,), f["E"].shape
with h5py.File(last(full), "r") as f:
    assert f["state/omega_hat"].shape == (3, 32, 17, 2) and f["budget/members"].shape == (3, 6)
    sealed = f.attrs["checksum"].decode() if isinstance(f.attrs["checksum"], bytes) else f.attrs["checksum"]
    assert io.checkpoint_checksum(f["state/omega_hat"][...], f.attrs["time"], f.attrs["dt"], f.attrs["step"],
                                  f["budget/members"][...]) == sealed
lines = open(os.path.join(full, "diagnostics.csv")).read().splitlines()
header = lines[0].split(",")
assert header[:3] == ["step", "t", "member"], header
rows = [l.split(",") for l in lines[1:]]
assert len(rows) == 18 and [r[2] for r in rows] == ["0", "1", "2"] * 6, len(rows)
assert all(rows[3 * i][1] == rows[3 * i + 1][1] == rows[3 * i + 2][1] for i in range(6))
csv, h5 = io.read_diagnostics(full, "csv"), io.read_diagnostics(full)
assert np.array_equal(csv["E"].reshape(6, 3), h5["E"]) and h5["cfl_limit"].shape == (6, 3)
assert list(h5["cfl_limit"][:, 1]) == list(csv["cfl_limit"][1::3])
# each member's own cfl: (t, member), 0 in the first row, the CSV's; at t = 1 the row's dt times
# max(|u|/dx + |v|/dy) of the member's velocity from the snapshot's streamfunction
assert h5["cfl"].shape == (6, 3) and np.array_equal(csv["cfl"].reshape(6, 3), h5["cfl"]), h5["cfl"]
assert (h5["cfl"][0] == 0).all() and (h5["cfl"][1:] > 0).all(), h5["cfl"]
s = io.read_snapshot(os.path.join(full, "snapshots", "snap_000002.h5"))
assert s["attrs"]["time"] == h5["t"][-1] == 1.0
k = np.fft.fftfreq(32, 1 / 32)
psi_hat = np.fft.fft2(s["streamfunction"])
u = np.fft.ifft2(1j * k[:, None] * psi_hat).real
v = np.fft.ifft2(-1j * k[None, :] * psi_hat).real
want = h5["dt"][-1] * (np.abs(u) / (2 * np.pi / 32) + np.abs(v) / (2 * np.pi / 32)).max(axis=(1, 2))
assert np.allclose(h5["cfl"][-1], want, rtol=1e-10, atol=0), (h5["cfl"][-1], want)
s = io.read_snapshot(os.path.join(full, "snapshots", "snap_000001.h5"))
assert s["vorticity"].shape == (3, 32, 32), s["vorticity"].shape
try:
    import xarray  # noqa: F401
    import h5netcdf  # noqa: F401
except ImportError:
    print("(xarray or h5netcdf not installed: open_run not checked)")
else:
    r = io.open_run(full)
    assert r["snapshots"].vorticity.dims == ("t", "member", "y", "x") and r["snapshots"].vorticity.shape == (3, 3, 32, 32)
    assert r["diagnostics"].E.dims == ("t", "member") and r["diagnostics"].E.shape == (6, 3)
    assert r["diagnostics"].cfl.dims == ("t", "member") and r["diagnostics"].cfl.shape == (6, 3)
    assert r["spectra"].E.dims == ("t", "member", "k") and list(r["spectra"].member.values) == [0, 1, 2]

# (b) restart into the same directory: the same final state, bit for bit, and the same rows
a, b = io.read_checkpoint(last(full)), io.read_checkpoint(last(split))
assert a["time"] == b["time"] == 1.0 and a["step"] == b["step"]
assert np.array_equal(a["omega_hat"].view(np.uint64), b["omega_hat"].view(np.uint64)), "restarted state differs"
def kept(d):  # the CSV's text without the wall-clock columns (named wall_*)
    lines = [l.split(",") for l in open(os.path.join(d, "diagnostics.csv")).read().splitlines()]
    wall = {i for i, name in enumerate(lines[0]) if name.startswith("wall")}
    return [[cell for i, cell in enumerate(l) if i not in wall] for l in lines]
assert kept(full) == kept(split), "restarted diagnostics rows differ"
sa, sb = io.read_spectra(full), io.read_spectra(split)
assert np.array_equal(sa["E"], sb["E"]) and np.array_equal(sa["t"], sb["t"])

# (c) member 1, extracted at t = 0.5 and run alone to t = 1
e = io.read_checkpoint(os.path.join(work, "m1.h5"))
m = io.read_checkpoint(mid)
assert e["omega_hat"].shape == (32, 17) and np.array_equal(e["omega_hat"], m["omega_hat"][1])
assert "run_id" not in e and e["time"] == m["time"] and e["step"] == m["step"]
c = io.read_checkpoint(last(m1run))
assert c["time"] == 1.0
want = a["omega_hat"][1]
err = abs(c["omega_hat"] - want).max() / abs(want).max()
assert err < 1e-12, "extracted member 1 ends %g away from the ensemble's member 1" % err
# its rows after t = 0.5 (the budget's means over intervals the checkpoint cut) are member 1's
alone = io.read_diagnostics(m1run, "csv")
after = csv["t"][1::3] > 0.5
for key in ("t", "E", "Z", "injection", "dissipation", "dissipation_nu", "injection_Z", "dissipation_Z"):
    x, y = alone[key][alone["t"] > 0.5], csv[key][1::3][after]
    assert len(x) == 3 and np.allclose(x, y, rtol=1e-12, atol=1e-12 * abs(y).max()), (key, x, y)

# (d) member 1's rows are a single run's of its deck
one = io.read_diagnostics(single, "csv")
for key in ("t", "E", "Z", "P", "cfl", "injection", "dissipation", "dissipation_nu", "injection_Z"):
    x, y = one[key], csv[key][1::3]
    assert x.shape == y.shape and np.allclose(x, y, rtol=1e-12, atol=1e-12 * abs(x).max()), (key, abs(x - y).max())
assert np.array_equal(one["step"], csv["step"][1::3])
print("ensemble runs ok: shapes, bit-for-bit restart, extract (%.1e), member 1 = single run" % err)
PY
echo "ensemble outputs ok"
