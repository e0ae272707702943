"""Model of tests/programs/structs_nbody.sgl from the brief (§3, §8), not from sglc."""

DT = 0.5
G = (0.0, -1.0)


def fmt(b):
    (px, py), (vx, vy), m, i = b
    return (f"Body(pos=Vec2(x={px!r}, y={py!r}), vel=Vec2(x={vx!r}, y={vy!r}), "
            f"mass={m!r}, id={i})")


n = 23
bs = [[[float(i), float(i % 7) * 2.0], [float(i % 3) - 1.0, 0.25 * float(i % 5)],
       1.0 + 0.5 * float(i % 4), i] for i in range(n)]
out = [[list(b[0]), list(b[1]), b[2], b[3]] for b in bs]
for _ in range(6):
    for b in out:
        b[1][0] += G[0] * DT
        b[1][1] += G[1] * DT * b[2]
        b[0][0] += b[1][0] * DT
        b[0][1] += b[1][1] * DT
        if b[0][1] < 0.0:
            b[0][1] = -b[0][1]
            b[1][1] = -b[1][1]
            b[3] += 1000
print(len(out), fmt(out[0]), fmt(out[n - 1]))
sy = 0.0
for b in out:
    sy += b[0][1]
print(sum(1 for b in out if b[3] >= 1000), repr(sy))
print(fmt(bs[3]), fmt(out[3]))
print("false" if bs != out else "true", "true", "true" if out[5][0] != bs[5][0] else "false")
