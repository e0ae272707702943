"""Model of tests/programs/files_slices.sgl from the brief (§8: SplitMix64,
rand_ints, rand_floats, the file slices), not from sglc."""

from brief_random import rand_floats, rand_ints

v = rand_ints(1001, -1000000, 1000000, 5)
f = rand_floats(777, 9)


def part(lo, hi):
    return f"[{hi - lo}, {sum(v[lo:hi])}]"


print(1001, 1001, 777)
print(part(0, 1001), part(3, 3), part(1000, 1001))
print(part(0, 1001), part(10, 20))
print(repr(max(f)), repr(max(f[0:5])))
print("true", "[" + ", ".join(map(str, v[996:1001])) + "]")
