from segue.cli import main

main()
