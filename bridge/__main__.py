from bridge.cli.commands import main

main()
