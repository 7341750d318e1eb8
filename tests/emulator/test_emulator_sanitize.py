"""`run --emulate --sanitize` (docs/emulator.md, "Finding bugs: --sanitize"): our programs in
tests/data/sanitize run clean as written, with their output, and each planted bug is reported by one
line naming its check, the MLIR line of the op, kernel, block and thread, with exit status 1.

A program's header:
  // ARCHS: sm_80 gfx90a                  the archs it runs for
  // CHECK: text                          lines its output holds, in order
  // BUG NAME: what the bug is
  // BUG NAME FROM: text                  consecutive lines replaced (exactly once) by the TO lines
  // BUG NAME TO: text
  // BUG NAME REPORT: line                the first line on stderr; FILE is the program's name, @BUG the
                                          line of the first TO line, @MARK the line ending in `// @MARK`
  // BUG NAME FLAGS: --sanitize=...       run flags other than --sanitize (the default: every check)
  // BUG NAME ARCHS: sm_80                the archs the bug is planted for, if not all of the program's
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conftest import REPO, run_cli
from emulation import require_emulation

PROGRAMS = REPO / "tests" / "data" / "sanitize"
BUG_LINE = re.compile(r"// BUG (\w+)(?: (FROM|TO|REPORT|FLAGS|ARCHS))?: (.*)$")


@dataclass
class Bug:
    name: str
    what: str = ""
    source: list[str] = field(default_factory=list)
    target: list[str] = field(default_factory=list)
    report: str = ""
    flags: str = ""
    archs: tuple[str, ...] = ()


@dataclass(frozen=True)
class Program:
    path: Path
    archs: tuple[str, ...]
    checks: tuple[str, ...]
    bugs: tuple[Bug, ...]

    def body(self) -> str:
        return "\n".join(line for line in self.path.read_text().splitlines() if not line.startswith("// BUG")) + "\n"

    def with_bug(self, bug: Bug) -> tuple[str, str]:
        """(the source with the bug planted, the report line expected)."""
        body, source, target = self.body(), "\n".join(bug.source), "\n".join(bug.target)
        assert body.count(source) == 1, f"{self.path.name}: BUG {bug.name} FROM must occur once"
        planted = body.replace(source, target)
        lines = planted.splitlines()
        at = planted[: planted.index(target)].count("\n") + 1
        marks = {line.rsplit("// @", 1)[1].strip(): str(n) for n, line in enumerate(lines, 1) if "// @" in line}
        report = bug.report.replace("FILE", self.path.name).replace("@BUG", str(at))
        report = re.sub(r"@(\w+)", lambda found: marks[found.group(1)], report)
        return planted, report


def read_program(path: Path) -> Program:
    lines = path.read_text().splitlines()
    bugs: dict[str, Bug] = {}
    for line in lines:
        found = BUG_LINE.match(line)
        if not found:
            continue
        name, part, text = found.groups()
        bug = bugs.setdefault(name, Bug(name))
        if part is None:
            bug.what = text
        elif part == "FROM":
            bug.source.append(text)
        elif part == "TO":
            bug.target.append(text)
        elif part == "REPORT":
            bug.report = text
        elif part == "ARCHS":
            bug.archs = tuple(text.split())
        else:
            bug.flags = text
    archs = tuple(" ".join(line[len("// ARCHS: ") :] for line in lines if line.startswith("// ARCHS: ")).split())
    checks = tuple(line[len("// CHECK: ") :] for line in lines if line.startswith("// CHECK: "))
    return Program(path, archs, checks, tuple(bugs.values()))


ALL = [read_program(path) for path in sorted(PROGRAMS.glob("*.mlir"))]
CLEAN = [pytest.param(p, arch, id=f"{p.path.stem}-{arch}") for p in ALL for arch in p.archs]
BUGS = [
    pytest.param(p, bug, arch, id=f"{p.path.stem}-{bug.name}-{arch}")
    for p in ALL
    for bug in p.bugs
    for arch in p.archs
    if not bug.archs or arch in bug.archs
]


def sanitized_run(folder: Path, name: str, source: str, arch: str, *flags: str):
    require_emulation()
    (folder / name).write_text(source)
    return run_cli("run", name, "--offload-arch", arch, "--emulate", *(flags or ("--sanitize",)), cwd=folder)


def assert_output_holds(output: str, checks: tuple[str, ...]) -> None:
    at = 0
    for check in checks:
        found = output.find(check, at)
        assert found >= 0, f"{check!r} not in the output after offset {at}:\n{output}"
        at = found + len(check)


def test_every_program_plants_bugs_with_reports():
    assert {p.path.stem for p in ALL} >= {"global", "workgroup", "counter"}
    for program in ALL:
        assert program.archs and program.checks and program.bugs, program.path.name
        for bug in program.bugs:
            assert bug.what and bug.source and bug.target and bug.report, f"{program.path.name}: {bug.name}"
            program.with_bug(bug)


@pytest.mark.parametrize("program, arch", CLEAN)
def test_program_runs_clean(tmp_path, program, arch):
    done = sanitized_run(tmp_path, program.path.name, program.body(), arch)
    assert done.returncode == 0, done.stderr
    assert "error" not in done.stderr
    assert_output_holds(done.stdout, program.checks)


@pytest.mark.parametrize("program, bug, arch", BUGS)
def test_planted_bug_is_reported(tmp_path, program, bug, arch):
    source, report = program.with_bug(bug)
    done = sanitized_run(tmp_path, program.path.name, source, arch, *bug.flags.split())
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines()[0] == report, done.stderr


def program_named(stem: str) -> Program:
    return next(program for program in ALL if program.path.stem == stem)


def planted(program: Program, *names: str) -> str:
    """The program with several of its bugs planted."""
    source = program.body()
    for bug in program.bugs:
        if bug.name in names:
            source = source.replace("\n".join(bug.source), "\n".join(bug.target))
    return source


def test_keep_going_reports_each_error_once_and_finishes(tmp_path):
    program = program_named("global")
    expected = [program.with_bug(bug)[1] for bug in program.bugs if bug.name in ("negative", "padding")]
    source = planted(program, "negative", "padding")
    done = sanitized_run(tmp_path, "global.mlir", source, "sm_80", "--sanitize", "--sanitize-keep-going")
    assert done.returncode == 1, done.stderr
    assert sorted(done.stderr.splitlines()) == sorted(expected)  # each once, though blocks and threads repeat
    assert "sum: " in done.stdout  # the program ran to its end


def test_a_list_of_checks_runs_those_only(tmp_path):
    program = program_named("global")
    (leak,) = [bug for bug in program.bugs if bug.name == "leak"]
    source, report = program.with_bug(leak)
    done = sanitized_run(tmp_path, "global.mlir", source, "sm_80", "--sanitize=memcheck,initcheck")
    assert done.returncode == 0 and "error" not in done.stderr, done.stderr
    # leakcheck is asked for by name or `all`: a bare --sanitize runs the other four (docs/emulator.md).
    done = sanitized_run(tmp_path, "global.mlir", source, "sm_80", "--sanitize")
    assert done.returncode == 0 and "error" not in done.stderr, done.stderr
    (tmp_path / "mlir-offload.toml").write_text('sanitize = ["leakcheck"]\n')
    done = run_cli("run", "global.mlir", "--offload-arch", "sm_80", "--emulate", cwd=tmp_path)
    assert done.returncode == 1 and done.stderr.splitlines() == [report], done.stderr


def test_plain_emulation_does_not_see_an_overrun_into_padding(tmp_path):
    program = program_named("global")
    (padding,) = [bug for bug in program.bugs if bug.name == "padding"]
    source, _ = program.with_bug(padding)
    require_emulation()
    (tmp_path / "global.mlir").write_text(source)
    done = run_cli("run", "global.mlir", "--offload-arch", "sm_80", "--emulate", cwd=tmp_path)
    assert done.returncode == 0, done.stderr  # what --sanitize is for: guard pages miss it


def test_link_sanitize_of_a_plain_bundle_reports_without_mlir_lines(tmp_path):
    program = program_named("global")
    (padding,) = [bug for bug in program.bugs if bug.name == "padding"]
    source, report = program.with_bug(padding)
    (tmp_path / "global.mlir").write_text(source)
    require_emulation()
    done = run_cli("compile", "global.mlir", "--offload-arch", "sm_80", "--emulate", "-o", "g.bc", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    done = run_cli("link", "g.bc", "--emulate", "--sanitize=memcheck", "-o", "app", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    ran = subprocess.run([str(tmp_path / "app")], capture_output=True, text=True)
    assert ran.returncode == 1
    # No line information in the bundle: the line names the emulator instead of the .mlir line, and the
    # buffer without the line of its gpu.alloc.
    plain = re.sub(r", allocated at [^,)]*", "", report[report.index(": error:") :])
    assert ran.stderr.splitlines() == ["mlir-offload emulator" + plain]


def test_sanitize_needs_emulate(tmp_path):
    (tmp_path / "global.mlir").write_text(program_named("global").body())
    done = run_cli("compile", "global.mlir", "--offload-arch", "sm_80", "--sanitize", "-o", "g.bc", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.strip() == "mlir-offload: error: --sanitize runs its checks in the CPU emulator: add --emulate"
    done = run_cli("link", "g.bc", "--sanitize", "-o", "app", cwd=tmp_path)
    assert done.returncode == 2 and "--sanitize runs its checks in the CPU emulator" in done.stderr
    done = run_cli("compile", "global.mlir", "--offload-arch", "sm_80", "--emulate", "--sanitize=memcheck,bounds")
    assert done.returncode != 0 and "memcheck, racecheck, initcheck, synccheck, leakcheck" in done.stderr


def test_api_compile_records_the_checks(tmp_path):
    from offload import api
    from offload.packager.bundle import read_bundle_record

    (tmp_path / "global.mlir").write_text(program_named("global").body())
    require_emulation()
    bundle = api.compile_file(
        tmp_path / "global.mlir", "sm_80", emulate=True, sanitize="racecheck,memcheck", sanitize_keep_going=True
    )
    path = bundle.write(tmp_path / "g.bc")
    record, _ = read_bundle_record(path.read_bytes(), str(path))
    assert record.sanitize == ("memcheck", "racecheck") and record.sanitize_keep_going


EXAMPLES = sorted((REPO / "examples").glob("*.mlir"))


@pytest.mark.parametrize("example", EXAMPLES, ids=[path.stem for path in EXAMPLES])
def test_every_example_runs_clean_with_its_output(example):
    require_emulation()
    plain = run_cli("run", str(example), "--offload-arch", "sm_80", "--emulate")
    checked = run_cli("run", str(example), "--offload-arch", "sm_80", "--emulate", "--sanitize")
    assert plain.returncode == 0, plain.stderr
    assert checked.returncode == 0 and "error" not in checked.stderr, checked.stderr
    assert checked.stdout == plain.stdout


def test_the_docs_table_quotes_the_reports_these_programs_give():
    """docs/emulator.md's table of bug classes: each report line quoted there is one these tests require."""
    reports = {program.with_bug(bug)[1] for program in ALL for bug in program.bugs}
    section = (REPO / "docs" / "emulator.md").read_text().split("## Finding bugs: `--sanitize`")[1].split("\n## ")[0]
    rows = [row for row in section.splitlines() if row.startswith("| ") and ": error: " in row]
    quoted = [row.rsplit("| `", 1)[1].removesuffix("` |") for row in rows]
    assert len(quoted) >= 15
    assert [line for line in quoted if line not in reports] == []


def test_synccheck_explains_the_gfx90a_all_reduce_gap():
    """MLIR 22's ROCDL shuffle of width 3 (docs/emulator.md, known gap) reads a lane outside the
    reduction, which waits at the barrier after it: a real hazard, reported at the all_reduce."""
    require_emulation()
    program = REPO / "tests" / "data" / "emulate" / "all_reduce.mlir"
    done = run_cli("run", str(program), "--offload-arch", "gfx90a", "--emulate", "--sanitize=synccheck")
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines()[0] == (
        "all_reduce.mlir:33:14: error: synccheck: inactive source lane in kernel 'reduce', block (0,0,0), "
        "thread (2,0,0): it reads thread (3,0,0), which waits at a barrier"
    )
    clean = run_cli("run", str(program), "--offload-arch", "sm_80", "--emulate", "--sanitize=synccheck")
    assert clean.returncode == 0 and "error" not in clean.stderr, clean.stderr
