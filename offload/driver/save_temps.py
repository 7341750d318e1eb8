"""compile -save-temps[=cwd|obj]: every stage's output kept as a file, as clang's -save-temps keeps its
intermediate files: <input stem>.<N>-<stage>[.<arch>].<ext>, where N orders the files as the stages ran
(`ls` lists them in that order). Each file is written whole (temporary name, then rename) when its stage
ends, so the stages before a failure are kept."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

from offload.fsutil import STDIN, atomic_write
from offload.interrupts import temporary_folder

# The stages whose files -save-temps keeps, in the order they run.
STAGES = ("input", "device", "native", "host-lowered", "host")
FOLDER_MODES = ("cwd", "obj")
# The device skeleton's steps (offload/device/skeleton.py dump_stage), in the order they run: each arch's
# device LLVM IR before and after the libraries and the optimizer, kept as <stem>.1-device.<arch>.<i>-<step>.
DEVICE_STEPS = ("lowered", "linked", "user-linked", "libraries-linked", "optimized")


class SaveTemps:
    def __init__(self, mode: str, input_path: str, output: str):
        self.folder = os.path.dirname(output) or "." if mode == "obj" and output != "-" else "."
        name = "stdin" if input_path == STDIN else os.path.basename(str(input_path))
        self.stem = name[: -len(".mlir")] if name.endswith(".mlir") else os.path.splitext(name)[0] or name
        self.written: list[str] = []

    def path(self, stage: str, extension: str, arch: str | None = None) -> str:
        qualifier = f".{arch}" if arch else ""
        return os.path.join(self.folder, f"{self.stem}.{STAGES.index(stage)}-{stage}{qualifier}.{extension}")

    def keep(self, stage: str, data: bytes | str, extension: str, arch: str | None = None) -> None:
        path = self.path(stage, extension, arch)
        atomic_write(path, data.encode("utf-8") if isinstance(data, str) else data)
        self.written.append(path)

    @contextmanager
    def device_steps(self, options, program_path: str, targets) -> Iterator:
        """The compile options with the device skeleton dumping each step into a private folder (the image
        cache is skipped then: the steps must run); on leaving, success or failure, each step's file is kept
        as <stem>.1-device.<arch>.<i>-<step>[-<gpu.module>].<ext>, sorting before the arch's final .bc."""
        with temporary_folder("mlir-offload-steps-") as folder:
            try:
                yield replace(options, device_stage_folder=folder)
            finally:
                self._keep_steps(folder, program_path, targets)

    def _keep_steps(self, folder: str, program_path: str, targets) -> None:
        dumped_stem = os.path.splitext(os.path.basename(program_path))[0] or "stdin"
        for name in sorted(os.listdir(folder)):
            target = next((t for t in targets if name.startswith(f"{dumped_stem}.{t.arch}.")), None)
            if target is None:
                continue
            step, _, extension = name[len(f"{dumped_stem}.{target.arch}.") :].rpartition(".")
            known = "lowered" if step.startswith("lowered-") else step  # lowered-<gpu.module>
            if known not in DEVICE_STEPS:
                continue
            order = DEVICE_STEPS.index(known)
            path = self.path("device", extension, f"{target.arch}.{order}-{step}")
            with open(os.path.join(folder, name), "rb") as f:
                atomic_write(path, f.read())
            self.written.append(path)


def save_temps_for(mode: str | None, input_path: str, output: str) -> SaveTemps | None:
    return SaveTemps(mode, input_path, output) if mode else None


__all__ = ["FOLDER_MODES", "STAGES", "SaveTemps", "save_temps_for"]
