"""The per-target LLVM stages run in forked children (offload/processes.py): the images are
byte-identical to a one-process run, errors keep their message and location, a dying child becomes
one OffloadError naming its target, and results keep the order of the targets."""

from __future__ import annotations

import faulthandler
import os
import threading

import pytest

from conftest import DATA, REPO, require_tool
from offload.errors import Location, OffloadError
from offload.processes import map_forked

DEVICE_DATA = DATA / "device"


def test_forked_images_equal_one_process_images():
    from offload.device import CompileOptions, compile_device, parse_offload_arch
    from offload.mlir.frontend import load_program

    program = load_program(str(DEVICE_DATA / "features.mlir"))
    targets = parse_offload_arch("sm_80,sm_90,gfx90a")
    uncached = CompileOptions(cache=False)  # each run builds its images: none may come from the other
    alone = compile_device(program, targets, uncached, jobs=1)
    forked = compile_device(program, targets, uncached, jobs=3)
    assert [i.target.arch for i in forked] == ["sm_80", "sm_90", "gfx90a"]
    for one, other in zip(alone, forked, strict=True):
        assert one.bitcode == other.bitcode and one.bitcode[:2] == b"BC"
        assert one.kernels == other.kernels and one.globals == other.globals
    # An image does not depend on which other targets were compiled with it.
    (sm_90_alone,) = compile_device(program, parse_offload_arch("sm_90"), uncached)
    assert sm_90_alone.bitcode == forked[1].bitcode


class _WhereItRan:
    """A to-object step that records where it ran, in place of native code (Codegen's interface: no
    device link of the target clang's, no key since nothing is cached)."""

    device_lto: dict = {}

    def __call__(self, image):
        from dataclasses import replace

        from offload.device.images import NativeCode

        return replace(image, native=NativeCode(0, f"{os.getpid()} {threading.get_ident()}".encode(), None))


def test_native_code_is_made_inside_each_images_skeleton():
    """The to-object step runs where the image's other LLVM steps ran (a forked child or a worker thread),
    not after them in the compile's own thread; the native code is the same however many jobs ran."""
    from offload.device import CompileOptions, compile_device, parse_offload_arch
    from offload.device.native import Codegen, ptxas_finder
    from offload.mlir.frontend import load_program

    program = load_program(str(DEVICE_DATA / "features.mlir"))
    targets = parse_offload_arch("sm_80,sm_90,gfx90a")
    uncached = CompileOptions(cache=False)
    here = f"{os.getpid()} {threading.get_ident()}".encode()
    places = [i.native.data for i in compile_device(program, targets, uncached, jobs=3, codegen=_WhereItRan())]
    assert len(places) == 3 and here not in places

    require_tool("ptxas")
    codegen = Codegen(uncached.opt_level, ptxas_finder())
    alone = compile_device(program, targets, uncached, jobs=1, codegen=codegen)
    side_by_side = compile_device(program, targets, uncached, jobs=3, codegen=codegen)
    for one, other in zip(alone, side_by_side, strict=True):
        assert one.native is not None and other.native is not None
        assert one.native == other.native and one.native.data[:4] == b"\x7fELF"
    assert alone[0].native.ptx and ".target sm_80" in alone[0].native.ptx and alone[2].native.ptx is None


def _square_or_fail(n: int) -> int:
    if n == 3:
        raise OffloadError("three is refused", Location("in.mlir", 3, 7))
    if n == 4:
        faulthandler.disable()  # pytest's handler would print the child's stack
        os.abort()  # what an LLVM fatal error does to the process
    return n * n


def test_results_in_order_from_several_children():
    assert map_forked(_square_or_fail, [1, 2, 5, 6], ["a", "b", "c", "d"], jobs=2) == [1, 4, 25, 36]


def test_child_error_keeps_message_and_location():
    with pytest.raises(OffloadError) as caught:
        map_forked(_square_or_fail, [1, 3, 2], ["a", "b", "c"], jobs=2)
    assert caught.value.render() == "in.mlir:3:7: error: three is refused"


def test_dying_child_is_an_error_naming_its_target():
    with pytest.raises(OffloadError) as caught:
        map_forked(_square_or_fail, [1, 4], ["sm_80", "gfx90a"], jobs=2)
    assert "gfx90a" in caught.value.message and "SIGABRT" in caught.value.message


def test_first_failing_item_wins_like_a_sequential_loop():
    with pytest.raises(OffloadError) as caught:
        map_forked(_square_or_fail, [4, 3], ["sm_80", "sm_90"], jobs=2)
    assert "sm_80" in caught.value.message


def test_host_lowering_runs_beside_the_device_step_and_dies_with_it(tmp_path, monkeypatch):
    """compile starts the host lowering's child before the device step (it needs no image) and collects it
    after; when the device step fails, that child is killed and reaped, and the device error is the one raised."""
    from offload import api
    from offload.driver import stages
    from offload.processes import ForkedCall

    started, cancelled = [], []
    real_start, real_cancel = stages.start_lower, ForkedCall.cancel

    def start(*args, **kwargs):
        call = real_start(*args, **kwargs)
        started.append(call)
        return call

    def cancel(self):
        real_cancel(self)
        cancelled.append(self)

    def device_part(*args, **kwargs):
        assert len(started) == 1, "the host lowering is not running while the device step runs"
        os.kill(started[0]._pid, 0)  # its child is alive
        raise OffloadError("device step failed")

    monkeypatch.setattr(stages, "start_lower", start)
    monkeypatch.setattr(ForkedCall, "cancel", cancel)
    monkeypatch.setattr(stages, "_device_part", device_part)
    with pytest.raises(OffloadError, match="device step failed"):
        api.compile_file(REPO / "examples" / "saxpy.mlir", "sm_80", cache=False)  # no whole-compile cache hit
    assert cancelled == started
    with pytest.raises(ChildProcessError):
        os.waitpid(started[0]._pid, os.WNOHANG)  # reaped: no zombie left
