"""What a failed (or warning) clang offload link printed, told in the user's terms: the lines that name
the cause (undefined symbol, multiple definition, ptxas message, missing library) instead of only
`clang-linker-wrapper: error: 'ld' failed`, with clang's temporary objects named by their bundle."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from offload.errors import FLAG, Part, worded
from offload.options.compile import compile_option

# Lines that only say that a step failed, never why.
_CONSEQUENCES = (
    "linker command failed",
    "' failed",
    "collect2:",
    "use -v to see invocation",
    "ld returned",
    "failed with exit code",
)
_CAUSES = (
    "undefined reference to",
    "multiple definition of",
    "cannot find -l",
    "cannot find ",
    "ptxas",
    "nvlink",
    "undefined symbol",
    "duplicate symbol",
    "no such file or directory",
    "error:",
    "fatal",
)
# clang compiles input <stem>.bc to a temporary <TMP>/<stem>-XXXXXX.o before ld sees it.
_TEMPORARY = re.compile(r"(?:[^\s:'`]*/)?(?P<stem>[^/\s:'`]+)-[0-9a-zA-Z]{6}\.o")
_QUOTED = re.compile(r"[`'](?P<name>[^`']+)'")
# nvlink's device-link message, e.g. `nvlink error   : Undefined reference to 'scale' in '/tmp/x.cubin'`.
_DEVICE_UNDEFINED = re.compile(r"^nvlink error\s*: Undefined reference to '(?P<name>[^']+)'")
STUB_PREFIX = "__device_stub__"
ENTRY_POINT = "main"
SUMMARY_LIMIT = 900  # characters of the one line a failed link prints


@dataclass
class LinkReport:
    causes: list[str] = field(default_factory=list)  # clang's lines naming the cause, temporaries renamed
    duplicates: dict[str, list[str]] = field(default_factory=dict)  # symbol -> inputs defining it
    undefined: dict[str, list[str]] = field(default_factory=dict)  # symbol -> inputs referencing it
    missing_libraries: list[str] = field(default_factory=list)
    undefined_device: list[str] = field(default_factory=list)  # device functions nvlink found no definition of
    restated: list[str] = field(default_factory=list)  # causes failure_summary tells in its own words


def warnings(text: str) -> list[str]:
    """clang's warning lines (passed through when the link succeeds)."""
    return [line for line in text.splitlines() if "warning:" in line]


def _owner_names(inputs: list[str]) -> dict[str, str]:
    """Temporary-object stem -> the input it came from. clang names the temporary after the input's name up
    to its first dot (`app.offload.bc` -> `app-XXXXXX.o`); the name less its last suffix is kept too."""
    owners: dict[str, str] = {}
    for path in (i for i in inputs if not i.startswith("-")):
        name = os.path.basename(path)
        owners.setdefault(os.path.splitext(name)[0], path)
        owners.setdefault(name.split(".", 1)[0], path)
    return owners


def _rename_temporaries(line: str, owners: dict[str, str]) -> str:
    def owner(match: re.Match) -> str:
        return owners.get(match.group("stem"), match.group(0))

    return _TEMPORARY.sub(owner, line)


def _first_file(line: str, owners: dict[str, str]) -> str | None:
    """The first input file named in `line` (a bundle, an object or an archive)."""
    for word in re.split(r"[\s:;]+", line):
        if word in owners.values() or word.endswith((".o", ".a", ".bc", ".so")):
            return word
    return None


def read_report(text: str, inputs: list[str]) -> LinkReport:
    """The causes in clang's stderr `text` for a link of `inputs` (the user's link arguments)."""
    owners = _owner_names(inputs)
    report = LinkReport()
    referrer = None
    for raw in text.splitlines():
        line = _rename_temporaries(raw.strip(), owners)
        if not line or any(c in line for c in _CONSEQUENCES):
            continue
        if ": in function " in line:
            referrer = _first_file(line.split(": in function ")[0].split(": ", 1)[-1], owners)
            continue
        lowered = line.lower()
        if not any(c in lowered for c in _CAUSES):
            continue
        report.causes.append(line)
        names = _QUOTED.findall(line)
        if "multiple definition of" in line and names:
            report.restated.append(line)
            symbol = names[0]
            where = [
                f for f in (referrer, _first_file(line.split("first defined here")[0].split(";")[-1], owners)) if f
            ]
            report.duplicates.setdefault(symbol, [])
            for f in where:
                if f not in report.duplicates[symbol]:
                    report.duplicates[symbol].append(f)
        elif found := _DEVICE_UNDEFINED.match(line):
            report.restated.append(line)
            if found["name"] not in report.undefined_device:
                report.undefined_device.append(found["name"])
        elif ("undefined reference to" in line or "undefined symbol" in line) and names:
            report.restated.append(line)
            users = report.undefined.setdefault(names[-1], [])
            if referrer and referrer not in users:
                users.append(referrer)
        elif "cannot find -l" in line:
            report.restated.append(line)
            report.missing_libraries.append(line.split("cannot find ", 1)[1].split(":")[0])
    if not report.causes:  # an unknown message: every line but the consequences
        report.causes = [
            line
            for line in (_rename_temporaries(raw.strip(), owners) for raw in text.splitlines())
            if line and not any(c in line for c in _CONSEQUENCES)
        ]
    return report


def failure_parts(report: LinkReport) -> tuple[Part, ...]:
    """One line: what went wrong and, where we know it, the fix; the options it advises are Mentions, which
    each front end words (a flag on the command line, a keyword in the API)."""
    sentences: list[tuple[Part, ...]] = []
    for symbol, where in report.duplicates.items():
        places = " and ".join(where) or "two inputs"
        if symbol.startswith(STUB_PREFIX):
            kernel = symbol[len(STUB_PREFIX) :]
            sentences.append(
                (
                    f"kernel '{kernel}' is defined by {places}: compile one of them with ",
                    compile_option("symbol_prefix", "NAME"),
                    " (every exported device symbol becomes NAME_<symbol>)",
                )
            )
        elif symbol == "main":
            sentences.append((f"'main' is defined by {places}: only one input may define func.func @main",))
        else:
            sentences.append((f"'{symbol}' is defined by {places}: rename it in one of them",))
    for symbol, users in report.undefined.items():
        if symbol == ENTRY_POINT:  # only the C start-up code refers to it: no input is to blame
            sentences.append(
                (
                    "no input defines 'main': link the object that defines it, "
                    "or define func.func @main in an MLIR program",
                )
            )
            continue
        sentences.append((f"undefined symbol '{symbol}'" + (f" referenced by {', '.join(users)}" if users else ""),))
    for symbol in report.undefined_device:
        sentences.append(
            (
                f"undefined device function '{symbol}': link the CUDA object that defines it (compiled with "
                "-fgpu-rdc --offload-new-driver), or compile the bundle with ",
                compile_option("link_bitcode", "FILE.bc"),
            )
        )
    for library in report.missing_libraries:
        sentences.append((f"library {library} not found: pass -L DIR",))
    if not sentences:
        sentences = [(cause,) for cause in report.causes[:3]]
    joined: list[Part] = []
    for sentence in sentences:
        joined += [" | ", *sentence] if joined else sentence
    return _clipped(tuple(joined), SUMMARY_LIMIT)


def failure_summary(report: LinkReport) -> str:
    """failure_parts as the command line words them."""
    return worded(failure_parts(report), FLAG)


def _clipped(parts: tuple[Part, ...], limit: int) -> tuple[Part, ...]:
    """The parts whose command-line wording fits in `limit` characters: the last text cut, an option never."""
    kept: list[Part] = []
    size = 0
    for part in parts:
        length = len(part if isinstance(part, str) else part.worded(FLAG))
        if size + length > limit:
            if isinstance(part, str):
                kept.append(part[: limit - size])
            break
        kept.append(part)
        size += length
    return tuple(kept)


__all__ = ["LinkReport", "failure_parts", "failure_summary", "read_report", "warnings"]
