from offload.cli import main

main()
