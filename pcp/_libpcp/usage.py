"""pmUsageErr, the official binding's command line usage error, apart from the options
machinery (pcp._libpcp.options) that its message() prints with: pcp.pmapi names it at
import, and a program that parses no command line need not import that machinery."""
from __future__ import annotations

from pcp._core.errors import pmprintf

TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    from typing import Any


class pmUsageErr(Exception):
    """A command line usage error; message() prints its arguments and the usage text."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.args = list(args)  # type: ignore[assignment]

    def message(self) -> None:
        from pcp._libpcp.options import print_usage  # pylint: disable=import-outside-toplevel

        for item in self.args:
            pmprintf(str(item))
        return print_usage()
