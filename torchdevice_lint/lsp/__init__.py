"""``torchdevice-lsp``: findings and fixes in the editor, over the Language Server Protocol (stdio).

It needs the ``lsp`` extra (pygls); nothing else in the package imports this one, so the linter
itself never does.
"""

from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from torchdevice_lint import __version__


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="torchdevice-lsp",
        description="torchdevice-lint's language server: diagnostics and quick fixes over stdio.",
    )
    parser.add_argument("--stdio", action="store_true", help="talk over stdin and stdout (the default and only transport)")
    parser.add_argument("--version", action="version", version=f"torchdevice-lsp {__version__}")
    parser.parse_args(argv)
    try:
        from torchdevice_lint.lsp.server import build_server
    except ImportError as error:
        if error.name is None or not error.name.startswith(("pygls", "lsprotocol")):
            raise
        print("torchdevice-lsp needs pygls: pip install 'torchdevice-lint[lsp]'", file=sys.stderr)
        return 2
    build_server().start_io()
    return 0
