"""Random, well-typed, shape-independent SGL programs (for differential testing).

    python tests/gen/sglgen.py --seed 7          print one program

The programs follow the language brief (LANGUAGE.md) only.  Every program
prints from the root alone, after its tree functions return, and combines
the children's results only in ways that do not depend on the machine shape:
elementwise maps gathered in order (concat), global prefix sums with offsets
sent down, int sums/products/min/max (wraparound arithmetic is a commutative
ring, so any grouping gives the same int), all/any of bools, sorting the full
concatenation.  Floats are never summed across the tree; a float sum is only
taken at the root, on the full concatenation.  Every tree function has the
`if worker { ...; return ...; }` base case, so the one-node tree (shape 0)
works too.  Integer divisors are always in 2..14; shift counts are literals
in 0..63 or masked into that range (`k & 63`); indexes are reduced modulo
a length that was checked to be positive.  Same seed, same program.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Callable

SENTINEL = "-4611686018427387904"  # below every value a program can reach


class Gen:
    def __init__(self, seed: int, max_kernels: int = 3) -> None:
        self.r = random.Random(seed)
        # the bitwise operators are drawn from a stream of their own, so
        # that they replace operators of the programs without changing
        # anything else that a seed makes
        self.rb = random.Random(seed * 7919 + 17)
        self.max_kernels = max_kernels
        self.funcs: list[str] = []
        self.main: list[str] = []
        self.n = 0

    # ------------------------------------------------------------ names

    def fresh(self, base: str) -> str:
        self.n += 1
        return f"{base}{self.n}"

    # ------------------------------------------------------------ expressions

    def int_lit(self) -> str:
        r = self.r.random()
        if r < 0.6:
            return str(self.r.randint(0, 20))
        if r < 0.8:
            return str(self.r.randint(21, 1000))
        if r < 0.9:
            return "(0 - " + str(self.r.randint(1, 50)) + ")"
        return self.r.choice(["1_000_003", "6364136223846793005", "4611686018427387903",
                              "9223372036854775807", "1442695040888963407"])

    def int_expr(self, names: list[str], depth: int = 0) -> str:
        """An int expression over int variables names; never fails at run time."""
        r = self.r.random()
        if depth >= 3 or r < 0.25:
            if names and self.r.random() < 0.7:
                return self.r.choice(names)
            return self.int_lit()
        a = self.int_expr(names, depth + 1)
        b = self.int_expr(names, depth + 1)
        k = self.r.randrange(10)
        if k < 6 and self.rb.random() < 0.3:
            return self.bitwise(a, b)
        if k < 2:
            return f"({a} + {b})"
        if k < 4:
            return f"({a} - {b})"
        if k < 6:
            return f"({a} * {b})"
        if k == 6:
            return f"({a} / ({b} % 7 + 8))"
        if k == 7:
            return f"({a} % ({b} % 5 - 9))"
        if k == 8:
            return f"{self.r.choice(['min', 'max'])}({a}, {b})"
        c = self.bool_expr(names, depth + 1)
        return f"ifv({c}, {a}, {b})"

    def bitwise(self, a: str, b: str) -> str:
        """a and b combined by a bitwise operator (the brief §3); a shift
        count is a literal in 0 .. 63 or masked into that range."""
        k = self.rb.randrange(7)
        if k < 3:
            return f"({a} {'&|^'[k]} {b})"
        if k == 3:
            return f"(~{a} {self.rb.choice('&|^')} {b})"
        op = self.rb.choice(["<<", ">>"])
        if k == 4:
            return f"({a} {op} {self.rb.choice([0, 1, 2, 7, 31, 32, 62, 63])})"
        return f"({a} {op} ({b} & 63))"

    def bool_expr(self, names: list[str], depth: int = 0) -> str:
        a = self.int_expr(names, depth + 1)
        b = self.int_expr(names, depth + 1)
        op = self.r.choice(["<", "<=", ">", ">=", "==", "!="])
        e = f"{a} {op} {b}"
        k = self.r.randrange(6)
        if k == 0 and depth < 2:
            return f"({e} && {self.bool_expr(names, depth + 1)})"
        if k == 1 and depth < 2:
            return f"({e} || !({self.bool_expr(names, depth + 1)}))"
        return f"({e})"

    def float_expr(self, names: list[str], ints: list[str], depth: int = 0) -> str:
        """A float expression over float variables names and int variables ints."""
        r = self.r.random()
        if depth >= 3 or r < 0.25:
            k = self.r.randrange(4)
            if names and k < 2:
                return self.r.choice(names)
            if ints and k == 2:
                return f"float({self.r.choice(ints)} % 1000)"
            return self.r.choice(["0.5", "1.25", "2.0", "0.1", "3.0e-2", "7.0", "1e3", ".75"])
        a = self.float_expr(names, ints, depth + 1)
        b = self.float_expr(names, ints, depth + 1)
        k = self.r.randrange(9)
        if k < 2:
            return f"({a} + {b})"
        if k < 4:
            return f"({a} - {b})"
        if k < 5:
            return f"({a} * {b})"
        if k == 5:
            return f"({a} / (abs({b}) + 1.0))"
        if k == 6:
            return f"sqrt(abs({a}))"
        if k == 7:
            return f"{self.r.choice(['sin', 'cos', 'floor', 'ceil'])}({a})"
        return f"{self.r.choice(['min', 'max'])}({a}, {b})"

    # ------------------------------------------------------------ statements

    def seq_block(self, ints: list[str], vec: str | None, indent: str, budget: int,
                  readonly: tuple[str, ...] = ()) -> list[str]:
        """Sequential statements that update the int variables ints (and vec);
        the names in readonly are read, never written."""
        out: list[str] = []
        targets = [x for x in ints if x not in readonly]
        for _ in range(budget):
            k = self.r.randrange(8)
            if not targets:
                break
            t = self.r.choice(targets)
            if k <= 2:
                op = self.r.choice(["=", "+=", "-=", "*="])
                e = self.int_expr(ints)
                if op != "=" and self.rb.random() < 0.3:
                    op = self.rb.choice(["&=", "|=", "^=", "<<=", ">>="])
                    if op in ("<<=", ">>="):
                        e = f"({e}) & 63" if self.rb.random() < 0.5 else str(self.rb.randint(0, 63))
                out.append(f"{indent}{t} {op} {e};")
            elif k == 3:
                out.append(f"{indent}{t} /= ({self.int_expr(ints)} % 3 + 5);")
            elif k == 4:
                out.append(f"{indent}if {self.bool_expr(ints)} {{")
                out.append(f"{indent}    {t} = {self.int_expr(ints)};")
                out.append(f"{indent}}} else {{")
                out.append(f"{indent}    {t} %= ({self.int_expr(ints)} % 4 + 9);")
                out.append(f"{indent}}}")
            elif k == 5:
                i = self.fresh("i")
                out.append(f"{indent}for {i} in 0 .. {self.r.randint(0, 4)} {{")
                out.append(f"{indent}    {t} = {self.int_expr(ints + [i])};")
                if self.r.random() < 0.3:
                    out.append(f"{indent}    if {i} == 2 {{ break; }}")
                out.append(f"{indent}}}")
            elif k == 6:
                c = self.fresh("c")
                out.append(f"{indent}var {c} = 0;")
                out.append(f"{indent}while {c} < {self.r.randint(1, 3)} {{")
                out.append(f"{indent}    {c} += 1;")
                out.append(f"{indent}    if {c} == 2 {{ continue; }}")
                out.append(f"{indent}    {t} += {self.int_expr(ints + [c])};")
                out.append(f"{indent}}}")
            elif vec is not None:
                out.append(f"{indent}if len({vec}) > 0 {{")
                j = f"({self.int_expr(ints)} % len({vec}) + len({vec})) % len({vec})"
                out.append(f"{indent}    {vec}[{j}] = {self.int_expr(ints)};")
                out.append(f"{indent}    {t} += {vec}[{j}];")
                out.append(f"{indent}}}")
        return out

    # ------------------------------------------------------------ tree functions

    def f_map(self) -> tuple[str, Callable[[str], list[str]]]:
        """[int] -> [int], elementwise with the global index, concat."""
        name = self.fresh("map")
        body = self.seq_block(["y", "k", "g"], None, "            ", self.r.randint(1, 3),
                              readonly=("k",))
        bc = self.r.choice(["bcast k -> kk;", "bcast k -> kk;\n    bcast k + 0 -> k;"])
        src = f"""func {name}(v: [int], k: int, off: int) -> [int] {{
    if worker {{
        var out: [int] = [];
        for i in 0 .. len(v) {{
            var g = off + i;
            var y = v[i];
{chr(10).join(body)}
            push(out, {self.int_expr(['y', 'k', 'g'])});
        }}
        return out;
    }}
    var blocks = split(v, nchildren);
    var offs = fill(nchildren, off);
    for c in 1 .. nchildren {{
        offs[c] = offs[c - 1] + len(blocks[c - 1]);
    }}
    var part: [int];
    var o: int;
    var kk: int;
    var r: [int];
    var rs: [[int]];
    scatter blocks -> part;
    scatter offs -> o;
    {bc}
    pardo {{
        r = {name}(part, kk, o);
    }}
    gather r -> rs;
    return concat(rs);
}}
"""
        self.funcs.append(src)
        return name, lambda v: [f"print(\"{name}\", {name}({v}, {self.int_expr([])}, 0));"]

    def f_reduce(self) -> tuple[str, Callable[[str], list[str]]]:
        """[int] -> int: sum, product, min or max, with a persistent child value."""
        name = self.fresh("red")
        kind = self.r.choice(["sum", "prod", "max", "min"])
        elem = self.int_expr(["x", "k"])
        if kind == "sum":
            leaf = ["var acc = 0;", "for i in 0 .. len(v) {", "    var x = v[i];",
                    f"    acc += {elem};", "}"]
            comb = "acc = sum(accs);"
        elif kind == "prod":
            leaf = ["var acc = 1;", "for i in 0 .. len(v) {", "    var x = v[i];",
                    f"    acc *= ({elem}) % 5 + 3;", "}"]
            comb = "acc = 1;\n    for c in 0 .. len(accs) { acc *= accs[c]; }"
        else:
            leaf = [f"var acc = {SENTINEL};" if kind == "max" else "var acc = " + SENTINEL[1:] + ";",
                    "var m: [int] = [];", "for i in 0 .. len(v) {", "    var x = v[i];",
                    f"    push(m, {elem});", "}",
                    f"if len(m) > 0 {{ acc = {kind}(acc, {kind}(m)); }}"]
            comb = f"acc = {kind}(accs);"
        leaf_s = "\n".join("        " + ln for ln in leaf)
        src = f"""func {name}(v: [int], k: int) -> int {{
    if worker {{
{leaf_s}
        return acc;
    }}
    var part: [int];
    var acc: int;
    var accs: [int];
    var twice: int;
    bcast k -> k;
    scatter split(v, nchildren) -> part;
    pardo {{
        acc = {name}(part, k);
    }}
    gather acc -> accs;
    pardo {{
        twice = acc;
    }}
    var both = fill(2, fill(0, 0));
    gather twice -> both[1];
    accs = both[1];
    {comb}
    return acc;
}}
"""
        self.funcs.append(src)
        return name, lambda v: [f"print(\"{name}\", {name}({v}, {self.int_expr([])}));"]

    def f_scan(self) -> tuple[str, Callable[[str], list[str]]]:
        """Global inclusive prefix sums; 'loc' persists from one pardo to the next."""
        name = self.fresh("scan")
        elem = self.int_expr(["x"])
        if self.r.random() < 0.5:
            send = """    scatter offs -> add;
    pardo {
        for i in 0 .. len(loc) {
            loc[i] += add;
        }
    }"""
        else:  # an indexed target, its index evaluated on the child
            send = """    var cell: [int];
    pardo {
        cell = [7, 0, 7];
        add = 1;
    }
    scatter offs -> cell[add];
    pardo {
        for i in 0 .. len(loc) {
            loc[i] += cell[1] + cell[0] - cell[2];
        }
    }"""
        src = f"""func {name}(v: [int]) -> [int] {{
    if worker {{
        var out: [int] = [];
        var run = 0;
        for i in 0 .. len(v) {{
            var x = v[i];
            run += {elem};
            push(out, run);
        }}
        return out;
    }}
    var part: [int];
    var loc: [int];
    var t: int;
    var ts: [int];
    var add: int;
    var res: [[int]];
    scatter split(v, nchildren) -> part;
    pardo {{
        loc = {name}(part);
        t = 0;
        if len(loc) > 0 {{
            t = loc[len(loc) - 1];
        }}
    }}
    gather t -> ts;
    var offs = fill(nchildren, 0);
    for c in 1 .. nchildren {{
        offs[c] = offs[c - 1] + ts[c - 1];
    }}
{send}
    gather loc -> res;
    return concat(res);
}}
"""
        self.funcs.append(src)
        return name, lambda v: [f"print(\"{name}\", {name}({v}));"]

    def f_floats(self) -> tuple[str, Callable[[str], list[str]]]:
        """[float] -> [float] elementwise (with a bcast table), concat; sum at the root."""
        name = self.fresh("fmap")
        e = self.float_expr(["x", "t0"], ["k"])
        src = f"""func {name}(v: [float], tab: [float], k: int) -> [float] {{
    if worker {{
        var out: [float] = [];
        for i in 0 .. len(v) {{
            var x = v[i];
            var t0 = tab[(k % len(tab) + len(tab)) % len(tab)];
            push(out, {e});
        }}
        return out;
    }}
    var part: [float];
    var r: [float];
    var rs: [[float]];
    var tb: [float];
    var kk: int;
    scatter split(v, nchildren) -> part;
    bcast tab -> tb;
    bcast k -> kk;
    pardo {{
        r = {name}(part, tb, kk);
    }}
    gather r -> rs;
    return concat(rs);
}}
"""
        self.funcs.append(src)

        def call(v: str) -> list[str]:
            fv = self.fresh("fv")
            n = self.fresh("n")
            return [f"var {n} = len({v});",
                    f"var {fv} = {name}(rand_floats({n}, {self.r.randint(0, 99)}), "
                    f"[{self.float_expr([], [])}, 0.5, 2.0], {self.int_expr([])});",
                    f"print(\"{name}\", {fv});",
                    f"print(\"{name} sum\", sum({fv}));",
                    f"if len({fv}) > 0 {{ print(\"{name} minmax\", min({fv}), max({fv}), "
                    f"sort({fv})[0]); }}"]
        return name, call

    def f_nested(self) -> tuple[str, Callable[[str], list[str]]]:
        """[[int]] -> [[int]]: each inner vector sorted and extended, concat."""
        name = self.fresh("nest")
        src = f"""func {name}(vv: [[int]], flag: bool) -> [[int]] {{
    if worker {{
        var out: [[int]] = [];
        for i in 0 .. len(vv) {{
            var s = sort(vv[i]);
            if flag {{
                push(s, len(s));
            }}
            push(out, s);
        }}
        return out;
    }}
    var blocks = split(vv, nchildren);
    var nonempty: [bool] = [];
    for c in 0 .. nchildren {{
        push(nonempty, len(blocks[c]) > 0);
    }}
    var part: [[int]];
    var ne: bool;
    var fl: bool;
    var r: [[int]];
    var rs: [[[int]]];
    var oks: [bool];
    scatter blocks -> part;
    scatter nonempty -> ne;
    var extra: [[int]];
    bcast flag -> fl;
    bcast [[len(vv), 1], [], [2]] -> extra;
    pardo {{
        r = [];
        if ne {{
            r = {name}(part, fl);
        }}
        if len(extra) != 3 || len(extra[0]) != 2 || extra[2][0] != 2 {{
            print("bad bcast of [[int]]", extra);
        }}
    }}
    gather r -> rs;
    gather ne == (len(r) > 0) -> oks;
    for c in 0 .. len(oks) {{
        if !oks[c] {{
            print("inconsistent", c);
        }}
    }}
    return concat(rs);
}}
"""
        self.funcs.append(src)

        def call(v: str) -> list[str]:
            vv = self.fresh("vv")
            return [f"var {vv}: [[int]] = [];",
                    f"for i in 0 .. len({v}) {{",
                    f"    push({vv}, slice({v}, i, min(len({v}), i + i % 4)));",
                    "}",
                    f"print(\"{name}\", {name}({vv}, {self.r.choice(['true', 'false'])}));"]
        return name, call

    def f_bools(self) -> tuple[str, Callable[[str], list[str]]]:
        """[int] -> [bool] elementwise, plus all/any gathered as bools."""
        name = self.fresh("pred")
        cond = self.bool_expr(["x"])
        src = f"""func {name}(v: [int]) -> [bool] {{
    if worker {{
        var out: [bool] = [];
        for i in 0 .. len(v) {{
            var x = v[i];
            push(out, {cond});
        }}
        return out;
    }}
    var part: [int];
    var r: [bool];
    var rs: [[bool]];
    scatter split(v, nchildren) -> part;
    pardo {{
        r = {name}(part);
    }}
    gather r -> rs;
    return concat(rs);
}}
"""
        self.funcs.append(src)

        def call(v: str) -> list[str]:
            b = self.fresh("b")
            return [f"var {b} = {name}({v});",
                    f"var cnt{b} = 0;",
                    f"for i in 0 .. len({b}) {{ if {b}[i] {{ cnt{b} += 1; }} }}",
                    f"print(\"{name}\", {b}, cnt{b}, {b} == fill(len({b}), true));"]
        return name, call

    def f_sort(self) -> tuple[str, Callable[[str], list[str]]]:
        """Leaves sort, masters merge their children's sorted blocks (a loop merge)."""
        name = self.fresh("msort")
        src = f"""func merge2(a: [int], b: [int]) -> [int] {{
    var out: [int] = [];
    var i = 0;
    var j = 0;
    while i < len(a) || j < len(b) {{
        if j >= len(b) || (i < len(a) && a[i] <= b[j]) {{
            push(out, a[i]);
            i += 1;
        }} else {{
            push(out, b[j]);
            j += 1;
        }}
    }}
    return out;
}}

func {name}(v: [int]) -> [int] {{
    if worker {{
        return sort(v);
    }}
    var part: [int];
    var r: [int];
    var rs: [[int]];
    scatter split(v, nchildren) -> part;
    pardo {{
        r = {name}(part);
    }}
    gather r -> rs;
    var acc: [int] = [];
    for c in 0 .. len(rs) {{
        acc = merge2(acc, rs[c]);
    }}
    return acc;
}}
"""
        if any("func merge2(" in f for f in self.funcs):
            src = src[src.index(f"func {name}("):]
        self.funcs.append(src)
        return name, lambda v: [f"print(\"{name}\", {name}({v}) == sort({v}), "
                                f"slice({name}({v}), 0, min(3, len({v}))));"]

    # ------------------------------------------------------------ program

    def program(self) -> str:
        self.funcs.append("""func ifv(c: bool, a: int, b: int) -> int {
    if c {
        return a;
    }
    return b;
}
""")
        n = self.r.choice([0, 1, 2, 3, 5, 7, 8, 12, 17, 24, 40])
        lo = self.r.randint(-100, 0)
        hi = lo + self.r.randint(1, 300)
        makers = [self.f_map, self.f_reduce, self.f_scan, self.f_floats, self.f_nested,
                  self.f_bools, self.f_sort]
        chosen = self.r.sample(makers, self.r.randint(min(2, self.max_kernels), self.max_kernels))
        calls = [m() for m in chosen]
        body = [f"var n = arg_int(0, {n});",
                f"var v = rand_ints(n, {lo}, {hi}, {self.r.randint(0, 10**6)});",
                "print(\"v\", v);",
                "var a = len(v);",
                "var b = 1;"]
        body += self.seq_block(["a", "b"], "v", "", self.r.randint(1, 4))
        for _, call in calls:
            body += call("v")
        body += ["print(\"a b\", a, b);",
                 "var w = concat([v, range(0, 3), fill(2, a % 10)]);",
                 "print(\"w\", len(w), sum(w), min(w), max(w));",
                 "var w2 = w;",
                 f"w2[{self.r.randint(0, 2)}] *= 3;",
                 "push(w2, 5);",
                 "print(\"w2\", w == w2, len(w), len(w2), slice(w2, 0, 4), sort(w2)[0]);"]
        main = "func main() {\n" + "\n".join("    " + ln for ln in body) + "\n}\n"
        header = "// generated by tests/gen/sglgen.py\n"
        return header + "\n".join(self.funcs) + "\n" + main


MAX_LINES = 120


def generate(seed: int) -> str:
    """The program of seed: at most MAX_LINES lines (fewer kernels if needed)."""
    text = ""
    for kmax in (3, 2, 1):
        text = Gen(seed, kmax).program()
        if text.count("\n") <= MAX_LINES:
            break
    return text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    print(generate(args.seed), end="")


if __name__ == "__main__":
    main()
