from segue.cli.entry import main

main()
