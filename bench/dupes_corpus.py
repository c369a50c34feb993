#!/usr/bin/env python3
"""dupes_corpus.py DIR FILES TOTAL_MIB: a corpus for bench/dupes_compare.sh.

FILES files in 100 directories (two levels), sizes skewed like a home directory (most files a
few KiB, a few large ones), TOTAL_MIB of content in all; ~20% of the files are copies of
another file (under another name and directory), ~5% have the size of another file but other
bytes (at its start, middle or end), so every stage of a duplicate finder has work.
Deterministic (seeded)."""
import os
import random
import sys


def main():
    root, files, total_mib = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rng = random.Random(42)
    # Pareto-skewed sizes scaled to the requested total.
    raw = [min(rng.paretovariate(1.1), 20000.0) for _ in range(files)]
    scale = total_mib * 1048576 / sum(raw)
    sizes = [max(1, int(r * scale)) for r in raw]
    dirs = [os.path.join(root, f"d{i // 10}", f"e{i % 10}") for i in range(100)]
    for d in dirs:
        os.makedirs(d, exist_ok=True)
    originals = []  # (path, size)
    block = os.urandom(1 << 20)
    for i, size in enumerate(sizes):
        path = os.path.join(dirs[i % 100], f"f{i}")
        kind = rng.random()
        if kind < 0.20 and originals:
            src, _ = originals[rng.randrange(len(originals))]
            with open(src, "rb") as f:
                data = f.read()
        elif kind < 0.25 and originals:
            src, _ = originals[rng.randrange(len(originals))]
            with open(src, "rb") as f:
                data = bytearray(f.read())
            at = rng.choice([0, len(data) // 2, len(data) - 1])
            data[at] ^= 0x5A
        else:
            off = rng.randrange(1 << 20)
            data = (block[off:] + block[:off]) * (size // (1 << 20) + 1)
            data = bytearray(data[:size])
            data[:8] = i.to_bytes(8, "little")  # unique content per original
            originals.append((path, size))
        with open(path, "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
