"""link -save-temps: clang keeps its intermediate files (host object and assembly, each device image's
LTO stages, the fatbin), named after the -o it was given. link hands clang a hidden temporary output
(renamed over the executable when the link succeeds), so those files are renamed after the executable
itself, as a plain clang link would name them."""

from __future__ import annotations

import os

SAVE_TEMPS = "-save-temps"


def wants_temps(words) -> bool:
    """Whether the link's clang arguments ask clang to keep its intermediate files."""
    from offload.formats.clang_arguments import own_options

    return any(word == SAVE_TEMPS or word.startswith(SAVE_TEMPS + "=") for word in own_options(words))


def name_temps_after(temporary_output: str, final: str) -> list[str]:
    """Rename the files clang kept beside `temporary_output` (<temporary_output>.<rest>) to <final>.<rest>;
    the new names, sorted."""
    folder = os.path.dirname(temporary_output) or "."
    prefix = os.path.basename(temporary_output) + "."
    renamed = []
    for entry in sorted(os.listdir(folder)):
        if entry.startswith(prefix) and os.path.isfile(os.path.join(folder, entry)):
            target = os.path.join(os.path.dirname(final), os.path.basename(final) + "." + entry[len(prefix) :])
            os.replace(os.path.join(folder, entry), target)
            renamed.append(target)
    return renamed


__all__ = ["name_temps_after", "wants_temps"]
