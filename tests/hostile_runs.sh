#!/usr/bin/env bash
# Hostile use of run directories, restarts and input files (the classes that need set-up beyond
# one deck; tests/bad_inputs.txt holds the rest). Every refusal gives one line on stderr and
# exit code 2 and leaves every file as it was (a checksum of the whole work tree before and
# after):
#   - two runs started together on one new directory: one is refused, the other's output is a
#     lone run's;
#   - a checkpoint restarted into a directory that holds another run; continued into a new one;
#   - restarts refused for a malformed diagnostics row, a truncated spectra.h5, a corrupt old
#     snapshot behind a cut-short snapshots.xmf (nothing written before the refusal);
#   - checkpoints edited and re-sealed with nonsense metadata (time NaN, 1e17, -1e300, step -5,
#     snapshot index -7);
#   - an initial-condition file of NaN, a file declaring 2^40 points, an output path too long;
#   - cascade poisson whose result is not finite (exit 1, nothing written);
#   - SIGTERM during start-up; OMP_NUM_THREADS far beyond the cores; a step plan the CPU cannot run;
#   - landing on output times: no sliver steps, rows at the multiples the deck names.
#   hostile_runs.sh CASCADE PYTHON SOURCE_DIR
set -u
bin=$1 py=$2 src=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
export PYTHONPATH="$src/postprocess"
status=0
small=(--backend cpu --set grid.nx=32 --set grid.ny=32 --set output.print_every=100000)
tree_sum() { (cd "$work" && find . -path ./scratch -prune -o -print0 | sort -z |
              xargs -0 ls -ld --time-style=full-iso | md5sum; find . -path ./scratch -prune -o -type f -print0 |
              sort -z | xargs -0 md5sum | md5sum); }
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; status=1; }

# refused NAME REGEX ARGS...: exit 2, one line matching REGEX, the tree unchanged.
refused() {
  local name=$1 regex=$2
  shift 2
  mkdir -p scratch
  local before after rc
  before=$(tree_sum)
  "$bin" "$@" >scratch/out.txt 2>scratch/err.txt
  rc=$?
  after=$(tree_sum)
  local why=()
  [ $rc = 2 ] || why+=("exit code $rc")
  [ "$(wc -l <scratch/err.txt)" = 1 ] || why+=("$(wc -l <scratch/err.txt) lines on stderr")
  grep -Eq -- "$regex" scratch/err.txt || why+=("message does not match /$regex/")
  [ "$before" = "$after" ] || why+=("the disk changed")
  if [ ${#why[@]} = 0 ]; then ok "$name: $(cat scratch/err.txt)"; else bad "$name: ${why[*]}: $(cat scratch/err.txt)"; fi
}

# ---------------------------------------------------------------- two runs on one directory
# Long enough (a few seconds) that the two overlap; whichever is second is refused (locked, or
# the other's files already there).
race=(run "$src/input/decaying.yaml" --backend cpu --set grid.nx=64 --set grid.ny=64 --set time.t_end=2
      --set output.print_every=100000 --set output.snapshot_every=0.5)
"$bin" "${race[@]}" --output lone >lone.log 2>&1 || { bad "race: the lone run failed"; cat lone.log; }
"$bin" "${race[@]}" --output both >a.log 2>a.err &
pa=$!
"$bin" "${race[@]}" --output both >b.log 2>b.err &
pb=$!
wait $pa; ra=$?
wait $pb; rb=$?
if [ "$ra$rb" = 02 ] || [ "$ra$rb" = 20 ]; then
  loser=$([ $ra = 2 ] && echo a || echo b)
  if [ "$(wc -l <$loser.err)" = 1 ] && grep -Eq "in use by another cascade run|already holds a run's output" $loser.err; then
    ok "race: one run refused: $(cat $loser.err)"
  else
    bad "race: the refusal is not one line naming the other run: $(cat $loser.err)"
  fi
  "$py" - lone both <<'PY' && ok "race: the winner's output is a lone run's" || bad "race: outputs differ"
import sys, glob, os
import numpy as np, cascade_io as io
a, b = sys.argv[1:3]
strip = lambda d: [",".join(l.split(",")[:11] + l.split(",")[12:17]) for l in open(d + "/diagnostics.csv")]
assert strip(a) == strip(b), "diagnostics differ"
ca, cb = [sorted(glob.glob(d + "/checkpoints/ckpt_*.h5"))[-1] for d in (a, b)]
assert os.path.basename(ca) == os.path.basename(cb)
assert np.array_equal(io.read_checkpoint(ca)["omega_hat"], io.read_checkpoint(cb)["omega_hat"])
sa, sb = [sorted(os.listdir(d + "/snapshots")) for d in (a, b)]
assert sa == sb, (sa, sb)
PY
else
  bad "race: exit codes $ra and $rb (expected one 0 and one 2): $(cat a.err b.err)"
fi

# ---------------------------------------------------------------- restarts and run identity
"$bin" run "$src/input/taylor_green.yaml" "${small[@]}" --set time.t_end=0.4 --set output.checkpoint_every=0.1 \
  --output A >/dev/null 2>&1 || bad "run A"
ckA=$(ls A/checkpoints/ckpt_*.h5 | tail -1)
mkdir -p elsewhere && cp "$ckA" elsewhere/ck.h5
# Its own directory still holds its run: a copied checkpoint continues it there.
"$bin" run --restart elsewhere/ck.h5 --set time.t_end=0.5 >/dev/null 2>&1 && ok "restart: a copied checkpoint continues its own run" \
  || bad "restart: a copied checkpoint of the same run was refused"
# The directory now holds another run (replaced with --overwrite): the copy must not merge into it.
"$bin" run "$src/input/taylor_green.yaml" "${small[@]}" --set time.t_end=0.4 --output A --overwrite >/dev/null 2>&1 \
  || bad "run A again"
refused restart_into_another_run "belongs to run [0-9a-f]{32} but 'A' holds run [0-9a-f]{32}.*--output" \
  run --restart elsewhere/ck.h5 --set time.t_end=0.6
"$bin" run --restart elsewhere/ck.h5 --set time.t_end=0.6 --output forked >/dev/null 2>&1 \
  && [ -f forked/run_id ] && ! cmp -s forked/run_id A/run_id && ok "restart: continued into a new directory, a new run id" \
  || bad "restart into a new directory"
# A checkpoint of A restarted into directory B (another run) with --output: refused.
"$bin" run "$src/input/taylor_green.yaml" "${small[@]}" --set time.t_end=0.2 --output B >/dev/null 2>&1 || bad "run B"
refused restart_output_other_run "belongs to run .* but 'B' holds run" run --restart "$ckA" --output B --set time.t_end=1

# Refusals found only while reading what a restart keeps: nothing written before them.
"$bin" run "$src/input/taylor_green.yaml" "${small[@]}" --set time.t_end=0.4 --set output.checkpoint_every=0.2 \
  --set output.snapshot_every=0.1 --set output.spectra_every=0.1 --set output.diagnostics_every=0.1 --output R >/dev/null 2>&1 || bad "run R"
ckR=$(ls R/checkpoints/ckpt_*.h5 | head -1)
cp -a R R_csv && sed -i '3s/.*/1,2,3/' R_csv/diagnostics.csv
refused restart_malformed_row "diagnostics.csv: malformed row" run --restart "R_csv/checkpoints/$(basename "$ckR")"
cp -a R R_spec && truncate -s 1000 R_spec/spectra.h5
refused restart_truncated_spectra "spectra.h5: .*(truncated|corrupt)" run --restart "R_spec/checkpoints/$(basename "$ckR")"
cp -a R R_snap && truncate -s 300 R_snap/snapshots.xmf && truncate -s 900 R_snap/snapshots/snap_000000.h5
refused restart_corrupt_old_snapshot "snap_000000.h5: .*(truncated|corrupt)" run --restart "R_snap/checkpoints/$(basename "$ckR")"

# Checkpoints whose metadata was edited and whose checksum and seal were then renewed.
mkdir -p crafted
"$py" - "$ckR" crafted <<'PY'
import shutil, sys
import h5py, numpy as np, cascade_io as io
good, out = sys.argv[1:3]
cases = {"time_nan": {"time": np.nan}, "time_huge": {"time": 1e17}, "time_negative": {"time": -1e300},
         "step_negative": {"step": np.int64(-5)}, "snapshot_negative": {"snapshot_index": np.int64(-7)},
         "nx_absurd": {"nx": np.int64(1 << 40)}}
for name, attrs in cases.items():
    path = "%s/%s.h5" % (out, name)
    shutil.copy(good, path)
    with h5py.File(path, "a") as f:
        for k, v in attrs.items():
            f.attrs[k] = v
        f.attrs["checksum"] = np.bytes_(io.checkpoint_checksum(f["state/omega_hat"][...], f.attrs["time"],
                                                               f.attrs["dt"], f.attrs["step"]))
PY
"$bin" seal crafted/*.h5 >/dev/null || bad "cascade seal of the crafted checkpoints"
refused crafted_time_nan "attribute time: expected a finite time >= 0, found nan" run --restart crafted/time_nan.h5 --output C1
refused crafted_time_huge "time.t_end: expected a time after the checkpoint's t = 1e\+17" run --restart crafted/time_huge.h5 --output C2
refused crafted_time_negative "attribute time: expected a finite time >= 0, found -1e\+300" run --restart crafted/time_negative.h5 --output C3
refused crafted_step_negative "attribute step: expected a step number >= 0, found -5" run --restart crafted/step_negative.h5 --output C4
refused crafted_snapshot_negative "attribute snapshot_index: expected a snapshot count" run --restart crafted/snapshot_negative.h5 --output C5
refused crafted_nx_absurd "attribute nx, ny: expected even sizes" run --restart crafted/nx_absurd.h5 --output C6
refused check_crafted "attribute time: expected a finite time" check crafted/time_nan.h5
# cascade seal checks every argument before it touches any.
refused seal_all_or_nothing "missing.h5: cannot open" seal "$ckR" missing.h5

# ---------------------------------------------------------------- input files and paths
mkdir -p files
"$py" - files <<'PY'
import sys
import h5py, numpy as np
d = sys.argv[1]
with h5py.File(d + "/nan.h5", "w") as f:
    f["vorticity"] = np.full((32, 32), np.nan)
with h5py.File(d + "/huge.h5", "w") as f:   # 2^40 points declared, none stored: a 2 kB file
    f.create_dataset("vorticity", shape=(1 << 20, 1 << 20), dtype="f8", chunks=(64, 64))
PY
printf 'grid: {nx: 32}\ninitial: {type: file, path: files/nan.h5}\n' >files/nan.yaml
printf 'grid: {nx: 32}\ninitial: {type: file, path: files/huge.h5}\n' >files/huge.yaml
refused initial_nan_check "files/nan.h5: initial.path: the vorticity is not finite" check files/nan.yaml
refused initial_nan_run "files/nan.h5: initial.path: the vorticity is not finite" run files/nan.yaml --backend cpu --output N
refused initial_huge "files/huge.h5: dataset /vorticity declares 1099511627776 values" run files/huge.yaml --backend cpu --output H
long=$(printf 'x%.0s' $(seq 300))
refused output_name_too_long "output.directory: a name in the path is 300 bytes long" run files/nan.yaml --output "$long"
refused check_output_too_long "output.directory: a name in the path is 300 bytes long" check files/nan.yaml --set "output.directory=$long"

# ---------------------------------------------------------------- cascade poisson: NaN is a failure
mkdir -p scratch
( cd scratch && "$bin" poisson "$src/input/poisson_gaussian.yaml" --backend cpu --set poisson.sigma=1e-300 --output P \
    >out.txt 2>err.txt; echo $? >rc.txt )
if [ "$(cat scratch/rc.txt)" = 1 ] && [ "$(wc -l <scratch/err.txt)" = 1 ] && grep -q "not finite" scratch/err.txt && \
   [ ! -e scratch/P/poisson.h5 ] && ! grep -q "L-infinity error: 0" scratch/out.txt; then
  ok "poisson_nan: $(cat scratch/err.txt)"
else
  bad "poisson_nan: rc $(cat scratch/rc.txt), $(cat scratch/err.txt)"
fi

# ---------------------------------------------------------------- signals during start-up
# FFTW measuring its plans for a 1024^2 grid takes seconds (no wisdom): SIGTERM lands there.
rm -rf sig
CASCADE_FFTW_WISDOM=none "$bin" run "$src/input/decaying.yaml" --backend cpu --set grid.nx=1024 --set grid.ny=1024 \
  --set run.fft_planning=measure --output sig >sig.log 2>&1 &
pid=$!
sleep 0.5
kill -TERM $pid
wait $pid
rc=$?
if [ $rc = 143 ] && [ ! -e sig ] && grep -q "stopped by signal 15 before the run began: nothing was computed" sig.log; then
  ok "sigterm_startup: exit 143, nothing written: $(tail -1 sig.log)"
elif [ $rc = 3 ] && ls sig/checkpoints/ckpt_*.h5 >/dev/null 2>&1; then
  ok "sigterm_startup: the signal came after start-up: a checkpoint and exit 3"
else
  bad "sigterm_startup: exit code $rc: $(cat sig.log)"
fi

# ---------------------------------------------------------------- resources and environment
OMP_NUM_THREADS=100000 "$bin" run "$src/input/taylor_green.yaml" --backend cpu --set grid.nx=256 --set grid.ny=256 \
  --set time.t_end=0.05 --set run.threads=0 --output T >T.log 2>&1
rc=$?
[ $rc = 0 ] && grep -q "OMP_NUM_THREADS" T/log.txt && ok "omp_threads_capped: $(grep -m1 OMP_NUM_THREADS T/log.txt)" \
  || bad "omp_threads_capped: exit $rc: $(tail -2 T.log)"
refused pruned_on_cpu "run.step_transforms: pruned needs the cuda backend on one GPU" \
  run "$src/input/taylor_green.yaml" --backend cpu --set run.step_transforms=pruned --output E
refused callbacks_on_cpu "run.fft_callbacks: all needs the cuda backend on one GPU" \
  run "$src/input/taylor_green.yaml" --backend cpu --set run.fft_callbacks=all --output E

# ---------------------------------------------------------------- landing on output times
"$bin" run "$src/input/taylor_green.yaml" "${small[@]}" --set time.t_end=0.5 --set time.dt_max=0.05 \
  --set output.diagnostics_every=0.1 --output L >/dev/null 2>&1 || bad "landing run"
"$bin" run "$src/input/decaying.yaml" --backend cpu --set grid.nx=64 --set grid.ny=64 --set time.t_end=3 \
  --set output.print_every=100000 --set output.diagnostics_every=0.25 --output D >/dev/null 2>&1 || bad "decaying run"
"$py" - L/diagnostics.csv D/diagnostics.csv <<'PY' && ok "landing: rows at the exact multiples, no sliver steps" || bad "landing"
import csv, sys
for path, every in zip(sys.argv[1:], (0.1, 0.25)):
    rows = list(csv.DictReader(open(path)))
    ts = [float(r["t"]) for r in rows]
    want = [float("%.15g" % (k * every)) for k in range(len(ts))]
    assert ts == want, (path, ts[:8], want[:8])
    dts = [float(r["dt"]) for r in rows[1:]]
    big = max(dts)
    # Each row's dt is the step that landed on it: never a sliver of the steps around it (the
    # decaying run's CFL step shrinks as it goes: compared with the median).
    assert min(dts) > 0.3 * sorted(dts)[len(dts) // 2], (path, min(dts), sorted(dts)[len(dts) // 2])
    print(path, "rows", len(rows), "landing steps", min(dts), "to", big)
PY
exit $status
