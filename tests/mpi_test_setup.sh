# Sourced by the MPI system tests (mpi_runs.sh, ensemble_mpi.sh) with their arguments:
#   CASCADE PYTHON SOURCE_DIR BACKEND MPIEXEC [MPIEXEC_FLAGS...]
# Sets bin, py, src, backend, mpiexec and flags, a work folder removed on exit, fail and mpi
# (mpi N COMMAND...: COMMAND on N ranks).
set -u
bin=$1 py=$2 src=$3 backend=$4 mpiexec=$5
shift 5
flags=("$@")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
mpi() { local n=$1; shift; "$mpiexec" "${flags[@]}" -n "$n" "$@"; }
