#!/usr/bin/env bash
# Slab-decomposed runs over MPI give the single-process results: a 256^2 turbulent run
# (decaying, random initial field) on 1, 2 and 4 ranks ends in the same state to 1e-12
# (relative to its largest mode), with the same diagnostics, spectra and snapshots; one rank
# under mpirun is the plain run bit for bit; a 2-rank checkpoint restarts on 4 ranks to the
# same end; the decks whose fields are made in physical space (vortices, Kolmogorov forcing,
# Taylor-Green) and the white-noise ring forcing agree on 3 ranks; a bad deck under mpirun
# exits 2; SIGTERM to the launcher stops every rank at the same step with a checkpoint.
# With BACKEND cuda (one rank per GPU) the rank counts stop at the number of GPUs: 1 and 2
# ranks, and the 2-rank checkpoint restarts on 1 GPU; the 2-rank run is repeated with the
# all-to-all in 1 and 3 chunks (run.exchange_chunks), and too many chunks are refused.
#   mpi_runs.sh CASCADE PYTHON SOURCE_DIR BACKEND MPIEXEC [MPIEXEC_FLAGS...]
source "$(dirname "$0")/mpi_test_setup.sh" "$@"

ranks=(1 2 4) restart_on=4 odd=3
if [ "$backend" = cuda ]; then
  gpus=$("$bin" info | grep -c "^    device [0-9]*:")
  [ "$gpus" -ge 2 ] || { echo "SKIPPED: runs over GPUs need 2 CUDA devices, found $gpus"; exit 0; }
  ranks=(1 2) restart_on=1 odd=2
  [ "$gpus" -ge 4 ] && ranks=(1 2 4)
fi

common=(--backend "$backend" --set run.threads=1 --set output.print_every=100000 --set output.diagnostics_every=0.1
        --set output.snapshot_every=0.5 --set output.spectra_every=0.5 --set output.checkpoint_every=0.5 -q)
deck="$src/input/decaying.yaml"
"$bin" run "$deck" "${common[@]}" --set time.t_end=1 --output "$work/serial" >"$work/serial.log" 2>&1 \
  || { cat "$work/serial.log"; fail "serial run"; }
for n in "${ranks[@]}"; do
  mpi "$n" "$bin" run "$deck" "${common[@]}" --set time.t_end=1 --output "$work/r$n" >"$work/r$n.log" 2>&1 \
    || { cat "$work/r$n.log"; fail "run on $n ranks"; }
done
grep -q " 2 ranks" "$work/r2/log.txt" || { cat "$work/r2/log.txt"; fail "the 2-rank run did not use slabs"; }
# GPU slabs: the all-to-all in 1 and 3 chunks (run.exchange_chunks; the runs above take auto),
# and more chunks than the smallest slab's 64 kx columns refused (exit 2, one line).
chunk_runs=()
if [ "$backend" = cuda ]; then
  for k in 1 3; do
    mpi 2 "$bin" run "$deck" "${common[@]}" --set time.t_end=1 --set run.exchange_chunks=$k --output "$work/k$k" \
      >"$work/k$k.log" 2>&1 || { cat "$work/k$k.log"; fail "run on 2 ranks, $k chunks"; }
    grep -q "exchange in $k chunk" "$work/k$k/log.txt" || { cat "$work/k$k/log.txt"; fail "not $k chunks"; }
    chunk_runs+=("k$k")
  done
  mpi 2 "$bin" run "$deck" --backend cuda --set run.exchange_chunks=65 -q --output "$work/k65" >"$work/k65.log" 2>&1
  rc=$?
  [ "$rc" = 2 ] || { cat "$work/k65.log"; fail "65 chunks on 2 GPUs: exit $rc, expected 2"; }
  [ "$(grep -c 'run.exchange_chunks: 65 chunks' "$work/k65.log")" = 1 ] || { cat "$work/k65.log"; fail "65 chunks: message"; }
fi
# Restart the 2-rank run's checkpoint at t = 1/2 on another number of ranks, in a copy of its
# directory.
cp -r "$work/r2" "$work/r2to"
ckpt=$(ls "$work"/r2to/checkpoints/ckpt_*.h5 | head -1)
mpi "$restart_on" "$bin" run --restart "$ckpt" --set time.t_end=1 -q >"$work/r2to.log" 2>&1 \
  || { cat "$work/r2to.log"; fail "restart on $restart_on ranks"; }

# Other initial fields and forcings, 3 ranks (uneven slabs), against the serial runs.
short=(--backend "$backend" --set run.threads=1 --set output.print_every=100000 --set output.snapshot_every=0.1
       --set output.checkpoint_every=0 --set output.spectra_every=0 -q --set time.t_end=0.2)
for d in vortex_merger kolmogorov taylor_green ring_inverse; do
  extra=(--set grid.nx=96 --set grid.ny=64)
  [ "$d" = ring_inverse ] && extra+=(--set forcing.k_f=10)
  "$bin" run "$src/input/$d.yaml" "${short[@]}" "${extra[@]}" --output "$work/s_$d" >"$work/s_$d.log" 2>&1 \
    || { cat "$work/s_$d.log"; fail "$d serial"; }
  mpi "$odd" "$bin" run "$src/input/$d.yaml" "${short[@]}" "${extra[@]}" --output "$work/m_$d" >"$work/m_$d.log" 2>&1 \
    || { cat "$work/m_$d.log"; fail "$d on $odd ranks"; }
  grep -q " $odd ranks" "$work/m_$d/log.txt" || fail "$d: not on $odd ranks"
done

CHUNK_RUNS="${chunk_runs[*]}" PYTHONPATH="$src/postprocess" "$py" - "$work" "$restart_on" "$odd" "${ranks[@]}" <<'PY' || exit 1
import glob, os, sys
import numpy as np
import h5py
import cascade_io as io
w, restart_on, odd = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
ranks = [int(n) for n in sys.argv[4:]]
def last_ckpt(d):
    return io.read_checkpoint(sorted(glob.glob(os.path.join(d, "checkpoints", "ckpt_*.h5")))[-1])
def rel(a, b):
    return float(np.abs(a - b).max() / max(np.abs(a).max(), 1e-300))
def agree(ref, d, tol, label):
    a, b = last_ckpt(ref), last_ckpt(d)
    assert a["step"] == b["step"] and a["time"] == b["time"], (label, a["step"], b["step"], a["time"], b["time"])
    e = rel(a["omega_hat"], b["omega_hat"])
    assert e <= tol, "%s: final states differ by %g (relative)" % (label, e)
    ha, hb = io.read_diagnostics(ref), io.read_diagnostics(d)
    for k in ("t", "E", "Z", "P", "max_u", "dt", "dissipation", "injection"):
        if k in ha:
            assert len(ha[k]) == len(hb[k]), (label, k)
            assert rel(ha[k], hb[k]) <= max(tol, 1e-11), (label, k, rel(ha[k], hb[k]))
    na, nb = io.list_snapshots(ref), io.list_snapshots(d)
    assert [os.path.basename(p) for p in na] == [os.path.basename(p) for p in nb], (label, na, nb)
    for p, q in zip(na, nb):
        sa, sb = io.read_snapshot(p), io.read_snapshot(q)
        for k in sa:
            if k not in ("attrs", "units"):
                assert rel(sa[k], sb[k]) <= max(tol, 1e-11), (label, p, k, rel(sa[k], sb[k]))
    if os.path.exists(os.path.join(ref, "spectra.h5")):
        pa, pb = io.read_spectra(ref), io.read_spectra(d)
        assert np.array_equal(pa["t"], pb["t"]), label
        assert rel(pa["E"], pb["E"]) <= max(tol, 1e-11), (label, rel(pa["E"], pb["E"]))
    print("%-28s final state within %.1e of the single-process run" % (label, e))
s = os.path.join(w, "serial")
a, b = last_ckpt(s), last_ckpt(os.path.join(w, "r1"))
assert np.array_equal(a["omega_hat"].view(np.uint64), b["omega_hat"].view(np.uint64)), "1 rank is not bit for bit"
print("1 rank under mpirun          bit for bit")
for n in ranks[1:]:
    agree(s, os.path.join(w, "r%d" % n), 1e-12, "decaying 256^2, %d ranks" % n)
agree(s, os.path.join(w, "r2to"), 1e-12, "restart 2 -> %d ranks" % restart_on)
for k in os.environ.get("CHUNK_RUNS", "").split():
    agree(s, os.path.join(w, k), 1e-12, "decaying 256^2, 2 ranks, %s chunks" % k[1:])
for d in ("vortex_merger", "kolmogorov", "taylor_green", "ring_inverse"):
    agree(os.path.join(w, "s_" + d), os.path.join(w, "m_" + d), 1e-12, "%s, %d ranks" % (d, odd))
PY

# A bad deck: exit code 2 and the one-line message (from rank 0 only).
mpi 2 "$bin" run "$deck" --set grid.nx=65 --output "$work/bad" >"$work/bad.log" 2>&1
rc=$?
[ "$rc" = 2 ] || { cat "$work/bad.log"; fail "bad deck on 2 ranks: exit $rc, expected 2"; }
[ "$(grep -c 'expected an even integer' "$work/bad.log")" = 1 ] || { cat "$work/bad.log"; fail "bad deck message"; }
[ ! -e "$work/bad" ] || fail "a rejected run wrote its directory"

# SIGTERM to the launcher: every rank stops at the same step, rank 0 writes the checkpoint.
# OpenMPI's mpirun passes SIGTERM on to the ranks and kills them odls_base_sigkill_timeout
# seconds later (0 unless set: no time to write a checkpoint; it waits that long even when the
# ranks are done).
export OMPI_MCA_odls_base_sigkill_timeout=${OMPI_MCA_odls_base_sigkill_timeout:-5}
"$mpiexec" "${flags[@]}" -n 2 "$bin" run "$deck" --backend "$backend" --set run.threads=1 --set time.t_end=1000 --set output.checkpoint_every=0 \
  -q --output "$work/term" >"$work/term.log" 2>&1 &
pid=$!  # the launcher itself (a function run in the background would be a subshell)
for _ in $(seq 1 100); do
  [ -s "$work/term/diagnostics.csv" ] && break
  sleep 0.1
done
sleep 1
kill -TERM "$pid"
wait "$pid"
rc=$?
grep -q "stopped by signal 15" "$work/term.log" || { cat "$work/term.log"; fail "SIGTERM: exit $rc, no stop message"; }
ls "$work"/term/checkpoints/ckpt_*.h5 >/dev/null 2>&1 || { cat "$work/term.log"; fail "SIGTERM: no checkpoint"; }
"$bin" check "$(ls "$work"/term/checkpoints/ckpt_*.h5 | tail -1)" >/dev/null || fail "SIGTERM checkpoint does not verify"
echo "bad deck: exit 2; SIGTERM: stopped with checkpoint (exit $rc)"
echo PASS
