"""Every command README.md and docs/cli.md show runs as shown: the `mlir-offload ...` lines of their code
blocks (with `\\` continuations; `# comments` and `[optional]` parts dropped) and the inline ones that
name an output (`-o`), in the order the pages show them, in one folder holding the files they name
(app.mlir is examples/saxpy.mlir; main.o, lib.o and the k.<arch>.bc images are made here first)."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess

import pytest

from conftest import REPO, cuda_rdc_object, require_tool, run_cli

PAGES = (REPO / "README.md", REPO / "docs" / "cli.md")


def documented_commands(page) -> list[list[str]]:
    commands, pending = [], ""
    for line in page.read_text().splitlines():
        if pending:
            pending += " " + line.strip()
        elif line.startswith("    mlir-offload "):
            pending = line.strip()
        else:
            for inline in re.findall(r"`(mlir-offload [^`]*)`", line):
                if " -o " in inline and not re.search(r"[A-Z]{2,}|\[|\.\.\.", inline):
                    commands.append(shlex.split(inline))
            continue
        if pending.endswith("\\"):
            pending = pending[:-1]
            continue
        words = shlex.split(re.sub(r"\s\[[^\]]*\]", "", pending), comments=True)
        commands.append(words)
        pending = ""
    return commands


def test_pages_show_commands():
    assert len(documented_commands(PAGES[0])) >= 6 and len(documented_commands(PAGES[1])) >= 8


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_documented_command_runs(tmp_path, page):
    clang = require_tool("clang-22", 22)
    require_tool("ptxas")
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    shutil.copy(REPO / "examples" / "saxpy.mlir", tmp_path / "app.mlir")
    (tmp_path / "main.c").write_text("int helper_of_main(void) { return 0; }\n")
    subprocess.run([clang, "-c", "main.c", "-o", "main.o"], cwd=tmp_path, check=True)
    (tmp_path / "lib.cu").write_text('extern "C" __attribute__((device)) float scale(float x) { return 3.0f * x; }\n')
    cuda_rdc_object(clang, tmp_path / "lib.cu", tmp_path / "lib.o")
    for arch in ("sm_80", "gfx90a"):
        done = run_cli("device", "app.mlir", "--offload-arch", arch, "--emit=bc", "-o", "k", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        shutil.copy(tmp_path / "k" / f"app.{arch}.bc", tmp_path / f"k.{arch}.bc")
    ran = 0
    for words in documented_commands(page):
        assert words[0] == "mlir-offload"
        done = run_cli(*words[1:], cwd=tmp_path)
        assert done.returncode == 0, f"{shlex.join(words)}: {done.stderr}"
        ran += 1
    assert ran >= 6


def test_emulate_switches_are_documented_with_the_same_words():
    # Each route's switch to an emulated executable, in one sentence every page that covers a route shows.
    sentence = (
        "One switch per route makes an emulated executable, whose kernels run on this CPU without GPU, driver or "
        "toolkit ([emulator.md](emulator.md)): `mlir-offload link --emulate` (and `run --emulate`), `make "
        "OFFLOAD_EMULATE=1` with the bundled `.mk`, `-DMLIR_OFFLOAD_EMULATE=ON` with the CMake module, "
        "`api.link(..., emulate=True)` in Python."
    )
    for page in ("emulator.md", "build-systems.md", "python-api.md"):
        assert sentence in " ".join((REPO / "docs" / page).read_text().split()), page
