#!/usr/bin/env bash
# Independent check of poisson.h5 from Python: read it through postprocess/cascade_io.py and
# compare /phi with the analytic Gaussian and with a numpy FFT solution of the same problem.
#   python_poisson.sh CASCADE_BINARY PYTHON SOURCE_DIR
set -eu
bin=$1 py=$2 src=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bin" poisson "$src/input/poisson_gaussian.yaml" --backend cpu --output "$work" >/dev/null
PYTHONPATH="$src/postprocess" "$py" "$src/tests/check_poisson_h5.py" "$work/poisson.h5"
