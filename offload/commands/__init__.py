"""Thin click commands: parse arguments, call the build or target side, report."""
