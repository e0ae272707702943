"""The brief's random numbers (§8), for the models of this folder and the
tests' own models: SplitMix64 draws, `rand_ints(n, lo, hi, seed)` = lo +
draw % (hi - lo), `rand_floats(n, seed)` = (draw >> 11) * 2^-53.  Written
from the brief, not from sglc (one copy: the models used to repeat it)."""

M = 2**64


def draws(n: int, seed: int) -> list[int]:
    s, out = seed % M, []
    for _ in range(n):
        s = (s + 0x9E3779B97F4A7C15) % M
        z = s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % M
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % M
        out.append(z ^ (z >> 31))
    return out


def rand_ints(n: int, lo: int, hi: int, seed: int) -> list[int]:
    return [lo + d % (hi - lo) for d in draws(n, seed)]


def rand_floats(n: int, seed: int) -> list[float]:
    return [(d >> 11) * 2.0**-53 for d in draws(n, seed)]
