from segue.cli.app import main

main()
