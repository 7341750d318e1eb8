from offload.cli import run

run()
