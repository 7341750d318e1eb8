"""compile -save-temps[=cwd|obj] keeps every stage's file in stage order; link -save-temps keeps clang's,
named after the executable; -ftime-trace[=FILE] writes a Chrome trace of the stages; on a terminal a long
compile shows its stage on one line that is then erased, never in a pipe."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import REPO, require_tool, run_cli, stderr_on_terminal

REDUCTION = REPO / "examples" / "reduction.mlir"
SAXPY = REPO / "examples" / "saxpy.mlir"


def test_compile_save_temps_keeps_each_stage_in_order(tmp_path):
    require_tool("ptxas")
    (tmp_path / "out").mkdir()
    done = run_cli(
        "compile",
        "-save-temps",
        str(REDUCTION),
        "--offload-arch",
        "sm_80,sm_90",
        "--device-image=ptx",
        "-o",
        "out/r.bc",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    kept = sorted(p.name for p in tmp_path.iterdir() if p.is_file())
    steps = ["0-lowered-reduce_kernels.ll", "1-linked.bc", "3-libraries-linked.bc", "4-optimized.bc", "bc"]
    assert kept == [
        "reduction.0-input.mlir",
        *(f"reduction.1-device.sm_80.{step}" for step in steps),
        *(f"reduction.1-device.sm_90.{step}" for step in steps),
        "reduction.2-native.sm_80.cubin",
        "reduction.2-native.sm_80.ptx",
        "reduction.2-native.sm_90.cubin",
        "reduction.2-native.sm_90.ptx",
        "reduction.3-host-lowered.ll",
        "reduction.4-host.ll",
    ]
    # Each arch's device IR before the libraries and the optimizer, and after.
    lowered = tmp_path / "reduction.1-device.sm_90.0-lowered-reduce_kernels.ll"
    assert "define ptx_kernel void @block_sum" in lowered.read_text()
    before = (tmp_path / "reduction.1-device.sm_80.3-libraries-linked.bc").read_bytes()
    after = (tmp_path / "reduction.1-device.sm_80.4-optimized.bc").read_bytes()
    assert before[:2] == after[:2] == b"BC" and before != after
    assert "gpu.module" in (tmp_path / "reduction.0-input.mlir").read_text()
    assert (tmp_path / "reduction.1-device.sm_90.bc").read_bytes()[:2] == b"BC"
    assert ".target sm_90" in (tmp_path / "reduction.2-native.sm_90.ptx").read_text()
    assert "block_sum" in (tmp_path / "reduction.4-host.ll").read_text()
    # =obj: beside the output instead; a plain compile keeps nothing.
    done = run_cli(
        "compile", str(REDUCTION), "-save-temps=obj", "--offload-arch", "sm_80", "-o", "out/s.bc", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir() if "-" in p.name) == [
        "reduction.0-input.mlir",
        *(f"reduction.1-device.sm_80.{step}" for step in steps),
        "reduction.3-host-lowered.ll",
        "reduction.4-host.ll",
    ]
    plain = tmp_path / "plain"
    plain.mkdir()
    assert run_cli("compile", str(REDUCTION), "--offload-arch", "sm_80", "-o", "p.bc", cwd=plain).returncode == 0
    assert sorted(p.name for p in plain.iterdir()) == ["p.bc"]


def test_link_save_temps_names_clang_files_after_the_executable(tmp_path):
    require_tool("clang-22", 22)
    require_tool("ptxas")
    assert run_cli("compile", str(SAXPY), "--offload-arch", "sm_80", "-o", "s.bc", cwd=tmp_path).returncode == 0
    done = run_cli("link", "s.bc", "-save-temps", "-o", "app", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    names = sorted(p.name for p in tmp_path.iterdir())
    assert "app.fatbin" in names and "app.nvptx64.sm_80.cubin" in names
    assert not [name for name in names if name.startswith(".")]  # nothing under link's temporary name


def test_time_trace_is_a_chrome_trace_of_the_stages(tmp_path):
    done = run_cli(
        "compile", str(SAXPY), "-ftime-trace", "--offload-arch", "sm_80", "-o", str(tmp_path / "s.offload.bc")
    )
    assert done.returncode == 0, done.stderr
    trace = json.loads((tmp_path / "s.offload.json").read_text())
    events = trace["traceEvents"]
    names = [event["name"] for event in events]
    assert names[0] == "mlir-offload compile saxpy.mlir" and "load" in names and "emit (bc)" in names
    assert all(event["ph"] == "X" and event["dur"] >= 0 for event in events)
    total = events[0]
    assert all(total["ts"] <= e["ts"] and e["ts"] + e["dur"] <= total["ts"] + total["dur"] + 1 for e in events)
    done = run_cli(
        "compile",
        str(SAXPY),
        f"-ftime-trace={tmp_path / 'named.json'}",
        "--offload-arch",
        "sm_80",
        "-o",
        str(tmp_path / "t.bc"),
    )
    assert done.returncode == 0 and json.loads((tmp_path / "named.json").read_text())["traceEvents"]


def on_terminal(args, env) -> bytes:
    return stderr_on_terminal(args, env)[1]


def test_progress_line_on_a_terminal_only(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO), TERM="xterm", MLIR_OFFLOAD_PROGRESS_AFTER="0")
    args = ["compile", str(SAXPY), "--offload-arch", "sm_80", "-o", str(tmp_path / "s.bc")]
    shown = on_terminal(args, env)
    assert b"\r\033[Kmlir-offload: " in shown and shown.endswith(b"\r\033[K")  # shown, then erased
    assert b"mlir-offload: device (sm_80)..." in shown or b"mlir-offload: load..." in shown
    piped = subprocess.run([sys.executable, "-m", "offload", *args], env=env, capture_output=True)
    assert piped.returncode == 0 and piped.stderr == b""
    assert b"\033[K" not in on_terminal([*args, "-v"], env)  # -v's lines say it already
