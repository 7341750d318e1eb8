"""compile -save-temps[=cwd|obj]: every stage's output kept as a file, as clang's -save-temps keeps its
intermediate files: <input stem>.<N>-<stage>[.<arch>].<ext>, where N orders the files as the stages ran
(`ls` lists them in that order). Each file is written whole (temporary name, then rename) when its stage
ends, so the stages before a failure are kept."""

from __future__ import annotations

import os

from offload.compiler.frontend import STDIN
from offload.fsutil import atomic_write

# The stages whose files -save-temps keeps, in the order they run.
STAGES = ("input", "device", "native", "host-lowered", "host")
FOLDER_MODES = ("cwd", "obj")


class SaveTemps:
    def __init__(self, mode: str, input_path: str, output: str):
        self.folder = os.path.dirname(output) or "." if mode == "obj" and output != "-" else "."
        name = "stdin" if input_path == STDIN else os.path.basename(str(input_path))
        self.stem = name[:-len(".mlir")] if name.endswith(".mlir") else os.path.splitext(name)[0] or name
        self.written: list[str] = []

    def path(self, stage: str, extension: str, arch: str | None = None) -> str:
        qualifier = f".{arch}" if arch else ""
        return os.path.join(self.folder, f"{self.stem}.{STAGES.index(stage)}-{stage}{qualifier}.{extension}")

    def keep(self, stage: str, data: bytes | str, extension: str, arch: str | None = None) -> None:
        path = self.path(stage, extension, arch)
        atomic_write(path, data.encode("utf-8") if isinstance(data, str) else data)
        self.written.append(path)


def save_temps_for(mode: str | None, input_path: str, output: str) -> SaveTemps | None:
    return SaveTemps(mode, input_path, output) if mode else None


__all__ = ["FOLDER_MODES", "STAGES", "SaveTemps", "save_temps_for"]
