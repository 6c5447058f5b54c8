"""A movie of one field over a cascade run's snapshots.

    python3 postprocess/make_movie.py RUN [--field vorticity] [--fps 10] [--vmax V] [--out FILE]

Renders every snapshot as in plot_snapshot, with colour limits fixed across the frames (by
default the 99.5th percentile of |field| over all snapshots; --vmax sets them), and
encodes them with ffmpeg (libx264, yuv420p) to RUN/movie_<field>.mp4 (or --out). Without
ffmpeg it writes the frames to RUN/frames_<field>/, says so on one line and exits 0.
Prints the path of the movie, or of every PNG frame it keeps; exits 2 with one line for a
missing run or file, 1 if ffmpeg fails.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import cascade_io  # noqa: E402
import plotting  # noqa: E402

PROG = "make_movie"


def parse_args(argv):
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    p.add_argument("run", metavar="RUN", help="the run's output directory")
    p.add_argument("--field", default="vorticity", choices=plotting.FIELDS, help="default: vorticity")
    p.add_argument("--fps", type=float, default=10.0, help="frames per second (default 10)")
    p.add_argument("--vmax", type=float,
                   help="colour limit for all frames (default: 99.5th percentile of |field| over the run)")
    p.add_argument("--out", help="output movie (default RUN/movie_<field>.mp4)")
    args = p.parse_args(argv)
    if not args.fps > 0:
        p.error("--fps must be positive")
    if args.vmax is not None and not args.vmax > 0:
        p.error("--vmax must be positive")
    return args


def fixed_limit(paths, field, percentile=99.5):
    """One colour limit for every frame: the given percentile of |field| pooled over all
    snapshots (the absolute maximum would let the strongest, often the first, frame wash out
    the rest of a decaying run; the few values beyond it saturate)."""
    pooled = []
    for path in paths:
        values = np.abs(plotting.field(cascade_io.read_snapshot(path), field)).ravel()
        stride = max(1, values.size // 65536)  # a sample keeps memory small for big grids
        pooled.append(values[::stride])
    pooled = np.concatenate(pooled)
    return float(np.nanpercentile(pooled, percentile)) if pooled.size else 1.0


def render_frames(paths, field, folder, vmax=None, quiet=True):
    """Write frame_NNNNNN.png for each snapshot into folder, with the same colour limits in all
    frames (vmax, or fixed_limit()). Returns the frame paths."""
    limits = plotting.color_limits(field, [vmax if vmax else fixed_limit(paths, field)])
    os.makedirs(folder, exist_ok=True)
    frames = []
    for i, path in enumerate(paths):
        snap = cascade_io.read_snapshot(path)
        # Fixed size (no tight bounding box), so every frame has the same pixel dimensions.
        fig, ax = plotting.new_figure(width=6.4, height=5.2)
        plotting.field_image(ax, snap, field, limits=limits)
        frames.append(plotting.save(fig, os.path.join(folder, "frame_%06d.png" % i), quiet=quiet))
    return frames


def encode(ffmpeg, folder, fps, out):
    """ffmpeg: frames -> H.264 mp4 (dimensions padded to even, as yuv420p needs)."""
    cmd = [ffmpeg, "-y", "-loglevel", "error", "-framerate", "%g" % fps,
           "-i", os.path.join(folder, "frame_%06d.png"),
           "-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2", "-c:v", "libx264", "-pix_fmt", "yuv420p", out]
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _main(argv):
    args = parse_args(argv)
    paths = plotting.snapshots(args.run)
    ffmpeg = shutil.which("ffmpeg")
    if ffmpeg is None:
        folder = os.path.join(args.run, "frames_%s" % args.field)
        if os.path.isdir(folder):  # frames of an earlier call: replace them, keep nothing stale
            for name in os.listdir(folder):
                if name.startswith("frame_") and name.endswith(".png"):
                    os.remove(os.path.join(folder, name))
        render_frames(paths, args.field, folder, args.vmax, quiet=False)
        print("make_movie: ffmpeg not found; install it (apt-get install ffmpeg) or use the PNG frames in %s"
              % folder)
        return 0
    out = args.out or os.path.join(args.run, "movie_%s.mp4" % args.field)
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="cascade_frames_") as folder:
        render_frames(paths, args.field, folder, args.vmax)
        result = encode(ffmpeg, folder, args.fps, out)
    if result.returncode != 0:
        tail = (result.stderr or "").strip().splitlines()
        print("%s: ffmpeg failed (exit %d): %s" % (PROG, result.returncode, tail[-1] if tail else "no message"),
              file=sys.stderr)
        return 1
    print(out)
    return 0


def main(argv=None):
    return plotting.run_main(PROG, _main, argv)


if __name__ == "__main__":
    sys.exit(main())
