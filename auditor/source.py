"""Reading one source file safely: regular files only, a bounded read, PEP 263 decoding.

Shared by the discovery (auditor/discover.py, which re-exports these names) and by readers that the discovery
itself imports (auditor/project/: a Makefile that a `make` call runs), which could not import auditor.discover
without an import cycle. Imports nothing from the auditor package.
"""
from __future__ import annotations

import io
import os
import stat
import tokenize
from pathlib import Path


class SourceError(Exception):
    """A file that is not read: `kind` is a FileError kind (special, too-large)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


MAX_FILE_BYTES = 8 * 1024 * 1024     # the default --max-file-size


def read_source(path: Path, max_bytes: int) -> tuple[bytes, os.stat_result]:
    """The bytes of a regular file, at most max_bytes of them. A FIFO is opened without waiting for a
    writer and refused, as are devices (a symlink to /dev/zero) and sockets; the limit counts the bytes
    actually read, not the size the file claims. Raises SourceError or OSError."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise SourceError("special", "not a regular file (a FIFO, device or socket); not read")
        if st.st_size > max_bytes:
            raise SourceError("too-large", too_large_message(st.st_size, max_bytes))
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:       # the file grew while we read it
                raise SourceError("too-large", too_large_message(total, max_bytes, at_least=True))
        return b"".join(chunks), st
    finally:
        os.close(fd)


def decode_source(data: bytes) -> str:
    """Decode honouring a PEP 263 coding cookie and a UTF-8 BOM; raises UnicodeDecodeError / SyntaxError."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    text = data.decode(encoding)
    return text[1:] if text.startswith("\ufeff") else text


def too_large_message(size: int, max_bytes: int, at_least: bool = False) -> str:
    return (f"{'over ' if at_least else ''}{size / 1e6:.1f} MB is over the {max_bytes / 1e6:.1f} MB limit; "
            "not audited (raise it with --max-file-size)")
