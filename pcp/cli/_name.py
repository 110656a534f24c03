"""What the program calls itself in usage, help and messages: a module of its own, so
that the package's --help (pcp.cli) and the option parser (pcp.cli._options) both take
it without importing each other or anything else."""

PROGRAM = "pcp-native"
