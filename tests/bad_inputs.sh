#!/usr/bin/env bash
# Runs every case of bad_inputs.txt: one line on stderr matching the case's regex, exit code 2,
# and nothing on disk changed.
#   bad_inputs.sh CASCADE SOURCE_DIR
set -u
bin=$(readlink -f "$1") src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
good="grid: {nx: 32}\ntime: {t_end: 0.2}\n"
# An earlier run, whose files must survive every rejected run.
printf "%b" "$good" >"$work/good.yaml"
"$bin" run "$work/good.yaml" --backend cpu --output "$work/run" >/dev/null 2>&1 || { echo "FAIL: the good run"; exit 1; }
ckpt=$(ls "$work"/run/checkpoints/ckpt_*.h5 | tail -1)
snapshot() { (cd "$work" && find . -path ./case -prune -o -print0 | sort -z | xargs -0 ls -ld --time-style=full-iso | md5sum); }
cuda_present=0
"$bin" info 2>/dev/null | grep -q "auto picks cuda" && cuda_present=1
pass=0 fail=0
while IFS='|' read -r name regex args deck; do
  name=$(echo "$name" | sed 's/^ *//; s/ *$//'); [[ -z "$name" || "$name" == \#* ]] && continue
  regex=$(echo "$regex" | sed 's/^ *//; s/ *$//')
  args=$(echo "$args" | sed 's/^ *//; s/ *$//')
  deck=$(echo "$deck" | sed 's/^ *//; s/ *$//')
  if [[ "$name" == cuda_requested_without_gpu && $cuda_present == 1 ]]; then continue; fi
  mkdir -p "$work/case" && rm -rf "$work/case"/*
  if [[ -n "$deck" ]]; then printf "%b" "$deck" >"$work/case/deck.yaml"; else : >"$work/case/deck.yaml"; fi
  [[ "$name" == missing_deck || "$name" == set_* || "$name" == deck_and_restart || "$name" == existing_run || \
     "$name" == output_under_file || "$name" == cuda_requested_without_gpu || "$name" == bad_backend_option ]] \
     && printf "%b" "$good" >"$work/case/deck.yaml"
  # NLDECK: the case's deck under a name with a new line in it.
  [[ "$args" == *NLDECK* ]] && cp "$work/case/deck.yaml" "$work/case/d"$'\n'"e.yaml"
  args=${args//NLDECK/\$\'d\\ne.yaml\'}
  args=${args//DECK/deck.yaml}
  args=${args//OUT/$work/case/out}
  args=${args//RUN/$work/run}
  args=${args//CKPT/$ckpt}
  before=$(snapshot)
  (cd "$work/case" && eval "\"$bin\" $args" >"$work/case/stdout.txt" 2>"$work/case/stderr.txt")
  rc=$?
  after=$(snapshot)
  problems=()
  [[ $rc == 2 ]] || problems+=("exit code $rc")
  [[ $(wc -l <"$work/case/stderr.txt") == 1 ]] || problems+=("$(wc -l <"$work/case/stderr.txt") lines on stderr")
  grep -Eq -- "$regex" "$work/case/stderr.txt" || problems+=("message does not match /$regex/")
  [[ "$before" == "$after" ]] || problems+=("the disk changed")
  [[ -e "$work/case/out" ]] && problems+=("the output directory was created")
  if [[ ${#problems[@]} == 0 ]]; then
    pass=$((pass + 1))
    echo "ok   $name: $(cat "$work/case/stderr.txt")"
  else
    fail=$((fail + 1))
    echo "FAIL $name: ${problems[*]}: $(cat "$work/case/stderr.txt")"
  fi
done <"$src/tests/bad_inputs.txt"
echo "$pass passed, $fail failed"
[[ $fail == 0 && $pass -ge 40 ]]
