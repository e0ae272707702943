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

Structs, strings and node variables (brief §3, §4, §6.2) follow the same
rules.  Structs (with int, float, bool, vector and string fields) are
mapped elementwise through field targets (`p.id += ...`, `p.hits[0] += ...`,
`out[j].id += ...`), sent as a whole (scatter, bcast, gather, gather into a
field), combined by sums, max and `||`, and sorted only at the root, where
the full vector is.  Strings are joined across the tree by concatenation in
child order (associative, so any grouping gives the same string) and the
largest one by byte order; `slice` bounds are clamped with `min(len(s), k)`;
literals are ASCII, with the escapes `\\n \\t \\" \\\\`.  Node variables are
used so that what the root sees does not depend on the shape: a node's
block of the data is its subtree's concatenation (a master gathers its
children's copies after each step), its offset is its block's global
start, and a counter is either changed on every node alike (once per call)
or set at the root and sent down (`bcast cnt -> cnt;`) before the workers
read it; a call made at the root takes node variables as arguments (copies)
and changes them (a block it puts back).
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
        self.need_ifs = False  # the string kernel uses ifs()

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

    # ------------------------------------------------------------ strings

    STR_LITS = ['""', '"a"', '"ab"', '"x y"', '"t\\tz"', '"q\\"q"', '"b\\\\s"', '"n\\nl"',
                '"Zz"', '"-"', '":"', '"abc"', '"abd"']

    def str_expr(self, svars: list[str], ints: list[str], depth: int = 0) -> str:
        """A string expression over string variables svars and int variables
        ints; never fails (slice bounds are clamped with min)."""
        k = self.r.randrange(10)
        if depth >= 2 or k < 3:
            if svars and self.r.random() < 0.6:
                return self.r.choice(svars)
            return self.r.choice(self.STR_LITS)
        if k < 5:
            return f"({self.str_expr(svars, ints, depth + 1)} + {self.str_expr(svars, ints, depth + 1)})"
        if k == 5:
            return f"str({self.int_expr(ints, 2)})"
        if k == 6:
            return f"str({self.r.choice([self.float_expr([], ints, 2), self.bool_expr(ints, 2)])})"
        if k == 7 and ints:
            return f"str([{self.r.choice(ints)}, {len(svars)}])"
        if svars:
            s = self.r.choice(svars)
            n = self.r.randint(0, 4)
            if self.r.random() < 0.5:
                return f"slice({s}, 0, min(len({s}), {n}))"
            return f"slice({s}, min(len({s}), {n}), len({s}))"
        return self.r.choice(self.STR_LITS)

    def str_cond(self, svars: list[str], ints: list[str]) -> str:
        """A bool over strings: a comparison (byte order) or a length test."""
        a = self.str_expr(svars, ints, 1)
        if self.r.random() < 0.7:
            op = self.r.choice(["<", "<=", ">", ">=", "==", "!="])
            return f"({a} {op} {self.str_expr(svars, ints, 1)})"
        return f"(len({a}) {self.r.choice(['<', '>', '=='])} {self.r.randint(0, 6)})"

    def struct_decl(self, name: str, fields: list[tuple[str, str]]) -> str:
        """A struct declaration, mostly on one line."""
        if self.r.random() < 0.75:
            return f"struct {name} {{ " + " ".join(f"{f}: {t};" for f, t in fields) + " }\n"
        return f"struct {name} {{\n" + "".join(f"    {f}: {t};\n" for f, t in fields) + "}\n"

    def f_strings(self) -> tuple[str, Callable[[str], list[str]]]:
        """[string] -> [string] elementwise (concat), and a tree join of the
        strings into a struct with string fields (concatenation in child
        order, the largest string, a count: all shape-independent)."""
        name = self.fresh("strs")
        join = self.fresh("join")
        sj = self.fresh("Sj")
        body: list[str] = []
        for _ in range(self.r.randint(1, 3)):
            k = self.r.randrange(4)
            ind = "            "
            if k == 0:
                body += [f"{ind}if {self.str_cond(['s', 't'], ['g', 'k'])} {{",
                         f"{ind}    t += {self.str_expr(['s', 't'], ['g', 'k'])};",
                         f"{ind}}} else {{",
                         f"{ind}    t = {self.str_expr(['s', 't'], ['g', 'k'])};",
                         f"{ind}}}"]
            elif k == 1:
                body.append(f"{ind}s += {self.str_expr(['t'], ['g', 'k'])};")
            elif k == 2:
                body.append(f"{ind}if len(t) > {self.r.randint(3, 12)} {{ t = slice(t, 1, len(t) - 1); }}")
            else:
                body.append(f"{ind}y += len(s) - len(t);")
        sepc = self.fresh("SEP")
        src = self.struct_decl(sj, [("all", "string"), ("best", "string"), ("n", "int")])
        src += f"const {sepc} = {self.r.choice(self.STR_LITS)} + {self.r.choice(self.STR_LITS)};\n"
        src += f"""
func {name}(v: [string], k: int, off: int) -> [string] {{
    if worker {{
        var out: [string] = [];
        for i in 0 .. len(v) {{
            var s = v[i];
            var g = off + i;
            var y = g;
            var t = {self.str_expr(['s'], ['g', 'k'])};
{chr(10).join(body)}
            if len(t) > 40 {{ t = slice(t, 0, 40); }}
            push(out, {self.str_expr(['s', 't'], ['g', 'k', 'y'])});
        }}
        return out;
    }}
    var blocks = split(v, nchildren);
    var offs = fill(nchildren, off);
    for c in 1 .. nchildren {{
        offs[c] = offs[c - 1] + len(blocks[c - 1]);
    }}
    var part: [string];
    var o: int;
    var kk: int;
    var r: [string];
    var rs: [[string]];
    scatter blocks -> part;
    scatter offs -> o;
    bcast k -> kk;
    pardo {{
        r = {name}(part, kk, o);
    }}
    gather r -> rs;
    return concat(rs);
}}

func {join}(v: [string], sep: string) -> {sj} {{
    var acc = {sj}("", "", 0);
    if worker {{
        for i in 0 .. len(v) {{
            acc.all += v[i] + sep;
            if v[i] > acc.best {{ acc.best = v[i]; }}
            acc.n += len(v[i]);
        }}
        return acc;
    }}
    var part: [string];
    var sp: string;
    var r: {sj};
    var rs: [{sj}];
    scatter split(v, nchildren) -> part;
    bcast sep -> sp;
    pardo {{
        r = {join}(part, sp);
    }}
    gather r -> rs;
    for c in 0 .. len(rs) {{
        acc.all = acc.all + rs[c].all;
        acc.best = ifs(rs[c].best > acc.best, rs[c].best, acc.best);
        acc.n += rs[c].n;
    }}
    return acc;
}}
"""
        self.funcs.append(src)
        self.need_ifs = True

        def call(v: str) -> list[str]:
            ss, rs, js = self.fresh("ss"), self.fresh("rs"), self.fresh("js")
            return [f"var {ss}: [string] = [];",
                    f"for i in 0 .. len({v}) {{",
                    f"    var x = {v}[i];",
                    f"    push({ss}, {self.str_expr([], ['x', 'i'])});",
                    "}",
                    f"var {rs} = {name}({ss}, {self.int_expr([])}, 0);",
                    f"print(\"{name}\", {rs});",
                    f"print(\"{name} sorted\", sort({rs}), str(len({rs})) + \" strings\");",
                    f"var {js} = {join}({rs}, {self.r.choice([*self.STR_LITS[:4], sepc, sepc])});",
                    f"print(\"{join}\", {js}, {js}.all, len({js}.all), {js}.best, "
                    f"{js} == {sj}({js}.all, {js}.best, {js}.n));"]
        return name, call

    # ------------------------------------------------------------ structs

    def f_structs(self) -> tuple[str, Callable[[str], list[str]]]:
        """[Rec] -> [Rec] elementwise with field targets (concat), a bcast
        config struct with vector and string fields, a struct reduction
        (sum, max, or: shape-independent), and sort of a [Key] of int,
        float, bool and string fields at the root."""
        name = self.fresh("smap")
        stat = self.fresh("stat")
        rec, cfg, key, st = self.fresh("Rec"), self.fresh("Cfg"), self.fresh("Key"), self.fresh("St")
        pt = self.fresh("Pt")
        kinds = [self.r.choice(["int", "float", "bool", "string"]) for _ in range(self.r.randint(1, 3))]
        key_of = {"int": self.r.choice(["p.id % 7", "len(p.tag)", "p.hits[0] % 3"]),
                  "float": self.r.choice(["p.w", "floor(p.w)"]),
                  "bool": self.r.choice(["p.on", "p.id > 0"]),
                  "string": self.r.choice(["p.tag", "slice(p.tag, 0, min(len(p.tag), 1))"])}
        body = self.seq_block(["p.id", "k", "g"], None, "            ", self.r.randint(1, 2),
                              readonly=("k", "g"))
        w = self.float_expr(["p.w", "cfg.scale"], ["p.id", "g"])
        on = self.bool_expr(["p.id", "g", "k"])
        tag = self.str_expr(["p.tag", "cfg.name"], ["g"])
        level1 = self.r.choice(["cf.k += 0;", "push(cf.bonus, 9);\n        cf.bonus = slice(cf.bonus, 0, len(cf.bonus) - 1);",
                                "cf.name = cf.name + \"\";"])
        send = self.r.choice(["bcast cfg -> cf;", "scatter fill(nchildren, cfg) -> cf;"])
        boxed = self.r.random() < 0.5
        box = self.fresh("Box")
        with_stat = self.r.random() < 0.5
        decls = [self.struct_decl(rec, [("id", "int"), ("w", "float"), ("on", "bool"),
                                        ("hits", "[int]"), ("tag", "string"), ("at", pt)]),
                 self.struct_decl(pt, [("x", "int"), ("y", "float")]),
                 self.struct_decl(cfg, [("k", "int"), ("scale", "float"), ("bonus", "[int]"),
                                        ("name", "string")]),
                 self.struct_decl(key, [(f"f{i}", t) for i, t in enumerate(kinds)])]
        if with_stat:
            decls.append(self.struct_decl(st, [("n", "int"), ("s", "int"), ("any", "bool"),
                                               ("hi", "int")]))
        if boxed:
            decls.append(self.struct_decl(box, [("n", "int"), ("parts", f"[[{rec}]]")]))
        gath = (f"var bx = {box}(1, []);\n    gather r -> bx.parts;\n    var rr = bx.parts;" if boxed
                else f"var rr: [[{rec}]];\n    gather r -> rr;")
        src = "".join(decls) + f"""
func {name}(rs: [{rec}], cfg: {cfg}, off: int) -> [{rec}] {{
    if worker {{
        var out: [{rec}] = [];
        for i in 0 .. len(rs) {{
            var p = rs[i];
            var g = off + i;
            var k = cfg.k;
{chr(10).join(body)}
            p.w = {w};
            p.on = {on} != p.on;
            push(p.hits, {self.int_expr(['g', 'k'])});
            if len(cfg.bonus) > 0 {{
                p.hits[0] += cfg.bonus[g % len(cfg.bonus)];
            }}
            p.tag = {tag};
            p.at.x += g;
            p.at.y = p.at.y + p.w;
            if len(p.tag) > 30 {{ p.tag = slice(p.tag, len(p.tag) - 30, len(p.tag)); }}
            push(out, p);
            out[len(out) - 1].id += {self.int_expr(['g', 'k'])};
            p.hits[0] = 0 - 7;
            if p == out[len(out) - 1] {{ print("aliased?", p); }}
        }}
        return out;
    }}
    var blocks = split(rs, nchildren);
    var offs = fill(nchildren, off);
    for c in 1 .. nchildren {{
        offs[c] = offs[c - 1] + len(blocks[c - 1]);
    }}
    var part: [{rec}];
    var o: int;
    var cf: {cfg};
    var r: [{rec}];
    scatter blocks -> part;
    scatter offs -> o;
    {send}
    pardo {{
        {level1}
        r = {name}(part, cf, o);
    }}
    {gath}
    return concat(rr);
}}
"""
        if with_stat:
            src += f"""
func {stat}(rs: [{rec}]) -> {st} {{
    var t = {st}(0, 0, false, {SENTINEL});
    if worker {{
        for i in 0 .. len(rs) {{
            t.n += 1;
            t.s += rs[i].id;
            t.any = t.any || rs[i].on;
            t.hi = max(t.hi, rs[i].id);
        }}
        return t;
    }}
    var part: [{rec}];
    var r: {st};
    var rr: [{st}];
    scatter split(rs, nchildren) -> part;
    pardo {{
        r = {stat}(part);
    }}
    gather r -> rr;
    for c in 0 .. len(rr) {{
        t.n += rr[c].n;
        t.s += rr[c].s;
        t.any = t.any || rr[c].any;
        t.hi = max(t.hi, rr[c].hi);
    }}
    return t;
}}
"""
        self.funcs.append(src)

        def call(v: str) -> list[str]:
            rs, out, keys = self.fresh("recs"), self.fresh("out"), self.fresh("keys")
            kargs = ", ".join(key_of[t].replace("p.", f"{out}[i].") for t in kinds)
            return [f"var {rs}: [{rec}] = [];",
                    f"for i in 0 .. len({v}) {{",
                    f"    push({rs}, {rec}({v}[i], float({v}[i] % 100) * 0.5, {v}[i] % 2 == 0, "
                    f"slice({v}, 0, i % 3), {self.r.choice(self.STR_LITS)} + str(i), {pt}(i, 0.5)));",
                    "}",
                    f"var {out} = {name}({rs}, {cfg}({self.int_expr([])}, {self.float_expr([], [])}, "
                    f"[{self.int_lit()}, {self.int_lit()}], {self.r.choice(self.STR_LITS)}), 0);",
                    f"print(\"{name}\", {out});",
                    f"if len({out}) > 0 {{",
                    f"    print(\"{name} first\", {out}[0].hits, str({out}[0]), {out}[0] == {rs}[0], "
                    f"{out}[0] != {out}[len({out}) - 1]);",
                    f"    var q = {out}[0];",
                    "    push(q.hits, 1);",
                    f"    q.tag += {self.r.choice(self.STR_LITS)};",
                    f"    print(q == {out}[0], len(q.hits) - len({out}[0].hits), q.tag);",
                    "}",
                    f"var {keys}: [{key}] = [];",
                    f"for i in 0 .. len({out}) {{ push({keys}, {key}({kargs})); }}",
                    f"print(\"{key} sorted\", sort({keys}));",
                    *([f"print(\"{stat}\", {stat}({out}), {stat}({rs}).n);"] if with_stat else [])]
        return name, call

    # ------------------------------------------------------------ node variables

    def f_nodevars(self) -> tuple[str, Callable[[str], list[str]]]:
        """Node variables (brief §4, §6.2): a distribute call leaves each
        node its block (a master: its subtree's concatenation) and offset;
        later step calls update the blocks in place (kept across calls),
        with a counter sent down from the root; a helper takes node
        variables as arguments (copies) and changes them."""
        dist, step, peek = self.fresh("dist"), self.fresh("step"), self.fresh("peek")
        blk, off, cnt, stv, stt, cn = (self.fresh("blk"), self.fresh("off"), self.fresh("cnt"),
                                       self.fresh("stv"), self.fresh("Stv"), self.fresh("CN"))
        tg = self.fresh("tg")
        names = ["y", "g", cnt, "k"]
        body = self.seq_block(names, None, "            ", self.r.randint(1, 2),
                              readonly=("g", cnt, "k"))
        if self.r.random() < 0.5:
            send = f"    bcast {cnt} -> {cnt};"
        else:  # written at level 1 from a local sent down
            send = f"    var cc: int;\n    bcast {cnt} -> cc;\n    pardo {{\n        {cnt} = cc;\n    }}"
        init = self.r.choice([f"{cn} * {self.r.randint(2, 9)} + 1", f"(1 << {self.r.randint(0, 9)}) - {cn}",
                              f"[{cn}, 5, 7][{self.r.randint(0, 2)}]"])
        src = self.struct_decl(stt, [("calls", "int"), ("seen", "[int]")])
        src += f"""const {cn} = {self.r.randint(1, 20)};
var {blk}: [int] = [];
var {off} = 0;
var {cnt} = {init};
var {stv} = {stt}(0, [{cn}, -{cn}]);
var {tg} = {self.r.choice(self.STR_LITS)};

func {dist}(v: [int], o: int) {{
    {blk} = v;
    {off} = o;
    {stv}.calls += 1;
    {tg} += str({stv}.calls) + {self.r.choice(self.STR_LITS)};
    if worker {{
        return;
    }}
    var blocks = split(v, nchildren);
    var offs = fill(nchildren, o);
    for c in 1 .. nchildren {{
        offs[c] = offs[c - 1] + len(blocks[c - 1]);
    }}
    var part: [int];
    var oo: int;
    scatter blocks -> part;
    scatter offs -> oo;
    pardo {{
        {dist}(part, oo);
    }}
}}

func {step}(k: int) -> [int] {{
    if worker {{
        var out: [int] = [];
        for i in 0 .. len({blk}) {{
            var g = {off} + i;
            var y = {blk}[i];
{chr(10).join(body)}
            {blk}[i] = ({self.int_expr(names)}) % 1000 + g;
            push(out, {self.int_expr(names)});
        }}
        return out;
    }}
    var kk: int;
    var r: [int];
    var rs: [[int]];
    var bs: [[int]];
    var cs: [int];
    var ts: [string];
    bcast k -> kk;
{send}
    pardo {{
        r = {step}(kk);
    }}
    gather r -> rs;
    gather {blk} -> bs;
    gather {stv}.calls -> cs;
    gather {tg} -> ts;
    {blk} = concat(bs);
    if cs != fill(nchildren, {stv}.calls) || ts != fill(nchildren, {tg}) {{
        print("bad calls", cs, {stv}.calls, ts);
    }}
    return concat(rs);
}}

func {peek}(old: int, vold: [int]) -> int {{
    {cnt} += {self.r.randint(1, 9)};
    push({blk}, old);
    push({stv}.seen, len(vold));
    var n = len(vold) + len({blk});
    {blk} = slice({blk}, 0, len({blk}) - 1);
    return old * 3 - {cnt} + n;
}}
"""
        self.funcs.append(src)

        def call(v: str) -> list[str]:
            s = self.fresh("s")
            return [f"{dist}({v}, 0);",
                    f"print(\"{dist}\", {stv}, {blk} == {v}, {off}, {cnt});",
                    f"var {s} = {step}({self.int_expr([])});",
                    f"print(\"{step}\", {s}, {blk}, {cnt});",
                    f"{cnt} = {self.int_expr(['a', cnt])};",
                    self.r.choice([f"print(\"{peek}\", {stv}, {peek}({cnt}, {blk}), {cnt}, {stv});",
                                   f"print(\"{peek}\", {cnt} + {peek}({cnt}, {blk}), {cnt}, {stv});"]),
                    f"{s} = {step}({self.int_expr(['a'])});",
                    f"print(\"{step} again\", {s}, {blk}, {cnt}, {stv}.calls, {tg});"]
        return dist, call

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
        # the kernels of structs, strings and node variables are drawn more
        # often than the others (one program in four has none of them)
        rich = [self.f_structs, self.f_strings, self.f_nodevars]
        # (drawn alike for every max_kernels, so that a program made shorter
        # by generate() keeps its first kernels: those of rich first)
        k = self.r.randint(2, 3)
        n_rich = self.r.choice([0, 1, 1, 2])
        # a rich kernel is about twice the size of another: with one, the
        # program has at most two kernels (the test's time stays as it was)
        most = min(self.max_kernels, 2 if n_rich else 3)
        chosen = (self.r.sample(rich, n_rich) + self.r.sample(makers, k - n_rich))[:most]
        self.r.shuffle(chosen)
        calls = [m() for m in chosen]
        if self.need_ifs:
            self.funcs.append("""func ifs(c: bool, a: string, b: string) -> string {
    if c {
        return a;
    }
    return b;
}
""")
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


MAX_LINES = 150


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
