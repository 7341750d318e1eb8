"""Located errors on a terminal (or with -fcaret-diagnostics) are followed by the source line and a caret
under the column, in colour unless NO_COLOR; in a pipe they stay one line."""

from __future__ import annotations

import os

import pytest

from conftest import REPO, run_cli, stderr_on_terminal

pytestmark = pytest.mark.fast  # a syntax error: no clang, toolkit or make

BAD = "module {\n\tfunc.func @f( {\n}\n"


def on_terminal(args, env) -> str:
    """stderr of `mlir-offload ARGS` written to a pseudo-terminal."""
    return stderr_on_terminal(args, env)[1].decode().replace("\r\n", "\n")


@pytest.fixture
def bad(tmp_path):
    path = tmp_path / "bad.mlir"
    path.write_text(BAD)
    return path


def test_pipe_stays_one_line(bad, tmp_path):
    done = run_cli("compile", str(bad), "--offload-arch", "sm_80", "-o", str(tmp_path / "x.bc"))
    assert done.returncode == 1
    assert done.stderr.splitlines() == [f"{bad}:2:15: error: expected non-function type"]


def test_flag_shows_source_line_and_caret_in_a_pipe(bad, tmp_path):
    done = run_cli("compile", str(bad), "--offload-arch", "sm_80", "-o", str(tmp_path / "x.bc"), "-fcaret-diagnostics")
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"{bad}:2:15: error: expected non-function type",
        "\tfunc.func @f( {",
        "\t             ^",
    ]  # the tab kept: the caret lands under column 15
    assert "\033[" not in done.stderr  # no colour off a terminal


def test_terminal_gets_caret_and_colour_unless_no_color(bad, tmp_path):
    # no progress line: a loaded machine can make this compile outlast its delay
    env = dict(os.environ, PYTHONPATH=str(REPO), TERM="xterm", MLIR_OFFLOAD_PROGRESS_AFTER="3600")
    env.pop("NO_COLOR", None)
    args = ["compile", str(bad), "--offload-arch", "sm_80", "-o", str(tmp_path / "x.bc")]
    shown = on_terminal(args, env)
    assert "\033[1;31merror:" in shown and "\033[1;32m^" in shown
    assert "\tfunc.func @f( {" in shown
    plain = on_terminal(args, dict(env, NO_COLOR="1"))
    assert "\033[" not in plain
    assert plain.splitlines()[1:] == ["\tfunc.func @f( {", "\t             ^"]
    assert len(on_terminal([*args, "-fno-caret-diagnostics"], dict(env, NO_COLOR="1")).splitlines()) == 1
