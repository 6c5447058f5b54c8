#!/usr/bin/env bash
# Outputs read back with cascade_io.py match what the solver held: a snapshot's vorticity is
# the checkpoint's state at the same time, transformed back by numpy; the streamfunction and
# velocity follow from it spectrally; diagnostics.h5 equals diagnostics.csv, its cfl the row's dt
# times max(|u|/dx + |v|/dy) of the snapshot's velocity at the row's time; the spectra sum to
# E and Z (Parseval); snapshots.xmf is valid XML naming every snapshot; the diagnostics columns
# the files carry (CSV header; HDF5 units and descriptions) are the table of
# docs/output-format.md, in its order.
#   roundtrip_outputs.sh CASCADE PYTHON SOURCE_DIR
set -u
bin=$1 py=$2 src=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bin" run "$src/input/decaying.yaml" --backend cpu --output "$work/run" --set grid.nx=64 --set grid.ny=48 \
  --set grid.ly=1.5pi --set time.t_end=0.5 --set output.diagnostics_every=0.25 --set output.snapshot_every=0.25 --set output.spectra_every=0.25 \
  --set output.checkpoint_every=0.25 --set output.keep_checkpoints=5 \
  --set "output.fields=[vorticity, streamfunction, velocity]" >"$work/log" 2>&1 || { cat "$work/log"; exit 1; }
PYTHONPATH="$src/postprocess" "$py" - "$work/run" "$src" <<'PY'
import os, re, sys, xml.etree.ElementTree as ET
import numpy as np
import cascade_io as io
run = sys.argv[1]
snaps = io.list_snapshots(run)
assert len(snaps) == 3, snaps
ckpt = os.path.join(run, "checkpoints", "ckpt_%06d.h5" % io.read_snapshot(snaps[1])["attrs"]["step"])
s, c = io.read_snapshot(snaps[1]), io.read_checkpoint(ckpt)
assert s["attrs"]["time"] == c["time"] == 0.25
w = io.vorticity_from_checkpoint(ckpt)
assert s["vorticity"].shape == (48, 64)
assert np.abs(s["vorticity"] - w).max() < 1e-12 * np.abs(w).max(), "snapshot vorticity != checkpoint state"
ny, nx = w.shape
kx = 2 * np.pi * np.fft.rfftfreq(nx, 2 * np.pi / nx)
ky = 2 * np.pi * np.fft.fftfreq(ny, 1.5 * np.pi / ny)
k2 = kx[None, :] ** 2 + ky[:, None] ** 2; k2[0, 0] = 1
psi_hat = c["omega_hat"] / k2; psi_hat[0, 0] = 0
psi = np.fft.irfft2(psi_hat, s=(ny, nx))
u = np.fft.irfft2(1j * ky[:, None] * psi_hat, s=(ny, nx)); v = np.fft.irfft2(-1j * kx[None, :] * psi_hat, s=(ny, nx))
for name, want in (("streamfunction", psi), ("u", u), ("v", v)):
    assert np.abs(s[name] - want).max() < 1e-12 * np.abs(want).max(), name
d, dc = io.read_diagnostics(run), io.read_diagnostics(run, "csv")
for k in ("t", "E", "Z", "P", "max_u", "cfl", "injection", "dissipation", "dt"):
    assert np.array_equal(d[k], dc[k]), k
# cfl: the row's dt times max(|u|/dx + |v|/dy) of the snapshot's velocity at the row's time
dx, dy = 2 * np.pi / nx, 1.5 * np.pi / ny
assert d["cfl"][0] == 0 and d["dt"][0] == 0, d["cfl"]
for p in snaps[1:]:
    snap = io.read_snapshot(p)
    i = list(d["t"]).index(snap["attrs"]["time"])
    want = d["dt"][i] * (np.abs(snap["u"]) / dx + np.abs(snap["v"]) / dy).max()
    assert want > 0 and abs(d["cfl"][i] / want - 1) < 1e-12, ("cfl", snap["attrs"]["time"], d["cfl"][i], want)
sp = io.read_spectra(run)
for row, t in enumerate(sp["t"]):
    i = list(d["t"]).index(t)
    assert abs(sp["E"][row].sum() * sp["dk"] / d["E"][i] - 1) < 1e-12, ("Parseval E", t)
    assert abs(sp["Z"][row].sum() * sp["dk"] / d["Z"][i] - 1) < 1e-12, ("Parseval Z", t)
root = ET.parse(os.path.join(run, "snapshots.xmf")).getroot()
named = [item.text.split(":")[0] for item in root.iter("DataItem") if item.get("Format") == "HDF"]
for p in snaps:
    assert "snapshots/" + os.path.basename(p) in named, p
times = [float(t.get("Value")) for t in root.iter("Time")]
assert times == [0.0, 0.25, 0.5], times
doc = open(os.path.join(sys.argv[2], "docs", "output-format.md"), encoding="utf-8").read()
section = doc.split("## Diagnostics", 1)[1].split("\n## ", 1)[0]
table = [[c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line)[1:-1]]
         for line in section.splitlines() if line.startswith("| `")]
documented = [(r[0].strip("`"), r[1], r[2]) for r in table]
written = [(c["name"], c["units"], c["description"]) for c in io.read_diagnostics_schema(run)]
assert documented == written, ("docs/output-format.md's diagnostics table != the files'", documented, written)
assert list(dc) == [c[0] for c in documented], list(dc)
print("round trip ok: %d snapshots, %d diagnostics rows, %d spectra" % (len(snaps), len(d["t"]), len(sp["t"])))
PY
