"""torchdevice-lsp driven as an editor drives it: the real server in a subprocess, JSON-RPC over stdio."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Callable, Optional

import pytest

pytest.importorskip("pygls")

from torchdevice_lint import fix_source, lint_source  # noqa: E402
from torchdevice_lint.lsp.documents import minimal_edits, notebook_cells, notebook_json  # noqa: E402

TIMEOUT = 30.0

CUDA_CALL = "import torch\n\nmodel = Net().cuda()\n"


class Client:
    """A minimal LSP client: Content-Length framing, requests matched by id, notifications queued."""

    def __init__(self, cwd: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", _LAUNCH],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=cwd,
        )
        self.next_id = 0
        self.responses: dict[int, queue.Queue] = {}
        self.notifications: queue.Queue = queue.Queue()
        self.backlog: list[dict] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            length = None
            while True:
                header = stream.readline()
                if not header:
                    return
                if header in (b"\r\n", b"\n"):
                    break
                name, _, value = header.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            assert length is not None
            message = json.loads(stream.read(length))
            if "id" in message and "method" not in message:
                self.responses.setdefault(message["id"], queue.Queue()).put(message)
            elif "id" in message:  # a request from the server (registration, configuration): answer it
                self._send({"jsonrpc": "2.0", "id": message["id"], "result": None})
            else:
                self.notifications.put(message)

    def _send(self, message: dict) -> None:
        body = json.dumps(message).encode("utf-8")
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        stdin.flush()

    def request(self, method: str, params: Any) -> Any:
        self.next_id += 1
        waiting = self.responses.setdefault(self.next_id, queue.Queue())
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        response = waiting.get(timeout=TIMEOUT)
        assert "error" not in response, response
        return response["result"]

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait_for(self, method: str, accept: Callable[[dict], bool] = lambda params: True) -> dict:
        """The params of the first notification ``method`` that ``accept`` takes; the others wait for later calls."""
        for index, message in enumerate(self.backlog):
            if message["method"] == method and accept(message["params"]):
                del self.backlog[index]
                return message["params"]
        while True:
            message = self.notifications.get(timeout=TIMEOUT)
            if message["method"] == method and accept(message["params"]):
                return message["params"]
            self.backlog.append(message)

    def diagnostics(self, uri: str) -> list[dict]:
        return self.wait_for("textDocument/publishDiagnostics", lambda params: params["uri"] == uri)["diagnostics"]


#: Starts the server as the console script does (``torchdevice-lsp``), with this interpreter.
_LAUNCH = "import sys; from torchdevice_lint.lsp import main; sys.exit(main())"


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("project")
    (root / "pyproject.toml").write_text('[tool.torchdevice-lint]\nignore = ["TDL005"]\nextend-exclude = ["generated/"]\n')
    return root


@pytest.fixture(scope="module")
def client(project: Path):
    client = Client(project)
    result = client.request(
        "initialize",
        {"processId": None, "rootUri": project.as_uri(), "capabilities": {}, "workspaceFolders": None},
    )
    assert result["capabilities"]["codeActionProvider"]
    client.notify("initialized", {})
    yield client
    if client.process.poll() is None:
        client.process.kill()
        client.process.wait()


_versions: dict[str, int] = {}


def open_document(client: Client, path: Path, text: str) -> list[dict]:
    uri = path.as_uri()
    _versions[uri] = 1
    client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}})
    return client.diagnostics(uri)


def change_document(client: Client, path: Path, text: str) -> list[dict]:
    uri = path.as_uri()
    _versions[uri] += 1
    client.notify(
        "textDocument/didChange",
        {"textDocument": {"uri": uri, "version": _versions[uri]}, "contentChanges": [{"text": text}]},
    )
    return client.diagnostics(uri)


def code_actions(client: Client, path: Path, diagnostics: list[dict], only: Optional[list[str]] = None) -> list[dict]:
    context: dict = {"diagnostics": diagnostics}
    if only is not None:
        context["only"] = only
    whole = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
    return client.request(
        "textDocument/codeAction",
        {"textDocument": {"uri": path.as_uri()}, "range": diagnostics[0]["range"] if diagnostics else whole, "context": context},
    )


def apply(text: str, edits: list[dict]) -> str:
    """The text with LSP edits applied (UTF-16 positions), last first as the protocol requires."""
    lines = text.splitlines(keepends=True)

    def offset(position: dict) -> int:
        before = "".join(lines[: position["line"]])
        line = lines[position["line"]] if position["line"] < len(lines) else ""
        units = line.encode("utf-16-le")[: 2 * position["character"]].decode("utf-16-le")
        return len(before) + len(units)

    for edit in sorted(edits, key=lambda e: (e["range"]["start"]["line"], e["range"]["start"]["character"]), reverse=True):
        text = text[: offset(edit["range"]["start"])] + edit["newText"] + text[offset(edit["range"]["end"]) :]
        lines = text.splitlines(keepends=True)
    return text


@pytest.mark.parametrize(
    "old, new",
    [
        ("a = x.cuda()\n", "a = x.to(device)\n"),
        ("é𝔁 = x.cuda()\r\nb = 1\r\n", "é𝔁 = x.to(device)\r\nb = 1\r\n"),
        ("import torch\nx = 1", "import torch\n\ndevice = 0\n\nx = 2"),
        ("x = 1\n", ""),
        ("", "x = 1\n"),
    ],
)
def test_minimal_edits_rebuild_the_new_text(old: str, new: str) -> None:
    edits = [
        {"range": {"start": vars(e.start), "end": vars(e.end)}, "newText": e.text} for e in minimal_edits(old, new)
    ]
    assert apply(old, edits) == new
    assert sum(len(edit["newText"]) for edit in edits) <= len(new)


def test_cuda_call_is_reported_at_its_range(client: Client, project: Path) -> None:
    diagnostics = open_document(client, project / "train.py", CUDA_CALL)
    assert len(diagnostics) == 1
    diagnostic = diagnostics[0]
    assert diagnostic["code"] == "TDL001"
    assert diagnostic["source"] == "torchdevice-lint"
    assert diagnostic["severity"] == 2  # warning
    assert diagnostic["range"] == {"start": {"line": 2, "character": 8}, "end": {"line": 2, "character": 20}}
    assert "#tdl001-cuda-call" in diagnostic["codeDescription"]["href"]


def test_columns_are_utf16_code_units(client: Client, project: Path) -> None:
    # The call starts at code point 11; "é" is one UTF-16 unit and "𝔁" (outside the BMP) two: character 12.
    text = 'import torch\n\nx = ("é𝔁", Net().cuda())\n'
    diagnostics = open_document(client, project / "unicode.py", text)
    assert [d["range"]["start"] for d in diagnostics] == [{"line": 2, "character": 12}]
    assert diagnostics[0]["range"]["end"] == {"line": 2, "character": 24}


def test_quick_fix_gives_what_torchdevice_fix_writes(client: Client, project: Path) -> None:
    path = project / "quick.py"
    diagnostics = open_document(client, path, CUDA_CALL)
    actions = code_actions(client, path, diagnostics)
    fixes = [action for action in actions if action["title"].startswith("Fix TDL001")]
    assert len(fixes) == 1 and fixes[0]["kind"] == "quickfix" and fixes[0]["isPreferred"] is True
    edits = fixes[0]["edit"]["changes"][path.as_uri()]
    assert apply(CUDA_CALL, edits) == fix_source(CUDA_CALL)
    # Minimal edits: the call site and the inserted device line, not the whole document.
    assert all(edit["range"]["start"]["line"] >= 1 for edit in edits)


def test_fix_all_and_noqa_actions(client: Client, project: Path) -> None:
    text = "import torch\n\na = Net().cuda()\nb = torch.zeros(3).cuda()\n"
    path = project / "fix_all.py"
    diagnostics = open_document(client, path, text)
    assert [d["code"] for d in diagnostics] == ["TDL001", "TDL001"]
    fix_all = code_actions(client, path, [], only=["source.fixAll"])
    assert [action["kind"] for action in fix_all] == ["source.fixAll.torchdevice-lint"]
    assert apply(text, fix_all[0]["edit"]["changes"][path.as_uri()]) == fix_source(text)
    noqa = [a for a in code_actions(client, path, diagnostics[1:]) if a["title"] == "Add noqa: TDL001"]
    silenced = apply(text, noqa[0]["edit"]["changes"][path.as_uri()])
    assert silenced.splitlines()[3] == "b = torch.zeros(3).cuda()  # noqa: TDL001"
    assert [d["range"]["start"]["line"] for d in change_document(client, path, silenced)] == [2]


def test_unsafe_fix_is_marked_and_not_preferred(client: Client, project: Path) -> None:
    text = "import torch\n\nx = torch.zeros(3).cuda(1)\n"  # the fix drops the device index
    path = project / "unsafe.py"
    diagnostics = open_document(client, path, text)
    assert [d["code"] for d in diagnostics] == ["TDL001", "TDL010"]
    fixes = [a for a in code_actions(client, path, diagnostics[:1]) if a["title"].startswith("Fix TDL001")]
    assert "unsafe" in fixes[0]["title"] and fixes[0]["isPreferred"] is False
    assert apply(text, fixes[0]["edit"]["changes"][path.as_uri()]) == fix_source(text, unsafe=True)


def test_change_clears_the_diagnostic(client: Client, project: Path) -> None:
    path = project / "change.py"
    assert open_document(client, path, CUDA_CALL)
    assert change_document(client, path, "import torch\n\nmodel = Net().to(device)\n") == []


def test_incremental_change_in_utf16_units(client: Client, project: Path) -> None:
    """Editors send the typed range only: the server applies it in the agreed units and checks the result."""
    path, uri = project / "incremental.py", (project / "incremental.py").as_uri()
    diagnostics = open_document(client, path, 'import torch\n\nx = ("𝔁", Net().cuda())\n')
    _versions[uri] += 1
    client.notify(
        "textDocument/didChange",
        {
            "textDocument": {"uri": uri, "version": _versions[uri]},
            "contentChanges": [{"range": diagnostics[0]["range"], "text": "Net().half().cuda()"}],
        },
    )
    # Applied one unit off, the text would not parse (no diagnostics) or the range would move.
    changed = client.diagnostics(uri)
    assert [d["range"] for d in changed] == [{"start": {"line": 2, "character": 11}, "end": {"line": 2, "character": 30}}]


def test_syntax_error_gives_no_diagnostics_and_one_log_message(client: Client, project: Path) -> None:
    path = project / "broken.py"
    assert open_document(client, path, CUDA_CALL)
    assert change_document(client, path, "import torch\nmodel = Net(.cuda()\n") == []
    log = client.wait_for("window/logMessage", lambda params: path.name in params["message"])
    assert "not checked" in log["message"]
    # The server goes on: the document fixed again is checked again.
    assert [d["code"] for d in change_document(client, path, CUDA_CALL)] == ["TDL001"]


def test_too_complex_file_gets_no_diagnostics_and_a_log_message(client: Client, project: Path) -> None:
    path = project / "generated_deep.py"
    text = CUDA_CALL + "x = " + "(" * 1500 + "1" + ")" * 1500 + "\n"  # deeper than the default budget
    assert open_document(client, path, text) == []
    log = client.wait_for("window/logMessage", lambda params: path.name in params["message"])
    assert "too complex to check" in log["message"]


def test_noqa_and_project_settings_are_honoured(client: Client, project: Path) -> None:
    text = "import torch\n\nmodel = Net().cuda()  # noqa: TDL001\nstate = torch.load('model.pt')\n"
    # TDL005 (torch.load without map_location) is reported by default; the project's pyproject ignores it.
    assert [f.code for f in lint_source(text)] == ["TDL005"]
    assert open_document(client, project / "settings.py", text) == []


def test_broken_configuration_is_logged_and_the_defaults_used(client: Client, project: Path) -> None:
    (project / "badconfig").mkdir()
    (project / "badconfig" / "pyproject.toml").write_text('[tool.torchdevice-lint]\nselect = ["XYZ"]\n')
    diagnostics = open_document(client, project / "badconfig" / "train.py", CUDA_CALL)
    assert [d["code"] for d in diagnostics] == ["TDL001"]
    log = client.wait_for("window/logMessage", lambda params: "badconfig" in params["message"])
    assert "'XYZ' is not a rule code" in log["message"] and "using the default settings" in log["message"]
    assert log["type"] == 1  # error


def test_excluded_file_gets_no_diagnostics(client: Client, project: Path) -> None:
    (project / "generated").mkdir()
    assert open_document(client, project / "generated" / "model.py", CUDA_CALL) == []


def test_other_files_of_the_project_are_seen_and_followed_on_save(client: Client, project: Path) -> None:
    """As the CLI given one file: its project's index says that Net is an nn.Module (through
    pkg/base.py), so the mask it builds in forward is on the wrong device; a saved change of
    base.py is taken in, and the open model.py checked again."""
    package = project / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    base = "from torch import nn\n\n\nclass Base(nn.Module):\n    pass\n"
    (package / "base.py").write_text(base)
    model = (
        "import torch\nfrom .base import Base\n\n\nclass Net(Base):\n    def forward(self, x):\n"
        "        mask = torch.ones(x.shape[0], x.shape[1])\n        return x * mask\n\n\n"
        'net = Net().to("cuda" if torch.cuda.is_available() else "cpu")\n'
    )
    (package / "model.py").write_text(model)
    assert lint_source(model) == []  # alone, Net is nothing known
    diagnostics = open_document(client, package / "model.py", model)
    assert [(d["code"], d["range"]["start"]) for d in diagnostics] == [("TDL003", {"line": 6, "character": 15})]
    open_document(client, package / "base.py", base)
    plain = "class Base:\n    pass\n"
    (package / "base.py").write_text(plain)
    change_document(client, package / "base.py", plain)
    client.notify("textDocument/didSave", {"textDocument": {"uri": (package / "base.py").as_uri()}})
    assert client.diagnostics((package / "model.py").as_uri()) == []


def test_notebook_cell_sent_as_a_text_document(client: Client, project: Path) -> None:
    uri = f"vscode-notebook-cell:{(project / 'nb.ipynb').as_posix()}#W0sZmlsZQ%3D%3D"
    text = "%matplotlib inline\nmodel = Net().cuda()\n"
    client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}})
    diagnostics = client.diagnostics(uri)
    assert [(d["code"], d["range"]["start"]) for d in diagnostics] == [("TDL001", {"line": 1, "character": 8})]


def test_notebook_is_checked_as_one_program(client: Client, project: Path) -> None:
    notebook = (project / "sync.ipynb").as_uri()
    cells = [f"{notebook}#cell{index}" for index in range(2)]
    texts = ["import torch\n", "model = Net().cuda()\n"]
    client.notify(
        "notebookDocument/didOpen",
        {
            "notebookDocument": {
                "uri": notebook,
                "notebookType": "jupyter-notebook",
                "version": 1,
                "cells": [{"kind": 2, "document": uri} for uri in cells],
            },
            "cellTextDocuments": [
                {"uri": uri, "languageId": "python", "version": 1, "text": text} for uri, text in zip(cells, texts)
            ],
        },
    )
    published = {}
    while len(published) < 2:
        params = client.wait_for("textDocument/publishDiagnostics", lambda params: params["uri"] in cells)
        published[params["uri"]] = params["diagnostics"]
    assert published[cells[0]] == []
    assert [(d["code"], d["range"]["start"]["line"]) for d in published[cells[1]]] == [("TDL001", 0)]
    # The quick fix on the second cell writes what torchdevice-fix writes for the notebook.
    actions = client.request(
        "textDocument/codeAction",
        {"textDocument": {"uri": cells[1]}, "range": published[cells[1]][0]["range"], "context": {"diagnostics": published[cells[1]]}},
    )
    changes = next(action for action in actions if action["title"].startswith("Fix TDL001"))["edit"]["changes"]
    fixed = [apply(text, changes.get(uri, [])) for uri, text in zip(cells, texts)]
    assert fixed == notebook_cells(fix_source(notebook_json(texts), filename="sync.ipynb"))
    assert fixed[0] == texts[0] and fixed[1].endswith("model = Net().to(device)\n")


def test_shutdown_and_exit(project: Path) -> None:
    client = Client(project)
    client.request("initialize", {"processId": None, "rootUri": project.as_uri(), "capabilities": {}})
    client.notify("initialized", {})
    assert client.request("shutdown", None) is None
    client.notify("exit", None)
    assert client.process.wait(timeout=TIMEOUT) == 0


def test_a_handler_that_fails_is_logged_and_answered_with_its_fallback() -> None:
    import asyncio

    from torchdevice_lint.lsp.server import _guarded

    class Server:
        def __init__(self) -> None:
            self.messages: list[str] = []

        def log(self, message: str, kind: object = None) -> None:
            self.messages.append(message)

    def broken(server: object, params: object) -> list:
        raise KeyError("cell")

    async def broken_later(server: object, params: object) -> list:
        raise ValueError("later")

    server = Server()
    assert asyncio.run(_guarded(broken, fallback=[])(server, None)) == []
    assert asyncio.run(_guarded(broken_later, fallback=[])(server, None)) == []
    assert [m.split(" (")[1].split(")")[0] for m in server.messages] == ["KeyError: 'cell'", "ValueError: later"]


def test_without_pygls_the_command_says_what_to_install() -> None:
    blocked = "import sys; sys.modules['pygls'] = None; from torchdevice_lint.lsp import main; sys.exit(main())"
    result = subprocess.run([sys.executable, "-c", blocked], capture_output=True, text=True, timeout=TIMEOUT)
    assert result.returncode == 2
    assert "pip install 'torchdevice-lint[lsp]'" in result.stderr and "Traceback" not in result.stderr
