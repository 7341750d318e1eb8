"""The emulator's ABI header (offload/data/emulator/emu_abi.h) against both sides: the runtime built as a
link builds it (offload/toolchain/emulate.py, through its build cache) defines every entry point the header
lists and exports no other __emu_ symbol; the retargeting pass (retarget.cpp) names no runtime symbol but
through the header's lists and runs with every name its tables put together. The planted variants show
that an entry point added on one side only is caught."""

from __future__ import annotations

import platform
import re
import subprocess
from importlib import resources
from pathlib import Path

import pytest

from emulation import require_emulation
from offload.formats.hosts import HOSTS
from offload.host.host_sites import RUNTIME_HOOK
from offload.toolchain import emulate

EMULATOR = Path(str(resources.files("offload.data").joinpath("emulator")))
SYMBOL_PREFIX = "__emu_"
LISTS = ("EMU_RUNTIME_FUNCTIONS", "EMU_SANITIZER_FUNCTIONS")
PLANTED = "planted_entry_point"


def host_triple() -> str:
    return next(host.llvm_triple for host in HOSTS.values() if platform.machine() in host.machines)


@pytest.fixture(scope="module")
def tools() -> emulate.EmulationTools:
    require_emulation()
    return emulate.find_emulation_tools()


def declared(tools: emulate.EmulationTools, header: bytes, folder: Path) -> dict[str, set[str]]:
    """The entry points of each of the header's lists, as the C preprocessor expands them."""
    lines = ['#include "emu_abi.h"', "#define EMU_NAME(waits, ret, name, params) EMU_LISTED name"]
    lines += [f"EMU_LIST {name} {name}(EMU_NAME)" for name in LISTS]
    source = "\n".join(lines) + "\n"
    (folder / "emu_abi.h").write_bytes(header)
    done = subprocess.run(
        [tools.c_compiler, "-E", "-P", "-x", "c", "-I", str(folder), "-"],
        input=source,
        capture_output=True,
        text=True,
        check=True,
    )
    lists: dict[str, set[str]] = {}
    for part in done.stdout.split("EMU_LIST ")[1:]:
        name, _, body = part.partition(" ")
        lists[name] = {SYMBOL_PREFIX + entry for entry in re.findall(r"EMU_LISTED (\w+)", body)}
    assert set(lists) == set(LISTS), done.stdout[:500]
    return lists


def exported(tools: emulate.EmulationTools, sources: dict[str, bytes], sanitize: emulate.Sanitize, tmp: Path):
    """The __emu_ symbols the runtime defines, built from the emulator's files (`sources` replacing some)
    by the tool's own build and build cache."""
    original = emulate._source
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(emulate, "_source", lambda name: sources[name] if name in sources else original(name))
        obj = emulate.runtime_object(tools, host_triple(), str(tmp), sanitize=sanitize)
    done = subprocess.run(
        [tools.llvm_nm, "--defined-only", "--extern-only", "--format=just-symbols", obj],
        capture_output=True,
        text=True,
        check=True,
    )
    return {name for name in done.stdout.split() if name.startswith(SYMBOL_PREFIX)}


def abi_mismatches(tools: emulate.EmulationTools, tmp: Path, sources: dict[str, bytes] | None = None) -> list[str]:
    """What the header and the built runtime (plain and sanitizer variants) disagree on, with some of the
    emulator's files replaced by `sources` (name: bytes)."""
    sources = sources or {}
    lists = declared(tools, sources.get("emu_abi.h") or (EMULATOR / "emu_abi.h").read_bytes(), tmp)
    problems = []
    plain, sanitizer = lists["EMU_RUNTIME_FUNCTIONS"], lists["EMU_SANITIZER_FUNCTIONS"]
    variants = {"plain": (emulate.Sanitize(), plain), "sanitizer": (emulate.Sanitize(("memcheck",)), plain | sanitizer)}
    for variant, (sanitize, wanted) in variants.items():
        folder = tmp / variant
        folder.mkdir(exist_ok=True)
        defined = exported(tools, sources, sanitize, folder)
        problems += [f"{variant} runtime lacks {name}" for name in sorted(wanted - defined)]
        problems += [f"{variant} runtime exports undeclared {name}" for name in sorted(defined - wanted)]
    return problems


def runtime_literals(cpp: str) -> list[str]:
    """String literals of a C++ source that name a runtime symbol (comments left out)."""
    code = re.sub(r"//[^\n]*|/\*.*?\*/", "", cpp, flags=re.S)
    return [text for text in re.findall(r'"((?:[^"\\\n]|\\.)*)"', code) if text.startswith(SYMBOL_PREFIX)]


def test_the_runtime_defines_exactly_the_headers_entry_points(tools, tmp_path):
    lists = declared(tools, (EMULATOR / "emu_abi.h").read_bytes(), tmp_path)
    assert len(lists["EMU_RUNTIME_FUNCTIONS"]) > 300 and len(lists["EMU_SANITIZER_FUNCTIONS"]) >= 4
    assert not lists["EMU_RUNTIME_FUNCTIONS"] & lists["EMU_SANITIZER_FUNCTIONS"]
    # The host code's annotations call the sanitizer variant too (compile --sanitize).
    assert RUNTIME_HOOK in lists["EMU_SANITIZER_FUNCTIONS"]
    assert abi_mismatches(tools, tmp_path) == []


def test_an_entry_point_the_runtime_alone_adds_is_caught(tools, tmp_path):
    runtime = (EMULATOR / "runtime.c").read_bytes()
    planted = runtime + f"\nEXPORT int {SYMBOL_PREFIX}{PLANTED}(void) {{ return 0; }}\n".encode()
    assert abi_mismatches(tools, tmp_path, {"runtime.c": planted}) == [
        f"plain runtime exports undeclared {SYMBOL_PREFIX}{PLANTED}",
        f"sanitizer runtime exports undeclared {SYMBOL_PREFIX}{PLANTED}",
    ]


def test_an_entry_point_the_header_alone_adds_is_caught(tools, tmp_path):
    header = (EMULATOR / "emu_abi.h").read_text()
    anchor = "#define EMU_RUNTIME_FUNCTIONS(X)"
    assert header.count(anchor) == 1
    line_end = header.index("\n", header.index(anchor)) + 1
    planted = header[:line_end] + f"    X(EMU_ALONE, void, {PLANTED}, (void)) \\\n" + header[line_end:]
    assert abi_mismatches(tools, tmp_path, {"emu_abi.h": planted.encode()}) == [
        f"plain runtime lacks {SYMBOL_PREFIX}{PLANTED}",
        f"sanitizer runtime lacks {SYMBOL_PREFIX}{PLANTED}",
    ]


def test_a_definition_unlike_its_declaration_does_not_compile(tools, tmp_path):
    header = (EMULATOR / "emu_abi.h").read_text()
    line = "X(EMU_ALONE, uint32_t, laneid, (void))"
    assert header.count(line) == 1
    changed = header.replace(line, "X(EMU_ALONE, uint64_t, laneid, (void))").encode()
    with pytest.raises(emulate.OffloadError, match="__emu_laneid"):
        abi_mismatches(tools, tmp_path, {"emu_abi.h": changed})


def test_the_pass_names_runtime_symbols_only_through_the_header():
    source = (EMULATOR / "retarget.cpp").read_text()
    assert '#include "emu_abi.h"' in source
    assert runtime_literals(source) == []
    assert runtime_literals(source + '\nauto F = M.getFunction("__emu_planted");\n') == ["__emu_planted"]
    # Each call's type is the header's: no hand-written parameter list beside a runtime call.
    assert "E.runtime(Rt::" in source and not re.search(r"E\.runtime\([^)]*,", source)


def test_the_pass_runs_with_every_name_its_tables_build(tools, tmp_path):
    """The tables look some entry points up by a name they put together (tid_x, an intrinsic's math
    mirror): every run builds them all, and a name the header lacks stops it."""
    plugin = emulate.pass_plugin(tools, str(tmp_path))
    module = tmp_path / "kernel.ll"
    module.write_text(
        'target triple = "nvptx64-nvidia-cuda"\n'
        "declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n"
        "declare float @llvm.nvvm.add.rz.f(float, float)\n"
        "define ptx_kernel void @k(ptr %out) {\n"
        "  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n"
        "  %f = sitofp i32 %t to float\n"
        "  %s = call float @llvm.nvvm.add.rz.f(float %f, float 1.0)\n"
        "  store float %s, ptr %out\n"
        "  ret void\n"
        "}\n"
    )
    bitcode = tmp_path / "kernel.bc"
    subprocess.run([str(Path(tools.opt).with_name("llvm-as")), str(module), "-o", str(bitcode)], check=True)
    image = emulate.EmulatedImage("kernel.bc", "sm_80", 32, bitcode.read_bytes())
    emulate.retarget(tools, plugin, image, host_triple(), str(tmp_path), 0)
    text = subprocess.run(
        [str(Path(tools.opt).with_name("llvm-dis")), str(tmp_path / "kernels0.bc"), "-o", "-"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "declare i32 @__emu_tid_x()" in text
    assert "declare float @__emu_nvvm_add_rz_f(float, float)" in text
    assert "call void @__emu_register_kernel(ptr" in text
