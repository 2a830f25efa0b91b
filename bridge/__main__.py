from bridge.cli.main import main

main()
