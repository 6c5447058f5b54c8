#!/usr/bin/env bash
# Write errors: a full disk (a file-size limit, ulimit -f) or a failing write (the
# CASCADE_FAIL_WRITE hook) during a snapshot or checkpoint stops the run with a clear message
# and exit code 1; the previous checkpoint stays intact and loadable, and resuming from it works.
#   write_faults.sh CASCADE SOURCE_DIR
set -u
bin=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
common=(--backend cpu --set grid.nx=128 --set grid.ny=128 --set time.t_end=1 --set output.print_every=100000
        --set output.checkpoint_every=0.25 --set output.snapshot_every=0.25 --set output.spectra_every=0)
# 1. A 64 KiB file-size limit: the first snapshot (128 KiB) cannot be written.
(ulimit -f 64; "$bin" run "$src/input/decaying.yaml" "${common[@]}" --output "$work/small" >"$work/small.txt" 2>&1)
rc=$?
[ $rc = 1 ] || { echo "FAIL: file-size limit: exit code $rc"; cat "$work/small.txt"; exit 1; }
grep -q "run failed: cannot write HDF5 file" "$work/small.txt" || { echo "FAIL: message"; cat "$work/small.txt"; exit 1; }
# 2. The 12th file written fails: a checkpoint, after earlier ones succeeded.
CASCADE_FAIL_WRITE=12 "$bin" run "$src/input/decaying.yaml" "${common[@]}" --output "$work/fault" >"$work/fault.txt" 2>&1
rc=$?
[ $rc = 1 ] || { echo "FAIL: injected write error: exit code $rc"; cat "$work/fault.txt"; exit 1; }
grep -q "simulated write error" "$work/fault.txt" || { echo "FAIL: message"; cat "$work/fault.txt"; exit 1; }
ls "$work"/fault/checkpoints/*.tmp-* >/dev/null 2>&1 && { echo "FAIL: a temporary remains after the failed write"; exit 1; }
good=$(ls "$work"/fault/checkpoints/ckpt_*.h5 | tail -1)
[ -n "$good" ] || { echo "FAIL: no earlier checkpoint"; exit 1; }
"$bin" run --restart "$good" --backend cpu >"$work/resume.txt" 2>&1 || { echo "FAIL: resume"; cat "$work/resume.txt"; exit 1; }
echo "write faults ok: $(grep -o 'run failed: .*' "$work/fault.txt" | head -1)"
