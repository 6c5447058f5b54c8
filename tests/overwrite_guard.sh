#!/usr/bin/env bash
# A run refuses to write into a directory holding another run's output (exit 2, one line,
# nothing changed) unless told --overwrite, which replaces cascade's files and leaves others.
#   overwrite_guard.sh CASCADE SOURCE_DIR
set -u
bin=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
deck="$src/input/taylor_green.yaml"
"$bin" run "$deck" --backend cpu --output "$work/out" --set time.t_end=1 >/dev/null || { echo "FAIL: first run"; exit 1; }
echo "notes" >"$work/out/my_notes.txt"
before=$(ls -lR --time-style=full-iso "$work/out" | md5sum)
"$bin" run "$deck" --backend cpu --output "$work/out" --set time.t_end=2 >"$work/o.txt" 2>"$work/e.txt"
rc=$?
after=$(ls -lR --time-style=full-iso "$work/out" | md5sum)
[ $rc = 2 ] || { echo "FAIL: exit code $rc, expected 2"; exit 1; }
[ "$(wc -l <"$work/e.txt")" = 1 ] && grep -q "already holds a run's output" "$work/e.txt" || { echo "FAIL: message"; cat "$work/e.txt"; exit 1; }
[ "$before" = "$after" ] || { echo "FAIL: the refused run changed the directory"; exit 1; }
"$bin" run "$deck" --backend cpu --output "$work/out" --set time.t_end=2 --overwrite >/dev/null || { echo "FAIL: --overwrite"; exit 1; }
tail -1 "$work/out/diagnostics.csv" | cut -d, -f2 | grep -qx 2 || { echo "FAIL: not the new run's diagnostics"; exit 1; }
[ -f "$work/out/my_notes.txt" ] || { echo "FAIL: --overwrite removed a file that is not cascade's"; exit 1; }
echo "overwrite guard ok: $(cat "$work/e.txt")"
