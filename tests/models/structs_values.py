"""Model of tests/programs/structs_values.sgl from the brief (§3, §8), not from sglc."""
import copy


def fp(p):
    return f"Point(x={p[0]!r}, y={p[1]!r})"


def fpoly(p):
    pts = "[" + ", ".join(fp(x) for x in p["pts"]) + "]"
    return (f"Poly(name={p['name']}, pts={pts}, tags={p['tags']}, center={fp(p['center'])}, "
            f"closed={'true' if p['closed'] else 'false'})")


def b(x):
    return "true" if x else "false"


ORIGIN = [0.0, 0.0]
UNIT = [1.0, 1.0]
sq = {"name": 1, "pts": [list(ORIGIN), [2.0, 0.0], [2.0, 2.0], [0.0, 2.0]], "tags": [[1, 2], []],
      "center": list(UNIT), "closed": True}
cp = copy.deepcopy(sq)
cp["pts"][0][0] = -1.0
cp["tags"][1] = [7]
cp["center"] = list(ORIGIN)
print(fpoly(sq))
print(fpoly(cp))
print(b(sq == cp), b(sq != cp), b(sq["pts"][1] == cp["pts"][1]), b(cp["center"] == ORIGIN))


def moved(p, dx):
    q = copy.deepcopy(p)
    for pt in q["pts"]:
        pt[0] += dx
    q["center"][0] = q["center"][0] + dx
    q["tags"][0].append(99)
    return q


def area2(p):
    s = 0.0
    n = len(p["pts"])
    for i in range(n):
        a = p["pts"][i]
        c = p["pts"][(i + 1) % n]
        s += a[0] * c[1] - c[0] * a[1]
    return s


m = moved(sq, 0.5)
print("[" + ", ".join(fp(x) for x in m["pts"]) + "]", fp(m["center"]), m["tags"])
print(fp(sq["pts"][0]), sq["tags"])
print(repr(area2(sq)), repr(area2(m)), repr(area2(cp)))
polys = [copy.deepcopy(sq), copy.deepcopy(m)]
polys[1]["pts"][2][1] = 10.0
polys[0]["closed"] = False
polys[0]["pts"].append(list(UNIT))
print(len(polys[0]["pts"]), len(sq["pts"]), fp(polys[1]["pts"][2]), fp(m["pts"][2]), b(sq["closed"]),
      b(polys[0]["closed"]))
same = copy.deepcopy(polys[0])
same["pts"] = same["pts"][0:4]
same["closed"] = True
print(b(same == sq), b(polys[0] == sq))
