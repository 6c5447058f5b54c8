#!/usr/bin/env bash
# Corrupt restart inputs: each gives one line on stderr, exit code 2, and changes nothing on
# disk: a missing file, a truncated checkpoint, a flipped byte (the seal), an edit not
# re-sealed, a file with no seal; and, past the seal (edited, then re-sealed with
# `cascade seal`), a missing dataset, the wrong precision, a state of another grid without
# the resize keys, a state whose checksum does not match.
#   corrupt_checkpoints.sh CASCADE PYTHON SOURCE_DIR
set -u
bin=$1 py=$2 src=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bin" run "$src/input/taylor_green.yaml" --backend cpu --output "$work/run" --set time.t_end=1 \
  --set grid.nx=32 --set grid.ny=32 >/dev/null 2>&1 || { echo "FAIL: could not make a checkpoint"; exit 1; }
good=$(ls "$work"/run/checkpoints/ckpt_*.h5 | tail -1)
mkdir -p "$work/bad"
PYTHONPATH="$src/postprocess" "$py" - "$good" "$work/bad" <<'PY'
import shutil, sys
import h5py, numpy as np
good, bad = sys.argv[1], sys.argv[2]
data = open(good, "rb").read()
open(bad + "/truncated.h5", "wb").write(data[: len(data) // 2])
with h5py.File(good, "r") as f:
    offset = f["state/omega_hat"].id.get_offset()
flipped = bytearray(data)
flipped[offset + 100] ^= 0x10
open(bad + "/flipped.h5", "wb").write(bytes(flipped))
# The same flip, re-sealed: the seal passes and the state checksum catches it.
open(bad + "/flipped_resealed.h5", "wb").write(bytes(flipped))
# An edit not re-sealed.
shutil.copy(good, bad + "/edited.h5")
with h5py.File(bad + "/edited.h5", "a") as f:
    f.attrs["time"] = 0.5
# An HDF5 file with the right content but no seal block.
with h5py.File(good, "r") as src, h5py.File(bad + "/unsealed.h5", "w") as dst:
    for k, v in src.attrs.items():
        dst.attrs[k] = v
    for name in ("state", "stepper", "rng", "budget"):
        src.copy(name, dst)
shutil.copy(good, bad + "/missing.h5")
with h5py.File(bad + "/missing.h5", "a") as f:
    del f["state/omega_hat"]
shutil.copy(good, bad + "/precision.h5")
with h5py.File(bad + "/precision.h5", "a") as f:
    v = f["state/omega_hat"][...].astype(np.float32)
    del f["state/omega_hat"]
    f["state/omega_hat"] = v
# A consistent checkpoint (valid checksum) of a 64 x 64 state whose deck still says 32 x 32.
import cascade_io
shutil.copy(good, bad + "/grid.h5")
with h5py.File(bad + "/grid.h5", "a") as f:
    del f["state/omega_hat"]
    state = np.zeros((64, 33, 2))
    state[1, 0, 1] = 64.0 ** 2
    f["state/omega_hat"] = state
    f.attrs["nx"] = np.int64(64)
    f.attrs["ny"] = np.int64(64)
    f.attrs["checksum"] = np.bytes_(cascade_io.checkpoint_checksum(
        state, f.attrs["time"], f.attrs["dt"], f.attrs["step"]))
# The checksum in Python agrees with cascade's.
with h5py.File(good, "r") as f:
    stored = f.attrs["checksum"].decode()
    mine = cascade_io.checkpoint_checksum(f["state/omega_hat"][...], f.attrs["time"], f.attrs["dt"], f.attrs["step"])
    assert stored == mine, (stored, mine)
PY
"$bin" seal "$work/bad/flipped_resealed.h5" "$work/bad/missing.h5" "$work/bad/precision.h5" "$work/bad/grid.h5" \
  >/dev/null || { echo "FAIL: cascade seal"; exit 1; }
status=0
# The good checkpoint verifies.
if ! out=$("$bin" check "$good" 2>&1) || ! echo "$out" | grep -q "a good checkpoint"; then
  echo "FAIL check_good: $out"; status=1
else
  echo "ok   check_good: $out"
fi
check() {  # name pattern file
  local name=$1 pattern=$2 file=$3
  before=$(ls -lR --time-style=full-iso "$work/run" | md5sum)
  "$bin" run --restart "$file" --backend cpu >"$work/out.txt" 2>"$work/err.txt"
  rc=$?
  after=$(ls -lR --time-style=full-iso "$work/run" | md5sum)
  if [ $rc != 2 ] || [ "$(wc -l <"$work/err.txt")" != 1 ] || ! grep -Eq "$pattern" "$work/err.txt" || [ "$before" != "$after" ]; then
    echo "FAIL $name: rc $rc, stderr: $(cat "$work/err.txt"), changed: $([ "$before" != "$after" ] && echo yes || echo no)"
    status=1
  else
    echo "ok   $name: $(cat "$work/err.txt")"
  fi
}
check missing_file "cannot open: No such file" "$work/bad/nope.h5"
check truncated "truncated or corrupt: [0-9]+ bytes follow the seal block, the seal says" "$work/bad/truncated.h5"
check flipped_byte "corrupt: the file does not match its seal" "$work/bad/flipped.h5"
check edited "(does not match its seal|the seal says [0-9]+) \(if it was edited on purpose, 'cascade seal" "$work/bad/edited.h5"
check unsealed "not a cascade checkpoint \(no cascade seal" "$work/bad/unsealed.h5"
check flipped_resealed "checksum mismatch" "$work/bad/flipped_resealed.h5"
check missing_dataset "missing dataset /state/omega_hat" "$work/bad/missing.h5"
check wrong_precision "holds 4-byte values but the checkpoint says precision double" "$work/bad/precision.h5"
check other_grid "the state is 64 x 64 but the deck asks for 32 x 32; to resize" "$work/bad/grid.h5"
exit $status
