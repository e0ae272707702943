"""Model of tests/programs/structs_tree.sgl from the brief (§3, §6, §8), not
from sglc: the tree only distributes the work, so the result is the
sequential one."""

n = 29
items = [(i, float((i * 37) % 11) * 0.5, [i * 10 + k for k in range(i % 4)]) for i in range(n)]
scale, bonus = 2.0, [100, 200]
count, total, ids, best = 0, 0.0, [], None
for (i, w, hits) in items:
    w = w * scale
    hits = hits + [b + i for b in bonus]
    count += 1
    total += w + float(len(hits))
    ids.append(i)
    if best is None or w > best[1]:
        best = (i, w, hits)


def fitem(it):
    return f"Item(id={it[0]}, w={it[1]!r}, hits={it[2]})"


print(count, repr(total), ids)
print(fitem(best))
print(fitem(items[5]), f"Config(scale={scale!r}, bonus={bonus}, on=true)")
print(best[2], [-5] + best[2][1:], "false")
