"""Model of tests/programs/split_bounds.sgl from the brief (§8), not from sglc."""
import math


def split_bounds(n, k):
    base, extra = divmod(n, k)
    return [i * base + min(i, extra) for i in range(k + 1)]


def split_by_bounds(n, w):
    out, pos = [0], 0
    if all(isinstance(x, int) for x in w):
        W, c = sum(w), 0
        for x in w[:-1]:
            c += x
            pos = max(pos, n * c // W)
            out.append(pos)
    else:
        W = 0.0
        for x in w:
            W += x
        c = 0.0
        if math.isinf(W):  # the brief's ratios, computed on scaled weights
            w = [x * 2.0 ** -64 for x in w]
            W = 0.0
            for x in w:
                W += x
        for x in w[:-1]:
            c += x
            pos = max(pos, min(n, math.floor(float(n) * c / W)))
            out.append(pos)
    out.append(n)
    return out


def fmt(v):
    return "[" + ", ".join(map(str, v)) + "]"


print(fmt(split_bounds(10, 3)), fmt(split_bounds(0, 2)), fmt(split_bounds(2, 5)), fmt(split_bounds(7, 1)))
print(fmt(split_bounds(2**63 - 1, 2)))
print("true")
print(fmt(split_by_bounds(10, [1, 1, 1])), fmt(split_by_bounds(10, [0, 2, 0, 1])), fmt(split_by_bounds(10, [3])))
print(fmt(split_by_bounds(10, [2**63 - 1, 2**63 - 1, 2])))
print(fmt(split_by_bounds(7, [0.1, 0.2, 0.3])), fmt(split_by_bounds(100, [1.0, 1e-3, 2.5, 0.0, 3.25])))
print(fmt(split_by_bounds(10, [1e308, 1e308, 1e308])), fmt(split_by_bounds(0, [1, 2])))
print("true")


def sq(lo, hi):
    return sum(i * i for i in range(lo, hi))


print(sq(0, 1000), sq(5, 6), sq(3, 3))
