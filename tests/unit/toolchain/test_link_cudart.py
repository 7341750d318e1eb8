"""link --cudart=shared|static|none as nvcc's: static links libcudart_static.a (no libcudart.so needed at
run time), none adds no runtime; an explicit -lcudart_static or -lcudart is used as given, never with a
second runtime beside it."""

from __future__ import annotations

import shlex
import subprocess

import pytest

from conftest import REPO, require_tool, run_cli

SAXPY = REPO / "examples" / "saxpy.mlir"


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    require_tool("clang-22", 22)
    tmp = tmp_path_factory.mktemp("cudart")
    done = run_cli("compile", str(SAXPY), "--offload-arch", "sm_80", "-o", str(tmp / "s.bc"))
    assert done.returncode == 0, done.stderr
    return tmp / "s.bc"


def runtime_flags(bundle, *flags) -> list[str]:
    done = run_cli("link", str(bundle), *flags, "--dry-run", "-o", str(bundle.parent / "never"))
    assert done.returncode == 0, done.stderr
    return [w for w in shlex.split(done.stdout.strip()) if w.startswith("-l")]


def test_modes_choose_the_runtime_libraries(bundle):
    # -lm after the runtime: the host code's math ops call libm, which clang's C driver does not link.
    assert runtime_flags(bundle) == ["-lcudart", "-lm"]
    assert runtime_flags(bundle, "--cudart=shared") == ["-lcudart", "-lm"]
    assert runtime_flags(bundle, "--cudart", "static") == ["-lcudart_static", "-ldl", "-lpthread", "-lrt", "-lm"]
    assert runtime_flags(bundle, "--cudart=none") == ["-lm"]
    assert runtime_flags(bundle, "-lcudart_static", "-ldl") == ["-lcudart_static", "-ldl", "-lm"]
    done = run_cli("link", str(bundle), "--cudart=dynamic", "-o", str(bundle.parent / "never"))
    assert done.returncode == 2
    assert '--cudart expects one of "shared", "static", "none", got string "dynamic"' in done.stderr


def needed(executable) -> list[str]:
    text = subprocess.run(["readelf", "-d", str(executable)], capture_output=True, text=True, check=True).stdout
    return [line.split("[")[1].split("]")[0] for line in text.splitlines() if "(NEEDED)" in line]


@pytest.mark.parametrize("flags", [("--cudart=static",), ("-lcudart_static", "-ldl", "-lpthread", "-lrt")])
def test_static_runtime_needs_no_libcudart_so(bundle, flags):
    require_tool("readelf")
    app = bundle.parent / f"static{len(flags)}"
    done = run_cli("link", str(bundle), *flags, "-o", str(app))
    if done.returncode != 0 and "cudart_static" in done.stderr:
        pytest.skip("this CUDA toolkit has no libcudart_static.a")
    assert done.returncode == 0, done.stderr
    assert not [name for name in needed(app) if name.startswith("libcudart")]


def test_none_with_own_runtime_runs(bundle, fake_cuda):
    app = bundle.parent / "own"
    done = run_cli("link", str(bundle), "--cudart=none", *fake_cuda.link_flags, "-o", str(app))
    assert done.returncode == 0, done.stderr
    assert any(name.startswith("libcudart.so") for name in needed(app))  # the fake's, from the user's -l
    assert [launch["kernel"] for launch in fake_cuda.run(app).launches()] == ["saxpy"]


HOST_MATH = """module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @noop() kernel { gpu.return }
  }
  func.func @host_math(%x: f32, %y: f64) -> f64 {
    %e = math.exp %x : f32
    %l = math.log %y : f64
    %ee = arith.extf %e : f32 to f64
    %s = arith.addf %ee, %l : f64
    return %s : f64
  }
}
"""


def test_host_math_links_libm(tmp_path):
    """Host code whose math ops become libm calls (expf, log) links for the GPU as under emulation."""
    require_tool("clang-22", 22)
    require_tool("readelf")
    source = tmp_path / "host_math.mlir"
    source.write_text(HOST_MATH)
    done = run_cli("compile", str(source), "--offload-arch", "sm_80", "-o", str(tmp_path / "m.bc"))
    assert done.returncode == 0, done.stderr
    main = tmp_path / "main.c"
    main.write_text(
        "double host_math(float, double);\nint main(void) { return host_math(0.0f, 1.0) == 1.0 ? 0 : 1; }\n"
    )
    app = tmp_path / "app"
    done = run_cli("link", str(tmp_path / "m.bc"), str(main), "-o", str(app))
    assert done.returncode == 0, done.stderr
    assert "libm.so.6" in needed(app)
