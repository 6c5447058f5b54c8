#!/usr/bin/env bash
# The progress display: plain periodic lines when stdout is not a terminal, an in-place line
# on a terminal (run under script(1)); log.txt never holds control characters; --quiet prints
# only the summary.
#   progress_display.sh CASCADE SOURCE_DIR
set -u
bin=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
deck="$src/input/taylor_green.yaml"
"$bin" run "$deck" --backend cpu --output "$work/plain" >"$work/plain.txt" 2>&1 || { cat "$work/plain.txt"; exit 1; }
if grep -q $'[\r\033]' "$work/plain.txt"; then echo "FAIL: control characters on a non-terminal stdout"; exit 1; fi
grep -q '^\[100.0%\] step' "$work/plain.txt" || { echo "FAIL: no final progress line"; cat "$work/plain.txt"; exit 1; }
grep -q '^done: ' "$work/plain.txt" || { echo "FAIL: no summary"; exit 1; }
for log in "$work/plain/log.txt"; do
  grep -q $'[\r\033]' "$log" && { echo "FAIL: control characters in $log"; exit 1; }
  grep -q '^\[100.0%\] step' "$log" && grep -q '^done: ' "$log" || { echo "FAIL: log.txt incomplete"; exit 1; }
done
"$bin" run "$deck" --backend cpu --output "$work/quiet" --quiet >"$work/quiet.txt" 2>&1
if grep -q 'step ' "$work/quiet.txt" || ! grep -q '^done: ' "$work/quiet.txt"; then
  echo "FAIL: --quiet"; cat "$work/quiet.txt"; exit 1
fi
if command -v script >/dev/null 2>&1; then
  script -qec "\"$bin\" run \"$deck\" --backend cpu --output \"$work/tty\" --set time.t_end=40" "$work/tty.txt" >/dev/null 2>&1 \
    || { echo "FAIL: run under a terminal"; cat "$work/tty.txt"; exit 1; }
  grep -q $'\r\[' "$work/tty.txt" && grep -q $'\033\[K' "$work/tty.txt" || { echo "FAIL: no in-place line on a terminal"; exit 1; }
  grep -q $'[\r\033]' "$work/tty/log.txt" && { echo "FAIL: control characters in log.txt of a terminal run"; exit 1; }
  echo "progress display ok (plain, quiet, terminal)"
else
  echo "progress display ok (plain, quiet; script(1) absent: terminal case not run)"
fi
