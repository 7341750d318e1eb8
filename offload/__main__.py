from offload import interrupts

interrupts.install()  # first: a signal while the rest loads is handled as later ones are

from offload.cli import run  # noqa: E402

run()
