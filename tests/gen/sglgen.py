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

Later kernels (brief §8: split_by, split_by_bounds, split_bounds, sort at
every level, the file builtins, arg_str) are drawn from random streams of
their own after the rest, so that the rest of a seed's program is as it
was (generate(seed, extras=False) is the program without them).  Their
tree functions cut blocks by weights or by bounds (the concatenation in
child order does not depend on them), sort at every level (stable sorts of
contiguous blocks, then of their concatenation: the sort of the whole),
and read files that the root wrote before the call (or that the test
made: generate_with_files); a node writes only files named by its own
path in the tree, which it alone reads.
"""

from __future__ import annotations

import argparse
import random
import struct
from collections.abc import Callable
from pathlib import Path

SENTINEL = "-4611686018427387904"  # below every value a program can reach
BASE_LINES = 150  # a program without the later kernels has at most so many lines
EXTRA_LINES = 200  # and they add at most so many
MAX_LINES = BASE_LINES + EXTRA_LINES


class Gen:
    def __init__(self, seed: int, max_kernels: int = 3, extras: bool = True) -> None:
        self.seed = seed
        self.r = random.Random(seed)
        # the bitwise operators are drawn from a stream of their own, so
        # that they replace operators of the programs without changing
        # anything else that a seed makes
        self.rb = random.Random(seed * 7919 + 17)
        # the later kernels (splits, sorts at every level, files) have two
        # streams of their own (see extras())
        self.rx = random.Random(seed * 104729 + 31)
        self.rxb = random.Random(seed * 1299709 + 7)
        self.with_extras = extras
        self.files: dict[str, bytes] = {}  # files the program reads, made by the test
        self.base_text = ""  # the program without the later kernels
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

    def map_worker(self, name: str, body: list[str]) -> str:
        """The head of a kernel [int] -> [int] and its worker's part: body
        on each element y with its global index g, then one int of y, k
        and g pushed."""
        return f"""func {name}(v: [int], k: int, off: int) -> [int] {{
    if worker {{
        var out: [int] = [];
        for i in 0 .. len(v) {{
            var g = off + i;
            var y = v[i];
{chr(10).join(body)}
            push(out, {self.int_expr(['y', 'k', 'g'])});
        }}
        return out;
    }}"""

    @staticmethod
    def fan_out(name: str, elem: str, send: str = "bcast k -> kk;") -> str:
        """The master's end of a kernel over [elem] (the lines after
        `blocks` and `offs` are made): each child gets its block, its
        offset and k (`send`), runs `name` on them, and the master joins
        the results in order."""
        return f"""    var part: [{elem}];
    var o: int;
    var kk: int;
    var r: [{elem}];
    var rs: [[{elem}]];
    scatter blocks -> part;
    scatter offs -> o;
    {send}
    pardo {{
        r = {name}(part, kk, o);
    }}
    gather r -> rs;
    return concat(rs);
}}
"""

    def f_map(self) -> tuple[str, Callable[[str], list[str]]]:
        """[int] -> [int], elementwise with the global index, concat."""
        name = self.fresh("map")
        body = self.seq_block(["y", "k", "g"], None, "            ", self.r.randint(1, 3),
                              readonly=("k",))
        bc = self.r.choice(["bcast k -> kk;", "bcast k -> kk;\n    bcast k + 0 -> k;"])
        src = f"""{self.map_worker(name, body)}
    var blocks = split(v, nchildren);
    var offs = fill(nchildren, off);
    for c in 1 .. nchildren {{
        offs[c] = offs[c - 1] + len(blocks[c - 1]);
    }}
{self.fan_out(name, "int", bc)}"""
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
{self.fan_out(name, "string")}
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

    # ------------------------------------------------------------ splits and files

    # The kernels below were added after the others: they are drawn from
    # streams of their own (self.rx, self.rxb, swapped in for self.r and
    # self.rb by _extra_streams) after everything else of the program, and
    # are put in after its other functions and before its last lines, so
    # that the rest of a seed's program stays as it was (generate(seed,
    # extras=False) is the program of the generator before them).

    FLOAT_WEIGHTS = ["0.0", "0.1", "1.0", "2.5", "(1.0 / 3.0)", "7.0", "1e-300", "5e-324", "1e300",
                     "0.2", "3.0e-2", "(2.0 / 3.0)"]

    def _extra_streams(self) -> Callable[[], None]:
        saved = self.r, self.rb
        self.r, self.rb = self.rx, self.rxb

        def restore() -> None:
            self.r, self.rb = saved
        return restore

    def weights(self, k_name: str) -> tuple[str, list[str]]:
        """A weight vector w for the nchildren children of a master (brief
        §8 split_by: all >= 0, a positive sum): its type and the statements
        that make it (k_name: an int of the function)."""
        kind = self.r.choice(["speeds", "small", "small", "large", "float", "float"])
        if kind == "speeds":
            return "float", ["var w = child_speeds();"]
        if kind == "small":
            a, m = self.r.randint(1, 9), self.r.randint(1, 5)
            return "int", ["var w: [int] = [];", "for c in 0 .. nchildren {",
                           f"    push(w, ((c * {a} + {k_name}) % {m} + {m}) % {m});", "}",
                           f"w[({k_name} % nchildren + nchildren) % nchildren] += 1;"]
        if kind == "large":  # sums beyond 2^63, products n * c_i beyond 2^64
            big = self.r.choice(["4611686018427387903", "9223372036854775807", "1_000_000_000_000_000",
                                 str(self.r.randint(1, 2**62))])
            return "int", ["var w: [int] = [];", "for c in 0 .. nchildren {",
                           f"    push(w, {big} / (((c + {k_name}) % 3 + 3) % 3 + 1));", "}"]
        pool = self.r.sample(self.FLOAT_WEIGHTS, self.r.randint(2, 5))
        if self.r.random() < 0.05:  # a sum that overflows a double (docs/language.md §7)
            pool.append("1e308")
        tab = "[" + ", ".join(pool) + "]"
        return "float", ["var w: [float] = [];", f"var tab = {tab};", "for c in 0 .. nchildren {",
                         f"    push(w, tab[((c * {self.r.randint(1, 7)} + {k_name}) % len(tab) + len(tab)) "
                         "% len(tab)]);", "}",
                         f"w[({k_name} % nchildren + nchildren) % nchildren] += 0.5;"]

    def f_splits(self) -> tuple[list[str], list[str]]:
        """split_by / split_by_bounds / split_bounds (brief §8): a tree map
        whose masters split their block by weights (or evenly by bounds),
        check that the bounds are the blocks, and send each child its
        global offset; the builtins themselves at the root."""
        name = self.fresh("sby")
        body = self.seq_block(["y", "k", "g"], None, "            ", self.r.randint(1, 2),
                              readonly=("k", "g"))
        if self.r.random() < 0.75:
            wt, wl = self.weights("k")
            cut = ["\n    ".join(wl),
                   "var blocks = split_by(v, w);",
                   "var bnd = split_by_bounds(len(v), w);",
                   "if len(bnd) != len(w) + 1 || len(blocks) != len(w) {",
                   "    print(\"bad split_by lengths\", len(bnd), len(blocks), w);",
                   "}"]
        else:
            cut = ["var bnd = split_bounds(len(v), nchildren);",
                   "var blocks: [[int]] = [];",
                   "for c in 0 .. nchildren {",
                   "    push(blocks, slice(v, bnd[c], bnd[c + 1]));",
                   "}",
                   "if blocks != split(v, nchildren) {",
                   "    print(\"bad split_bounds\", bnd, len(v));",
                   "}"]
        cut_s = "\n".join("    " + ln for ln in cut)
        src = f"""{self.map_worker(name, body)}
{cut_s}
    var offs: [int] = [];
    for c in 0 .. nchildren {{
        push(offs, off + bnd[c]);
        if slice(v, bnd[c], bnd[c + 1]) != blocks[c] {{
            print("bad bounds", c, bnd, len(blocks[c]));
        }}
    }}
{self.fan_out(name, "int")}"""
        main = [f"print(\"{name}\", {name}(v, {self.int_expr([])}, 0));"]
        # the builtins at the root, on literal arguments
        for _ in range(self.r.randint(1, 3)):
            kind = self.r.randrange(4)
            n = self.r.choice([0, 1, 2, 5, 7, 10, 466, 1000, 10**9, 10**15, 2**62, 9223372036854775807])
            if kind == 0:
                main.append(f"print(\"split_bounds\", split_bounds({n}, {self.r.randint(1, 7)}), "
                            f"split_bounds(len(v), {self.r.randint(1, 5)}));")
            elif kind == 1:
                ws = ", ".join(str(self.r.choice([0, 0, 1, 2, 3, 7, 100, 10**12, 4611686018427387903,
                                                  9223372036854775807]))
                               for _ in range(self.r.randint(1, 5)))
                main.append(f"print(\"split_by_bounds\", split_by_bounds({n}, [{ws}, 1]), "
                            f"split_by(v, [{ws}, 1]));")
            elif kind == 2:
                ws = ", ".join(self.r.choice(self.FLOAT_WEIGHTS + [f"{self.r.random():.6g}", "1e16"])
                               for _ in range(self.r.randint(1, 5)))
                if self.r.random() < 0.15:  # a sum beyond the doubles (docs/language.md §7: scaled)
                    ws = f"1e308, {ws}, 1.5e308"
                main.append(f"print(\"split_by_bounds f\", split_by_bounds({n}, [{ws}, 0.75]), "
                            f"split_by(range(0, {self.r.randint(0, 12)}), [{ws}, 0.75]));")
            else:
                kk = self.r.randint(1, 5)
                main.append(f"print(\"split_by even\", split_by_bounds({n}, fill({kk}, 1)), "
                            f"split_bounds({n}, {kk}), split_by(v, fill({kk}, 2.0)) == split(v, {kk}));")
        return [src], main

    def f_sorts(self) -> tuple[list[str], list[str]]:
        """sort of [string], [float] and [S] at every level (brief §8): a
        worker sorts its block, a master sorts the concatenation of its
        children's sorted blocks (stable sorts: the same as sorting the
        whole, on any shape), or merges [string] blocks stably."""
        name = self.fresh("ssort")
        key = self.fresh("SK")
        kinds = [self.r.choice(["int", "float", "bool", "string"]) for _ in range(self.r.randint(1, 3))]
        which = self.r.choice(["string", "float", "struct", "struct", "int"])
        ty = {"string": "string", "float": "float", "struct": key, "int": "int"}[which]
        split = self.r.choice(["split(v, nchildren)", "split_by(v, child_speeds())"])
        merge = "sort(concat(rs))"
        merge_fn = ""
        if which == "string" and self.r.random() < 0.5:
            merge = "acc"
            merge_fn = """    var acc: [string] = [];
    for c in 0 .. len(rs) {
        var m: [string] = [];
        var i = 0;
        var j = 0;
        while i < len(acc) || j < len(rs[c]) {
            if j >= len(rs[c]) || (i < len(acc) && acc[i] <= rs[c][j]) {
                push(m, acc[i]);
                i += 1;
            } else {
                push(m, rs[c][j]);
                j += 1;
            }
        }
        acc = m;
    }
"""
        src = ""
        if which == "struct":
            src += self.struct_decl(key, [(f"f{i}", t) for i, t in enumerate(kinds)])
        src += f"""func {name}(v: [{ty}]) -> [{ty}] {{
    if worker {{
        return sort(v);
    }}
    var part: [{ty}];
    var r: [{ty}];
    var rs: [[{ty}]];
    scatter {split} -> part;
    pardo {{
        r = {name}(part);
    }}
    gather r -> rs;
{merge_fn}    return {merge};
}}
"""
        xs, reps = self.fresh("xs"), self.r.choice([1, 1, 2, 8, 20])
        if which == "int":  # long ones: runs merged, radix sorts (docs/language.md §7)
            reps = self.r.choice([1, 8, 50, 100])
        fl = "[" + ", ".join(self.r.sample(["0.0", "-0.0", "1.5", "(0.0 - 2.0)", "(1e308 * 10.0)",
                                            "(0.0 - 1e308 * 10.0)", "sqrt(0.0 - 1.0)", "5e-324",
                                            "(0.0 / 0.0)", "0.1"], self.r.randint(2, 6))) + "]"
        nf = fl.count(",") + 1
        val = {"int": "x % 5", "float": f"{fl}[(x % {nf} + {nf}) % {nf}]",
               "bool": "x % 2 == 0",
               "string": f"{self.r.choice(self.STR_LITS)} + str(x % 3)"}
        elem = (val["string"] if which == "string" else val["float"] if which == "float"
                else self.r.choice(["x", "x % 5", "x * 1_000_003 % 1000", "0 - x"]) if which == "int"
                else f"{key}(" + ", ".join(val[t] for t in kinds) + ")")
        main = [f"var {xs}: [{ty}] = [];",
                f"for i in 0 .. len(v) * {reps} {{",
                "    var x = v[i % len(v)] + i / len(v);",
                f"    push({xs}, {elem});",
                "}",
                f"var {xs}s = {name}({xs});",
                f"print(\"{name}\", {xs}s == sort({xs}), str({xs}s) == str(sort({xs})), len({xs}s));",
                f"if len({xs}s) <= 300 {{",
                f"    print(\"{name} out\", {xs}s);",
                "} else {",
                f"    print(\"{name} out\", slice({xs}s, 0, 60), slice({xs}s, len({xs}s) / 2, "
                f"len({xs}s) / 2 + 60), slice({xs}s, len({xs}s) - 60, len({xs}s)));",
                "}"]
        if which in ("float", "struct") and ("float" in kinds or which == "float"):
            z = self.fresh("z")
            f = ".f" + str(kinds.index("float")) if which == "struct" else ""
            main += [f"var {z}: [float] = [];",  # which zero comes first (a stable sort keeps them)
                     f"for i in 0 .. len({xs}s) {{ if {xs}s[i]{f} == 0.0 {{ push({z}, {xs}s[i]{f}); }} }}",
                     f"print(\"{name} zeros\", {z});"]
        return [src], main

    def data_file(self, base: str, big: bool = False) -> tuple[str, str, int, int, int]:
        """A file for the program to read, made by the test (difftest.py
        writes self.files into the run's folder): (path, int or float, its
        number of words or elements, the range lo .. hi that holds numbers
        only).  .npy of every dtype that read_ints and read_floats take, in
        versions 1.0, 2.0 and 3.0, keys in any order, bytes after the data;
        text with every white space byte, signs, leading zeros, exponents,
        inf, nan, hex floats, and a word that is no number outside lo .. hi
        (brief §8: it is never converted).  A big one is a text file of
        more than 64 KiB."""
        r = self.r
        n = r.choice([0, 1, 2, 3, 5, 8, 13, 30])
        if big:
            n = r.randint(3500, 6000)
        if r.random() < 0.55 and not big:
            descr = r.choice(["<i8", "<i4", "<i2", "|i1", "<u8", "<u4", "<u2", "|u1", "<f8", "<f4"])
            code = {"<i8": "q", "<i4": "i", "<i2": "h", "|i1": "b", "<u8": "Q", "<u4": "I", "<u2": "H",
                    "|u1": "B", "<f8": "d", "<f4": "f"}[descr]
            size = struct.calcsize(code)
            if code in "df":
                special = [0.0, -0.0, 1.5, -2.25, float("inf"), float("-inf"), 1e-45, 3e38, 0.1]
                vals = [r.choice(special) if r.random() < 0.3 else
                        (r.random() - 0.5) * 10 ** r.randint(-5, 30 if code == "f" else 300)
                        for _ in range(n)]
            else:
                signed = code.islower()
                bits = 8 * size
                lo, hi = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else (0, 2 ** bits - 1)
                if code == "Q":
                    hi = 2 ** 63 - 1
                vals = [r.choice([lo, hi, 0, 1, -1 if signed else 2, r.randint(lo, hi)]) for _ in range(n)]
            keys = [("descr", f"'{descr}'"), ("fortran_order", "False"), ("shape", f"({n},)")]
            r.shuffle(keys)
            d = "{" + ", ".join(f"'{k}': {v}" for k, v in keys) + r.choice([", }", "}"])
            major = r.choice([1, 1, 2, 3])
            pre = 10 if major == 1 else 12
            h = d.encode()
            if r.random() < 0.8:  # padded as numpy.save pads (to 64), else no padding at all
                h += b" " * ((64 - (pre + len(h) + 1) % 64) % 64) + b"\n"
            lenf = struct.pack("<H" if major == 1 else "<I", len(h))
            data = b"\x93NUMPY" + bytes([major, 0]) + lenf + h + struct.pack(f"<{n}{code}", *vals)
            if r.random() < 0.3:
                data += b"\x00junk after the data"
            path = f"{base}.npy"
            self.files[path] = data
            return path, ("float" if code in "df" else "int"), n, 0, n
        floats = r.random() < 0.4
        words = []
        for _ in range(n):
            if floats and big and r.random() < 0.9:
                words.append(repr(r.uniform(-1, 1) * 10.0 ** r.randint(-300, 300)))
            elif floats:
                words.append(r.choice(["1.5", "-0.0", ".5", "5.", "1e3", "1E-3", "+2.5e+2", "inf", "-Infinity",
                                       "nan", "0x1.8p1", "42", "-7", "1e400", "4.9e-324", "007.50",
                                       "0.1000000000000000055511151231257827", "9007199254740993",
                                       f"{r.uniform(-1e6, 1e6)!r}"]))
            elif big and r.random() < 0.9:
                words.append(str(r.randint(-2**63, 2**63 - 1)))
            else:
                words.append(r.choice(["0", "-0", "+5", "007", "-9223372036854775808", "9223372036854775807",
                                       "42", "-1", str(r.randint(-10**12, 10**12))]))
        if floats and n and r.random() < 0.1:  # strtod's NaN with a payload (docs/language.md §7)
            words[r.randrange(n)] = r.choice(["nan(1)", "NAN(0x2a)", "-nan(abc_9)"])
        lo, hi = 0, n
        if n and r.random() < 0.4:  # a word that is no number, outside lo .. hi
            bad = r.choice(["abc", "1.5x", "--1", "2\x003", "\xc2\xa07", "1_0", "0x10"])
            if r.random() < 0.5:
                words.append(bad)
            else:
                words.insert(0, bad)
                lo, hi = 1, n + 1
        seps = [" ", "\t", "\n", "\v", "\f", "\r", "\r\n", "  \n\t"]
        text = r.choice(["", "\n", " \t"]) + "".join(w + r.choice(seps) for w in words)
        if words and r.random() < 0.5:
            text = text.rstrip(" \t\n\v\f\r")  # no white space after the last word
        path = f"{base}{r.choice(['.txt', '.dat', '', '.NPY', '.npy.txt'])}"
        self.files[path] = text.encode("latin-1")
        return path, ("float" if floats else "int"), len(words), lo, hi

    def file_reader(self, kind: str, big: bool = False) -> str:
        """A tree function name(path, lo, hi, k, own) -> [T]: masters hand
        out ranges of the file (split_bounds, or split_by_bounds by weights),
        workers read their slice, map it and, when own is not "", write
        their result to a file of their own (own + "_c" per level) and read
        it back; a master may do the same with its concatenation."""
        name = self.fresh("frd")
        t, rd, wr = ("int", "read_ints", "write_ints") if kind == "int" else \
            ("float", "read_floats", "write_floats")
        ext = self.fresh("EXT")
        if kind == "int":
            body = self.seq_block(["y", "k", "g"], None, "            ", 0 if big else self.r.randint(0, 2),
                                  readonly=("k", "g"))
            elem = self.int_expr(["y", "k", "g"])
        else:
            body = []
            elem = self.float_expr(["y"], ["k", "g"])
        if self.r.random() < 0.6:
            cut = ["var b = split_bounds(hi - lo, nchildren);"]
        else:
            wt, wl = self.weights("k")
            cut = wl + ["var b = split_by_bounds(hi - lo, w);"]
        cut_s = "\n".join("    " + ln for ln in cut)
        back = self.r.choice([f"{rd}(own + {ext})", f"{rd}(own + {ext}, 0, len(out))",
                              f"{rd}(\"./\" + own + {ext})"])
        again = ""
        if self.r.random() < 0.5:
            again = f"""    if len(own) > 0 {{
        {wr}(own + {ext}, all);
        all = {rd}(own + {ext}, 0, file_len(own + {ext}));
    }}
"""
        src = f"""const {ext} = {self.r.choice(['".npy"', '".txt"', '""', '".npy"'])};

func {name}(path: string, lo: int, hi: int, k: int, own: string) -> [{t}] {{
    if worker {{
        var xs = {rd}(path, lo, hi);
        var out: [{t}] = [];
        for i in 0 .. len(xs) {{
            var g = lo + i;
            var y = xs[i];
{chr(10).join(body)}
            push(out, {elem});
        }}
        if len(own) > 0 {{
            {wr}(own + {ext}, out);
            if file_len(own + {ext}) != len(out) {{
                print("bad file_len", own, len(out));
            }}
            out = {back};
        }}
        return out;
    }}
{cut_s}
    var ranges: [[int]] = [];
    var owns: [string] = [];
    for c in 0 .. nchildren {{
        push(ranges, [lo + b[c], lo + b[c + 1]]);
        var nm = "";
        if len(own) > 0 {{
            nm = own + "_" + str(c);
        }}
        push(owns, nm);
    }}
    var rg: [int];
    var p: string;
    var kk: int;
    var ow: string;
    var r: [{t}];
    var rs: [[{t}]];
    scatter ranges -> rg;
    scatter owns -> ow;
    bcast path -> p;
    bcast k -> kk;
    pardo {{
        r = {name}(p, rg[0], rg[1], kk, ow);
    }}
    gather r -> rs;
    var all = concat(rs);
{again}    return all;
}}
"""
        self.funcs.append(src)
        return name

    def f_files(self) -> tuple[list[str], list[str]]:
        """The file builtins (brief §8): the root writes a file (text or
        .npy, ints or floats, named after the seed: arg_str's default)
        before the tree call; the workers read their slices of it (and of a
        file the test made) and write and read back files of their own;
        the root compares with what it wrote.  One in four is big: files
        of more than 64 KiB (text is read 64 KiB at a time), shown by
        length, sum and first elements."""
        start = len(self.funcs)
        main: list[str] = []
        big = self.r.random() < 0.25
        kind = self.r.choice(["int", "int", "float"])
        rdr = self.file_reader(kind, big)
        rd, wr = ("read_ints", "write_ints") if kind == "int" else ("read_floats", "write_floats")
        fp, data, own = self.fresh("fp"), self.fresh("data"), self.fresh("own")
        ext = self.r.choice([".npy", ".npy", ".txt", "", ".out"])
        stem = f"sgl{self.seed}_{self.n}"
        if kind == "int":
            mk = f"var {data} = v;" if self.r.random() < 0.5 and not big else \
                f"var {data} = rand_ints(len(v) * {self.r.choice([100, 150] if big else [1, 3, 10])}, " \
                f"min({self.int_lit()}, 9223372036854775806), 9223372036854775807, {self.r.randint(0, 999)});"
        else:
            mk = f"var {data} = rand_floats(len(v) * {self.r.choice([80, 120] if big else [1, 2, 5])}, " \
                 f"{self.r.randint(0, 999)});\n" \
                 f"push({data}, 0.0 - 0.0);\npush({data}, 1e300 * 1e300);\npush({data}, {self.float_expr([], [])});"
        k = self.int_expr([])
        main += mk.split("\n")
        sh = self.fresh("sh")

        def show(label: str, e: str, extra: str = "") -> list[str]:
            """print(label, e, extra), e shown in short when big"""
            if not big:
                return [f"print(\"{label}\", {e}{extra});"]
            return [f"var {sh}{label} = {e};",
                    f"print(\"{label}\", len({sh}{label}), sum({sh}{label}), "
                    f"slice({sh}{label}, 0, min(len({sh}{label}), 4)){extra});"]

        main += [f"var {fp} = arg_str({self.r.randint(3, 9)}, \"{stem}\") + \"{ext}\";",
                 f"var {own} = \"{self.r.choice(['', stem + '_o', stem + '_o'])}\";",
                 f"{wr}({fp}, {data});",
                 f"var n{fp} = file_len({fp});",
                 f"print(\"{rdr} n\", n{fp}, {rd}({fp}) == {data});",
                 *show(rdr, f"{rdr}({fp}, 0, n{fp}, {k}, {own})"),
                 f"var lo{fp} = min(n{fp}, {self.r.randint(0, 6)});",
                 f"var hi{fp} = max(lo{fp}, n{fp} - {self.r.randint(0, 6)});",
                 *show(f"{rdr}part", f"{rdr}({fp}, lo{fp}, hi{fp}, {k}, {own})",
                       f", {rd}({fp}, lo{fp}, hi{fp}) == slice({data}, lo{fp}, hi{fp}), "
                       f"len({rd}({fp}, hi{fp}, hi{fp}))")]
        # a file the test made
        path, dkind, nwords, lo, hi = self.data_file(f"sgl{self.seed}_d{self.n}", big)
        rk = dkind
        if dkind == "int" and not path.endswith(".npy") and self.r.random() < 0.3:
            rk = "float"  # a text file's ints are floats too (strtod)
        if rk != kind:
            rdr = self.file_reader(rk, big)
        drd = "read_ints" if rk == "int" else "read_floats"
        a, b = sorted((self.r.randint(lo, hi), self.r.randint(lo, hi)))
        main += [f"print(\"{path}\", file_len(\"{path}\"));",
                 *show(f"{drd}whole", f"{drd}(\"{path}\", {lo}, {hi})"),
                 *show(f"{rdr}data", f"{rdr}(\"{path}\", {a}, {b}, {self.int_expr([])}, \"\")",
                       f", {drd}(\"{path}\", {a}, {b}) == slice({drd}(\"{path}\", {lo}, {hi}), "
                       f"{a - lo}, {b - lo})")]
        funcs = self.funcs[start:]
        del self.funcs[start:]
        return funcs, main

    def extras(self) -> tuple[list[str], list[str]]:
        """The functions and main's lines of the later kernels (splits,
        sorts at every level, files), drawn from their own streams."""
        restore = self._extra_streams()
        try:
            funcs: list[str] = []
            main: list[str] = []
            for maker, p in ((self.f_splits, 0.45), (self.f_sorts, 0.35), (self.f_files, 0.55)):
                if self.r.random() < p:
                    f, m = maker()
                    size = sum(x.count("\n") + 1 for x in f) + len(m)
                    if sum(x.count("\n") + 1 for x in funcs) + len(main) + size <= EXTRA_LINES:
                        funcs += f
                        main += m
            return funcs, main
        finally:
            restore()

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
        tail = ["print(\"a b\", a, b);",
                 "var w = concat([v, range(0, 3), fill(2, a % 10)]);",
                 "print(\"w\", len(w), sum(w), min(w), max(w));",
                 "var w2 = w;",
                 f"w2[{self.r.randint(0, 2)}] *= 3;",
                 "push(w2, 5);",
                 "print(\"w2\", w == w2, len(w), len(w2), slice(w2, 0, 4), sort(w2)[0]);"]
        header = "// generated by tests/gen/sglgen.py\n"

        def text(funcs: list[str], lines: list[str]) -> str:
            main = "func main() {\n" + "\n".join("    " + ln for ln in lines) + "\n}\n"
            return header + "\n".join(funcs) + "\n" + main

        self.base_text = text(self.funcs, body + tail)
        if not self.with_extras:
            return self.base_text
        xfuncs, xmain = self.extras()
        return text(self.funcs + xfuncs, body + xmain + tail)




def generate_with_files(seed: int, extras: bool = True) -> tuple[str, dict[str, bytes]]:
    """The program of seed and the files it reads (name -> bytes, to be
    put in the folder it runs in).  Without the later kernels (splits,
    sorts at every level, files) it has at most BASE_LINES lines (fewer
    kernels if needed); they add at most MAX_LINES - BASE_LINES."""
    text, files = "", {}
    for kmax in (3, 2, 1):
        g = Gen(seed, kmax, extras)
        text, files = g.program(), g.files
        if g.base_text.count("\n") <= BASE_LINES:
            break
    return text, files


def generate(seed: int, extras: bool = True) -> str:
    """The program of seed (generate_with_files without the files)."""
    return generate_with_files(seed, extras)[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-extras", action="store_true",
                    help="without the later kernels (splits, sorts at every level, files)")
    ap.add_argument("--files", metavar="DIR", help="write the files the program reads into DIR")
    args = ap.parse_args()
    text, files = generate_with_files(args.seed, not args.no_extras)
    if args.files:
        write_files(files, args.files)
    print(text, end="")


def write_files(files: dict[str, bytes], folder: str | Path) -> None:
    """Put the files a program reads (generate_with_files) into folder."""
    for name, data in files.items():
        (Path(folder) / name).write_bytes(data)


if __name__ == "__main__":
    main()
