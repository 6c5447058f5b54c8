#!/usr/bin/env bash
# Run the cascade binary in a fresh empty directory and check its exit code and message.
#   cli_expect.sh BINARY EXPECTED_RC PATTERN [ARGS...]
# PATTERN is an extended regex that stdout+stderr must match. For exit code 2 (bad input) the
# error must be one line on stderr and the run must leave the directory empty.
set -u
bin=$1 rc_want=$2 pattern=$3
shift 3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
"$bin" "$@" >stdout.txt 2>stderr.txt
rc=$?
out=$(cat stdout.txt stderr.txt)
status=0
if [ "$rc" != "$rc_want" ]; then
  echo "FAIL: exit code $rc, expected $rc_want"; status=1
fi
if ! grep -Eq -- "$pattern" stdout.txt stderr.txt; then
  echo "FAIL: output does not match /$pattern/"; status=1
fi
if [ "$rc_want" = 2 ]; then
  lines=$(wc -l <stderr.txt)
  [ "$lines" = 1 ] || { echo "FAIL: expected one line on stderr, got $lines"; status=1; }
  grep -q . stdout.txt && { echo "FAIL: a rejected run printed to stdout"; status=1; }
  left=$(ls -A | grep -v -e '^stdout.txt$' -e '^stderr.txt$')
  [ -z "$left" ] || { echo "FAIL: a rejected run wrote: $left"; status=1; }
fi
echo "--- command: cascade $*"
echo "--- exit code: $rc"
echo "--- output:"
echo "$out"
exit $status
