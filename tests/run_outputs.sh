#!/usr/bin/env bash
# cascade run writes deck.yaml (which reads back to the same resolved deck) and
# diagnostics.csv with the columns docs/output-format.md names, a row at t = 0 and one per output time.
#   run_outputs.sh CASCADE_BINARY SOURCE_DIR
set -eu
bin=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bin" run "$src/input/taylor_green.yaml" --backend cpu --output "$work/out" --set time.t_end=2 >/dev/null
head -1 "$work/out/diagnostics.csv" | grep -q '^step,t,dt,E,Z,P,max_u,cfl,cfl_limit,injection,dissipation' \
  || { echo "FAIL: diagnostics.csv header"; head -1 "$work/out/diagnostics.csv"; exit 1; }
rows=$(($(wc -l <"$work/out/diagnostics.csv") - 1))
[ "$rows" = 5 ] || { echo "FAIL: expected 5 rows (t = 0, 0.5, 1, 1.5, 2), found $rows"; exit 1; }
tail -1 "$work/out/diagnostics.csv" | cut -d, -f2 | grep -qx '2' || { echo "FAIL: last row not at t = 2"; exit 1; }
"$bin" check "$work/out/deck.yaml" | tail -n +2 >"$work/again.yaml"
"$bin" check "$src/input/taylor_green.yaml" --set time.t_end=2 --set output.directory="$work/out" | tail -n +2 >"$work/first.yaml"
diff "$work/first.yaml" "$work/again.yaml" || { echo "FAIL: deck.yaml does not read back to the same deck"; exit 1; }
echo "run outputs ok"
