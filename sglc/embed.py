"""SGL from Python: `sglc.load()` (docs/embedding.md).

    m = sglc.load("vecops.sgl")          # or the program's text
    m.tree_sum(np.arange(10**7))         # runs on threads of this process

load() compiles the program (cached by its text, the options and the
compiler's own files: launch.compiler_fingerprint) into a shared library
(`sglc --library`) and opens it with cffi in ABI mode: `ffi.cdef` of the
library's declarations (emit_library.cdef_text) and `ffi.dlopen`, which
needs no second C compilation for a Python extension and releases the GIL
during each call.  Calls are serialised by the library's mutex.

Types: int <-> int (OverflowError outside int64), float <-> float, bool
<-> bool, [int]/[float]/[bool] <-> 1-D numpy arrays of int64/float64/bool
(a C-contiguous array of that dtype is read in place; results own the
runtime's buffer), [[T]] <-> lists of those.  Without numpy, lists.
A struct S <-> an instance of the module's dataclass `m.S` (or a tuple of
its fields, in); [S] of a struct of numbers alone <-> a NumPy structured
array (the program's own C layout: read in place when it is that dtype),
other [S] <-> lists of instances.  Struct values are copied both ways.

Node variables keep their values from one call of a loaded module to the
next (one copy per node of its tree); `m.reset()` gives them their initial
values again, and so does a call that fails with a run-time error.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import inspect
import json
import keyword
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import types as pytypes
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .diagnostics import CompileError
from .types import SCALAR_BY_NAME

try:  # numpy is optional (pip install 'sglc[numpy]')
    import numpy as _np
except ImportError:  # pragma: no cover - exercised without numpy
    _np = None  # type: ignore[assignment]

__all__ = ["load", "SGLRuntimeError", "SGLInternalError", "CompileError", "SGLModule"]

_INT_MIN, _INT_MAX = -(2 ** 63), 2 ** 63 - 1
# by a scalar type's name: its facts are sglc.types.SCALARS
_SCALAR_C = {n: f.abi for n, f in SCALAR_BY_NAME.items()}
_DTYPE = {n: f.dtype for n, f in SCALAR_BY_NAME.items()}
_TYPESTR = {n: f.typestr for n, f in SCALAR_BY_NAME.items()}
_ESIZE = {n: f.size for n, f in SCALAR_BY_NAME.items()}


class SGLRuntimeError(RuntimeError):
    """A run-time error of the SGL program: str() is the whole message,
    and the parts are attributes (line, col: 0 if unknown; node: the
    machine-tree path such as "0.1")."""

    def __init__(self, message: str, what: str, path: str, line: int, col: int, node: str):
        super().__init__(message)
        self.message = what
        self.path = path
        self.line = line
        self.col = col
        self.node = node


class SGLInternalError(SGLRuntimeError):
    """An error of the runtime itself during a call (out of memory in its
    own structures, a broken invariant): the call was abandoned and the
    machine tree rebuilt, so the next call works. line and col are 0,
    node is empty."""


# the library's error codes (sglc.emit_library.ERROR_CODES)
_ERR_INTERNAL = 5
_ERR_INTERRUPTED = 6


def _interrupted(msg: str, path: str) -> None:
    """A call stopped by SIGINT (Ctrl-C): the library cancelled it and
    raised the signal again once it had returned.  Run Python's handler
    now (signal.pthread_kill with signal 0 checks the pending signals):
    KeyboardInterrupt by default; if the handler returns, the call still
    failed."""
    if threading.current_thread() is threading.main_thread():
        signal.pthread_kill(threading.get_ident(), 0)
    raise SGLRuntimeError(msg, "interrupted (SIGINT)", path, 0, 0, "")


def _parse_type(text: str) -> tuple[int, str]:
    """"[[int]]" -> (2, "int")."""
    depth = 0
    while text.startswith("["):
        depth += 1
        text = text[1:-1]
    return depth, text


def _compile_key(source: str, path: str, target: str, opt: int, unchecked: bool) -> str:
    from .launch import compiler_fingerprint

    env = [os.environ.get(v, "") for v in ("CC", "CFLAGS", "LDFLAGS")]
    parts = [compiler_fingerprint(), "library", source, path, target, str(opt), str(unchecked),
             *env]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:20]


def _cached_meta(folder: Path) -> dict | None:
    """meta.json of a cached build when it and lib.so are whole: lib.so of
    the size and SHA-256 that meta.json records (a truncated or damaged
    library would crash the process at dlopen, with SIGBUS); else None."""
    try:
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        so = (folder / "lib.so").read_bytes()
    except (OSError, ValueError):
        return None
    if not isinstance(meta, dict) or not {"prefix", "cdef", "functions"} <= meta.keys():
        return None
    if meta.get("so_size") != len(so) or meta.get("so_sha256") != hashlib.sha256(so).hexdigest():
        return None
    return meta


def _rendered(e: CompileError, source: str, path: str) -> CompileError:
    """e as the CompileError that load raises: its str, the diagnostics
    rendered as the command line writes them."""
    from .diagnostics import render_all

    err = CompileError(e.diagnostics)
    err.args = (render_all(e.diagnostics, source, path).rstrip("\n"),)
    return err


def _build(source: str, path: str, target: str, opt: int, unchecked: bool) -> tuple[Path, dict]:
    """The cache folder holding lib.so and meta.json for the program, and
    the meta; a damaged cached build is built again."""
    from . import pipeline
    from .build import cache_dir
    from .emit_library import (
        c_prefix,
        cdef_text,
        exports,
        field_name,
        header_struct,
        structs_in_order,
    )

    folder = cache_dir() / "lib" / _compile_key(source, path, target, opt, unchecked)
    meta = _cached_meta(folder)
    if meta is not None:
        return folder, meta
    prefix = c_prefix(Path(path).stem)
    opts = pipeline.Options(target, opt, unchecked)
    try:
        c, prog = pipeline.library_c(source, path, prefix, opts)
    except CompileError as e:
        raise _rendered(e, source, path) from None
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=".lib-"))
    try:
        pipeline.build_library(c, tmp / "lib.so", opts, prefix)
        meta = {
            "prefix": prefix,
            "path": path,
            "cdef": cdef_text(prog, prefix),
            "functions": [{
                "name": ex.name,
                "cname": ex.cname,
                "signature": ex.sgl_signature(),
                "params": [[p.name, str(p.ty)] for p in ex.func.params],
                "ret": None if ex.func.ret is None else str(ex.func.ret),
            } for ex in exports(prog, prefix)],
            "structs": [{
                "name": st.name,
                "cname": header_struct(prefix)(st),
                "fields": [[f, str(ft), field_name(f)] for f, ft in st.fields],
            } for st in structs_in_order(prog)],
        }
        so = (tmp / "lib.so").read_bytes()
        meta["so_size"] = len(so)
        meta["so_sha256"] = hashlib.sha256(so).hexdigest()
        (tmp / "meta.json").write_text(json.dumps(meta, indent=1))
        if folder.exists():  # damaged (_cached_meta): set it aside, then replace it
            bad = Path(tempfile.mkdtemp(dir=folder.parent, prefix=".bad-"))
            with contextlib.suppress(OSError):
                os.replace(folder, bad / "old")
            shutil.rmtree(bad, ignore_errors=True)
        try:
            os.replace(tmp, folder)
        except OSError:  # another process built it first
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return folder, _cached_meta(folder) or meta


_loaded: set[str] = set()
_copies: list[str] = []


def _private_copy(so: Path) -> str:
    """The library file to open for one load: the cached file the first
    time, then a private copy of it.  The runtime's state (the machine tree,
    the last error) is per opened file, so two loads of one program (with
    different shapes, say) never share it."""
    path = str(so)
    if path not in _loaded:
        _loaded.add(path)
        return path
    fd, copy = tempfile.mkstemp(prefix="sglc-", suffix=".so")
    os.close(fd)
    shutil.copyfile(so, copy)
    if not _copies:
        import atexit

        atexit.register(_remove_copies)
    _copies.append(copy)
    return copy


def _remove_copies() -> None:
    for c in _copies:
        try:
            os.unlink(c)
        except OSError:
            pass


class _Owner:
    """What a result array's memory belongs to: the runtime's buffer,
    freed (through `keep`, a cffi gc object) when no array uses it."""

    __slots__ = ("__array_interface__", "keep")

    def __init__(self, addr: int, n: int, elem: str, keep: Any):
        self.__array_interface__ = {"shape": (n,), "typestr": _TYPESTR[elem],
                                    "data": (addr, False), "version": 3}
        self.keep = keep


class SGLModule(pytypes.ModuleType):
    """The functions of a loaded SGL program (all but main)."""


def load(path_or_source: str | os.PathLike[str], target: str = "omp", shape: str | None = None,
         threads: int | None = None, opt: int = 2, unchecked: bool = False,
         numpy: bool | None = None) -> SGLModule:
    """Compile an SGL program (a .sgl path, or its text) into a shared
    library, load it, and return a module whose attributes are its
    functions other than main.

    target: "omp" (threads) or "seq"; "mpi" is for executables only.
    shape: the machine tree, e.g. "2x2" ("0": the root alone); default one
    level of `threads` children (default: OpenMP's thread count).
    numpy: return vectors as numpy arrays (default: when numpy is installed).
    Raises CompileError (str: the diagnostics) on errors in the program."""
    import cffi

    if target == "mpi":
        raise ValueError("sglc.load: the mpi target is for executables (sglc prog.sgl, "
                         "sglc run); a loaded library runs on threads: use target='omp' or 'seq'")
    if target not in ("omp", "seq"):
        raise ValueError(f"sglc.load: unknown target {target!r} (omp or seq)")
    if isinstance(path_or_source, os.PathLike) or (
            "\n" not in path_or_source and path_or_source.endswith(".sgl")):
        path = os.fspath(path_or_source)
        from .pipeline import SourceEncodingError, read_source

        try:
            source = read_source(path)
        except SourceEncodingError as e:
            raise _rendered(e, e.text, path) from None
    else:
        source, path = str(path_or_source), "<sgl>.sgl"
    use_np = (_np is not None) if numpy is None else numpy
    if use_np and _np is None:
        raise ImportError("sglc.load(numpy=True) needs numpy: pip install 'sglc[numpy]'")
    folder, meta = _build(source, path, target, opt, unchecked)
    ffi = cffi.FFI()
    ffi.cdef(meta["cdef"])
    lib = ffi.dlopen(_private_copy(folder / "lib.so"))
    prefix = meta["prefix"]

    def api(name: str) -> Any:
        return getattr(lib, f"{prefix}_{name}")

    c_shape = shape.encode() if shape else ffi.NULL

    def init() -> int:
        return int(api("init")(c_shape, int(threads or 0)))

    if init() != 0:
        raise ValueError("sglc.load: " + ffi.string(api("last_error")()).decode())

    @ffi.callback("void(const char *, size_t, void *)")
    def on_output(data: Any, n: int, user: Any) -> None:
        sys.stdout.write(ffi.unpack(data, n).decode("utf-8", "replace"))

    api("set_output")(on_output, ffi.NULL)
    name = re.sub(r"\W", "_", Path(path).stem)
    mod = SGLModule(name, f"SGL program {path} ({target}):\n\n" + "\n".join(
        "    " + f["signature"] for f in meta["functions"]))
    ctx = _Context(ffi, lib, prefix, path, use_np, init)
    mod.__dict__.update(_ffi=ffi, _lib=lib, _on_output=on_output, _ctx=ctx, __file__=path,
                        reset=ctx.reset, _reset=ctx.reset)
    for st in meta.get("structs", []):
        setattr(mod, st["name"], ctx.struct(st, name))
    for f in meta["functions"]:  # a program's own `reset` takes the name (then: _reset)
        setattr(mod, f["name"], ctx.function(f, name))
    return mod


@dataclasses.dataclass
class _StructInfo:
    """An SGL struct in a loaded module: its dataclass, its C struct in the
    library's header (the program's own layout), its fields (SGL name, SGL
    type, C name, Python name), the NumPy dtype of that layout when every
    field is a number (else None) and the library's functions freeing a
    value and a vector of them."""

    cls: type
    cname: str
    fields: list[tuple[str, str, str, str]]
    dtype: Any
    free: Any
    vec_free: Any


def _py_field(name: str) -> str:
    """A struct field's name in its dataclass: the SGL name, `_` appended
    when it is a Python keyword (`from` -> `from_`)."""
    return name + "_" if keyword.iskeyword(name) else name


def _what(x: Any) -> str:
    if type(x) is tuple:
        return f"a tuple of {len(x)}"
    return type(x).__name__


class _Context:
    """Conversions between Python values and the library's, for one
    loaded library."""

    def __init__(self, ffi: Any, lib: Any, prefix: str, path: str, use_np: bool,
                 init: Callable[[], int]):
        self.ffi = ffi
        self.init = init
        self.lib = lib
        self.prefix = prefix
        self.path = path
        self.use_np = use_np
        self.vec_free = getattr(lib, f"{prefix}_vec_free")
        self.structs: dict[str, _StructInfo] = {}

    # ---------------------------------------------------------- structs

    def struct(self, st: dict[str, Any], modname: str) -> type:
        """The dataclass of an SGL struct (its structs' first: meta lists
        them in that order)."""
        ffi, np = self.ffi, _np
        fields = [(f, t, cf, _py_field(f)) for f, t, cf in st["fields"]]
        cls = dataclasses.make_dataclass(
            st["name"], [(py, self._annotation(t)) for _, t, _, py in fields])
        cls.__module__ = modname
        cls.__doc__ = (f"struct {st['name']} {{ " + " ".join(f"{f}: {t};" for f, t, _, _ in fields)
                       + " } of the SGL program (sglc.load): a value, copied to and from "
                       "the library")
        dtype = None
        if np is not None and fields and all(t in _SCALAR_C for _, t, _, _ in fields):
            # the C layout: NumPy's align=True is C's rule (asserted by the offsets)
            dtype = np.dtype([(f, _TYPESTR[t]) for f, t, _, _ in fields], align=True)
            offsets = [ffi.offsetof(st["cname"], cf) for _, _, cf, _ in fields]
            if [dtype.fields[f][1] for f, _, _, _ in fields] != offsets or \
                    dtype.itemsize != ffi.sizeof(st["cname"]):
                dtype = np.dtype({"names": [f for f, _, _, _ in fields],
                                  "formats": [_TYPESTR[t] for _, t, _, _ in fields],
                                  "offsets": offsets, "itemsize": ffi.sizeof(st["cname"])})
        cls.dtype = dtype  # type: ignore[attr-defined]  # (an instance's field may shadow it)
        self.structs[st["name"]] = _StructInfo(
            cls, st["cname"], fields, dtype, getattr(self.lib, st["cname"] + "_free"),
            getattr(self.lib, st["cname"] + "_vec_free"))
        return cls

    def _annotation(self, ty: str) -> Any:
        depth, elem = _parse_type(ty)
        if depth == 0:
            if elem in self.structs:
                return self.structs[elem].cls
            return {"int": int, "float": float, "bool": bool, "string": str}[elem]
        if depth == 1 and self.use_np and (elem in _SCALAR_C or (
                elem in self.structs and self.structs[elem].dtype is not None)):
            return _np.ndarray
        return list

    def _struct_in(self, name: str, pname: str, sgl: str) -> Callable[[Any, list[Any]], Any]:
        """A struct argument: an instance of its dataclass (of this module,
        or of another load of the program: a dataclass of that name and
        those fields) or a tuple of its fields, as a `NAME_S *`."""
        ffi, info = self.ffi, self.structs[name]
        cls, cptr = info.cls, info.cname + " *"
        pynames = [py for _, _, _, py in info.fields]
        convs = [(cf, t in _SCALAR_C, self._in(t, pname, f"{sgl}: field '{f}' is {t}"))
                 for f, t, cf, _ in info.fields]
        n = len(convs)

        def conv(x: Any, keep: list[Any]) -> Any:
            if isinstance(x, cls) or (
                    dataclasses.is_dataclass(x) and not isinstance(x, type)
                    and type(x).__name__ == name
                    and [f.name for f in dataclasses.fields(x)] == pynames):
                vals = [getattr(x, a) for a in pynames]
            elif type(x) is tuple and len(x) == n:
                vals = list(x)
            else:
                raise TypeError(f"parameter '{pname}' is {sgl}: got {_what(x)} (a {name}, "
                                f"or a tuple of its {n} field{'s' if n != 1 else ''})")
            p = ffi.new(cptr)
            keep.append(p)
            for (cf, scalar, c), v in zip(convs, vals):
                r = c(v, keep)
                setattr(p, cf, r if scalar else r[0])
            return p
        return conv

    def _structs_leaf(self, name: str, pname: str, sgl: str) -> Callable[[Any, Any, list[Any]],
                                                                          None]:
        """One [S] into a sglc_vec: a structured array of S's dtype (read
        in place when C-contiguous; another with the same field names is
        converted once) or a sequence of S values."""
        ffi, np, info = self.ffi, _np, self.structs[name]
        one = self._struct_in(name, pname, sgl)

        def leaf(v: Any, x: Any, keep: list[Any]) -> None:
            if np is not None and isinstance(x, np.ndarray):
                want = info.dtype
                if want is None:
                    raise TypeError(f"parameter '{pname}' is {sgl}: got an array (a list of "
                                    f"{name} values: {name} has fields other than numbers)")
                if x.ndim != 1:
                    raise TypeError(f"parameter '{pname}' is {sgl}: got a {x.ndim}-D array")
                if x.dtype != want or not x.flags.c_contiguous:
                    if x.dtype.names != want.names or any(
                            not np.can_cast(x.dtype[f], want[f], "safe")
                            or (want[f] != np.bool_ and x.dtype[f] == np.bool_)
                            for f in want.names):
                        raise TypeError(f"parameter '{pname}' is {sgl}: got an array of "
                                        f"{x.dtype} (want {want.descr})")
                    y = np.empty(len(x), dtype=want)  # converted once
                    for f in want.names:
                        y[f] = x[f]
                    x = y
                if len(x):
                    buf = ffi.from_buffer(x.view(np.uint8))
                    keep.append((x, buf))
                    v.data = buf
                v.len = len(x)
                return
            if isinstance(x, (str, bytes)) or not hasattr(x, "__len__") or \
                    dataclasses.is_dataclass(x):
                raise TypeError(f"parameter '{pname}' is {sgl}: got {_what(x)}")
            items = list(x)
            if items:
                arr = ffi.new(info.cname + "[]", len(items))
                keep.append(arr)
                for i, e in enumerate(items):
                    arr[i] = one(e, keep)[0]
                v.data = arr
            v.len = len(items)
        return leaf

    def _in(self, ty: str, pname: str, sgl: str) -> Callable[[Any, list[Any]], Any]:
        """The converter of an argument of SGL type ty (sgl: the type named
        in its TypeError messages)."""
        depth, elem = _parse_type(ty)
        if elem == "string":
            return self._str_in(depth, pname, sgl)
        if elem in _SCALAR_C:
            return self._vec_in(depth, elem, pname, sgl) if depth else \
                self._scalar_in(elem, pname, sgl)
        if depth == 0:
            return self._struct_in(elem, pname, sgl)
        return self._nested_in(depth - 1, self._structs_leaf(elem, pname, sgl), pname, sgl)

    def _reader(self, ty: str) -> Callable[[Any], Any]:
        """A copy, as Python values, of a value of type ty (a vector, a
        string or a struct) in the library's memory (a sglc_vec or a
        NAME_S cdata)."""
        ffi, np = self.ffi, _np
        depth, elem = _parse_type(ty)
        if depth == 0 and elem == "string":
            def string(v: Any) -> Any:
                return ffi.buffer(ffi.cast("char *", v.data), v.len)[:].decode(
                    "utf-8", "surrogateescape") if v.len else ""
            return string
        if depth == 0:
            info = self.structs[elem]
            cls = info.cls
            parts = [(cf, None if t in _SCALAR_C else self._reader(t))
                     for _, t, cf, _ in info.fields]

            def struct(c: Any) -> Any:
                return cls(*[getattr(c, cf) if r is None else r(getattr(c, cf))
                             for cf, r in parts])
            return struct
        if depth == 1 and elem in _SCALAR_C:
            ctype, esize = _SCALAR_C[elem], _ESIZE[elem]

            def flat(v: Any) -> Any:
                if not self.use_np:
                    return ffi.unpack(ffi.cast(ctype + " *", v.data), v.len) if v.len else []
                if not v.len:
                    return np.empty(0, dtype=_DTYPE[elem])
                return np.frombuffer(ffi.buffer(ffi.cast("char *", v.data), v.len * esize),
                                     dtype=_DTYPE[elem]).copy()
            return flat
        if depth == 1 and self.use_np and elem in self.structs and \
                self.structs[elem].dtype is not None:
            dtype = self.structs[elem].dtype

            def records(v: Any) -> Any:
                if not v.len:
                    return np.empty(0, dtype=dtype)
                return np.frombuffer(ffi.buffer(ffi.cast("char *", v.data),
                                                v.len * dtype.itemsize), dtype=dtype).copy()
            return records
        inner = self._reader(ty[1:-1])
        cptr = ("sglc_vec" if depth > 1 or elem == "string" else self.structs[elem].cname) + " *"

        def items(v: Any) -> Any:
            xs = ffi.cast(cptr, v.data)
            return [inner(xs[i]) for i in range(v.len)]
        return items

    def _struct_result(self, ty: str) -> tuple[str, Callable[[Any], Any]]:
        """The result pointer's C type and the conversion of a result whose
        type holds a struct (S, [S], [[S]] ...): a copy, after which the
        library's value is freed."""
        depth, elem = _parse_type(ty)
        info, read = self.structs[elem], self._reader(ty)
        if depth == 0:
            def one(out: Any) -> Any:
                try:
                    return read(out[0])
                finally:
                    info.free(out)
            return info.cname + " *", one

        def vec(out: Any) -> Any:
            try:
                return read(out[0])
            finally:
                info.vec_free(out, depth)
        return "sglc_vec *", vec

    # ---------------------------------------------------------- arguments

    def _scalar_in(self, elem: str, pname: str, sgl: str) -> Callable[[Any, list[Any]], Any]:
        np = _np
        if elem == "int":
            def conv_int(x: Any, keep: list[Any]) -> Any:
                if type(x) is not int:
                    if isinstance(x, bool) or not hasattr(x, "__index__"):
                        raise TypeError(f"parameter '{pname}' is {sgl}: got {type(x).__name__}")
                    x = x.__index__()
                if not _INT_MIN <= x <= _INT_MAX:
                    raise OverflowError(f"parameter '{pname}' is {sgl}: {x} is out of the "
                                        "int64 range")
                return x
            return conv_int
        if elem == "float":
            def conv_float(x: Any, keep: list[Any]) -> Any:
                if type(x) is float:
                    return x
                if isinstance(x, bool) or not isinstance(x, (int, float)) and not (
                        np is not None and isinstance(x, np.floating | np.integer)):
                    raise TypeError(f"parameter '{pname}' is {sgl}: got {type(x).__name__}")
                return float(x)
            return conv_float

        def conv_bool(x: Any, keep: list[Any]) -> Any:
            if type(x) is bool:
                return x
            if np is not None and isinstance(x, np.bool_):
                return bool(x)
            raise TypeError(f"parameter '{pname}' is {sgl}: got {type(x).__name__}")
        return conv_bool

    def _vec_in(self, depth: int, elem: str, pname: str, sgl: str) -> Callable[[Any, list[Any]], Any]:
        ffi, np = self.ffi, _np
        scalar = self._scalar_in(elem, pname, sgl)

        def leaf(v: Any, x: Any, keep: list[Any]) -> None:
            if np is not None and isinstance(x, np.ndarray):
                if x.ndim != 1:
                    raise TypeError(f"parameter '{pname}' is {sgl}: got a {x.ndim}-D array")
                want = np.dtype(_DTYPE[elem])
                if x.dtype != want or not x.flags.c_contiguous:
                    if not np.can_cast(x.dtype, want, "safe") or (
                            elem != "bool" and x.dtype == np.bool_):
                        raise TypeError(f"parameter '{pname}' is {sgl}: got an array of "
                                        f"{x.dtype}")
                    x = np.ascontiguousarray(x, dtype=want)  # converted once
                if len(x):
                    buf = ffi.from_buffer(x)
                    keep.append((x, buf))
                    v.data = buf
                v.len = len(x)
                return
            if isinstance(x, (str, bytes)) or not hasattr(x, "__len__"):
                raise TypeError(f"parameter '{pname}' is {sgl}: got {type(x).__name__}")
            vals = [scalar(e, keep) for e in x]
            if vals:
                arr = ffi.new(f"{_SCALAR_C[elem]}[]", vals)
                keep.append(arr)
                v.data = arr
            v.len = len(vals)

        return self._nested_in(depth - 1, leaf, pname, sgl)

    def _str_in(self, depth: int, pname: str, sgl: str) -> Callable[[Any, list[Any]], Any]:
        """A string (depth 0) or a vector of them: a Python str is its UTF-8
        bytes (errors="surrogateescape", so that a str that came out of
        a string goes back as the same bytes); bytes are taken as they are."""
        ffi = self.ffi

        def leaf(v: Any, x: Any, keep: list[Any]) -> None:
            if isinstance(x, str):
                try:
                    b = x.encode("utf-8", "surrogateescape")
                except UnicodeEncodeError as e:
                    raise ValueError(
                        f"parameter '{pname}' is {sgl}: the str holds U+{ord(x[e.start]):04X}"
                        f" at index {e.start}, a lone surrogate that is no UTF-8 (only"
                        " U+DC80..U+DCFF, bytes kept by errors='surrogateescape', are)"
                    ) from None
            elif isinstance(x, (bytes, bytearray)):
                b = bytes(x)
            else:
                raise TypeError(f"parameter '{pname}' is {sgl}: got {type(x).__name__}")
            if b:
                arr = ffi.new("char[]", b)
                keep.append(arr)
                v.data = arr
            v.len = len(b)

        return self._nested_in(depth, leaf, pname, sgl)

    def _nested_in(self, depth: int, leaf: Callable[[Any, Any, list[Any]], None], pname: str,
                   sgl: str) -> Callable[[Any, list[Any]], Any]:
        """An argument that is `depth` levels of vectors (sglc_vec of
        sglc_vec ...) around what leaf(v, x, keep) writes into one sglc_vec
        (a vector of scalars, a string's bytes): the one walk of nested
        sequences of _vec_in and _str_in."""
        ffi = self.ffi

        def fill(v: Any, x: Any, d: int, keep: list[Any]) -> None:
            if d == 0:
                leaf(v, x, keep)
                return
            if isinstance(x, (str, bytes)) or not hasattr(x, "__len__"):
                raise TypeError(f"parameter '{pname}' is {sgl}: got {type(x).__name__}")
            items = list(x)
            if items:
                arr = ffi.new("sglc_vec[]", len(items))
                keep.append(arr)
                for i, e in enumerate(items):
                    fill(arr[i], e, d - 1, keep)
                v.data = arr
            v.len = len(items)

        def conv(x: Any, keep: list[Any]) -> Any:
            v = ffi.new("sglc_vec *")
            keep.append(v)
            fill(v, x, depth, keep)
            return v
        return conv

    def _str_result(self, depth: int) -> Callable[[Any], Any]:
        """A string result (depth 0) or a vector of them: str, decoded from
        UTF-8 with errors="surrogateescape" (bytes that are not UTF-8 become
        lone surrogates, and go back unchanged as an argument)."""
        ffi, vec_free = self.ffi, self.vec_free

        def nested(v: Any, d: int) -> Any:
            if d == 0:
                return ffi.buffer(ffi.cast("char *", v.data), v.len)[:].decode(
                    "utf-8", "surrogateescape") if v.len else ""
            items = ffi.cast("sglc_vec *", v.data)
            return [nested(items[i], d - 1) for i in range(v.len)]

        def conv(out: Any) -> Any:
            holder = ffi.new("sglc_vec *", out[0])
            try:
                return nested(holder[0], depth)
            finally:
                vec_free(holder, depth + 1)
        return conv

    # ---------------------------------------------------------- results

    def _result(self, depth: int, elem: str) -> Callable[[Any], Any]:
        ffi, np, vec_free = self.ffi, _np, self.vec_free
        ctype = _SCALAR_C[elem]

        def flat(v: Any, root: Any) -> Any:
            n = v.len
            if self.use_np:
                if n == 0:
                    return np.empty(0, dtype=_DTYPE[elem])
                addr = int(ffi.cast("uintptr_t", v.data))
                return np.asarray(_Owner(addr, n, elem, root))
            return ffi.unpack(ffi.cast(ctype + " *", v.data), n) if n else []

        def nested(v: Any, d: int, root: Any) -> Any:
            if d == 1:
                return flat(v, root)
            items = ffi.cast("sglc_vec *", v.data)
            return [nested(items[i], d - 1, root) for i in range(v.len)]

        def conv(out: Any) -> Any:
            holder = ffi.new("sglc_vec *", out[0])
            root = ffi.gc(holder, lambda p: vec_free(p, depth))
            r = nested(root[0], depth, root)
            if not self.use_np:
                del root  # lists are copies: free the runtime's buffer now
            return r
        return conv

    # ---------------------------------------------------------- functions

    def reset(self) -> None:
        """Give the program's node variables their initial values again, on
        every node (they keep their values from one call to the next; a call
        that fails with a run-time error resets them too)."""
        rc = int(getattr(self.lib, f"{self.prefix}_reset")())
        if rc:
            self.raise_error(rc)

    def raise_error(self, rc: int) -> None:
        ffi, lib, p = self.ffi, self.lib, self.prefix
        msg = ffi.string(getattr(lib, f"{p}_last_error")()).decode("utf-8", "replace")
        if rc == _ERR_INTERRUPTED:
            _interrupted(msg, self.path)
        if rc == _ERR_INTERNAL:
            # the runtime failed: rebuild the tree so that the next call works
            if self.init() != 0:
                msg += "; rebuilding the machine tree failed too: " + ffi.string(
                    getattr(lib, f"{p}_last_error")()).decode("utf-8", "replace")
            raise SGLInternalError(msg, msg, self.path, 0, 0, "")
        raise SGLRuntimeError(
            msg, ffi.string(getattr(lib, f"{p}_last_error_what")()).decode("utf-8", "replace"),
            self.path, getattr(lib, f"{p}_last_error_line")(),
            getattr(lib, f"{p}_last_error_col")(),
            ffi.string(getattr(lib, f"{p}_last_error_node")()).decode())

    def function(self, f: dict[str, Any], modname: str) -> Callable[..., Any]:
        ffi = self.ffi
        cfn = getattr(self.lib, f["cname"])
        convs = []
        for pname, ptype in f["params"]:
            convs.append(self._in(ptype, pname, ptype))
        ret = f["ret"]
        out_type = None
        result: Callable[[Any], Any] | None = None
        if ret is not None:
            depth, elem = _parse_type(ret)
            if elem == "string":
                out_type = "sglc_vec *"
                result = self._str_result(depth)
            elif elem in self.structs:
                out_type, result = self._struct_result(ret)
            else:
                out_type = "sglc_vec *" if depth else _SCALAR_C[elem] + " *"
                result = self._result(depth, elem) if depth else None
        nparams = len(convs)
        fname = f["name"]
        raise_error = self.raise_error

        def call(*args: Any) -> Any:
            if len(args) != nparams:
                raise TypeError(f"{fname}() takes {nparams} argument"
                                f"{'s' if nparams != 1 else ''} ({len(args)} given)")
            keep: list[Any] = []
            cargs = [conv(a, keep) for conv, a in zip(convs, args)]
            if out_type is None:
                rc = cfn(*cargs)
                if rc:
                    raise_error(rc)
                return None
            out = ffi.new(out_type)
            rc = cfn(*cargs, out)
            if rc:
                raise_error(rc)
            return result(out) if result is not None else out[0]

        call.__name__ = call.__qualname__ = fname
        call.__module__ = modname
        call.__doc__ = f["signature"] + "\n\n(an SGL function, run by sglc.load)"
        call.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            [inspect.Parameter(p, inspect.Parameter.POSITIONAL_ONLY) for p, _ in f["params"]])
        return call
