"""Package data: target-clang profiles, Makefile and CMake fragments, ship templates, scripts."""

from __future__ import annotations

import os

FOLDER = os.path.dirname(os.path.abspath(__file__))


def data_path(name: str) -> str:
    """The package data file or folder `name` ("profiles/clang22.toml"). The data are files on disk (a link
    puts scripts/ on PATH), so a path does: importlib.resources costs a link 10 ms of imports."""
    return os.path.join(FOLDER, *name.split("/"))


def read_data(name: str, encoding: str | None = None) -> str:
    """The text of data file `name` (`encoding` None: the locale's, as Path.read_text)."""
    with open(data_path(name), encoding=encoding) as f:
        return f.read()


def read_data_bytes(name: str) -> bytes:
    with open(data_path(name), "rb") as f:
        return f.read()
