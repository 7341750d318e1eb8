import pytest

from conftest import run_cli

pytestmark = pytest.mark.no_toolchain


def test_unknown_command_is_a_one_line_usage_error():
    r = run_cli("no-such-command")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mlir-offload: error: ")


def test_help_lists_commands_and_exits_zero():
    r = run_cli("--help")
    assert r.returncode == 0
    assert "Usage:" in r.stdout


def test_heavy_modules_are_not_imported_for_help():
    import subprocess
    import sys

    code = "import sys; from offload.cli import cli; print(sorted(m for m in ('mlir','llvmlite') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_bare_command_prints_usage_and_commands_as_lines():
    r = run_cli()
    assert r.returncode == 2
    lines = r.stderr.splitlines()
    assert lines[0].startswith("Usage: mlir-offload")
    assert "\\n" not in r.stderr
    listed = {line.split()[0] for line in lines if line.startswith("  ") and line.split()}
    assert {"compile", "link", "ship", "doctor"} <= listed


def test_shell_completion_as_documented():
    import os

    from conftest import REPO

    assert "_MLIR_OFFLOAD_COMPLETE=bash_source mlir-offload" in (REPO / "docs" / "cli.md").read_text()
    script = run_cli(env=dict(os.environ, _MLIR_OFFLOAD_COMPLETE="bash_source"))
    assert script.returncode == 0 and "complete -o nosort -F _mlir_offload_completion mlir-offload" in script.stdout
    env = dict(os.environ, _MLIR_OFFLOAD_COMPLETE="bash_complete", COMP_WORDS="mlir-offload comp", COMP_CWORD="1")
    assert run_cli(env=env).stdout.split() == ["plain,compile"]
    env.update(COMP_WORDS="mlir-offload compile --offload-a", COMP_CWORD="2")
    assert "plain,--offload-arch" in run_cli(env=env).stdout.split()
