#!/usr/bin/env bash
# An ensemble split by members over MPI ranks (docs/ensembles.md) gives the one-process run:
# 4 members of a 32^2 ring-forced deck from random fields, varying physics.nu, to t = 1, with
# checkpoints every 0.25 (inside the diagnostics intervals of 0.2, so that a restart carries
# each member's budget), snapshots and spectra.
#  (a) run alone and on 1, 2, 3 (members 2 + 1 + 1) and 4 ranks: the final checkpoints' states
#      and budgets, diagnostics.csv (all but the wall-clock columns), diagnostics.h5, spectra
#      and snapshots agree with the one-process run to 1e-12 (relative; it says whether bit for
#      bit);
#  (b) the 2-rank run's checkpoint at t = 0.5 restarted on 4 ranks and on 1 continues to the
#      same end and the same rows;
#  (c) more ranks than members: exit 2, one line, nothing created;
#  (d) ensemble.on_blowup: drop on 3 ranks: the same member dropped, the others as in one process.
# With BACKEND cuda the ranks share the GPUs (round robin); it skips without a GPU.
#   ensemble_mpi.sh CASCADE PYTHON SOURCE_DIR BACKEND MPIEXEC [MPIEXEC_FLAGS...]
source "$(dirname "$0")/mpi_test_setup.sh" "$@"
if [ "$backend" = cuda ]; then
  gpus=$("$bin" info | grep -c "^    device [0-9]*:")
  [ "$gpus" -ge 1 ] || { echo "SKIPPED: no CUDA device"; exit 0; }
fi

cat >"$work/ensemble.yaml" <<'EOF'
grid: {nx: 32, ny: 32}
physics: {nu: 2.0e-3}
forcing: {type: ring, epsilon: 0.1, k_f: 6, dk: 2, seed: 11}
initial: {type: random, seed: 7, k0: 4, energy: 0.5}
time: {t_end: 1, cfl: 0.5, dt_max: 0.05}
output: {diagnostics_every: 0.2, snapshot_every: 0.5, spectra_every: 0.25, checkpoint_every: 0.25,
         keep_checkpoints: 10, print_every: 100000, fields: [vorticity, streamfunction]}
ensemble:
  members: 4
  vary:
    physics.nu: [2.0e-3, 3.0e-3, 5.0e-3, 8.0e-3]
EOF
common=(--backend "$backend" --set run.threads=1 -q)
"$bin" run "$work/ensemble.yaml" "${common[@]}" --output "$work/alone" >"$work/alone.log" 2>&1 \
  || { cat "$work/alone.log"; fail "one-process run"; }
for n in 1 2 3 4; do
  mpi "$n" "$bin" run "$work/ensemble.yaml" "${common[@]}" --output "$work/r$n" >"$work/r$n.log" 2>&1 \
    || { cat "$work/r$n.log"; fail "run on $n ranks"; }
done
grep -q "stepped together over 2 MPI ranks (rank 0: members 0 to 1;" "$work/r2/log.txt" \
  || { cat "$work/r2/log.txt"; fail "the 2-rank run did not split the members"; }
grep -q "stepped together over 3 MPI ranks (rank 0: members 0 to 1;" "$work/r3/log.txt" \
  || { cat "$work/r3/log.txt"; fail "the 3-rank run did not split the members 2 + 1 + 1"; }

# (b) the 2-rank run's checkpoint at t = 0.5, restarted on 4 ranks and on 1, each in a copy
for n in 4 1; do
  cp -r "$work/r2" "$work/r2to$n"
  ckpt=$(ls "$work"/r2to$n/checkpoints/ckpt_*.h5 | sed -n 2p)
  mpi "$n" "$bin" run --restart "$ckpt" "${common[@]}" >"$work/r2to$n.log" 2>&1 \
    || { cat "$work/r2to$n.log"; fail "restart of the 2-rank run on $n ranks"; }
done

PYTHONPATH="$src/postprocess" "$py" - "$work" <<'PY' || exit 1
import glob, os, sys
import numpy as np
import h5py
import cascade_io as io
w = sys.argv[1]
last = lambda d: sorted(glob.glob(os.path.join(w, d, "checkpoints", "ckpt_*.h5")))[-1]
def rel(a, b):
    return float(np.abs(np.asarray(a) - np.asarray(b)).max() / max(np.abs(np.asarray(a)).max(), 1e-300))
def rows(d):  # diagnostics.csv without the wall-clock columns (wall_*)
    lines = [l.split(",") for l in open(os.path.join(w, d, "diagnostics.csv")).read().splitlines()]
    wall = {i for i, name in enumerate(lines[0]) if name.startswith("wall")}
    return [[c for i, c in enumerate(l) if i not in wall] for l in lines]
def agree(d, label):
    a, b = io.read_checkpoint(last("alone")), io.read_checkpoint(last(d))
    assert a["time"] == b["time"] == 1.0 and a["step"] == b["step"], (label, a["time"], b["time"], a["step"], b["step"])
    assert a["omega_hat"].shape == b["omega_hat"].shape == (4, 32, 17), (label, b["omega_hat"].shape)
    e = rel(a["omega_hat"], b["omega_hat"])
    assert e <= 1e-12, "%s: final states differ by %g (relative)" % (label, e)
    bits = np.array_equal(a["omega_hat"].view(np.uint64), b["omega_hat"].view(np.uint64))
    with h5py.File(last("alone"), "r") as f, h5py.File(last(d), "r") as g:
        assert rel(f["budget/members"][...], g["budget/members"][...]) <= 1e-12, label
    ra, rb = rows("alone"), rows(d)
    assert len(ra) == len(rb) == 1 + 6 * 4 and ra[0] == rb[0], (label, len(ra), len(rb))
    same_text = ra == rb
    for x, y in zip(ra[1:], rb[1:]):
        for name, p, q in zip(ra[0], x, y):
            try:
                p, q = float(p), float(q)
            except ValueError:
                assert p == q, (label, name, p, q)
                continue
            assert abs(p - q) <= 1e-12 * max(abs(p), 1e-300) or p == q, (label, name, x[:3], p, q)
    ha, hb = io.read_diagnostics(os.path.join(w, "alone")), io.read_diagnostics(os.path.join(w, d))
    for k in ("t", "E", "Z", "P", "max_u", "dt", "dissipation", "injection"):
        assert ha[k].shape == hb[k].shape and rel(ha[k], hb[k]) <= 1e-12, (label, k)
    sa, sb = io.read_spectra(os.path.join(w, "alone")), io.read_spectra(os.path.join(w, d))
    assert np.array_equal(sa["t"], sb["t"]) and sa["E"].shape == sb["E"].shape, label
    for k in ("E", "Z", "Pi", "Pi_Z"):
        assert rel(sa[k], sb[k]) <= 1e-12, (label, k, rel(sa[k], sb[k]))
    na, nb = io.list_snapshots(os.path.join(w, "alone")), io.list_snapshots(os.path.join(w, d))
    assert [os.path.basename(p) for p in na] == [os.path.basename(p) for p in nb], (label, na, nb)
    for p, q in zip(na, nb):
        x, y = io.read_snapshot(p), io.read_snapshot(q)
        for k in ("vorticity", "streamfunction"):
            assert x[k].shape == y[k].shape == (4, 32, 32) and rel(x[k], y[k]) <= 1e-12, (label, p, k)
    print("%-32s within %.1e of the one-process run%s; diagnostics.csv %s" % (
        label, e, " (bit for bit)" if bits else "", "identical" if same_text else "within 1e-12"))
for n in (1, 2, 3, 4):
    agree("r%d" % n, "%d rank%s" % (n, "" if n == 1 else "s"))
for n in (4, 1):
    agree("r2to%d" % n, "2 ranks, restarted on %d" % n)
PY

# (c) more ranks than members: exit 2, one line (rank 0's), nothing created
mpi 5 "$bin" run "$work/ensemble.yaml" "${common[@]}" --output "$work/five" >"$work/five.log" 2>&1
rc=$?
[ "$rc" = 2 ] || { cat "$work/five.log"; fail "4 members on 5 ranks: exit $rc, expected 2"; }
[ "$(grep -c 'ensemble.members: 4 members cannot be split over 5 MPI ranks' "$work/five.log")" = 1 ] \
  || { cat "$work/five.log"; fail "4 members on 5 ranks: message"; }
[ ! -e "$work/five" ] || fail "a refused run created its directory"
echo "4 members on 5 ranks: refused (exit 2, one line, nothing created)"

# (d) ensemble.on_blowup: drop over ranks: the member that drives dt below dt_min (the most
# energetic) is dropped on the rank that holds it, every rank alike; the run equals the
# one-process run's, the dropped member NaN in both.
cat >"$work/drop.yaml" <<'EOF'
grid: {nx: 32}
physics: {nu: 1.0e-3}
initial: {type: random, k0: 4, energy: 0.5}
time: {t_end: 1, dt_max: 0.05, dt_min: 0.02}
output: {snapshot_every: 0, spectra_every: 0.5, checkpoint_every: 0.5, diagnostics_every: 0.25}
ensemble:
  members: 3
  on_blowup: drop
  vary:
    initial.energy: [0.5, 1.5, 0.25]
EOF
"$bin" run "$work/drop.yaml" "${common[@]}" --output "$work/drop1" >"$work/drop1.log" 2>&1 \
  || { cat "$work/drop1.log"; fail "drop, one process"; }
mpi 3 "$bin" run "$work/drop.yaml" "${common[@]}" --output "$work/drop3" >"$work/drop3.log" 2>&1 \
  || { cat "$work/drop3.log"; fail "drop, 3 ranks"; }
for d in drop1 drop3; do
  [ "$(grep -c 'ensemble member 1 (of 3) dropped at step 1' "$work/$d.log")" = 1 ] \
    || { cat "$work/$d.log"; fail "$d: the drop's line"; }
done
PYTHONPATH="$src/postprocess" "$py" - "$work" "$backend" <<'PY' || exit 1
import glob, os, sys
import numpy as np
import cascade_io as io
w = sys.argv[1]
last = lambda d: sorted(glob.glob(os.path.join(w, d, "checkpoints", "ckpt_*.h5")))[-1]
# On the CPU bit for bit; on a GPU the one process steps its three members as complex pairs and
# each rank its one member with a single run's plan: the same to round-off (1e-12).
exact = sys.argv[2] == "cpu"
a, b = io.read_checkpoint(last("drop1"))["omega_hat"], io.read_checkpoint(last("drop3"))["omega_hat"]
assert np.isnan(a[1]).all() and np.isnan(b[1]).all(), "the dropped member is not NaN"
others = lambda x: x[[0, 2]]
err = np.abs(others(a) - others(b)).max() / np.abs(others(a)).max()
assert np.isfinite(others(a)).all() and (np.array_equal(others(a), others(b)) if exact else err <= 1e-12), \
    "the others differ over ranks (%g)" % err
rows = lambda d: [l.split(",")[:12] for l in open(os.path.join(w, d, "diagnostics.csv")).read().splitlines()]
if exact:
    assert rows("drop1") == rows("drop3"), "diagnostics.csv differs over ranks"
else:
    for x, y in zip(rows("drop1"), rows("drop3")):
        for p, q in zip(x, y):
            try:
                p, q = float(p), float(q)
            except ValueError:
                assert p == q, (p, q)
                continue
            assert p == q or abs(p - q) <= 1e-12 * max(abs(p), 1e-300) or (np.isnan(p) and np.isnan(q)), (x[:3], p, q)
assert all(r[4] == r[8] == "nan" for r in rows("drop1")[1:] if r[2] == "1" and r[0] != "0"), "member 1's rows are not NaN"
print("on_blowup: drop on 3 ranks: member 1 dropped at step 1, the others as in one process (%s)" %
      ("bit for bit" if err == 0 else "within %.1e" % err))
PY
echo PASS
