"""The pygls language server: documents in, diagnostics and code actions out.

A thin adapter: `torchdevice_lint.lsp.documents.Engine` checks and fixes, this module keeps the
editor's documents, debounces their changes, and speaks the protocol. Python files are checked
one by one; a notebook the client syncs as a notebook (``notebookDocument/*``) is checked as one
program, as ``torchdevice-fix`` checks an ``.ipynb``; a notebook cell sent as a plain text
document is checked as a notebook of that one cell.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from torchdevice_lint import __version__
from torchdevice_lint.findings import Finding, Safety
from torchdevice_lint.lsp.documents import (
    Checked,
    Edit,
    Engine,
    Lines,
    minimal_edits,
    noqa_edit,
    notebook_cells,
    notebook_json,
    rule_docs_url,
)
from torchdevice_lint.parsing import SourceError
from torchdevice_lint.rules import ALL_RULES

SOURCE = "torchdevice-lint"
#: How long a document must rest after a change before it is checked again (typing goes on).
DEBOUNCE_SECONDS = 0.05
FIX_ALL_KIND = f"{types.CodeActionKind.SourceFixAll.value}.{SOURCE}"
_RULES = {rule.code: rule for rule in ALL_RULES}
_CELL_SCHEME = "vscode-notebook-cell"

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Target:
    """What a document is checked and fixed as: a Python file, or (``cells``, the (URI, text) of
    each code cell) the notebook it is a cell of, whose findings carry the cell's position."""

    uri: str
    path: str
    cells: Optional[list[tuple[str, str]]]
    text: str = ""
    version: Optional[int] = None

    @property
    def is_notebook(self) -> bool:
        return self.cells is not None

    @property
    def source(self) -> str:
        """What the engine is given: the file's text, or notebook JSON of the cells."""
        return notebook_json([text for _, text in self.cells]) if self.cells is not None else self.text


@dataclass
class _Published:
    """What a document's diagnostics were computed from, for the code actions that follow them."""

    text: str
    findings: list[Finding]


class TorchDeviceServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "torchdevice-lsp",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            notebook_document_sync=types.NotebookDocumentSyncOptions(
                notebook_selector=[
                    types.NotebookDocumentFilterWithCells(cells=[types.NotebookCellLanguage(language="python")], notebook="*")
                ],
                save=True,
            ),
        )
        self.engine = Engine()
        #: One thread for the engine (checks, fixes, index updates): they run in order, and the
        #: protocol stays responsive meanwhile.
        self.checker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="torchdevice-check")
        #: The pending check of each document or notebook (by URI), cancelled by the next change.
        self.pending: dict[str, asyncio.Task] = {}
        #: By document URI: what its current diagnostics were computed from.
        self.published: dict[str, _Published] = {}
        #: By URI: the last reason logged that it could not be checked (each reason is logged once).
        self.logged: dict[str, str] = {}
        self.logged_config_errors: set[str] = set()

    # ---------------------------------------------------------------- logging
    def log(self, message: str, kind: types.MessageType = types.MessageType.Warning) -> None:
        self.window_log_message(types.LogMessageParams(type=kind, message=f"torchdevice-lint: {message}"))

    def report_server_error(self, error: Exception, source: Any) -> None:
        """pygls's own errors: logged for the user, never shown as a pop-up."""
        self.log(f"internal error ({type(error).__name__}: {error}); please report it", types.MessageType.Error)

    # ---------------------------------------------------------------- documents
    @property
    def encoding(self) -> str:
        encoding = self.workspace.position_encoding
        return str(getattr(encoding, "value", encoding) or "utf-16")

    def notebook_of(self, uri: str) -> Optional[types.NotebookDocument]:
        return self.workspace.get_notebook_document(cell_uri=uri)

    def path_of(self, uri: str) -> str:
        """The file path the configuration is looked up from (a notebook's, for its cells)."""
        parsed = urlparse(uri)
        if parsed.scheme == "file":
            return to_fs_path(uri) or unquote(parsed.path)
        if parsed.scheme == _CELL_SCHEME and parsed.path:
            return unquote(parsed.path)
        root = self.workspace.root_path or os.getcwd()
        return os.path.join(root, "untitled.py")

    def target_of(self, uri: str, notebook: bool = False) -> Optional[_Target]:
        """What the document ``uri`` (or, with ``notebook``, the synced notebook) is checked as;
        None for a document we do not check (not Python) or no longer know."""
        synced = self.workspace.get_notebook_document(notebook_uri=uri) if notebook else self.notebook_of(uri)
        if synced is not None:
            return _Target(synced.uri, self.path_of(synced.uri), self._code_cells(synced))
        if notebook:
            return None
        document = self.workspace.get_text_document(uri)
        path = self.path_of(uri)
        if document.language_id not in (None, "", "python") and not path.endswith((".py", ".pyi")):
            return None
        if urlparse(uri).scheme == _CELL_SCHEME:
            return _Target(uri, path, [(uri, document.source)])
        return _Target(uri, path, None, document.source, document.version)

    def schedule(self, uri: str, delay: float, *, notebook: bool = False) -> None:
        """Check the document (its whole notebook, for a cell of a synced notebook) or, with
        ``notebook``, the notebook ``uri`` after ``delay``; a later call replaces this one."""
        if not notebook:
            synced = self.notebook_of(uri)
            if synced is not None:
                uri, notebook = synced.uri, True
        pending = self.pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
        self.pending[uri] = asyncio.ensure_future(self._check_later(uri, notebook, delay))

    def saved(self, uri: str) -> None:
        """A document written to disk: checked again, after its facts join its project's index
        (and with it every open file of that project, whose findings may depend on them)."""
        asyncio.ensure_future(self._after_save(uri))

    async def _after_save(self, uri: str) -> None:
        try:
            path, text = self.path_of(uri), self.workspace.get_text_document(uri).source
            loop = asyncio.get_running_loop()
            roots = await loop.run_in_executor(self.checker, self.engine.saved, path, text) if urlparse(uri).scheme == "file" else []
        except Exception as error:  # a bug of ours: say so, keep serving
            logger.exception("index update failed")
            self.log(f"internal error indexing {uri} ({type(error).__name__}: {error}); please report it", types.MessageType.Error)
            roots = []
        self.schedule(uri, 0)
        for other in list(self.workspace.text_documents):
            if other != uri and urlparse(other).scheme == "file":
                if any(os.path.realpath(self.path_of(other)).startswith(os.path.join(root, "")) for root in roots):
                    self.schedule(other, 0)

    async def _check_later(self, uri: str, notebook: bool, delay: float) -> None:
        try:
            if delay:
                await asyncio.sleep(delay)
            await self.check(uri, notebook)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # a bug of ours: say so, keep serving
            logger.exception("check failed")
            self.log(f"internal error checking {uri} ({type(error).__name__}: {error}); please report it", types.MessageType.Error)
        finally:
            if self.pending.get(uri) is asyncio.current_task():
                del self.pending[uri]

    async def check(self, uri: str, notebook: bool) -> None:
        """Check the document or notebook on the checking thread and publish what it finds, unless
        it changed meanwhile (the check of the newer text is then on its way)."""
        target = self.target_of(uri, notebook)
        if target is None:
            return
        loop = asyncio.get_running_loop()
        checked = await loop.run_in_executor(self.checker, lambda: self.engine.lint(target.source, target.path, target.is_notebook, uri))
        if self.target_of(uri, notebook) != target:
            return
        self._log_problems(uri, checked)
        if target.cells is None:
            self.publish(uri, target.source, checked.findings, target.version)
            return
        for index, (cell_uri, text) in enumerate(target.cells, start=1):
            self.publish(cell_uri, text, [finding for finding in checked.findings if finding.cell == index], None)

    def _code_cells(self, notebook: types.NotebookDocument) -> list[tuple[str, str]]:
        """(URI, text) of the notebook's Python code cells, in order."""
        cells = []
        for cell in notebook.cells:
            if cell.kind != types.NotebookCellKind.Code:
                continue
            document = self.workspace.get_text_document(cell.document)
            if document.language_id in (None, "python"):
                cells.append((cell.document, document.source))
        return cells

    def _log_problems(self, uri: str, checked: Checked) -> None:
        for path, reason in self.engine.config_errors.items():
            if reason not in self.logged_config_errors:
                self.logged_config_errors.add(reason)
                self.log(reason, types.MessageType.Error)
        if checked.error is None:
            self.logged.pop(uri, None)
        elif self.logged.get(uri) != checked.error:
            self.logged[uri] = checked.error
            self.log(f"{uri}: not checked: {checked.error}")

    def publish(self, uri: str, text: str, findings: list[Finding], version: Optional[int]) -> None:
        self.published[uri] = _Published(text, findings)
        lines = Lines(text, self.encoding)
        diagnostics = [diagnostic(finding, lines) for finding in findings]
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version))

    def forget(self, uri: str) -> None:
        self.engine.closed(uri)
        self.published.pop(uri, None)
        self.logged.pop(uri, None)
        pending = self.pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    # ------------------------------------------------------------ code actions
    def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        published = self.published.get(uri)
        target = self.target_of(uri)
        if target is None or published is None or published.text != self.workspace.get_text_document(uri).source:
            return []  # diagnostics for this text are not out yet: nothing to act on
        wanted = [f for f in (_finding_of(d, published.findings) for d in params.context.diagnostics) if f is not None]
        actions: list[types.CodeAction] = []
        for finding in wanted:
            if finding.fix_safety is not None:
                action = self._quick_fix(target, uri, published.text, finding)
                if action is not None:
                    actions.append(action)
            actions.append(self._noqa_action(uri, published.text, finding))
        if any(finding.fix_safety is Safety.SAFE for finding in published.findings):
            changes = self._fix(target, unsafe=False)
            if changes:
                actions.append(
                    types.CodeAction(
                        title="Fix all safe torchdevice-lint fixes", kind=FIX_ALL_KIND, edit=types.WorkspaceEdit(changes=changes)
                    )
                )
        return [action for action in actions if _kind_wanted(action.kind, params.context.only)]

    def _fix(
        self, target: _Target, unsafe: bool, only: Optional[Callable[[Finding], bool]] = None
    ) -> dict[str, list[types.TextEdit]]:
        """The edits, by document URI, of the engine's fixes to the target (those ``only`` accepts)."""
        fixed = self.engine.fix(target.source, target.path, unsafe=unsafe, notebook=target.is_notebook, only=only)
        if target.cells is None:
            changed = [(target.uri, target.source, fixed)]
        else:
            changed = [(uri, text, new) for (uri, text), new in zip(target.cells, notebook_cells(fixed))]
        edits = {uri: minimal_edits(text, new, self.encoding) for uri, text, new in changed}
        return {uri: _text_edits(each) for uri, each in edits.items() if each}

    def _quick_fix(self, target: _Target, uri: str, text: str, finding: Finding) -> Optional[types.CodeAction]:
        unsafe = finding.fix_safety is Safety.UNSAFE
        key = (finding.cell, finding.code, finding.line, finding.column)
        changes = self._fix(target, unsafe, only=lambda other: (other.cell, other.code, other.line, other.column) == key)
        if not changes:
            return None
        rule = _RULES.get(finding.code)
        what = f"Fix {finding.code}" + (f" ({rule.name})" if rule is not None else "")
        return types.CodeAction(
            title=f"{what} [unsafe: may change behaviour]" if unsafe else what,
            kind=types.CodeActionKind.QuickFix,
            diagnostics=[diagnostic(finding, Lines(text, self.encoding))],
            is_preferred=not unsafe,
            edit=types.WorkspaceEdit(changes=changes),
        )

    def _noqa_action(self, uri: str, text: str, finding: Finding) -> types.CodeAction:
        return types.CodeAction(
            title=f"Add noqa: {finding.code}",
            kind=types.CodeActionKind.QuickFix,
            diagnostics=[diagnostic(finding, Lines(text, self.encoding))],
            edit=types.WorkspaceEdit(changes={uri: _text_edits([noqa_edit(text, finding, self.encoding)])}),
        )


def diagnostic(finding: Finding, lines: Lines) -> types.Diagnostic:
    start = lines.position(finding.line, finding.column)
    end = lines.position(finding.end_line, finding.end_column)
    rule = _RULES.get(finding.code)
    fix = "no fix" if finding.fix_safety is None else f"{finding.fix_safety.value} fix"
    return types.Diagnostic(
        range=types.Range(types.Position(start.line, start.character), types.Position(end.line, end.character)),
        message=f"{finding.message} ({fix})",
        severity=types.DiagnosticSeverity.Warning,
        code=finding.code,
        code_description=types.CodeDescription(href=rule_docs_url(rule.code, rule.name)) if rule is not None else None,
        source=SOURCE,
        data={"line": finding.line, "column": finding.column},
    )


def _finding_of(diagnostic: types.Diagnostic, findings: Sequence[Finding]) -> Optional[Finding]:
    """The finding a diagnostic the client hands back stands for (its code and engine position)."""
    if diagnostic.source != SOURCE or not isinstance(diagnostic.data, dict):
        return None
    line, column = diagnostic.data.get("line"), diagnostic.data.get("column")
    return next((f for f in findings if (f.code, f.line, f.column) == (diagnostic.code, line, column)), None)


def _kind_wanted(kind: Optional[str], only: Optional[Sequence[str]]) -> bool:
    """Code action kinds are hierarchical: asking for ``source.fixAll`` gets ``source.fixAll.torchdevice-lint``."""
    if not only or kind is None:
        return True
    return any(kind == wanted or kind.startswith(f"{wanted}.") for wanted in only)


def _text_edits(edits: list[Edit]) -> list[types.TextEdit]:
    return [
        types.TextEdit(
            range=types.Range(
                types.Position(edit.start.line, edit.start.character), types.Position(edit.end.line, edit.end.character)
            ),
            new_text=edit.text,
        )
        for edit in edits
    ]


def _guarded(handler: Callable[..., Any], fallback: Any = None) -> Callable[..., Any]:
    """A handler whose unexpected exceptions are logged and answered with ``fallback``, never raised."""

    async def run(server: TorchDeviceServer, params: Any) -> Any:
        try:
            result = handler(server, params)
            return await result if inspect.isawaitable(result) else result
        except SourceError as error:
            server.log(f"not fixed: {error}")
        except Exception as error:  # a bug of ours: the editor session goes on
            logger.exception("handler failed")
            server.log(f"internal error ({type(error).__name__}: {error}); please report it", types.MessageType.Error)
        return fallback

    run.__name__ = handler.__name__
    return run


def build_server() -> TorchDeviceServer:
    server = TorchDeviceServer()

    def did_open(ls: TorchDeviceServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0)

    def did_change(ls: TorchDeviceServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, DEBOUNCE_SECONDS)

    def did_save(ls: TorchDeviceServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.saved(params.text_document.uri)

    def did_close(ls: TorchDeviceServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.forget(params.text_document.uri)

    def notebook_did_open(ls: TorchDeviceServer, params: types.DidOpenNotebookDocumentParams) -> None:
        ls.schedule(params.notebook_document.uri, 0, notebook=True)

    def notebook_did_change(ls: TorchDeviceServer, params: types.DidChangeNotebookDocumentParams) -> None:
        ls.schedule(params.notebook_document.uri, DEBOUNCE_SECONDS, notebook=True)

    def notebook_did_save(ls: TorchDeviceServer, params: types.DidSaveNotebookDocumentParams) -> None:
        ls.schedule(params.notebook_document.uri, 0, notebook=True)

    def notebook_did_close(ls: TorchDeviceServer, params: types.DidCloseNotebookDocumentParams) -> None:
        for cell in params.cell_text_documents:
            ls.forget(cell.uri)
        ls.forget(params.notebook_document.uri)

    async def code_action(ls: TorchDeviceServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        # On the checking thread: a fix costs a check, and the protocol must stay responsive meanwhile.
        return await asyncio.get_running_loop().run_in_executor(ls.checker, ls.code_actions, params)

    for method, handler in (
        (types.TEXT_DOCUMENT_DID_OPEN, did_open),
        (types.TEXT_DOCUMENT_DID_CHANGE, did_change),
        (types.TEXT_DOCUMENT_DID_SAVE, did_save),
        (types.TEXT_DOCUMENT_DID_CLOSE, did_close),
        (types.NOTEBOOK_DOCUMENT_DID_OPEN, notebook_did_open),
        (types.NOTEBOOK_DOCUMENT_DID_CHANGE, notebook_did_change),
        (types.NOTEBOOK_DOCUMENT_DID_SAVE, notebook_did_save),
        (types.NOTEBOOK_DOCUMENT_DID_CLOSE, notebook_did_close),
    ):
        server.feature(method)(_guarded(handler))
    server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND]),
    )(_guarded(code_action, fallback=[]))
    return server
