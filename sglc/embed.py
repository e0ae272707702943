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

Node variables keep their values from one call of a loaded module to the
next (one copy per node of its tree); `m.reset()` gives them their initial
values again, and so does a call that fails with a run-time error.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import json
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

try:  # numpy is optional (pip install 'sglc[numpy]')
    import numpy as _np
except ImportError:  # pragma: no cover - exercised without numpy
    _np = None  # type: ignore[assignment]

__all__ = ["load", "SGLRuntimeError", "SGLInternalError", "CompileError", "SGLModule"]

_INT_MIN, _INT_MAX = -(2 ** 63), 2 ** 63 - 1
_SCALAR_C = {"int": "int64_t", "float": "double", "bool": "bool"}
_DTYPE = {"int": "int64", "float": "float64", "bool": "bool"}
_TYPESTR = {"int": "<i8", "float": "<f8", "bool": "|b1"}
_ESIZE = {"int": 8, "float": 8, "bool": 1}


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


def _build(source: str, path: str, target: str, opt: int, unchecked: bool) -> tuple[Path, dict]:
    """The cache folder holding lib.so and meta.json for the program, and
    the meta; a damaged cached build is built again."""
    from . import pipeline
    from .build import cache_dir
    from .diagnostics import render_all
    from .emit_library import c_prefix, cdef_text, exports

    folder = cache_dir() / "lib" / _compile_key(source, path, target, opt, unchecked)
    meta = _cached_meta(folder)
    if meta is not None:
        return folder, meta
    prefix = c_prefix(Path(path).stem)
    opts = pipeline.Options(target, opt, unchecked)
    try:
        c, prog = pipeline.library_c(source, path, prefix, opts)
    except CompileError as e:
        err = CompileError(e.diagnostics)
        err.args = (render_all(e.diagnostics, source, path).rstrip("\n"),)
        raise err from None
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
        from .pipeline import read_source

        source = read_source(path)
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
    for f in meta["functions"]:  # a program's own `reset` takes the name (then: _reset)
        setattr(mod, f["name"], ctx.function(f, name))
    return mod


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
                    if not np.can_cast(x.dtype, want, "same_kind") or (
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
                b = x.encode("utf-8", "surrogateescape")
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
            depth, elem = _parse_type(ptype)
            if elem == "string":
                convs.append(self._str_in(depth, pname, ptype))
                continue
            convs.append(self._vec_in(depth, elem, pname, ptype) if depth
                         else self._scalar_in(elem, pname, ptype))
        ret = f["ret"]
        out_type = None
        result: Callable[[Any], Any] | None = None
        if ret is not None:
            depth, elem = _parse_type(ret)
            if elem == "string":
                out_type = "sglc_vec *"
                result = self._str_result(depth)
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
