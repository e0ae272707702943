"""`sglc lsp` end to end: a scripted LSP client (JSON-RPC with
Content-Length framing, written here) drives the server as a subprocess on
its stdin/stdout, and what it answers is compared with what `sglc check`
and `sglc fmt` print for the same text."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pygls", reason="sglc lsp needs pygls (pip install 'sglc[lsp]')")
pytest.importorskip("lsprotocol", reason="sglc lsp needs lsprotocol (pip install 'sglc[lsp]')")

SGLC = [sys.executable, "-c", "from sglc.cli import main; main()"]
TIMEOUT = 60

BROKEN = """\
func main() {
    var a = 1;
    pardo {
        var b = a + 1;
        print(b);
    }
}
"""

GOOD = """\
const N = 4;

func sq(x: int) -> int {
    return x * x;
}

func main() {
    var a = sq(N);
    var unused = 2;
    bcast a -> a;
    pardo {
        var b = a + 1;
        print(b);
    }
    print(a);
}
"""

UGLY = "func main(){var  x=1;\n  print( x );}\n"


class Client:
    """A minimal LSP client over a subprocess's pipes."""

    def __init__(self, cwd: Path):
        self.proc = subprocess.Popen([*SGLC, "lsp"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd)
        self.next_id = 0
        self.inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.notes: list[dict[str, Any]] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            headers = {}
            while True:
                line = out.readline()
                if not line:
                    self.inbox.put(None)
                    return
                line = line.strip()
                if not line:
                    break
                k, _, v = line.decode().partition(":")
                headers[k.strip().lower()] = v.strip()
            body = out.read(int(headers["content-length"]))
            self.inbox.put(json.loads(body))

    def send(self, msg: dict[str, Any]) -> None:
        data = json.dumps({"jsonrpc": "2.0", **msg}).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)
        self.proc.stdin.flush()

    def notify(self, method: str, params: Any) -> None:
        self.send({"method": method, "params": params})

    def _next(self) -> dict[str, Any]:
        msg = self.inbox.get(timeout=TIMEOUT)
        if msg is None:
            raise AssertionError("the server closed its output: "
                                 + self.proc.stderr.read().decode())  # type: ignore[union-attr]
        return msg

    def request(self, method: str, params: Any) -> Any:
        self.next_id += 1
        rid = self.next_id
        self.send({"id": rid, "method": method, "params": params})
        while True:
            msg = self._next()
            if msg.get("id") == rid and "method" not in msg:
                assert "error" not in msg, msg
                return msg.get("result")
            self._other(msg)

    def _other(self, msg: dict[str, Any]) -> None:
        if "method" in msg and "id" in msg:  # a request of the server: answer null
            self.send({"id": msg["id"], "result": None})
        else:
            self.notes.append(msg)

    def diagnostics(self, uri: str) -> list[dict[str, Any]]:
        """The next diagnostics published for uri."""
        while True:
            for i, m in enumerate(self.notes):
                if m.get("method") == "textDocument/publishDiagnostics" \
                        and m["params"]["uri"] == uri:
                    del self.notes[i]
                    return m["params"]["diagnostics"]
            self._other(self._next())


@pytest.fixture
def client(tmp_path: Path):
    c = Client(tmp_path)
    caps = {"textDocument": {"hover": {"contentFormat": ["markdown", "plaintext"]},
                             "documentSymbol": {"hierarchicalDocumentSymbolSupport": True},
                             "publishDiagnostics": {"relatedInformation": True}}}
    res = c.request("initialize", {"processId": os.getpid(), "rootUri": tmp_path.as_uri(),
                                   "capabilities": caps})
    server_caps = res["capabilities"]
    for cap in ("hoverProvider", "definitionProvider", "documentSymbolProvider",
                "documentFormattingProvider"):
        assert server_caps.get(cap), cap
    c.notify("initialized", {})
    yield c
    if c.proc.poll() is None:
        c.proc.kill()
        c.proc.wait()


def _check_json(path: Path) -> list[dict[str, Any]]:
    """What `sglc check --diagnostics-format=json` reports for path."""
    r = subprocess.run([*SGLC, "check", "--diagnostics-format=json", str(path)],
                       capture_output=True, text=True, cwd=path.parent)
    return [json.loads(line) for line in r.stderr.splitlines() if line.strip()]


def _check_text(path: Path) -> str:
    r = subprocess.run([*SGLC, "check", str(path)], capture_output=True, text=True,
                       cwd=path.parent)
    return r.stderr


def _open(c: Client, path: Path, text: str) -> str:
    path.write_text(text)
    uri = path.as_uri()
    c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "sgl",
                                                       "version": 1, "text": text}})
    return uri


def _range(d: dict[str, Any]) -> tuple[int, int, int, int]:
    """A `sglc check` json diagnostic's span as a 0-based LSP range."""
    return (d["line"] - 1, d["col"] - 1, d["end_line"] - 1, d["end_col"] - 1)


def _lsp_range(r: dict[str, Any]) -> tuple[int, int, int, int]:
    return (r["start"]["line"], r["start"]["character"], r["end"]["line"], r["end"]["character"])


def _pos(text: str, needle: str, nth: int = 0, offset: int = 0) -> dict[str, int]:
    """The LSP position of the nth occurrence of needle in text (+offset)."""
    i = -1
    for _ in range(nth + 1):
        i = text.index(needle, i + 1)
    i += offset
    line = text.count("\n", 0, i)
    return {"line": line, "character": i - (text.rfind("\n", 0, i) + 1)}


def test_session(client: Client, tmp_path: Path) -> None:
    c = client
    path = tmp_path / "prog.sgl"
    uri = _open(c, path, BROKEN)

    # an error: the text and range of `sglc check`
    diags = c.diagnostics(uri)
    want = _check_json(path)
    assert len(want) == 1 and want[0]["severity"] == "error"
    assert len(diags) == 1
    d = diags[0]
    assert d["severity"] == 1 and d["source"] == "sglc"
    assert d["message"] == "\n".join([want[0]["message"],
                                      *(f"note: {n}" for n in want[0]["notes"])])
    assert want[0]["notes"], "the example should have a note"
    assert _lsp_range(d["range"]) == _range(want[0])
    # ... the same message as the text the CLI prints
    text = _check_text(path)
    assert f"{path}:{want[0]['line']}:{want[0]['col']}: error: {want[0]['message']}\n" in text
    assert _lsp_range(d["range"]) == (3, 16, 3, 17)  # the 'a' of line 4, by hand

    # fixed: the error is gone, the warning of the default set is published
    path.write_text(GOOD)
    c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                        "contentChanges": [{"text": GOOD}]})
    diags = c.diagnostics(uri)
    want = _check_json(path)
    assert [w["severity"] for w in want] == ["warning"]
    assert len(diags) == 1
    d = diags[0]
    assert d["severity"] == 2 and d["source"] == "sglc"
    assert d["code"] == want[0]["flag"] == "unused-variable"
    assert d["message"].split("\n")[0] == want[0]["message"]
    assert "'unused'" in d["message"]
    assert _lsp_range(d["range"]) == _range(want[0])
    assert f"warning: {want[0]['message']} [-Wunused-variable]" in _check_text(path)

    # hover on a variable at level 1 inside pardo: its type and level
    h = c.request("textDocument/hover", {"textDocument": {"uri": uri},
                                         "position": _pos(GOOD, "a + 1")})
    value = h["contents"]["value"]
    assert "a: int" in value and "level 1" in value, value
    assert _lsp_range(h["range"]) == (11, 16, 11, 17)
    # ... on the same variable at level 0
    h = c.request("textDocument/hover", {"textDocument": {"uri": uri},
                                         "position": _pos(GOOD, "print(a)", offset=6)})
    assert "a: int" in h["contents"]["value"] and "level 0" in h["contents"]["value"]
    # ... on a function call: its signature; on a builtin: the table's
    h = c.request("textDocument/hover", {"textDocument": {"uri": uri},
                                         "position": _pos(GOOD, "sq(N)")})
    assert "func sq(x: int) -> int" in h["contents"]["value"]
    h = c.request("textDocument/hover", {"textDocument": {"uri": uri},
                                         "position": _pos(GOOD, "print(b)")})
    assert "print(" in h["contents"]["value"] and "builtin" in h["contents"]["value"]
    # ... on a constant: its value
    h = c.request("textDocument/hover", {"textDocument": {"uri": uri},
                                         "position": _pos(GOOD, "sq(N)", offset=3)})
    assert "N: int = 4" in h["contents"]["value"]
    # ... on white space: nothing
    assert c.request("textDocument/hover", {"textDocument": {"uri": uri},
                                            "position": {"line": 1, "character": 0}}) is None

    # definition of a function call: the function's name
    loc = c.request("textDocument/definition", {"textDocument": {"uri": uri},
                                                "position": _pos(GOOD, "sq(N)", offset=1)})
    if isinstance(loc, list):
        loc = loc[0]
    assert loc["uri"] == uri
    assert _lsp_range(loc["range"]) == (2, 5, 2, 7)
    # ... of a variable and of a parameter
    loc = c.request("textDocument/definition", {"textDocument": {"uri": uri},
                                                "position": _pos(GOOD, "a + 1")})
    assert _lsp_range(loc["range"]) == (7, 8, 7, 9)
    loc = c.request("textDocument/definition", {"textDocument": {"uri": uri},
                                                "position": _pos(GOOD, "x * x", offset=4)})
    assert _lsp_range(loc["range"])[:2] == (2, 8)

    # document symbols
    syms = c.request("textDocument/documentSymbol", {"textDocument": {"uri": uri}})
    assert [(s["name"], s["kind"]) for s in syms] == [("N", 14), ("sq", 12), ("main", 12)]
    sq = syms[1]
    assert _lsp_range(sq["selectionRange"]) == (2, 5, 2, 7)
    assert sq["range"]["start"]["line"] == 2 and sq["range"]["end"]["line"] == 4

    # formatting: the output of `sglc fmt`
    c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 3},
                                        "contentChanges": [{"text": UGLY}]})
    c.diagnostics(uri)
    edits = c.request("textDocument/formatting", {"textDocument": {"uri": uri},
                                                  "options": {"tabSize": 4,
                                                              "insertSpaces": True}})
    r = subprocess.run([*SGLC, "fmt", "-"], input=UGLY, capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout != UGLY
    assert len(edits) == 1
    assert edits[0]["range"]["start"] == {"line": 0, "character": 0}
    end = edits[0]["range"]["end"]
    assert (end["line"], end["character"]) >= (UGLY.count("\n"), 0)
    assert edits[0]["newText"] == r.stdout
    # ... and nothing for a document with syntax errors (with its error published)
    c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 4},
                                        "contentChanges": [{"text": "func main( {\n"}]})
    diags = c.diagnostics(uri)
    assert diags and diags[0]["severity"] == 1
    path.write_text("func main( {\n")
    assert diags[0]["message"].split("\n")[0] == _check_json(path)[0]["message"]
    edits = c.request("textDocument/formatting", {"textDocument": {"uri": uri},
                                                  "options": {"tabSize": 4,
                                                              "insertSpaces": True}})
    assert not edits

    # shutdown and exit: exit status 0
    assert c.request("shutdown", None) is None
    c.notify("exit", None)
    assert c.proc.wait(timeout=TIMEOUT) == 0


def test_non_ascii_columns(client: Client, tmp_path: Path) -> None:
    """Ranges are in UTF-16 code units (LSP's default), spans in code points."""
    c = client
    text = 'func main() {\n    print("\U0001F600", y);\n}\n'
    path = tmp_path / "emoji.sgl"
    uri = _open(c, path, text)
    diags = c.diagnostics(uri)
    want = _check_json(path)
    assert len(diags) == len(want) == 1
    # the emoji is one code point, two UTF-16 units
    sl, sc, el, ec = _range(want[0])
    assert _lsp_range(diags[0]["range"]) == (sl, sc + 1, el, ec + 1)
    c.request("shutdown", None)
    c.notify("exit", None)
    assert c.proc.wait(timeout=TIMEOUT) == 0


@pytest.mark.parametrize("eol", ["\r", "\r\n"])
def test_line_endings(client: Client, tmp_path: Path, eol: str) -> None:
    """A line ends at \\r or \\r\\n as at \\n (language.md §1, and LSP's own
    rule): the diagnostics are where `sglc check` puts them."""
    c = client
    text = eol.join(["func main() {", "    var y: int = 1.5;", "    print(y);", "}", ""])
    path = tmp_path / "eol.sgl"
    uri = _open(c, path, text)
    diags = c.diagnostics(uri)
    want = _check_json(path)
    assert len(diags) == len(want) == 1
    assert _lsp_range(diags[0]["range"]) == _range(want[0]) == (1, 17, 1, 20)
    c.request("shutdown", None)
    c.notify("exit", None)
    assert c.proc.wait(timeout=TIMEOUT) == 0


def test_documents_never_opened(client: Client, tmp_path: Path) -> None:
    """A request about a document the client never opened: read from its
    file when there is one; when there is none, an empty answer (null or
    []), not an error, and the server goes on."""
    c = client
    missing = (tmp_path / "missing.sgl").as_uri()
    pos = {"line": 0, "character": 5}
    assert c.request("textDocument/hover", {"textDocument": {"uri": missing},
                                            "position": pos}) is None
    assert c.request("textDocument/definition", {"textDocument": {"uri": missing},
                                                  "position": pos}) is None
    assert c.request("textDocument/documentSymbol",
                     {"textDocument": {"uri": missing}}) in (None, [])
    assert c.request("textDocument/formatting",
                     {"textDocument": {"uri": missing},
                      "options": {"tabSize": 4, "insertSpaces": True}}) in (None, [])
    on_disk = tmp_path / "disk.sgl"
    on_disk.write_text(GOOD)
    h = c.request("textDocument/hover", {"textDocument": {"uri": on_disk.as_uri()},
                                         "position": _pos(GOOD, "sq(N)")})
    assert "func sq(x: int) -> int" in h["contents"]["value"]
    c.request("shutdown", None)
    c.notify("exit", None)
    assert c.proc.wait(timeout=TIMEOUT) == 0


NODE_HARNESS = r"""
// Loads extension.js with stand-ins for 'vscode' and vscode-languageclient,
// activates it and prints what it asked the language client for.
const Module = require("module");
const seen = { clients: [], started: 0, stopped: 0, errors: [] };
let listener = null;
const config = { "server.path": process.argv[3], "server.enable": true };
const vscode = {
  workspace: {
    getConfiguration: (section) => ({ get: (k, d) => (k in config ? config[k] : d) }),
    onDidChangeConfiguration: (f) => { listener = f; return { dispose() {} }; },
  },
  window: { showErrorMessage: (m) => seen.errors.push(m) },
};
class LanguageClient {
  constructor(id, name, serverOptions, clientOptions) {
    seen.clients.push({ id, name, serverOptions, clientOptions });
  }
  async start() { seen.started++; }
  async stop() { seen.stopped++; }
}
const load = Module._load;
Module._load = function (request, ...rest) {
  if (request === "vscode") return vscode;
  if (request === "vscode-languageclient/node") return { LanguageClient };
  return load.call(this, request, ...rest);
};
(async () => {
  const ext = require(process.argv[2]);
  const context = { subscriptions: [] };
  await ext.activate(context);
  config["server.path"] = "/other/sglc";
  await listener({ affectsConfiguration: (s) => s === "sgl.server" });
  await ext.deactivate();
  console.log(JSON.stringify(seen));
})();
"""


def test_vscode_extension_starts_sglc_lsp(tmp_path: Path) -> None:
    """extension.js (with stand-ins for VS Code and vscode-languageclient,
    which are not here) starts `<sgl.server.path> lsp` for sgl documents,
    restarts it when the setting changes and stops it on deactivate."""
    import shutil

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    ext = Path(__file__).resolve().parents[1] / "editors" / "vscode" / "extension.js"
    pkg = json.loads((ext.parent / "package.json").read_text())
    assert (ext.parent / pkg["main"]).resolve() == ext
    props = pkg["contributes"]["configuration"]["properties"]
    assert props["sgl.server.path"]["default"] == "sglc"
    assert "vscode-languageclient" in pkg["dependencies"]
    harness = tmp_path / "harness.js"
    harness.write_text(NODE_HARNESS)
    r = subprocess.run([node, str(harness), str(ext), "/opt/my/sglc"], capture_output=True,
                       text=True, timeout=TIMEOUT)
    assert r.returncode == 0, r.stderr
    seen = json.loads(r.stdout)
    assert seen["errors"] == []
    assert [c["serverOptions"] for c in seen["clients"]] == [
        {"command": "/opt/my/sglc", "args": ["lsp"]}, {"command": "/other/sglc", "args": ["lsp"]}]
    assert seen["clients"][0]["clientOptions"]["documentSelector"] == [{"language": "sgl"}]
    assert seen["started"] == 2 and seen["stopped"] == 2


def test_without_pygls(tmp_path: Path) -> None:
    """Without pygls, `sglc lsp` says what to install and exits 2."""
    code = "import sys; sys.modules['pygls'] = None; from sglc.cli import main; main()"
    r = subprocess.run([sys.executable, "-c", code, "lsp"], capture_output=True, text=True,
                       stdin=subprocess.DEVNULL, timeout=TIMEOUT)
    assert r.returncode == 2
    assert "pip install 'sglc[lsp]'" in r.stderr and "Traceback" not in r.stderr


ANNOTATED = """\
func f(v: [int]) -> [int] {
    var p: [int];
    scatter split(v, nchildren) -> p;
    var r: int;
    pardo {
        r = sum(p);
        for i in 0 .. len(p) {
            r += i;
        }
    }
    var rs: [int];
    gather r -> rs;
    return rs;
}

func main() {
    print(f([1, 2, 3]));
}
"""


def _hover_at(a: Any, line: int, col: int) -> tuple[str, Any]:
    e = a.at(line, col)
    assert e is not None, (line, col)
    return e.hover, e.definition


def test_index_of_names() -> None:
    """The analysis behind hover and definition: every kind of occurrence
    (assignment and communication targets, loop variables, parameters),
    with the levels of brief §6.2 as read off the program by hand."""
    from sglc.lsp import analyze

    a = analyze(ANNOTATED, "a.sgl")
    assert a.diagnostics == []
    h, d = _hover_at(a, 3, 36)  # the target p of scatter: one level below
    assert h.startswith("(variable) p: [int]") and "level 1" in h
    assert (d.line, d.col) == (2, 9)
    h, _ = _hover_at(a, 3, 19)  # v, the source: the function's level
    assert h.startswith("(parameter) v: [int]") and "level 0" in h
    h, d = _hover_at(a, 6, 9)  # r = ...: an assignment target at level 1
    assert h.startswith("(variable) r: int") and "level 1" in h
    assert (d.line, d.col) == (4, 9)
    h, d = _hover_at(a, 8, 18)  # the loop variable i, read
    assert h.startswith("(loop variable) i: int") and "level 1" in h
    assert (d.line, d.col) == (7, 13)
    h, _ = _hover_at(a, 12, 12)  # gather r -> rs: the source one level below
    assert h.startswith("(variable) r: int") and "level 1" in h
    h, _ = _hover_at(a, 12, 17)  # ... the target at the function's level
    assert h.startswith("(variable) rs: [int]") and "level 0" in h
    h, d = _hover_at(a, 3, 13)  # a builtin: its forms from the builtin table
    assert h.startswith("(builtin)") and "split(" in h and d is None
    assert a.at(1, 1) is None  # the keyword 'func'
