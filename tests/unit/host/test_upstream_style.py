"""Upstream-style host programs (tests/data/upstream_style, our own programs using the idioms of MLIR's GPU
integration tests): compiled for sm_80, linked with clang 22 and run on the fake CUDA runtime, with the
exact launches, streams, events and argument bytes asserted."""

from __future__ import annotations

import pytest

from conftest import REPO, require_tool, run_cli
from fakert import arg_f32, arg_i32, arg_i64, arg_ptr, ptr_value

PROGRAMS = REPO / "tests" / "data" / "upstream_style"


def build(tmp, name: str, *compile_flags, source=None, arch="sm_80", link_flags=()):
    """compile + link one program; returns the executable."""
    require_tool("clang-22", 22)
    bundle, app = tmp / f"{name}.offload.bc", tmp / name
    done = run_cli(
        "compile", str(source or PROGRAMS / f"{name}.mlir"), "--offload-arch", arch, *compile_flags, "-o", str(bundle)
    )
    assert done.returncode == 0, done.stderr
    done = run_cli("link", str(bundle), *link_flags, "-o", str(app))
    assert done.returncode == 0, done.stderr
    return app


def memref_1d(args, first: int):
    a = args[first : first + 5]
    return arg_ptr(a[0]), arg_ptr(a[1]), arg_i64(a[2]), arg_i64(a[3]), arg_i64(a[4])


def ordered_after(events, stream: int, event_stream: int, before: int) -> bool:
    """Whether `stream` waits, before event index `before`, for an event recorded on `event_stream`."""
    recorded = {
        e["event"] for e in events[:before] if e.get("api") == "cudaEventRecord" and e["stream"] == event_stream
    }
    return any(
        e.get("api") == "cudaStreamWaitEvent" and e["stream"] == stream and e["event"] in recorded
        for e in events[:before]
    )


def test_independent_chains_run_on_independent_unordered_streams(tmp_path, fake_cuda):
    result = fake_cuda.run(build(tmp_path, "spin_pair"))
    assert result.returncode == 0, result.stderr
    waiter, signal = result.launches()
    assert (waiter["kernel"], signal["kernel"]) == ("waiter", "signal")
    assert waiter["stream"] != signal["stream"] and 0 not in (waiter["stream"], signal["stream"])
    # Neither stream waits for the other, and the host does not synchronize between the launches.
    events = result.events
    at_signal = events.index(signal)
    assert not ordered_after(events, signal["stream"], waiter["stream"], at_signal)
    assert not ordered_after(events, waiter["stream"], signal["stream"], len(events))
    between = events[events.index(waiter) : at_signal]
    assert [e["api"] for e in between if "Synchronize" in e["api"]] == []
    flag, seen = (ptr_value(c["ptr"]) for c in result.calls("cudaMalloc"))
    assert memref_1d(waiter["args"], 0) == (flag, flag, 0, 1, 1)
    assert memref_1d(waiter["args"], 5) == (seen, seen, 0, 1, 1)
    assert memref_1d(signal["args"], 0) == (flag, flag, 0, 1, 1) and arg_i32(signal["args"][5]) == 7
    # The copy-out follows the waiter on its stream; each stream is synchronized and destroyed once.
    copy_out = result.calls("cudaMemcpyAsync")[-1]
    assert copy_out["stream"] == waiter["stream"]
    destroyed = [c["stream"] for c in result.calls("cudaStreamDestroy")]
    assert len(destroyed) == len(set(destroyed)) and {waiter["stream"], signal["stream"]} <= set(destroyed)


def test_a_token_with_several_dependents_forks_streams_and_joins(tmp_path, fake_cuda):
    result = fake_cuda.run(build(tmp_path, "fork_join"))
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    left, right = result.launches()
    copy_in, copy_out = result.calls("cudaMemcpyAsync")
    events = result.events
    # @left keeps the copy-in's stream; @right gets its own stream that waits for the copy-in only.
    assert left["stream"] == copy_in["stream"] != right["stream"]
    assert ordered_after(events, right["stream"], copy_in["stream"], events.index(right))
    assert events.index(copy_in) < events.index(left)
    # The join is a stream waiting for both; the host synchronizes it before the synchronous copy-out,
    # which runs on a stream of its own.
    at_copy_out = events.index(copy_out)
    synchronized = [
        e["stream"] for e in events[events.index(right) : at_copy_out] if e["api"] == "cudaStreamSynchronize"
    ]
    joins = [
        s
        for s in synchronized
        if all(ordered_after(events, s, launch["stream"], at_copy_out) for launch in (left, right))
    ]
    assert len(joins) == 1
    assert copy_out["stream"] not in (left["stream"], right["stream"], joins[0])
    data = ptr_value(result.calls("cudaMalloc")[0]["ptr"])
    assert memref_1d(left["args"], 0) == (data, data, 0, 8, 1) and arg_f32(left["args"][5]) == 2.0
    assert memref_1d(right["args"], 0) == (data, data, 0, 8, 1) and arg_f32(right["args"][5]) == 10.0
    assert [c["block"] for c in (left, right)] == [[4, 1, 1], [4, 1, 1]]
    # No stream or event is released twice (the fake fails a second destroy, and the run would exit 1).
    destroyed = [c["stream"] for c in result.calls("cudaStreamDestroy")]
    assert len(destroyed) == len(set(destroyed))
    assert [ptr_value(c["ptr"]) for c in result.calls("cudaFree")] == [data]


def test_kernels_outlined_from_gpu_launch_get_unique_names(tmp_path, fake_cuda):
    app = build(tmp_path, "two_launches")
    result = fake_cuda.run(app)
    assert result.returncode == 0, result.stderr
    assert sorted(result.kernels_registered()) == ["bump_kernel", "main_kernel", "main_kernel_0"]
    launches = result.launches()
    assert [(launch["kernel"], launch["grid"], launch["block"]) for launch in launches] == [
        ("main_kernel", [1, 1, 1], [4, 1, 1]),
        ("main_kernel_0", [2, 1, 1], [2, 1, 1]),
        ("bump_kernel", [1, 1, 1], [4, 1, 1]),
    ]
    data = ptr_value(result.calls("cudaMalloc")[0]["ptr"])
    first, second, bump = launches
    assert memref_1d(first["args"], 0) == (data, data, 0, 4, 1) and len(first["args"]) == 5
    # The second body captures %c2 before %data.
    assert arg_i64(second["args"][0]) == 2 and memref_1d(second["args"], 1) == (data, data, 0, 4, 1)
    assert memref_1d(bump["args"], 0) == (data, data, 0, 4, 1)
    verified = run_cli("verify", str(app))
    assert verified.returncode == 0, verified.stdout + verified.stderr


@pytest.mark.parametrize("arch", ["sm_80", "gfx90a"])
def test_registered_host_memory_reaches_the_kernel_through_the_device_view(tmp_path, arch, fake_cuda, fake_hip):
    runtime, api = (fake_cuda, "cuda") if arch.startswith("sm_") else (fake_hip, "hip")
    app = build(tmp_path, "registered_view", arch=arch, link_flags=() if api == "cuda" else (f"-L{fake_hip.lib_dir}",))
    result = runtime.run(app, env={"FAKE_RT_ARG_SIZES": "shift:" + ",".join(["8"] * 10 + ["4"])})
    assert result.returncode == 0, result.stderr
    values, counts = result.calls(f"{api}HostRegister")
    assert (values["size"], counts["size"]) == (24, 24)
    views = result.calls(f"{api}HostGetDevicePointer")
    assert [(c["host"], c["ptr"], c["flags"]) for c in views] == [
        (values["ptr"], values["ptr"], 0),
        (counts["ptr"], counts["ptr"], 0),
    ]
    (launch,) = result.launches()
    assert launch["kernel"] == "shift" and launch["block"] == [6, 1, 1]
    device_values, device_counts = ptr_value(values["ptr"]), ptr_value(counts["ptr"])
    assert memref_1d(launch["args"], 0) == (device_values, device_values, 0, 6, 1)
    assert memref_1d(launch["args"], 5) == (device_counts, device_counts, 0, 6, 1)
    # The program's own @mgpuOffsetOf ran on the host: 2.0 + 0.5.
    assert arg_f32(launch["args"][10]) == 2.5


def test_only_the_targets_kernels_are_registered(tmp_path, fake_cuda):
    """A function marked gpu.kernel but not nvvm.kernel is a device function in the image; one marked
    nvvm.kernel alone is a kernel."""
    source = tmp_path / "marked.mlir"
    source.write_text("""module attributes {gpu.container_module} {
  gpu.module @marks {
    gpu.func @written(%x: i32) kernel { gpu.return }
    llvm.func @device_function(%x: i32) attributes {gpu.kernel} { llvm.return }
    llvm.func @entry_point(%x: i32) attributes {nvvm.kernel} { llvm.return }
  }
  func.func @main() -> i32 {
    %z = arith.constant 0 : i32
    return %z : i32
  }
}
""")
    app = build(tmp_path, "marked", source=source)
    verified = run_cli("verify", str(app))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "2 entries: written, entry_point" in verified.stdout
    assert fake_cuda.run(app).kernels_registered() == ["written", "entry_point"]


HOST_BODY = """module attributes {{gpu.container_module}} {{
  gpu.module @k {{
    gpu.func @touch(%x: memref<4xf32>) kernel {{ gpu.return }}
  }}
  func.func @main() -> i32 {{
    %c1 = arith.constant 1 : index
    %x = gpu.alloc () : memref<4xf32>
{line}
    gpu.launch_func @k::@touch blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>)
    %z = arith.constant 0 : i32
    return %z : i32
  }}
}}
"""


@pytest.mark.parametrize(
    "line, op, at, reason",
    [
        (
            "    %f = arith.constant 1.0 : f32\n    linalg.fill ins(%f : f32) outs(%x : memref<4xf32>)",
            "linalg.fill",
            "9:5",
            "--pass-pipeline",
        ),
        (
            "    %e = tensor.empty() : tensor<4xf32>\n    %v = tensor.extract %e[%c1] : tensor<4xf32>\n"
            "    memref.store %v, %x[%c1] : memref<4xf32>",
            "tensor.empty",
            "8:10",
            "--pass-pipeline",
        ),
    ],
)
def test_host_ops_the_lowering_cannot_handle_are_located_errors(tmp_path, line, op, at, reason):
    source = tmp_path / "host.mlir"
    source.write_text(HOST_BODY.format(line=line))
    done = run_cli("compile", str(source), "--offload-arch", "sm_80", "-o", str(tmp_path / "out.bc"))
    assert done.returncode == 1
    assert done.stderr.startswith(f"{source}:{at}: error: ") and f"'{op}'" in done.stderr and reason in done.stderr
    assert done.stderr.count("\n") == 1 and not (tmp_path / "out.bc").exists()


def test_a_crash_in_a_forked_step_is_one_error_line():
    import faulthandler
    import os
    import signal

    from offload.errors import OffloadError
    from offload.processes import call_forked

    def crash(_: None) -> None:
        faulthandler.disable()  # pytest's, off in the child: the crash is the point, not a dump of its stack
        os.kill(os.getpid(), signal.SIGSEGV)

    assert call_forked(lambda n: n * 2, 21, "doubling") == 42
    with pytest.raises(OffloadError) as raised:
        call_forked(
            crash,
            None,
            "translating the widget crashed",
        )
    assert str(raised.value.message) == (
        "translating the widget crashed: the process running MLIR/LLVM was killed by signal SIGSEGV"
    )


def test_device_translation_never_kills_the_command(tmp_path):
    """An NVVM op MLIR 22 translates only after convert-nvvm-to-llvm: built, or refused in one line."""
    source = tmp_path / "parity.mlir"
    source.write_text("""module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @wait(%bar: !llvm.ptr<3>, %phase: i32) kernel {
      nvvm.mbarrier.try_wait.parity %bar, %phase, %phase : !llvm.ptr<3>, i32, i32
      gpu.return
    }
  }
  func.func @main() -> i32 {
    %z = arith.constant 0 : i32
    return %z : i32
  }
}
""")
    done = run_cli("compile", str(source), "--offload-arch", "sm_90", "-o", str(tmp_path / "out.bc"))
    assert done.returncode in (0, 1), done.stderr
    if done.returncode == 1:
        assert done.stderr.count("\n") == 1 and "error:" in done.stderr and "Traceback" not in done.stderr
        assert not (tmp_path / "out.bc").exists()


LINALG_PIPELINE = "builtin.module(func.func(convert-linalg-to-loops))"


def test_pass_pipeline_runs_before_our_lowering(tmp_path, fake_cuda):
    source = PROGRAMS / "linalg_host.mlir"
    refused = run_cli("compile", str(source), "--offload-arch", "sm_80", "-o", str(tmp_path / "x.bc"))
    assert refused.returncode == 1 and refused.stderr.startswith(f"{source}:9:5: error: host operation 'linalg.fill'")
    result = fake_cuda.run(build(tmp_path, "linalg_host", "--pass-pipeline", LINALG_PIPELINE))
    assert result.returncode == 0, result.stderr
    (launch,) = result.launches()
    assert (launch["kernel"], launch["block"]) == ("main_kernel", [16, 1, 1])
    device = ptr_value(result.calls("cudaMalloc")[0]["ptr"])
    assert memref_1d(launch["args"], 0) == (device, device, 0, 16, 1)
    copy_in, copy_out = result.calls("cudaMemcpyAsync")
    assert (ptr_value(copy_in["dst"]), copy_in["size"], ptr_value(copy_out["src"])) == (device, 64, device)


@pytest.mark.parametrize(
    "pipeline, message",
    [
        (
            "builtin.module(no-such-pass)",
            "mlir-offload: error: --pass-pipeline: 1:1: error: 'no-such-pass' does not "
            "refer to a registered pass or pass pipeline",
        ),
        (
            "func.func(canonicalize)",
            "linalg_host.mlir:3:1: error: --pass-pipeline 'func.func(canonicalize)': can't run "
            "'func.func' pass manager on 'builtin.module' op",
        ),
    ],
)
def test_a_bad_pass_pipeline_is_one_error_line(tmp_path, pipeline, message):
    done = run_cli(
        "compile",
        str(PROGRAMS / "linalg_host.mlir"),
        "--pass-pipeline",
        pipeline,
        "--offload-arch",
        "sm_80",
        "-o",
        str(tmp_path / "x.bc"),
    )
    assert done.returncode == 1 and done.stderr.endswith(message + "\n") and done.stderr.count("\n") == 1


def test_standard_input_text_and_bytecode_give_the_same_bundle(tmp_path):
    """`-` reads the program, as piped from mlir-opt: text or bytecode, the bundle is the file's."""
    import mlir.ir as ir

    source = PROGRAMS / "fork_join.mlir"
    with ir.Context():
        module = ir.Module.parse(source.read_text())
        with open(tmp_path / "fork_join.mlirbc", "wb") as out:
            module.operation.write_bytecode(out)
    bundles = []
    for name, data in (
        ("file", None),
        ("text", source.read_bytes()),
        ("bytecode", (tmp_path / "fork_join.mlirbc").read_bytes()),
    ):
        out = tmp_path / f"{name}.bc"
        done = run_cli(
            "compile", str(source) if data is None else "-", "--offload-arch", "sm_80", "-o", str(out), input=data
        )
        assert done.returncode == 0, done.stderr
        bundles.append(out.read_bytes())
    assert bundles[0][:4] == b"BC\xc0\xde" and bundles[0] == bundles[1] == bundles[2]
    broken = run_cli(
        "compile",
        "-",
        "--offload-arch",
        "sm_80",
        "-o",
        str(tmp_path / "x.bc"),
        input=source.read_bytes().replace(b"gpu.return", b"gpu.retrun"),
    )
    assert broken.returncode == 1 and broken.stderr.startswith(b"<stdin>:") and b"'gpu.retrun'" in broken.stderr
    unnamed = run_cli("compile", "-", "--offload-arch", "sm_80", input=source.read_bytes())
    assert unnamed.returncode == 1 and b"name the output with -o" in unnamed.stderr


ASYNC_WITHOUT_DEPENDENCIES = """module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @clear(%x: memref<4xi32>) kernel { gpu.return }
  }
  func.func @main() -> i32 {
    %c1 = arith.constant 1 : index
    %x, %made = gpu.alloc async () : memref<4xi32>
    %cleared = gpu.launch_func async @k::@clear blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%x : memref<4xi32>)
%BODY%
    %z = arith.constant 0 : i32
    return %z : i32
  }
}
"""


def test_async_ops_without_dependencies_start_chains_of_their_own(tmp_path, fake_cuda):
    source = tmp_path / "fresh.mlir"
    source.write_text(ASYNC_WITHOUT_DEPENDENCIES.replace("%BODY%", "    gpu.wait [%made, %cleared]"))
    result = fake_cuda.run(build(tmp_path, "fresh", source=source))
    assert result.returncode == 0, result.stderr
    (launch,) = result.launches()
    (created_for_alloc, created_for_launch) = [c["stream"] for c in result.calls("cudaStreamCreate")]
    assert launch["stream"] == created_for_launch != created_for_alloc
    assert sorted(c["stream"] for c in result.calls("cudaStreamDestroy")) == [created_for_alloc, created_for_launch]


def test_a_token_carried_through_a_loop_is_refused_at_its_user(tmp_path):
    source = tmp_path / "carried.mlir"
    source.write_text(
        ASYNC_WITHOUT_DEPENDENCIES.replace(
            "%BODY%",
            """    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %last = scf.for %i = %c0 to %c4 step %c1 iter_args(%token = %cleared) -> (!gpu.async.token) {
      %next = gpu.launch_func async [%token] @k::@clear blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
          args(%x : memref<4xi32>)
      scf.yield %next : !gpu.async.token
    }
    gpu.wait [%made, %last]""",
        )
    )
    done = run_cli("compile", str(source), "--offload-arch", "sm_80", "-o", str(tmp_path / "x.bc"))
    assert done.returncode == 1 and done.stderr.count("\n") == 1
    assert done.stderr.startswith(
        f"{source}:13:15: error: 'gpu.launch_func' depends on an async token that is a block argument"
    )


@pytest.mark.parametrize(
    "taken, what",
    [
        ("__device_stub__clear", "the host stub that launches"),
        ("__mlir_offload_pack.0", "the launch code shared by"),
        (".offloading.entry.clear", "the offload entry of"),
    ],
)
def test_a_program_function_named_like_a_launch_symbol_is_a_located_error(tmp_path, taken, what):
    source = tmp_path / "stub.mlir"
    source.write_text(
        ASYNC_WITHOUT_DEPENDENCIES.replace("%BODY%", "    gpu.wait [%made, %cleared]").replace(
            "  func.func @main", f'  func.func @"{taken}"() {{\n    return\n  }}\n  func.func @main'
        )
    )
    done = run_cli("compile", str(source), "--offload-arch", "sm_80", "-o", str(tmp_path / "x.bc"))
    assert done.returncode == 1 and done.stderr == (
        f"{source}:11:16: error: the program defines '{taken}', the name of {what} "
        "kernel 'clear': rename the program's function\n"
    )
