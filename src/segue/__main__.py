import sys

if sys.argv[1:2] == ["hook"]:  # a CLI's hook, after each turn: straight to it, no typer app
    from segue.cli.hook import run_hook

    run_hook(sys.argv[2:])
else:
    from segue.cli.app import main

    main()
