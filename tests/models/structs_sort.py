"""Model of tests/programs/structs_sort.sgl from the brief (§8: SplitMix64,
rand_ints, sort of structs), not from sglc."""
import math

from brief_random import rand_ints


def fkey(x):  # floats as '<' orders them, -0.0 == 0.0, NaNs equal and last
    return (1, 0.0) if math.isnan(x) else (0, x)


def b(x):
    return "true" if x else "false"


n = 300
keys = rand_ints(n, 0, 17, 11)
kv = [(keys[i], i) for i in range(n)]
s = sorted(kv)  # Python's sort is stable; (key, index) pairs are distinct


def fkv(p):
    return f"KV(key={p[0]}, index={p[1]})"


print("true", fkv(s[0]), fkv(s[n - 1]), fkv(s[n // 2]))
print([p[1] for p in s[:12]])

nan, inf = math.nan, math.inf
fk = [(2.0, 0), (-0.0, 1), (nan, 2), (1.5, 3), (0.0, 4), (2.0, 5), (-inf, 6), (-nan, 7), (-0.0, 8),
      (inf, 9), (0.0, 10), (-1.5, 11)]
sfk = sorted(fk, key=lambda p: (fkey(p[0]), p[1]))
print("[" + ", ".join(f"FK(key={p[0]!r}, tag={p[1]})" for p in sfk) + "]")
zs = [0.0, -0.0, -1.0, -0.0, 0.0, nan, -2.0]
print("[" + ", ".join(f"Z(z={z!r})" for z in sorted(zs, key=fkey)) + "]")  # stable

fs = rand_ints(60, 0, 3, 5)
ms = [(i % 3 == 1, float(fs[i]) - 1.0, (i * 7) % 4) for i in range(60)]
sm = sorted(ms, key=lambda m: (m[0], fkey(m[1]), m[2]))


def fm(m):
    return f"Mixed(flag={b(m[0])}, f={m[1]!r}, k={m[2]})"


print("[" + ", ".join(fm(m) for m in sm[0:5]) + "]")
print("[" + ", ".join(fm(m) for m in sm[55:60]) + "]")
print("[]", "[KV(key=1, index=1)]", "true")
