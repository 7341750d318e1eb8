"""The words of a command line before the commands read them: response files (@FILE, as clang and nvcc
expand them) and the flags the environment adds to every compile (MLIR_OFFLOAD_PREPEND_FLAGS and
MLIR_OFFLOAD_APPEND_FLAGS, as nvcc's NVCC_PREPEND_FLAGS/NVCC_APPEND_FLAGS)."""

from __future__ import annotations

import os
import shlex

from offload.errors import OffloadError

# Response files in response files: as deep as this, then an error (a file naming itself would loop).
RESPONSE_FILE_DEPTH = 16
# Words a command line may expand to: response files naming each other many times over would grow it
# exponentially (10 files naming the next ten times: a million words).
EXPANDED_WORDS_LIMIT = 100_000
# The commands that take compile options, which the environment's flags are for.
COMPILING_COMMANDS = ("compile", "device", "run")
PREPEND_VARIABLE = "MLIR_OFFLOAD_PREPEND_FLAGS"
APPEND_VARIABLE = "MLIR_OFFLOAD_APPEND_FLAGS"


def expand_response_files(words: list[str], depth: int = 0, read: dict[str, list[str]] | None = None) -> list[str]:
    """Each `@FILE` replaced by the words of FILE (shell quoting, as clang's GNU tokenizer), up to `--`;
    an @word naming no file stays as written (clang's rule). `read`: each file's words, read once."""
    read = {} if read is None else read
    expanded: list[str] = []
    for at, word in enumerate(words):
        if len(expanded) > EXPANDED_WORDS_LIMIT:
            raise OffloadError(
                f"the response files expand to more than {EXPANDED_WORDS_LIMIT} words (do they name each other?)"
            )
        if word == "--":
            return expanded + words[at:]
        if not word.startswith("@") or len(word) == 1 or not os.path.isfile(word[1:]):
            expanded.append(word)
            continue
        if depth >= RESPONSE_FILE_DEPTH:
            raise OffloadError(
                f"response file '{word[1:]}': response files nest deeper than {RESPONSE_FILE_DEPTH} (one names itself?)"
            )
        if word not in read:
            try:
                with open(word[1:], encoding="utf-8") as f:
                    text = f.read()
            except (OSError, UnicodeDecodeError) as e:
                raise OffloadError(
                    f"cannot read response file '{word[1:]}': {getattr(e, 'strerror', None) or e}"
                ) from None
            read[word] = split_words(text, f"response file '{word[1:]}'")
        expanded += expand_response_files(read[word], depth + 1, read)
    return expanded


def with_environment_flags(words: list[str]) -> list[str]:
    """A compiling command's words with MLIR_OFFLOAD_PREPEND_FLAGS after the command's name and
    MLIR_OFFLOAD_APPEND_FLAGS at the end of its options (before a run's `--`)."""
    if not words or words[0] not in COMPILING_COMMANDS:
        return words
    before = split_words(os.environ.get(PREPEND_VARIABLE, ""), PREPEND_VARIABLE)
    after = split_words(os.environ.get(APPEND_VARIABLE, ""), APPEND_VARIABLE)
    end = words.index("--") if "--" in words else len(words)
    return [words[0], *before, *words[1:end], *after, *words[end:]]


def split_words(text: str, origin: str) -> list[str]:
    try:
        return shlex.split(text, comments=False, posix=True)
    except ValueError as e:
        raise OffloadError(f"{origin}: {e} (quote as a shell does)") from None
