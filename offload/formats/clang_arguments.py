"""A link's arguments read as clang's driver reads them: an option that takes a separate argument keeps the
next word (`-Xcuda-ptxas -v`, `-Xlinker -o`, `-L DIR`), so that word is never taken for an input file or
for one of link's own flags. The spellings are data: offload/data/clang/separate-argument-options.txt."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from offload.data import read_data

OPTIONS_FILE = "clang/separate-argument-options.txt"
END_OF_OPTIONS = "--"  # clang: every word after it is an input


@lru_cache(maxsize=1)
def separate_argument_options() -> tuple[frozenset[str], tuple[str, ...]]:
    """(exact spellings, prefixes) of the clang options that take the next word as their argument."""
    exact, prefixes = set(), []
    for line in read_data(OPTIONS_FILE).splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.endswith("*"):
            prefixes.append(line[:-1])
        else:
            exact.add(line)
    return frozenset(exact), tuple(prefixes)


def takes_separate_argument(word: str) -> bool:
    """Whether clang reads the word after `word` as its argument."""
    exact, prefixes = separate_argument_options()
    return word in exact or any(word.startswith(prefix) for prefix in prefixes)


@dataclass(frozen=True)
class ClangArgument:
    """One unit of a clang command line: an input (option None), a flag, or an option with its argument."""

    words: tuple[str, ...]
    is_input: bool = False

    @property
    def option(self) -> str | None:
        return None if self.is_input else self.words[0]

    @property
    def value(self) -> str | None:
        """The separate argument of a two-word option."""
        return self.words[1] if len(self.words) == 2 else None


def parse(words) -> list[ClangArgument]:
    """`words` grouped as clang groups them; a separate-argument option at the very end stays alone
    (clang reports its missing argument)."""
    words = list(words)
    grouped: list[ClangArgument] = []
    index = 0
    while index < len(words):
        word = words[index]
        if word == END_OF_OPTIONS:
            grouped += [ClangArgument((word,))] + [ClangArgument((rest,), True) for rest in words[index + 1 :]]
            break
        if takes_separate_argument(word) and index + 1 < len(words):
            grouped.append(ClangArgument((word, words[index + 1])))
            index += 2
            continue
        grouped.append(ClangArgument((word,), not word.startswith("-") or word == "-"))
        index += 1
    return grouped


def input_files(words) -> list[str]:
    """The inputs among clang arguments (files, libraries named by path), in order."""
    return [argument.words[-1] for argument in parse(words) if argument.is_input]


def own_options(words) -> list[str]:
    """The words that are clang options of the command itself, not arguments forwarded to another tool
    or taken by an option (`-Xcuda-ptxas -O3` sets no host optimization level)."""
    return [argument.words[0] for argument in parse(words) if not argument.is_input]


def values_of(words, option: str) -> list[str]:
    """The separate arguments given to `option` (`-Xcuda-ptxas -v -Xcuda-ptxas -O3` -> ['-v', '-O3'])."""
    return [argument.value for argument in parse(words) if argument.option == option and argument.value is not None]


__all__ = [
    "ClangArgument",
    "input_files",
    "own_options",
    "parse",
    "separate_argument_options",
    "takes_separate_argument",
    "values_of",
]
