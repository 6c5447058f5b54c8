"""Image of one field of a cascade snapshot, with a colour bar and physical axes.

    python3 postprocess/plot_snapshot.py RUN [--index N | --time T]
            [--field vorticity|streamfunction|u|v|speed] [--out FILE]

Default: the vorticity of the last snapshot, written to RUN/snapshot_<field>_<index>.png.
--index counts the snapshots in order (negative counts from the end); --time takes the
snapshot nearest T. Fields the snapshot does not hold are derived from the vorticity.
Prints the path of the PNG; exits 2 with one line for a missing run, file or bad option.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import cascade_io  # noqa: E402
import plotting  # noqa: E402

PROG = "plot_snapshot"


def parse_args(argv):
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    p.add_argument("run", metavar="RUN", help="the run's output directory")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--index", type=int, help="snapshot number in order (default: the last; -1 the last)")
    which.add_argument("--time", type=float, help="take the snapshot nearest this time")
    p.add_argument("--field", default="vorticity", choices=plotting.FIELDS, help="default: vorticity")
    p.add_argument("--out", help="output PNG (default RUN/snapshot_<field>_<index>.png)")
    return p.parse_args(argv)


def pick(paths, index=None, time=None):
    """(position, path) of the snapshot chosen by index or nearest time (default: the last)."""
    if time is not None:
        times = [cascade_io.read_snapshot(p)["attrs"].get("time", np.nan) for p in paths]
        i = plotting.nearest_indices(times, [time])[0]
    elif index is not None:
        if not -len(paths) <= index < len(paths):
            raise plotting.Failure("--index %d out of range: the run has %d snapshots (0..%d)"
                                   % (index, len(paths), len(paths) - 1))
        i = index % len(paths)
    else:
        i = len(paths) - 1
    return i, paths[i]


def _main(argv):
    args = parse_args(argv)
    paths = plotting.snapshots(args.run)
    i, path = pick(paths, args.index, args.time)
    snap = cascade_io.read_snapshot(path)
    number = plotting.snapshot_number(path)
    out = args.out or os.path.join(args.run, "snapshot_%s_%06d.png" % (args.field, i if number is None else number))
    fig, ax = plotting.new_figure(width=6.4, height=5.2)
    plotting.field_image(ax, snap, args.field)
    plotting.save(fig, out)
    return 0


def main(argv=None):
    return plotting.run_main(PROG, _main, argv)


if __name__ == "__main__":
    sys.exit(main())
