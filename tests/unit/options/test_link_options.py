"""Link's options table (offload/options/link.py): each option, declared once, is the same setting as a
`mlir-offload link` flag, an mlir-offload.toml key and an offload.api.link keyword: the three give the same
record, the same link command, the same executable bytes, and the same refusal of a bad value, worded in
each one's terms (--flag, key, keyword=)."""

from __future__ import annotations

import dataclasses
import inspect
import os
import re
from pathlib import Path
from typing import Any

import click
import pytest

from conftest import REPO, require_tool, run_cli
from offload.config import load_config
from offload.options import TOML_SPECS
from offload.options import spec as specs
from offload.options.compile import DEFAULTS as COMPILE_DEFAULTS
from offload.options.compile import SPECS as COMPILE_SPECS
from offload.options.link import API_KEYWORDS, DEFAULT_LINK, GPU_ONLY, SPECS, LinkOptions, resolve_link

SAXPY = REPO / "examples" / "saxpy.mlir"
CUDA_13 = "/usr/local/cuda-13.0"  # another spelling of the toolkit the default search finds
LLVM_CLANG = "/usr/lib/llvm-22/bin/clang"  # another spelling of the clang the default search finds

# One value per option, as each front end spells it: (command-line words, TOML line, API value).
SAMPLES: dict[str, tuple[list[str], str, Any]] = {
    "clang": (["--clang", LLVM_CLANG], f'clang = "{LLVM_CLANG}"', LLVM_CLANG),
    "cuda_path": ([f"--cuda-path={CUDA_13}"], f'cuda-path = "{CUDA_13}"', CUDA_13),
    "rocm_path": (["--rocm-path", "/opt/rocm-6"], 'rocm-path = "/opt/rocm-6"', "/opt/rocm-6"),
    "ptx": (["--ptx", "/p/a.ptx", "--ptx=/p/b.ptx"], 'ptx = ["/p/a.ptx", "/p/b.ptx"]', ["/p/a.ptx", "/p/b.ptx"]),
    "ptx_beside": (["--ptx-beside"], "ptx-beside = true", True),
    "cudart": (["--cudart", "static"], 'cudart = "static"', "static"),
    "emulate": (["--emulate"], "emulate = true", True),
    "sanitize": (["--emulate", "--sanitize=memcheck"], 'emulate = true\nsanitize = "memcheck"', "memcheck"),
    "sanitize_keep_going": (
        ["--emulate", "--sanitize", "--sanitize-keep-going"],
        'emulate = true\nsanitize = "default"\nsanitize-keep-going = true',
        True,
    ),
    "device_debug": (["-G"], "device-debug = true", True),
    "resource_usage": (["--resource-usage"], "resource-usage = true", True),
    "serial_device_link": (["--serial-device-link"], "serial-device-link = true", True),
}
# What the API needs besides the option itself for the sample to be a valid link (as the CLI words say).
API_COMPANIONS: dict[str, dict[str, Any]] = {
    "sanitize": {"emulate": True},
    "sanitize_keep_going": {"emulate": True, "sanitize": "default"},
}


def cli_record(words: list[str]) -> LinkOptions:
    from offload.commands.link import link_command, read_arguments

    _, given, passthrough = read_arguments(click.Context(link_command), ["b.bc", *words])
    assert passthrough == ["b.bc"]  # every option word is link's own, none reaches clang
    return resolve_link(given, None).options


def toml_record(folder: Path, text: str) -> LinkOptions:
    folder.mkdir()
    (folder / "mlir-offload.toml").write_text(text + "\n")
    return resolve_link({}, load_config(folder / "mlir-offload.toml")).options


def api_record(name: str, value) -> LinkOptions:
    keywords = {**API_COMPANIONS.get(name, {}), name: value}
    return resolve_link(specs.given_keywords(SPECS, keywords, "link"), None).options


@pytest.mark.fast
def test_every_option_has_one_declaration_and_one_default():
    fields = dataclasses.fields(LinkOptions)
    assert {f.name for f in fields} == set(SPECS) and all(f.default is not dataclasses.MISSING for f in fields)
    # Nothing else declares a link option or its default: link() and the link functions take the record.
    from offload import api
    from offload.toolchain.emulate import link_emulated
    from offload.toolchain.link import link_bundle, plan_link

    link_parameters = inspect.signature(api.link).parameters
    assert not set(link_parameters) & set(SPECS) and link_parameters["options"].kind is inspect.Parameter.VAR_KEYWORD
    for function in (plan_link, link_bundle, link_emulated):
        parameters = inspect.signature(function).parameters
        assert not set(parameters) & set(SPECS) and parameters["options"].default is DEFAULT_LINK
    assert DEFAULT_LINK == LinkOptions() and DEFAULT_LINK.ptx_beside is False  # the command line's default
    # A key both tables declare (sanitize, emulate, ...) is one setting: one default, one check.
    shared = [key.replace("-", "_") for key, declared in TOML_SPECS.items() if len(declared) > 1]
    assert "sanitize" in shared and "emulate" in shared
    for name in shared:
        assert COMPILE_SPECS[name].kind is SPECS[name].kind, name
        assert COMPILE_DEFAULTS[name] == specs.defaults_of(LinkOptions)[name], name


@pytest.mark.fast
def test_a_flag_its_key_and_its_keyword_give_one_record(tmp_path):
    assert set(SAMPLES) == set(API_KEYWORDS)  # every option of the API is sampled
    for name, (words, line, value) in SAMPLES.items():
        by_flag = cli_record(words)
        assert by_flag == toml_record(tmp_path / name, line) == api_record(name, value), name
        assert getattr(by_flag, name) != getattr(DEFAULT_LINK, name), name


@pytest.fixture(scope="module")
def bundles(tmp_path_factory) -> dict[str, Path]:
    """Bundles for two archs (sm_80, sm_90: two device links side by side): of bitcode images (as compile
    makes by default; what --emulate runs), and of cubins with their PTX beside (what --ptx takes)."""
    require_tool("clang-22", 22)
    require_tool("ptxas")
    folder = tmp_path_factory.mktemp("link-options")
    made = {}
    for image in ("bitcode", "ptx"):
        made[image] = folder / f"{image}.offload.bc"
        words = ["--offload-arch", "sm_80,sm_90", f"--device-image={image}", "-o", str(made[image])]
        done = run_cli("compile", str(SAXPY), *words)
        assert done.returncode == 0, done.stderr
    return made


def sample(name: str, bundles: dict[str, Path]) -> tuple[Path, list[str], str, Any]:
    """(the bundle, then the option's words, TOML line and API value) of an option's sample link."""
    if name == "ptx":  # a real PTX file: compile's, beside the bundle
        ptx = f"{bundles['ptx']}.sm_90.ptx"
        return bundles["ptx"], ["--ptx", ptx], f'ptx = ["{ptx}"]', [ptx]
    return (bundles["ptx"] if name == "ptx_beside" else bundles["bitcode"], *SAMPLES[name])


def dry_run(bundle: Path, words: list[str], folder: Path) -> str:
    """The command `link --dry-run` prints, run in `folder`; the emulator's scratch folder (a new one each
    run) named alike."""
    done = run_cli("link", str(bundle), *words, "--dry-run", "-o", str(bundle.parent / "app"), cwd=folder)
    assert done.returncode == 0, done.stderr
    return re.sub(r"mlir-offload-emulate-[^/]+/", "SCRATCH/", done.stdout)


def test_a_flag_and_its_key_print_the_same_link_command(bundles, tmp_path):
    from emulation import require_emulation

    require_emulation()  # the emulated link's options print their command too
    plain = tmp_path / "plain"
    plain.mkdir()
    changed = set()
    for name in SAMPLES:
        bundle, words, line, _ = sample(name, bundles)
        folder = tmp_path / name
        folder.mkdir()
        (folder / "mlir-offload.toml").write_text(line + "\n")
        by_flag = dry_run(bundle, words, plain)
        assert by_flag == dry_run(bundle, [], folder), name
        if by_flag != dry_run(bundle, [], plain):
            changed.add(name)
    # Each option shows in the command (ROCm's folder only in a HIP link's); the sanitizer options in the
    # runtime object they pick.
    assert changed == set(SAMPLES) - {"rocm_path"}


# Options whose effect on a GPU executable is deterministic bytes (-G's debug cubin is not: docs/cli.md).
BYTES = ("cudart", "ptx", "ptx_beside", "serial_device_link", "cuda_path", "clang", "resource_usage")


def test_a_flag_its_key_and_its_keyword_link_the_same_executable(bundles, tmp_path, monkeypatch):
    from offload import api

    plain = tmp_path / "plain"
    plain.mkdir()
    monkeypatch.chdir(plain)  # the API's link: no mlir-offload.toml
    differ = set()
    for name in BYTES:
        bundle, words, line, value = sample(name, bundles)
        folder = tmp_path / name
        folder.mkdir()
        (folder / "mlir-offload.toml").write_text(line + "\n")
        by_flag, by_key, by_keyword = (folder / "flag", folder / "key", folder / "keyword")
        default = folder / "default"
        for words_given, output, where in (([], default, plain), (words, by_flag, plain), ([], by_key, folder)):
            done = run_cli("link", str(bundle), *words_given, "-o", str(output), cwd=where)
            assert done.returncode == 0, done.stderr
        keywords: dict[str, Any] = {name: value}
        api.link([bundle], by_keyword, **keywords)
        assert by_flag.read_bytes() == by_key.read_bytes() == by_keyword.read_bytes(), name
        if by_flag.read_bytes() != default.read_bytes():
            differ.add(name)
    assert {"cudart", "ptx", "ptx_beside"} <= differ  # static runtime, PTX in the fatbin


def refusals(bundle: Path, folder: Path, words: list[str] | None, line: str, keywords: dict) -> list[str]:
    """The one-line refusals of the command line (None: its words cannot spell the value), of the TOML
    file (through the command line), and of the API, each as its front end words it."""
    from offload import api
    from offload.errors import OffloadError

    found = []
    plain = folder / "plain"
    plain.mkdir(parents=True)
    if words is not None:
        done = run_cli("link", str(bundle), *words, "-o", str(folder / "app"), cwd=plain)
        assert done.returncode in (1, 2) and "Traceback" not in done.stderr, done.stderr
        found.append(done.stderr.strip().removesuffix(" (see 'mlir-offload link --help')"))
    (folder / "mlir-offload.toml").write_text(line + "\n")
    done = run_cli("link", str(bundle), "-o", str(folder / "app"), cwd=folder)
    assert done.returncode in (1, 2) and "Traceback" not in done.stderr, done.stderr
    found.append(done.stderr.strip().removesuffix(" (see 'mlir-offload link --help')"))
    os.chdir(plain)
    with pytest.raises(OffloadError) as failure:
        api.link([bundle], folder / "app", **keywords)
    found.append(failure.value.render())
    assert not (folder / "app").exists()
    return found


def test_a_bad_value_is_the_same_refusal_in_each_front_ends_words(bundles, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    expects = {  # a value of the wrong kind: the kind's check, the same words after the option's spelling
        "cudart": (
            ["--cudart", "dynamic"],
            "dynamic",
            ' expects one of "shared", "static", "none", got string "dynamic"',
        ),
        "sanitize": (
            ["--sanitize=bogus"],
            "bogus",
            ' expects "all", "default" or a comma-separated list of memcheck, ',
        ),
    }
    for name, (words, value, tail) in expects.items():
        key = name.replace("_", "-")
        cli, file, python = refusals(bundles["bitcode"], tmp_path / name, words, f'{key} = "{value}"', {name: value})
        flag = SPECS[name].flags[0]
        assert cli.startswith(f"mlir-offload: error: {flag}{tail}"), cli
        assert file.startswith(f"{tmp_path / name / 'mlir-offload.toml'}:1:1: error: key '{key}'{tail}"), file
        assert python.startswith(f"mlir-offload: error: link(): {name}{tail}"), python
    for name, spec in SPECS.items():  # a switch's and a path's wrong type: the file and the API alone
        if not spec.api or spec.kind not in (specs.SWITCH, specs.TEXT, specs.PATH, specs.PATHS):
            continue
        key = name.replace("_", "-")
        [file, python] = refusals(bundles["bitcode"], tmp_path / f"type-{name}", None, f"{key} = 7", {name: 7})
        tail = f" expects {what(spec.kind)}, got integer 7"
        assert file == f"{tmp_path / f'type-{name}' / 'mlir-offload.toml'}:1:1: error: key '{key}'{tail}", file
        assert python == f"mlir-offload: error: link(): {name}{tail}", python


def what(kind) -> str:
    try:
        kind.check(7)
    except TypeError as e:
        return e.args[0]
    raise AssertionError("7 passed")


def test_a_refused_value_or_combination_names_the_option_as_it_was_given(bundles, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    missing = str(tmp_path / "no-such")

    def toml_of(case: str) -> str:
        return str(tmp_path / case / "mlir-offload.toml")

    # A value the link refuses (no such clang, no toolkit there).
    for name, tail in (("clang", ": not found or not a clang"), ("cuda_path", ": no CUDA toolkit there (no bin/)")):
        flag, key = SPECS[name].flags[0], name.replace("_", "-")
        cli, file, python = refusals(
            bundles["bitcode"], tmp_path / name, [flag, missing], f'{key} = "{missing}"', {name: missing}
        )
        assert cli == f"mlir-offload: error: {flag} {missing}{tail}"
        assert file == f'mlir-offload: error: {key} = "{missing}" ({toml_of(name)}:1){tail}'
        assert python == f"mlir-offload: error: {name}={missing}{tail}"
    # Options that do not combine: --sanitize without --emulate, a GPU executable's option with it.
    cli, file, python = refusals(
        bundles["bitcode"], tmp_path / "sanitize", ["--sanitize"], 'sanitize = "all"', {"sanitize": "all"}
    )
    tail = " runs its checks in the CPU emulator: add "
    assert cli == f"mlir-offload: error: --sanitize{tail}--emulate"
    assert file == f"mlir-offload: error: sanitize ({toml_of('sanitize')}:1){tail}--emulate"
    assert python == f"mlir-offload: error: link(): sanitize{tail}emulate=True"
    for name in GPU_ONLY:
        words, line, value = SAMPLES[name]
        case = f"emulate-{name}"
        cli, file, python = refusals(
            bundles["bitcode"],
            tmp_path / case,
            ["--emulate", *words],
            f"emulate = true\n{line}",
            {"emulate": True, name: value},
        )
        flag = SPECS[name].flags[0]
        tail = " is for a GPU executable, not with "
        assert cli == f"mlir-offload: error: {flag}{tail}--emulate", cli
        assert file == (
            f"mlir-offload: error: {name.replace('_', '-')} ({toml_of(case)}:2){tail}emulate = true ({toml_of(case)}:1)"
        ), file
        assert python == f"mlir-offload: error: link(): {name}{tail}emulate=True", python


@pytest.mark.fast
def test_link_words_of_the_api_are_refused_with_the_keyword(tmp_path):
    from offload import api
    from offload.errors import OffloadError

    for flags, keyword in ((["--cudart=static"], "cudart=..."), (["-G"], "device_debug=True")):
        with pytest.raises(OffloadError) as failure:
            api.link([str(tmp_path / "b.bc")], tmp_path / "app", flags=flags)
        assert failure.value.message == (
            f"link(): flags go to clang unchanged, and {flags[0]} is link's own: pass {keyword}"
        )
