"""Latency of torchdevice-lsp: from a didChange to its publishDiagnostics, on a 2,000-line file.

    python benchmarks/bench_lsp.py [--lines 2000] [--changes 20]

The server runs as editors run it (a subprocess over stdio), driven by pygls's own client. Each
change edits one line of a realistic PyTorch module (models, a training loop, a few device
mistakes) and the clock runs until the diagnostics for that version arrive; the server waits
``DEBOUNCE_SECONDS`` of quiet before it checks, and that wait is part of the figure, as a user
sees it. Beside it, in the same process and run: the engine alone (``Linter.lint``) on the same
text with the same project index, parsed whole (as the CLI does) and re-parsed from the
previous version (as the server does). Target (issue 14): median latency < 300 ms. No test runs this.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from torchdevice_lint import lint_source
from torchdevice_lint.analysis.project import project_root
from torchdevice_lint.engine import Linter
from torchdevice_lint.files import index_of_project
from torchdevice_lint.lsp.server import DEBOUNCE_SECONDS
from torchdevice_lint.reparse import Reparser

#: One block of ordinary PyTorch code; ``{n}`` makes each copy's names its own.
BLOCK = '''

class Encoder{n}(nn.Module):
    """A small convolutional encoder."""

    def __init__(self, channels: int = 3, width: int = 64) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, width, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(width, width * 2, kernel_size=3, padding=1)
        self.norm = nn.BatchNorm2d(width * 2)
        self.head = nn.Linear(width * 2, 10)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        hidden = F.relu(self.conv1(images))
        hidden = F.relu(self.norm(self.conv2(hidden)))
        pooled = hidden.mean(dim=(2, 3))
        return self.head(pooled)


def train_epoch_{n}(model, loader, optimizer, device):
    model.train()
    total = 0.0
    for images, labels in loader:
        images, labels = images.to(device), labels.to(device)
        optimizer.zero_grad()
        loss = F.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total / max(len(loader), 1)


def evaluate_{n}(model, loader, device):
    model.eval()
    correct = 0
    with torch.no_grad():
        for images, labels in loader:
            logits = model(images.to(device))
            correct += (logits.argmax(dim=1) == labels.to(device)).sum().item()
    return correct / len(loader.dataset)
'''

#: Every tenth block carries the device mistakes the linter is for.
MISTAKES = '''

def legacy_setup_{n}(checkpoint):
    model = Encoder{n}().cuda()
    state = torch.load(checkpoint)
    model.load_state_dict(state)
    return model
'''

HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


def build_module(lines: int) -> str:
    parts, count, n = [HEADER], HEADER.count("\n"), 0
    while count < lines:
        part = BLOCK.format(n=n) + (MISTAKES.format(n=n) if n % 10 == 0 else "")
        parts.append(part)
        count += part.count("\n")
        n += 1
    return "".join(parts)


def edited(text: str, change: int) -> str:
    """The text with one line retyped, as a user does: a different width in every change."""
    return text.replace("width: int = 64", f"width: int = {64 + change}", 1)


async def measure(text: str, changes: int, folder: Path) -> list[float]:
    client = LanguageClient("torchdevice-lsp-bench", "1")
    arrived: dict[int, float] = {}
    event = asyncio.Event()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def diagnostics(params: types.PublishDiagnosticsParams) -> None:
        if params.version is not None:
            arrived[params.version] = time.perf_counter()
            event.set()

    await client.start_io(sys.executable, "-c", "import sys; from torchdevice_lint.lsp import main; sys.exit(main())")
    await client.initialize_async(
        types.InitializeParams(capabilities=types.ClientCapabilities(), root_uri=folder.as_uri(), process_id=os.getpid())
    )
    client.initialized(types.InitializedParams())
    uri = (folder / "bench_module.py").as_uri()

    async def until(version: int) -> float:
        while version not in arrived:
            event.clear()
            await asyncio.wait_for(event.wait(), timeout=60)
        return arrived[version]

    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=uri, language_id="python", version=0, text=text))
    )
    await until(0)
    latencies = []
    for change in range(1, changes + 1):
        sent = time.perf_counter()
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=change),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=edited(text, change))],
            )
        )
        latencies.append(await until(change) - sent)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return latencies


def _engine_times(text: str, changes: int, path: Path, reparser: Optional[Reparser]) -> tuple[float, float]:
    """Median wall and CPU seconds of the engine alone on each changed text."""
    project = index_of_project(project_root(str(path)))  # what the server and the CLI read
    linter = Linter()
    if reparser is not None:
        linter.lint(text, project, str(path), reparser)
    walls, cpus = [], []
    for change in range(1, changes + 1):
        started, started_cpu = time.perf_counter(), time.process_time()
        linter.lint(edited(text, change), project, str(path), reparser)
        walls.append(time.perf_counter() - started)
        cpus.append(time.process_time() - started_cpu)
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--changes", type=int, default=20)
    args = parser.parse_args()
    text = build_module(args.lines)
    findings = lint_source(text)
    with tempfile.TemporaryDirectory() as folder:  # a project on disk, indexed as an editor's would be
        path = Path(folder) / "bench_module.py"
        (Path(folder) / "pyproject.toml").write_text("[project]\nname = 'bench'\n")
        path.write_text(text)
        latencies = asyncio.run(measure(text, args.changes, Path(folder)))
        whole, whole_cpu = _engine_times(text, args.changes, path, None)
        incremental, incremental_cpu = _engine_times(text, args.changes, path, Reparser())
    median, p90 = statistics.median(latencies), statistics.quantiles(latencies, n=10)[-1]
    print(f"file: {text.count(chr(10))} lines, {len(findings)} findings ({', '.join(sorted({f.code for f in findings}))})")
    print(f"changes: {args.changes}; server debounce {DEBOUNCE_SECONDS * 1000:.0f} ms (included below); "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"didChange -> publishDiagnostics: median {median * 1000:.0f} ms, p90 {p90 * 1000:.0f} ms")
    print(f"engine, whole parse (as the CLI):        median {whole * 1000:.0f} ms (CPU {whole_cpu * 1000:.0f} ms)")
    print(f"engine, edit re-parsed (as the server): median {incremental * 1000:.0f} ms (CPU {incremental_cpu * 1000:.0f} ms)")
    print(f"server overhead beyond the debounce and the engine: {(median - DEBOUNCE_SECONDS - incremental) * 1000:.0f} ms")
    print(f"target median < 300 ms: {'met' if median < 0.3 else 'NOT met'}")


if __name__ == "__main__":
    main()
