"""`ship A.offload.bc B.offload.bc -o app.tar.gz` ships several bundles as one app: the archive's build.sh
links them all into one executable and checks every bundle's kernels are registered; bundles that one
link cannot take together are refused with the reason."""

from __future__ import annotations

import json
import shutil
import subprocess
import tarfile

import pytest

from conftest import REPO, require_tool, run_cli

SAXPY = REPO / "examples" / "saxpy.mlir"
LIBRARY = """\
module attributes {gpu.container_module} {
  gpu.module @lib_kernels {
    gpu.func @double_it(%a: memref<16xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %a[%i] : memref<16xf32>
      %d = arith.addf %v, %v : f32
      memref.store %d, %a[%i] : memref<16xf32>
      gpu.return
    }
  }
  func.func @run_double(%m: memref<16xf32>) {
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    gpu.launch_func @lib_kernels::@double_it blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1)
        args(%m : memref<16xf32>)
    return
  }
}
"""

# A program whose main launches its own kernel, then calls run_double, which the LIBRARY bundle defines.
MAIN = """\
// Adds one on the GPU, then calls run_double, which another bundle defines: h[3] = (3 + 1) * 2.
module attributes {gpu.container_module} {
  llvm.mlir.global internal constant @fmt("h[3] = %.1f\\0A\\00") {addr_space = 0 : i32}
  llvm.func @printf(!llvm.ptr, ...) -> i32
  gpu.module @main_kernels {
    gpu.func @add_one(%a: memref<16xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %a[%i] : memref<16xf32>
      %one = arith.constant 1.0 : f32
      %r = arith.addf %v, %one : f32
      memref.store %r, %a[%i] : memref<16xf32>
      gpu.return
    }
  }
  func.func private @run_double(memref<16xf32>)
  func.func @main() -> i32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c16 = arith.constant 16 : index
    %h = memref.alloc() : memref<16xf32>
    scf.for %i = %c0 to %c16 step %c1 {
      %i32 = arith.index_cast %i : index to i32
      %f = arith.sitofp %i32 : i32 to f32
      memref.store %f, %h[%i] : memref<16xf32>
    }
    %d = gpu.alloc () : memref<16xf32>
    gpu.memcpy %d, %h : memref<16xf32>, memref<16xf32>
    gpu.launch_func @main_kernels::@add_one blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1)
        args(%d : memref<16xf32>)
    func.call @run_double(%d) : (memref<16xf32>) -> ()
    gpu.memcpy %h, %d : memref<16xf32>, memref<16xf32>
    %v = memref.load %h[%c3] : memref<16xf32>
    %w = arith.extf %v : f32 to f64
    %fmt = llvm.mlir.addressof @fmt : !llvm.ptr
    %n = llvm.call @printf(%fmt, %w) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr, f64) -> i32
    %z = arith.constant 0 : i32
    return %z : i32
  }
}
"""


@pytest.fixture(scope="module")
def bundles(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("several")
    (tmp / "lib.mlir").write_text(LIBRARY)
    for source, out, flags in (
        (SAXPY, "saxpy.offload.bc", []),
        (tmp / "lib.mlir", "lib.offload.bc", []),
        (SAXPY, "again.offload.bc", []),
        (tmp / "lib.mlir", "lib19.offload.o", ["--target-clang", "19", "--device-image=cubin", "--host-format=obj"]),
    ):
        if flags:
            require_tool("ptxas")
        done = run_cli("compile", str(source), "--offload-arch", "sm_80", *flags, "-o", str(tmp / out))
        assert done.returncode == 0, done.stderr
    return tmp


def test_several_bundles_build_one_app(bundles, tmp_path):
    done = run_cli(
        "ship", str(bundles / "saxpy.offload.bc"), str(bundles / "lib.offload.bc"), "-o", str(tmp_path / "app.tar.gz")
    )
    assert done.returncode == 0, done.stderr
    with tarfile.open(tmp_path / "app.tar.gz") as archive:
        names = sorted(archive.getnames())
        archive.extractall(tmp_path, filter="data")
    assert "app/saxpy.offload.bc" in names and "app/lib.offload.bc" in names
    manifest = json.loads((tmp_path / "app" / "manifest.json").read_text())
    assert manifest["bundles"] == ["saxpy.offload.bc", "lib.offload.bc"]
    assert manifest["entries"] == ["double_it", "saxpy"]
    require_tool("clang-22", 22)
    require_tool("ptxas")
    require_tool("make")
    built = subprocess.run(["make", "-C", str(tmp_path / "app")], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    assert "2 kernel entries" in built.stdout
    verified = run_cli("verify", str(tmp_path / "app" / "app"))
    assert verified.returncode == 0, verified.stderr
    assert "2 entries: saxpy, double_it" in verified.stdout


@pytest.mark.parametrize(
    "second, expected",
    [
        ("again.offload.bc", "kernel or global 'saxpy' is defined by both saxpy.offload.bc and again.offload.bc"),
        ("lib19.offload.o", "saxpy.offload.bc and lib19.offload.o differ in clang (22 vs 19)"),
    ],
)
def test_bundles_one_link_cannot_take_are_refused(bundles, tmp_path, second, expected):
    if not (bundles / second).exists():
        pytest.skip("not compiled here")
    done = run_cli("ship", str(bundles / "saxpy.offload.bc"), str(bundles / second), "-o", str(tmp_path / "a.tar.gz"))
    assert done.returncode == 1
    [line] = done.stderr.splitlines()
    assert line.startswith("mlir-offload: error: ") and expected in line
    assert not (tmp_path / "a.tar.gz").exists()


def test_compile_flags_with_bundles_are_a_usage_error(bundles, tmp_path):
    done = run_cli(
        "ship",
        str(bundles / "saxpy.offload.bc"),
        str(bundles / "lib.offload.bc"),
        "-O2",
        "-o",
        str(tmp_path / "a.tar.gz"),
    )
    assert done.returncode == 2 and "only apply to an .mlir input" in done.stderr


def test_ptx_beside_one_of_several_is_refused(bundles, tmp_path):
    require_tool("ptxas")
    shutil.copy(bundles / "lib.offload.bc", tmp_path / "lib.offload.bc")
    done = run_cli(
        "compile", str(SAXPY), "--offload-arch", "sm_80", "--device-image=ptx", "-o", str(tmp_path / "p.offload.bc")
    )
    assert done.returncode == 0, done.stderr
    done = run_cli(
        "ship", str(tmp_path / "p.offload.bc"), str(tmp_path / "lib.offload.bc"), "-o", str(tmp_path / "a.tar.gz")
    )
    assert done.returncode == 1 and "cannot ship PTX" in done.stderr


def test_shipped_app_runs_every_bundles_kernels(tmp_path, fake_cuda):
    """The app the archive builds calls into both bundles: under the fake runtime both kernels launch, in
    program order, from the one executable; the same two bundles linked for emulation compute the result."""
    require_tool("clang-22", 22)
    require_tool("ptxas")
    require_tool("make")
    (tmp_path / "main.mlir").write_text(MAIN)
    (tmp_path / "lib.mlir").write_text(LIBRARY)
    for name in ("main", "lib"):
        done = run_cli("compile", f"{name}.mlir", "-arch=sm_80", "-o", f"{name}.offload.bc", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    done = run_cli("ship", "main.offload.bc", "lib.offload.bc", "-o", "two.tar.gz", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    (tmp_path / "target").mkdir()
    with tarfile.open(tmp_path / "two.tar.gz") as archive:
        archive.extractall(tmp_path / "target", filter="data")
    app = tmp_path / "target" / "two"
    built = subprocess.run(["make", "-C", str(app)], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    ran = fake_cuda.run(app / "two")
    assert ran.returncode == 0, ran.stderr
    assert sorted(ran.kernels_registered()) == ["add_one", "double_it"]
    assert [launch["kernel"] for launch in ran.launches()] == ["add_one", "double_it"]
    done = run_cli(
        "link", "--emulate", str(app / "main.offload.bc"), str(app / "lib.offload.bc"), "-o", str(tmp_path / "emulated")
    )
    assert done.returncode == 0, done.stderr
    emulated = subprocess.run([str(tmp_path / "emulated")], capture_output=True, text=True, timeout=120)
    assert emulated.returncode == 0 and emulated.stdout == "h[3] = 8.0\n", emulated.stderr
