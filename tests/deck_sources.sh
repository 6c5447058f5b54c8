#!/usr/bin/env bash
# Where a deck comes from and where its output goes, taken literally: --output is a path byte for
# byte (not YAML: 'o #2' is not cut at the '#', null and ~ are names), the resolved deck gives the
# name back unchanged, and a deck that is not a small file ends with one line and exit 2.
#   deck_sources.sh CASCADE SOURCE_DIR
set -u
bin=$(readlink -f "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
printf 'grid: {nx: 32}\ntime: {t_end: 0.2}\n' >deck.yaml
fail() { echo "FAIL: $*"; exit 1; }

for dir in 'o #2' null '~' ' lead' 'a: b' '123'; do
  "$bin" run deck.yaml --backend cpu --output "$dir" >/dev/null 2>err.txt || fail "--output '$dir': $(cat err.txt)"
  [ -f "$dir/deck.yaml" ] || fail "--output '$dir' did not write into a directory named '$dir'"
  # The resolved deck names the directory exactly (quoted), here and read back by check.
  got=$("$bin" check "$dir/deck.yaml" | sed -n 's/^  directory: //p')
  [ "$got" = "\"$dir\"" ] || fail "'$dir': deck.yaml names $got"
done
[ -e o ] || [ -e output ] && fail "a directory other than the one named was written"
# A restart reads deck_resolved from the checkpoint: the name survives it too.
ckpt=$(ls "o #2"/checkpoints/ckpt_*.h5 | tail -1)
"$bin" run --restart "$ckpt" --set time.t_end=0.4 >/dev/null 2>err.txt || fail "restart in 'o #2': $(cat err.txt)"
tail -1 "o #2/diagnostics.csv" | cut -d, -f2 | grep -qx 0.4 || fail "the restart did not continue in 'o #2'"

# A deck through a pipe is read; a FIFO no one writes to ends within the deck-read limit.
printf 'grid: {nx: 32}\ntime: {t_end: 0.2}\n' | "$bin" run /dev/stdin --backend cpu --output piped >/dev/null 2>err.txt ||
  fail "deck from a pipe: $(cat err.txt)"
mkfifo fifo
start=$SECONDS
timeout 30 "$bin" run fifo --backend cpu --output from_fifo >/dev/null 2>err.txt
rc=$?
[ $rc = 2 ] || fail "FIFO deck: exit code $rc, expected 2"
[ "$(wc -l <err.txt)" = 1 ] && grep -q "cannot read deck 'fifo': no end of text within" err.txt || fail "FIFO deck: $(cat err.txt)"
[ -e from_fifo ] && fail "FIFO deck: the output directory was created"
echo "deck sources ok ($((SECONDS - start)) s for the FIFO): $(cat err.txt)"
