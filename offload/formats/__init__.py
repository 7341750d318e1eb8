"""Formats both sides share: OffloadBinary, the bundle record, entry profiles, vendor and arch facts."""
