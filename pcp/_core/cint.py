"""C integer conversions, written once: wrapping to a 32-bit int as the wire and ctypes
do, and the range checks (with CPython's exception texts) that the official ``cpmapi``
applies through PyArg_ParseTuple's "i", "l" and "L" codes."""
import operator

INT_MIN = -(1 << 31)
INT_MAX = (1 << 31) - 1
LONG_MIN = -(1 << 63)
LONG_MAX = (1 << 63) - 1


def wrap_int32(number: int) -> int:
    """The low 32 bits of ``number`` read as a signed C int (instance ids, label idents and
    error codes travel as int32; callers pass them signed or unsigned)."""
    number &= 0xFFFFFFFF
    return number - (1 << 32) if number & 0x80000000 else number


def c_int(value: int) -> int:
    """Like the "i" code: an integer that must fit a C int."""
    number = operator.index(value)
    if not LONG_MIN <= number <= LONG_MAX:
        # CPython reads the value as a C long before the int range check.
        raise OverflowError("Python int too large to convert to C long")
    if number > INT_MAX:
        raise OverflowError("signed integer is greater than maximum")
    if number < INT_MIN:
        raise OverflowError("signed integer is less than minimum")
    return number


def c_long(value: int) -> int:
    """Like the "l" code: an integer that must fit a C long (64 bits)."""
    number = operator.index(value)
    if not LONG_MIN <= number <= LONG_MAX:
        raise OverflowError("Python int too large to convert to C long")
    return number


def c_long_long(value: int) -> int:
    """Like the "L" code: an integer that must fit a C long long."""
    number = operator.index(value)
    if not LONG_MIN <= number <= LONG_MAX:
        raise OverflowError("int too big to convert")
    return number
