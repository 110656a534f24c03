"""Derived metrics as libpcp 6.0.3 has them: the expression language (lexer, parser),
the global registry and its configuration files, binding and type inference in each
context, and evaluation over each fetch."""
