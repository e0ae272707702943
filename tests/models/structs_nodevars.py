"""Model of tests/programs/structs_nodevars.sgl from the brief (§4, §8:
SplitMix64, rand_ints), not from sglc: the tree only distributes the points."""

from brief_random import rand_ints

n = 50
pts = list(zip(rand_ints(n, -100, 100, 7), rand_ints(n, -100, 100, 8)))


def count(lo, hi):
    sel = [p for p in pts if lo[0] <= p[0] < hi[0] and lo[1] <= p[1] < hi[1]]
    return f"Count(n={len(sel)}, sx={sum(p[0] for p in sel)})"


def box(lo, hi):
    return f"Box(lo=Pt(x={lo[0]}, y={lo[1]}), hi=Pt(x={hi[0]}, y={hi[1]}))"


print(count((-1000, -1000), (1000, 1000)))
print(count((0, 0), (100, 100)))
print(box((-50, -50), (50, 1000)), count((-50, -50), (50, 1000)), box((-1000, -1000), (1000, 1000)))
