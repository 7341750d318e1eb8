import os

from offload import interrupts

try:
    interrupts.install()  # first: a signal while the rest loads is handled as later ones are
    from offload.cli import run
except BaseException:
    if interrupts.received is None:
        raise
    interrupts.stop_raising()  # an import the interrupt cut short (a RuntimeError may wrap it): the exit says so
    os._exit(interrupts.exit_status(1))

run()
