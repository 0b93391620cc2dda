"""Plots a TensorBoard scalar of ``mlagents-learn`` runs as a PNG (the guide's reward curve).

``python examples/mlagents_learn/plot_rewards.py results/bb/BallBalance -o curve.png`` reads
every ``events.out.tfevents.*`` file in the run's behaviour directory and plots
``Environment/Cumulative Reward`` (``--tag`` for another scalar, ``--target`` for a dashed
line). It needs numpy and matplotlib only, not TensorBoard: the event files are TFRecords of
``Event`` protobuf messages, decoded here. ZOOPORT_EXAMPLE_SHORT does not apply: it trains
nothing.
"""

from __future__ import annotations

import argparse
import struct
from collections.abc import Iterator
from pathlib import Path


def _fields(data: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    """(field number, wire type, value) of each field of one protobuf message."""
    i = 0
    while i < len(data):
        key, i = _varint(data, i)
        number, kind = key >> 3, key & 7
        if kind == 0:
            value, i = _varint(data, i)
        elif kind == 1:
            value, i = data[i : i + 8], i + 8
        elif kind == 2:
            size, i = _varint(data, i)
            value, i = data[i : i + size], i + size
        elif kind == 5:
            value, i = data[i : i + 4], i + 4
        else:
            raise ValueError(f"unsupported protobuf wire type {kind}")
        yield number, kind, value


def _varint(data: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i


def read_scalars(events_dir: Path, tag: str) -> list[tuple[int, float]]:
    """(step, value) of the scalar ``tag`` in every event file of ``events_dir``, by step."""
    found = []
    for path in sorted(Path(events_dir).glob("events.out.tfevents.*")):
        data = path.read_bytes()
        i = 0
        while i + 12 <= len(data):
            (length,) = struct.unpack_from("<Q", data, i)
            record = data[i + 12 : i + 12 + length]  # after the length and its CRC
            i += 12 + length + 4  # then the record's CRC
            step = 0
            for number, _, value in _fields(record):
                if number == 2:  # Event.step
                    step = int(value)  # type: ignore[arg-type]
                elif number == 5:  # Event.summary: its Values (tag 1, simple_value 2)
                    for _, _, item in _fields(value):  # type: ignore[arg-type]
                        parts = {n: v for n, _, v in _fields(item)}  # type: ignore[arg-type]
                        if parts.get(1) == tag.encode() and 2 in parts:
                            found.append((step, struct.unpack("<f", parts[2])[0]))
    return sorted(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("events_dir", type=Path, help="results/<run-id>/<behaviour>")
    parser.add_argument("-o", "--output", type=Path, default=Path("reward_curve.png"))
    parser.add_argument("--tag", default="Environment/Cumulative Reward")
    parser.add_argument("--target", type=float, help="draw this value as a dashed line")
    parser.add_argument("--title", default=None)
    args = parser.parse_args()

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = read_scalars(args.events_dir, args.tag)
    if not points:
        raise SystemExit(f"no scalar {args.tag!r} in {args.events_dir}")
    steps, values = zip(*points, strict=True)
    fig, ax = plt.subplots(figsize=(6, 3.2), dpi=100)
    ax.plot(steps, values, marker="o", markersize=3)
    if args.target is not None:
        ax.axhline(args.target, linestyle="--", color="grey", label=f"target {args.target:g}")
        ax.legend(loc="lower right")
    ax.set_xlabel("agent-steps")
    ax.set_ylabel(args.tag.split("/")[-1].lower())
    ax.set_title(args.title or args.events_dir.name)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(args.output)
    print(f"{len(points)} points of {args.tag!r} -> {args.output}")


if __name__ == "__main__":
    main()
