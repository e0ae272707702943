"""Model of tests/programs/files_slices.sgl from the brief (§8: SplitMix64,
rand_ints, rand_floats, the file slices), not from sglc."""

M = 2**64


def draws(n, seed):
    s = seed % M
    for _ in range(n):
        s = (s + 0x9E3779B97F4A7C15) % M
        z = s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % M
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % M
        yield z ^ (z >> 31)


def rand_ints(n, lo, hi, seed):
    return [lo + d % (hi - lo) for d in draws(n, seed)]


def rand_floats(n, seed):
    return [(d >> 11) * 2.0**-53 for d in draws(n, seed)]


v = rand_ints(1001, -1000000, 1000000, 5)
f = rand_floats(777, 9)


def part(lo, hi):
    return f"[{hi - lo}, {sum(v[lo:hi])}]"


print(1001, 1001, 777)
print(part(0, 1001), part(3, 3), part(1000, 1001))
print(part(0, 1001), part(10, 20))
print(repr(max(f)), repr(max(f[0:5])))
print("true", "[" + ", ".join(map(str, v[996:1001])) + "]")
