"""The C names of the generated code, in one place.

Every name that sglc gives to something of the program in the C it writes
is made here, so that the prefixes cannot clash (a function `f_x`, a frame
variable `v_x`, a node variable `nv_x`, a struct `S_x`...) and a reader of
the C can tell what each name is.  An SGL name is a C identifier already
(brief §2) and never starts with `sgl_`, the runtime's prefix; none of
these prefixes is a C keyword's start that could make one.
"""

from __future__ import annotations

_ACTION_KIND = {"recv": "recv", "body": "pardo", "eval": "eval"}  # ir.Action.kind -> suffix


def function(name: str) -> str:
    """The C function of SGL function `name` (ir.Function.cname, ir.Call.func)."""
    return "f_" + name


def source_function(cname: str) -> str:
    """The SGL name of the function whose C name is cname."""
    return cname.removeprefix("f_")


def frame_type(name: str) -> str:
    """The frame struct of function `name` (the children's copies of its variables)."""
    return "fr_" + name


def frame_free(name: str) -> str:
    """The function that frees a frame of function `name`."""
    return "frfree_" + name


def variable(name: str, n: int = 1) -> str:
    """The frame field of local variable or parameter `name`; n > 1: the
    n-th variable of that name in the function (a shadowing block)."""
    return f"v_{name}" if n == 1 else f"v_{name}_{n}"


def node_variable(name: str) -> str:
    """The field of node variable `name` in the per-node struct sgl_nodevars."""
    return "nv_" + name


def site(k: int) -> str:
    """The table entry of superstep site k."""
    return f"site_{k}"


def action(site_id: int, k: int, kind: str) -> str:
    """The child-side function of op k of site site_id (kind: ir.Action.kind)."""
    return f"act{site_id}_{k}_{_ACTION_KIND[kind]}"


def struct(name: str) -> str:
    """The C struct of SGL struct `name`."""
    return "S_" + name


def field(name: str) -> str:
    """The member of a C struct for field `name` of an SGL struct."""
    return "f_" + name


def descriptor(mangled: str) -> str:
    """The runtime type descriptor of a vector or struct type (its mangled name)."""
    return "T_" + mangled
