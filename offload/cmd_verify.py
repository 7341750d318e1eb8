"""Commands of this module (filled in by its issue)."""

COMMANDS: list = []
