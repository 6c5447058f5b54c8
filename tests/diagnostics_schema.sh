#!/usr/bin/env bash
# A restart re-reads diagnostics.csv by its header's names (docs/output-format.md, Diagnostics):
# a column missing from the header, or a cell that is not its column's kind, is refused with one
# line and exit 2 before anything is written; the columns in another order are read by name and
# the kept rows written anew in the schema's order, as a run that was never cut would have them;
# a file written before the column cfl existed restarts with cfl NaN in its kept rows.
#   diagnostics_schema.sh CASCADE PYTHON SOURCE_DIR
set -u
bin=$1 py=$2 src=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
common=(--backend cpu --set grid.nx=32 --set grid.ny=32 --set output.diagnostics_every=0.1
        --set output.checkpoint_every=0.2 --set output.keep_checkpoints=5)
"$bin" run "$src/input/decaying.yaml" "${common[@]}" --set time.t_end=0.4 --output "$work/full" >/dev/null 2>&1 \
  || { echo "FAIL: the full run"; exit 1; }
"$bin" run "$src/input/decaying.yaml" "${common[@]}" --set time.t_end=0.4 \
  --output "$work/base" >/dev/null 2>&1 || { echo "FAIL: the base run"; exit 1; }
ck=$(ls "$work/base/checkpoints" | head -1)   # t = 0.2
refused() {  # NAME PATTERN EDIT: the edited copy's restart is refused, its directory unchanged
  rm -rf "$work/$1" && cp -a "$work/base" "$work/$1" && (cd "$work/$1" && eval "$3")
  local before after rc
  before=$(cd "$work/$1" && find . -type f | sort | xargs md5sum)
  "$bin" run --restart "$work/$1/checkpoints/$ck" --backend cpu >/dev/null 2>"$work/e.txt"
  rc=$?
  after=$(cd "$work/$1" && find . -type f | sort | xargs md5sum)
  [ $rc = 2 ] || { echo "FAIL: $1: exit code $rc, expected 2"; cat "$work/e.txt"; exit 1; }
  [ "$(wc -l <"$work/e.txt")" = 1 ] && grep -q "$2" "$work/e.txt" || { echo "FAIL: $1: message"; cat "$work/e.txt"; exit 1; }
  [ "$before" = "$after" ] || { echo "FAIL: $1: the refused restart changed the directory"; exit 1; }
}
refused missing_column "diagnostics.csv: its header has no column 'max_u'" "sed -i '1s/,max_u,/,maxu,/' diagnostics.csv"
refused bad_limit "malformed row .* (column cfl_limit)" "sed -i '3s/,output,/,bogus,/' diagnostics.csv"
refused extra_cell "malformed row .* (19 cells, the header names 18)" "sed -i '3s/\$/,7/' diagnostics.csv"
refused bad_step "malformed row .* (column step)" "sed -i '3s/^[0-9]*,/x,/' diagnostics.csv"
# The columns reversed: read by name, rewritten in the schema's order.
rm -rf "$work/rev" && cp -a "$work/base" "$work/rev"
"$py" - "$work/rev/diagnostics.csv" <<'PY'
import sys
rows = [l.rstrip("\n").split(",") for l in open(sys.argv[1])]
open(sys.argv[1], "w").write("".join(",".join(r[::-1]) + "\n" for r in rows))
PY
"$bin" run --restart "$work/rev/checkpoints/$ck" --backend cpu >/dev/null 2>&1 || { echo "FAIL: reordered columns"; exit 1; }
strip() { cut -d, -f1-11,13-17 "$1"; }   # all but the wall-clock columns
[ "$(strip "$work/rev/diagnostics.csv")" = "$(strip "$work/full/diagnostics.csv")" ] \
  || { echo "FAIL: reordered columns: the restarted run's rows differ from the full run's"; exit 1; }
# A run written before the column cfl (column 8) existed: it restarts, its kept rows with cfl
# NaN (not recorded), the new ones with the number, the rest as the full run's.
rm -rf "$work/old" && cp -a "$work/base" "$work/old" && cut -d, -f1-7,9- "$work/base/diagnostics.csv" >"$work/old/diagnostics.csv"
"$bin" run --restart "$work/old/checkpoints/$ck" --backend cpu >/dev/null 2>"$work/e.txt" \
  || { echo "FAIL: a file without the column cfl: restart refused"; cat "$work/e.txt"; exit 1; }
[ "$(cut -d, -f1-7,9-11,13-17 "$work/old/diagnostics.csv")" = "$(cut -d, -f1-7,9-11,13-17 "$work/full/diagnostics.csv")" ] \
  || { echo "FAIL: a file without the column cfl: the restarted run's rows differ from the full run's"; exit 1; }
[ "$(cut -d, -f8 "$work/old/diagnostics.csv" | tr '\n' ' ')" = "cfl nan nan nan $(cut -d, -f8 "$work/full/diagnostics.csv" | tail -2 | tr '\n' ' ')" ] \
  || { echo "FAIL: a file without the column cfl: column cfl"; cut -d, -f8 "$work/old/diagnostics.csv"; exit 1; }
echo "diagnostics schema ok: columns found by name; missing, malformed and extra cells refused; older files without cfl restart"
