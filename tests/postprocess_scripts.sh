#!/usr/bin/env bash
# The plotting scripts in postprocess/ run on a small real run and write real PNGs:
# plot_snapshot, plot_spectra, plot_timeseries, and make_movie (an mp4 with ffmpeg; without it
# the one-line message and the PNG frames). A missing run directory gives one line and exit 2;
# each script is importable and main(argv) returns the exit code.
#   postprocess_scripts.sh CASCADE PYTHON SOURCE_DIR
set -u
bin=$1 py=$2 src=$3
pp="$src/postprocess"
if ! "$py" -c "import numpy, h5py, matplotlib" 2>/dev/null; then
  echo "SKIPPED: $py lacks matplotlib (install python3-matplotlib)"
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run="$work/run"
"$bin" run "$src/input/decaying.yaml" --backend cpu --output "$run" --overwrite --set grid.nx=64 --set grid.ny=64 \
  --set time.t_end=1 --set output.diagnostics_every=0.1 --set output.snapshot_every=0.25 \
  --set output.spectra_every=0.25 --set "output.fields=[vorticity, streamfunction, velocity]" \
  >"$work/log" 2>&1 || { echo "FAIL: cascade run"; cat "$work/log"; exit 1; }

export MPLBACKEND=Agg MPLCONFIGDIR="$work/mpl"
fails=0 pngs=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# is_png FILE: exists, non-empty, starts with the PNG signature.
is_png() {
  [[ -s "$1" ]] || { fail "missing or empty: $1"; return 1; }
  [[ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" == "89504e470d0a1a0a" ]] || { fail "not a PNG: $1"; return 1; }
  pngs=$((pngs + 1))
}

# check NAME EXPECTED_PNG... -- ARGS: runs the script, checks its exit code, that it printed
# and wrote each expected PNG.
check() {
  local name=$1; shift
  local want=()
  while [[ $1 != -- ]]; do want+=("$1"); shift; done
  shift
  if ! "$py" "$pp/$name.py" "$@" >"$work/out" 2>&1; then fail "$name $* exited $?:"; cat "$work/out"; return; fi
  for f in "${want[@]}"; do
    grep -qxF "$f" "$work/out" || fail "$name $*: did not print $f"
    is_png "$f"
  done
}

check plot_snapshot "$run/snapshot_vorticity_000004.png" -- "$run"
check plot_snapshot "$run/snapshot_speed_000001.png" -- "$run" --time 0.3 --field speed
check plot_snapshot "$work/psi.png" -- "$run" --index 0 --field streamfunction --out "$work/psi.png"
check plot_snapshot "$run/snapshot_u_000002.png" -- "$run" --index -3 --field u
check plot_spectra "$run/spectra.png" -- "$run"
check plot_spectra "$work/spectra3.png" -- "$run" --times 0.5 1 --compensate 3 --out "$work/spectra3.png"
check plot_timeseries "$run/timeseries.png" -- "$run"
check plot_timeseries "$work/ts_csv.png" -- "$run" --source csv --out "$work/ts_csv.png"

# make_movie: an mp4 with ffmpeg; without it the message and the frames.
nsnap=$(ls "$run"/snapshots/snap_*.h5 | wc -l)
if "$py" "$pp/make_movie.py" "$run" --fps 4 >"$work/movie" 2>&1; then
  if command -v ffmpeg >/dev/null; then
    [[ -s "$run/movie_vorticity.mp4" ]] || fail "make_movie: no movie_vorticity.mp4"
    [[ "$(head -c 8 "$run/movie_vorticity.mp4" | tail -c 4)" == ftyp ]] || fail "make_movie: not an mp4"
    grep -qxF "$run/movie_vorticity.mp4" "$work/movie" || fail "make_movie did not print the movie path"
  else
    grep -qxF "make_movie: ffmpeg not found; install it (apt-get install ffmpeg) or use the PNG frames in $run/frames_vorticity" \
      "$work/movie" || { fail "make_movie: no ffmpeg message"; cat "$work/movie"; }
    nframes=0
    for f in "$run"/frames_vorticity/frame_*.png; do is_png "$f" && nframes=$((nframes + 1)); done
    [[ $nframes == "$nsnap" ]] || fail "make_movie: $nframes frames for $nsnap snapshots"
  fi
else
  fail "make_movie exited non-zero"; cat "$work/movie"
fi

# Errors: one line, exit code 2, for a missing run directory or file.
for name in plot_snapshot plot_spectra plot_timeseries make_movie; do
  "$py" "$pp/$name.py" "$work/no_such_run" >"$work/err" 2>&1
  rc=$?
  [[ $rc == 2 && $(wc -l <"$work/err") == 1 ]] && grep -q "^$name: run directory not found" "$work/err" \
    || { fail "$name on a missing run: rc $rc, output:"; cat "$work/err"; }
done
mkdir "$work/empty"
for name in plot_snapshot plot_spectra plot_timeseries; do
  "$py" "$pp/$name.py" "$work/empty" >"$work/err" 2>&1
  rc=$?
  [[ $rc == 2 && $(wc -l <"$work/err") == 1 ]] || { fail "$name on an empty run: rc $rc, output:"; cat "$work/err"; }
done

# Importable: main(argv) returns the exit code.
"$py" - "$pp" "$run" "$work/import.png" >"$work/imp" 2>&1 <<'PY' || { fail "importing the scripts"; cat "$work/imp"; }
import sys
sys.path.insert(0, sys.argv[1])
import make_movie, plot_snapshot, plot_spectra, plot_timeseries  # noqa: F401
assert plot_snapshot.main([sys.argv[2], "--field", "v", "--out", sys.argv[3]]) == 0
assert plot_spectra.main([sys.argv[2] + "/missing"]) == 2
PY
is_png "$work/import.png"

if [[ $fails == 0 ]]; then
  echo "postprocess scripts ok: $pngs PNGs checked, $nsnap snapshots, ffmpeg $(command -v ffmpeg >/dev/null && echo present || echo absent)"
else
  echo "postprocess scripts: $fails failure(s)"
  exit 1
fi
