"""Command `compile`: an MLIR GPU program -> one self-contained host bundle for clang's offload driver."""

from __future__ import annotations

import click

from offload.driver.program import compile_parameters, compile_program
from offload.options import ClangStyleCommand

COMPILE_EXAMPLES = """\b
Examples:
  mlir-offload compile saxpy.mlir --offload-arch sm_80,sm_90       # -> saxpy.offload.bc
  mlir-offload compile saxpy.mlir --offload-arch 80,90a -o saxpy.offload.bc
  mlir-offload compile saxpy.mlir --offload-arch gfx90a -o saxpy.hip.bc
  mlir-offload compile saxpy.mlir --offload-arch sm_80 --portable   # -> saxpy.o + saxpy.o.sm_80.ptx
  mlir-offload compile saxpy.mlir --offload-arch sm_80 -MD -MP -o build/saxpy.offload.bc
  mlir-offload link saxpy.offload.bc -o saxpy
"""


@click.command("compile", cls=ClangStyleCommand, epilog=COMPILE_EXAMPLES)
@compile_parameters
def compile_command(input_path: str, output: str | None, textual: bool, verbose: bool, **flags) -> None:
    """Compile IN.mlir into one self-contained host bundle for `clang --offload-new-driver`."""
    compile_program(input_path, output, textual, verbose, flags)


COMMAND = compile_command
