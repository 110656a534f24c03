"""Exceptions and error texts shared by every layer (pmErr, pmUsageErr, pmErrStr)."""
# Placeholder: completed by the constants/errors work. Other modules import pmErr from here.


class pmErr(Exception):
    def __init__(self, *args):
        super().__init__(*args)
        self.args = list(args)
        self.code = args[0] if args and isinstance(args[0], int) else 0

    def errno(self):
        return self.code
