"""No file of the checkout refers to a document the repository does not hold: every `NAME.md` and every
`docs/...` path named in a text file is a file of the repository, found from the referring file's folder,
the repository root or docs/ (as the pages link each other)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import REPO, require_tool

pytestmark = pytest.mark.no_toolchain

# A document name (`cache.md`, `../shared/DESIGN.md`, `docs/cli.md`) or a docs/ path, not part of a URL
# or of a longer path (`https://example.org/docs/x.md`, `llvm/docs/LangRef.rst`).
REFERENCE = re.compile(r"(?<![\w./:@-])((?:\.\.?/)*(?:[\w.-]+/)*[\w-]+\.md|docs/[\w./-]*[\w-])(?![\w/-])")


def references(text: str) -> list[tuple[int, str]]:
    return [(number, m.group(1)) for number, line in enumerate(text.splitlines(), 1) for m in REFERENCE.finditer(line)]


def held(referrer: Path, reference: str) -> bool:
    """Whether the reference names a file or folder inside the repository."""
    for base in (referrer.parent, REPO, REPO / "docs"):
        target = (base / reference).resolve()
        if target.is_relative_to(REPO.resolve()) and target.exists():
            return True
    return False


def checkout_text_files() -> list[Path]:
    """The repository's files and the new ones git does not ignore; links and binary files left out."""
    git = require_tool("git")
    listed = subprocess.run(
        [git, "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.decode()
    files = []
    for name in filter(None, listed.split("\0")):
        path = REPO / name
        if path.is_symlink() or not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" not in data:
            files.append(path)
    return files


def test_the_pattern_finds_document_references(tmp_path):
    text = "see DESIGN.md §5\n(../shared/DESIGN.md)\n[cache](cache.md#team) and docs/cli.md, docs/missing;\n"
    text += "https://example.org/docs/x.md llvm/docs/LangRef.rst offload/data/x.toml\n"
    assert references(text) == [
        (1, "DESIGN.md"),
        (2, "../shared/DESIGN.md"),
        (3, "cache.md"),
        (3, "docs/cli.md"),
        (3, "docs/missing"),
    ]
    page = REPO / "docs" / "design.md"
    assert held(page, "cache.md") and held(page, "docs/cli.md") and held(REPO / "README.md", "docs/cli.md")
    assert not held(page, "DESIGN.md")
    # A file outside the repository (as ../shared/DESIGN.md was) is not the repository's.
    outside = tmp_path / "DESIGN.md"
    outside.write_text("# notes\n")
    assert not held(REPO / "README.md", os.path.relpath(outside, REPO))
    assert held(REPO / "README.md", os.path.relpath(REPO / "docs" / "cli.md", REPO / "tests"))


def test_no_file_refers_to_a_document_the_repository_does_not_hold():
    files = checkout_text_files()
    assert REPO / "docs" / "design.md" in files and REPO / "offload" / "toolchain" / "link.py" in files
    missing = [
        f"{path.relative_to(REPO)}:{number}: {reference}"
        for path in files
        if path != Path(__file__).resolve()  # names missing documents on purpose
        for number, reference in references(path.read_text(errors="replace"))
        if not held(path, reference)
    ]
    assert missing == []
