#!/usr/bin/env bash
# The dependency step where apt is not the way: scripts/install-deps with a PATH that has no
# apt-get or dpkg-query, then one where they exist and fail (exit 100, as without a mirror),
# must exit 0 and list what is missing in one block; `make configure` must then go on to
# configure. ninja is left off the PATH so that something is missing (make builds instead).
# No real apt call is made.
#   deps_step.sh SOURCE_DIR
set -euo pipefail
src=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# A PATH of links to every command on the current PATH but the package tools and ninja.
bin="$work/bin"
mkdir -p "$bin"
IFS=: read -r -a dirs <<<"$PATH"
for d in "${dirs[@]}"; do
  [[ -d "$d" ]] || continue
  for f in "$d"/*; do
    name=${f##*/}
    case "$name" in apt-get|apt|dpkg|dpkg-query|sudo|ninja) continue ;; esac
    [[ -x "$f" && ! -d "$f" && ! -e "$bin/$name" ]] && ln -s "$f" "$bin/$name"
  done
done

# 1. No apt-get, no dpkg-query.
out=$(cd "$src" && PATH="$bin" scripts/install-deps 2>&1) || fail "install-deps exited $? without apt-get"
echo "$out"
grep -q "^install-deps: not installed (no apt-get on this machine):" <<<"$out" || fail "no missing block without apt-get"
grep -q "optional: ninja" <<<"$out" || fail "ninja not listed as missing"
[[ $(grep -c "^install-deps:" <<<"$out") -eq 1 ]] || fail "more than one block"

# 2. apt-get and dpkg-query present but failing (sudo, for a user that is not root, runs them).
fake="$work/fake"
mkdir -p "$fake"
for t in apt-get dpkg-query dpkg; do printf '#!/bin/sh\necho "%s: failing on purpose" >&2\nexit 100\n' "$t" >"$fake/$t"; done
printf '#!/bin/sh\nwhile [ "${1#-}" != "$1" ]; do shift; done\nexec "$@"\n' >"$fake/sudo"
chmod +x "$fake"/*
out=$(cd "$src" && PATH="$fake:$bin" scripts/install-deps 2>&1) || fail "install-deps exited $? with apt-get failing"
echo "$out"
grep -q "^install-deps: not installed (apt-get update failed):" <<<"$out" || fail "no missing block with apt-get failing"
grep -q "optional: ninja" <<<"$out" || fail "ninja not listed as missing"

# 3. The chain goes on: make's deps step, then CMake configures (with make, ninja being absent).
out=$(PATH="$fake:$bin" make -C "$src" --no-print-directory configure BUILD="$work/build" \
        CMAKE_FLAGS="-DCASCADE_CUDA=OFF -DCASCADE_MPI=OFF -DCASCADE_TESTS=OFF" 2>&1) ||
  { echo "$out"; fail "make configure stopped"; }
echo "$out" | tail -n 5
[[ -f "$work/build/CMakeCache.txt" ]] || fail "no CMakeCache.txt after make configure"
grep -q "^CMAKE_GENERATOR:INTERNAL=Unix Makefiles" "$work/build/CMakeCache.txt" || fail "not configured for make"

# 4. DEPS=no skips the step.
out=$(PATH="$fake:$bin" make -C "$src" --no-print-directory deps DEPS=no 2>&1)
grep -q "dependency step skipped" <<<"$out" || fail "DEPS=no did not skip the step"
grep -q "install-deps" <<<"$out" && fail "DEPS=no ran install-deps"
echo "PASS"
