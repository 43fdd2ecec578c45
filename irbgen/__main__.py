"""`python -m irbgen` runs the command line."""

from irbgen.cli import main

main()
