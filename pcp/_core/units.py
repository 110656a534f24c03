"""pmUnits as libpcp handles them: the ctypes struct and its 32-bit word, the six fields,
their text (pmUnitsStr, the struct's str()) and the parser of unit strings
(pmParseUnitsStr), with libpcp 6.0.3's results and errors."""
from __future__ import annotations

import ctypes
import math
import sys
from ctypes import ArgumentError, Structure, c_int, c_uint

from pcp._core.constants import (PM_CURRENT_A, PM_CURRENT_mA, PM_CURRENT_uA, PM_ERR_CONV,
                                 PM_POWER_W, PM_POWER_kW, PM_POWER_mW, PM_POWER_uW,
                                 PM_SPACE_BYTE, PM_TEMPERATURE_C, PM_TEMPERATURE_F,
                                 PM_TEMPERATURE_K, PM_TIME_HOUR, PM_TIME_SEC, PM_UNIT_CURRENT,
                                 PM_UNIT_POWER, PM_UNIT_TEMPERATURE, PM_UNIT_VOLTAGE,
                                 PM_VOLTAGE_V, PM_VOLTAGE_mV, PM_VOLTAGE_uV)
from pcp._core.errors import pmErr
from pcp._core.level import API_LEVEL

TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    from typing import Any, Dict, Tuple, Union

# The C bitfields are declared in opposite orders on the two byte orders so that the
# 32-bit word looks the same; ctypes follows the host compiler's rules, so the structs
# need the same switch as the C headers.
BITFIELDS_LTOR = sys.byteorder == "big"


def _unit_bitfields(scale_type: Any, low_byte: list) -> list:
    """pmUnits' C bitfields, most significant first (the dimensions, the scales, then the
    low byte); declared the other way round where the compiler allocates them from the
    low bits, so that the 32-bit word is the same on both byte orders."""
    fields = [("dimSpace", c_int, 4), ("dimTime", c_int, 4), ("dimCount", c_int, 4),
              ("scaleSpace", scale_type, 4), ("scaleTime", scale_type, 4),
              ("scaleCount", scale_type, 4)] + low_byte
    return fields if BITFIELDS_LTOR else fields[::-1]


class pmUnits(Structure):
    """Dimensions and scales of a metric (4-bit C bitfields), and at API level 7.2 the
    "extra units" in the low byte (temperature, voltage, current, power)."""

    # Below 7.2 all members are declared as signed ints, as in the reference; the C
    # header has scaleSpace/scaleTime unsigned, so string/conversion code must re-read
    # those two as unsigned (see pcp._libpcp.values). 7.2's binding declares the scales
    # unsigned and names the low byte extraUnit (signed, 5 bits) and extraScale
    # (unsigned, 3 bits).
    if API_LEVEL >= (7, 2):
        _fields_ = _unit_bitfields(c_uint, [("extraUnit", c_int, 5), ("extraScale", c_uint, 3)])

        def __init__(self, dimS: int = 0, dimT: int = 0, dimC: int = 0,
                     scaleS: int = 0, scaleT: int = 0, scaleC: int = 0,
                     extraU: int = 0, extraS: int = 0) -> None:
            self._set(dimS, dimT, dimC, scaleS, scaleT, scaleC)
            self.extraUnit = extraU
            self.extraScale = extraS
    else:
        _fields_ = _unit_bitfields(c_int, [("pad", c_int, 8)])

        def __init__(self, dimS: int = 0, dimT: int = 0, dimC: int = 0,
                     scaleS: int = 0, scaleT: int = 0, scaleC: int = 0) -> None:
            self._set(dimS, dimT, dimC, scaleS, scaleT, scaleC)
            self.pad = 0

    def _set(self, dimS: int, dimT: int, dimC: int, scaleS: int, scaleT: int,
             scaleC: int) -> None:
        Structure.__init__(self)
        self.dimSpace = dimS
        self.dimTime = dimT
        self.dimCount = dimC
        self.scaleSpace = scaleS
        self.scaleTime = scaleT
        self.scaleCount = scaleC

    def __int__(self) -> int:
        """The packed 32-bit word as a signed C int (below 7.2 without the pad bits)."""
        return units_to_int(self)

    def __str__(self) -> str:
        return pmUnitsStr(self)


def units_to_int(units: pmUnits) -> int:
    """Pack a pmUnits the way the reference's cpmapi.pmUnits_int does."""
    word = (((units.dimSpace & 0xF) << 28) | ((units.dimTime & 0xF) << 24)
            | ((units.dimCount & 0xF) << 20) | ((units.scaleSpace & 0xF) << 16)
            | ((units.scaleTime & 0xF) << 12) | ((units.scaleCount & 0xF) << 8))
    if API_LEVEL >= (7, 2):
        word |= ((units.extraUnit & 0x1F) << 3) | (units.extraScale & 0x7)
    # pmUnits_int hands the word back through a C "int", hence signed.
    return word - (1 << 32) if word & 0x80000000 else word


def units_from_int(word: int) -> pmUnits:
    """Build a pmUnits from a packed 32-bit word (layout of protocol.md 3.4).

    The low 8 bits are kept: in ``pad`` below API level 7.2, else as the extra units.
    """
    u = pmUnits()
    u.dimSpace = (word >> 28) & 0xF
    u.dimTime = (word >> 24) & 0xF
    u.dimCount = (word >> 20) & 0xF
    u.scaleSpace = (word >> 16) & 0xF
    u.scaleTime = (word >> 12) & 0xF
    u.scaleCount = (word >> 8) & 0xF
    if API_LEVEL >= (7, 2):
        u.extraUnit = (word >> 3) & 0x1F
        u.extraScale = word & 0x7
    else:
        u.pad = word & 0xFF
    return u



# ---------------------------------------------------------------------------
# pmConvScale

def unit_fields(units: Union[pmUnits, int]) -> Tuple[int, int, int, int, int, int]:
    """(dimSpace, dimTime, dimCount, scaleSpace, scaleTime, scaleCount).

    The dimensions and scaleCount are signed 4-bit, scaleSpace/scaleTime
    unsigned 4-bit, as libpcp sees them (the ctypes declaration reads all
    six as signed).
    """
    if isinstance(units, int):
        units = units_from_int(units)
    elif isinstance(units, ctypes._Pointer):
        units = units.contents
    count_scale = units.scaleCount
    if count_scale > 7:                 # 7.2's binding declares it unsigned; libpcp's is not
        count_scale -= 16
    return (units.dimSpace, units.dimTime, units.dimCount,
            units.scaleSpace & 0xF, units.scaleTime & 0xF, count_scale)


def extra_fields(units: Union[pmUnits, int]) -> Tuple[int, int]:
    """(extraUnit, extraScale): PCP 7.2's extra units, (0, 0) below API level 7.2 (the
    low byte is padding there)."""
    if API_LEVEL < (7, 2):
        return (0, 0)
    if isinstance(units, int):
        units = units_from_int(units)
    elif isinstance(units, ctypes._Pointer):
        units = units.contents
    return (units.extraUnit, units.extraScale)


# PCP 7.2's extra units: extraUnit -> (name, {extraScale: scale text}) (libpcp's
# extraunits.c); pmConvScale's factors between the scales are in pcp._libpcp.values
EXTRA_UNITS = {
    PM_UNIT_TEMPERATURE: ("temperature", {PM_TEMPERATURE_C: "C", PM_TEMPERATURE_F: "F",
                                          PM_TEMPERATURE_K: "K"}),
    PM_UNIT_VOLTAGE: ("voltage", {PM_VOLTAGE_V: "V", PM_VOLTAGE_mV: "mV", PM_VOLTAGE_uV: "uV"}),
    PM_UNIT_CURRENT: ("current", {PM_CURRENT_A: "A", PM_CURRENT_mA: "mA", PM_CURRENT_uA: "uA"}),
    PM_UNIT_POWER: ("power", {PM_POWER_kW: "kW", PM_POWER_W: "W", PM_POWER_mW: "mW",
                              PM_POWER_uW: "uW"}),
}


def _extra_units_str(extra_unit: int, extra_scale: int) -> str:
    """libpcp's text of an extra unit, e.g. "temperature (C)" (the unit either way up);
    written into a 20-byte buffer, so at most 19 characters."""
    known = EXTRA_UNITS.get(abs(extra_unit))
    if known is None:
        text = "extra-%d" % abs(extra_unit)
    else:
        name, scales = known
        text = "%s (%s)" % (name, scales.get(extra_scale, "scale-%d" % extra_scale))
    return text[:19]


# ---------------------------------------------------------------------------
# pmUnitsStr

_SPACE_NAMES = {0: "byte", 1: "Kbyte", 2: "Mbyte", 3: "Gbyte", 4: "Tbyte",
                5: "Pbyte", 6: "Ebyte", 7: "Zbyte", 8: "Ybyte"}
_TIME_NAMES = {0: "nanosec", 1: "microsec", 2: "millisec", 3: "sec",
               4: "min", 5: "hour"}


def pmUnitsStr(units: Union[pmUnits, int]) -> str:
    """Human readable units, e.g. "Kbyte / sec" or "count x 10^6"."""
    if not isinstance(units, (pmUnits, int, ctypes._Pointer)):
        raise ArgumentError("argument 1: TypeError: expected LP_pmUnits "
                            "instance instead of %s" % type(units).__name__)
    ds, dt, dc, ss, st, sc = unit_fields(units)
    eu, es = extra_fields(units)
    space = _SPACE_NAMES.get(ss, "space-%d" % ss) if ds else ""
    tname = _TIME_NAMES.get(st, "time-%d" % st) if dt else ""
    if dc:
        if sc == 0:
            count = "count"
        elif sc == 1:
            count = "count x 10"
        else:
            count = "count x 10^%d" % sc
    else:
        count = ""

    def power(name: str, dim: int) -> str:
        return name if dim == 1 else "%s^%d" % (name, dim)

    extra = _extra_units_str(eu, es) if eu else ""
    parts = [extra] if eu > 0 else []
    for name, dim in ((space, ds), (tname, dt), (count, dc)):
        if dim > 0:
            parts.append(power(name, dim))
    if ds < 0 or dt < 0 or dc < 0 or eu < 0:
        parts.append("/")
        if eu < 0:
            parts.append(extra)
        for name, dim in ((space, ds), (tname, dt), (count, dc)):
            if dim < 0:
                parts.append(power(name, -dim))
    if parts:
        return " ".join(parts)
    if API_LEVEL >= (7, 2):             # 7.x names the count it scales
        if sc == 1:
            return "count x 10"
        if sc != 0:
            return "count x 10^%d" % sc
        return ""
    # Dimensionless but scaled: a historical oddity kept by libpcp.
    if sc == 1:
        return "x 10"
    if sc != 0:
        return "x 10^%d" % sc
    return ""


# ---------------------------------------------------------------------------
# pmParseUnitsStr

def _kw(pairs: str) -> Tuple[Tuple[str, int], ...]:
    out = []
    for item in pairs.split(","):
        key, val = item.rsplit("=", 1)
        out.append((key.strip(), int(val)))
    return tuple(out)


# Keyword tables, in libpcp's matching order (first match wins, so longer
# spellings precede their prefixes, and "time-1" comes after "time-1x").
_TIME_KW = _kw(
    "nanoseconds=0,nanosecond=0,nanosec=0,ns=0,"
    "microseconds=1,microsecond=1,microsec=1,us=1,"
    "milliseconds=2,millisecond=2,millisec=2,ms=2,"
    "seconds=3,second=3,sec=3,s=3,minutes=4,minute=4,min=4,"
    "hours=5,hour=5,hr=5,h=5,time-0=0,"
    + ",".join("time-%d=%d" % (k, k) for k in range(2, 16)) + ",time-1=1")


def _space_kw() -> Tuple[Tuple[str, int], ...]:
    prefixes = [("K", "Kibi", "Kilo"), ("M", "Mebi", "Mega"),
                ("G", "Gibi", "Giga"), ("T", "Tebi", "Tera"),
                ("P", "Pebi", "Peta"), ("E", "Exbi", "Exa"),
                ("Z", "Zebi", "Zetta"), ("Y", "Yobi", "Yotta")]
    out = [("bytes", 0), ("byte", 0)]
    for scale, (p, iec, si) in enumerate(prefixes, start=1):
        for word in (p + "B", p + "iB", p + "bytes", p + "byte",
                     iec + "bytes", iec + "byte", si + "bytes", si + "byte"):
            out.append((word, scale))
    out.append(("space-0", 0))
    out.extend(("space-%d" % k, k) for k in range(2, 16))
    out.append(("space-1", 1))
    return tuple(out)


_SPACE_KW = _space_kw()
_COUNT_KW = tuple([("count x 10^%d" % k, k) for k in range(-8, 0)]
                  + [("count x 10^%d" % k, k) for k in range(2, 8)]
                  + [("count x 10", 1), ("counts", 0), ("count", 0)])
_EXP_KW = tuple([("^%d" % k, k) for k in range(-8, 1)]
                + [("^%d" % k, k) for k in range(2, 16)] + [("^1", 1)])

_C_SPACE = " \t\n\v\f\r"


_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


def _ascii_lower(s: str) -> str:
    return s.translate(_ASCII_LOWER)


class _UnitsPart:
    """Wide (non-bitfield) units accumulated while parsing one side."""

    __slots__ = ("dimSpace", "dimTime", "dimCount",
                 "scaleSpace", "scaleTime", "scaleCount", "extraUnit", "extraScale")

    def __init__(self) -> None:
        self.dimSpace = self.dimTime = self.dimCount = 0
        self.scaleSpace = self.scaleTime = self.scaleCount = 0
        self.extraUnit = self.extraScale = 0


def _parse_extra_units(text: str, pos: int, out: _UnitsPart) -> int:
    """libpcp 7.2's __pmParseExtraUnits: "name (scale)" of an extra unit at text[pos:]
    (any case), stored in `out`; the position after it and its trailing spaces, or `pos`
    when there is none. As libpcp, it reads the whole string, not just the part, and a
    name whose scale does not match leaves the cursor after "name (" for the next names."""
    cursor = pos
    for unit, (name, scales) in EXTRA_UNITS.items():
        if _ascii_lower(text[cursor:cursor + len(name)]) != name:
            continue
        cursor += len(name)
        if text[cursor:cursor + 2] != " (":
            continue
        cursor += 2
        for scale, label in scales.items():
            after = cursor + len(label)
            if _ascii_lower(text[cursor:after]) != label.lower() or after >= len(text):
                continue
            if text[after] == ")":
                out.extraUnit, out.extraScale = unit, scale
                after += 1
                while after < len(text) and text[after] in _C_SPACE:
                    after += 1
                return after
    return pos


class _ParseError(Exception):
    pass


def _strtod(text: str, pos: int, end: int) -> Tuple[float, int]:
    """C strtod() on text[pos:end]: (value, new position); raises on error.

    Decimal and hexadecimal literals are rounded correctly (as glibc does);
    overflow, and underflow to a tiny inexact result, set ERANGE in glibc,
    which libpcp's caller treats as an invalid literal.
    """
    global _STRTOD_RE
    if _STRTOD_RE is None:
        _STRTOD_RE = _compile_strtod()
    m = _STRTOD_RE.match(text, pos, end)
    if m is None:
        raise _ParseError("invalid floating point literal")
    lit = m.group(0)
    neg = lit.startswith("-")
    body = lit.lstrip("+-").lower()
    if body.startswith("inf"):
        value = math.inf
    elif body.startswith("nan"):
        value = math.nan
    else:
        from fractions import Fraction  # pylint: disable=import-outside-toplevel

        if body.startswith("0x"):
            mant, _, exp = body[2:].partition("p")
            whole, _, frac = mant.partition(".")
            exact = Fraction(int((whole + frac) or "0", 16), 16 ** len(frac))
            exact *= Fraction(2) ** int(exp or "0")
        else:
            exact = Fraction(body)
        try:
            value = float(exact)
        except OverflowError:
            raise _ParseError("invalid floating point literal") from None
        if exact and abs(exact) < Fraction(sys.float_info.min) and Fraction(value) != exact:
            raise _ParseError("invalid floating point literal")
    return (-value if neg else value), m.end()


def strtod_end(text: str) -> int:
    """Where C's strtod() stops reading `text` (leading white space skipped), 0 when it
    finds no number: e.g. "12", " -1.5e3", "inf" and "0x1p4" are read whole."""
    global _STRTOD_RE
    if _STRTOD_RE is None:
        _STRTOD_RE = _compile_strtod()
    pos = 0
    while pos < len(text) and text[pos] in _C_SPACE:
        pos += 1
    m = _STRTOD_RE.match(text, pos)
    return m.end() if m is not None else 0


def _compile_strtod():
    import re
    dec = r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
    hexa = (r"0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)"
            r"(?:[pP][+-]?[0-9]+)?")
    special = r"(?:[iI][nN][fF](?:[iI][nN][iI][tT][yY])?|[nN][aA][nN](?:\([0-9A-Za-z_]*\))?)"
    return re.compile(r"[+-]?(?:%s|%s|%s)" % (hexa, dec, special))


_STRTOD_RE: Any = None      # compiled when a units string is first parsed


def _parse_part(text: str, start: int, end: int) -> Tuple[_UnitsPart, float]:
    out = _UnitsPart()
    mult = 1.0
    pos = start
    extras = 0                          # extra units seen (API level 7.2)

    def skip_keyword(kw: str) -> bool:
        nonlocal pos
        n = len(kw)
        # strncasecmp in the C locale: ASCII-only case folding
        if pos + n > end or _ascii_lower(text[pos:pos + n]) != kw.lower():
            return False
        after = pos + n
        if after == end or text[after] in _C_SPACE or text[after] == "^":
            pos = after
            return True
        return False

    while pos != end:
        ch = text[pos]
        if ch in _C_SPACE:
            pos += 1
            continue
        token = pos
        if API_LEVEL >= (7, 2):
            after = _parse_extra_units(text, pos, out)
            if after != pos:
                if extras:
                    raise _ParseError("multiple extra units not allowed")
                extras += 1
                pos = after
            while pos <= end and pos < len(text) and text[pos] in _C_SPACE:
                pos += 1
            if pos >= end:
                break
            ch = text[pos]
        if ch == "-" or ch == "." or "0" <= ch <= "9":
            value, pos = _strtod(text, pos, end)
            mult *= value
            continue
        dim = None
        if out.dimTime == 0:
            for kw, scale in _TIME_KW:
                if skip_keyword(kw):
                    out.scaleTime = scale
                    dim = "Time"
                    break
        if dim is None and out.dimSpace == 0:
            for kw, scale in _SPACE_KW:
                if skip_keyword(kw):
                    out.scaleSpace = scale
                    dim = "Space"
                    break
        if dim is None and out.dimCount == 0:
            for kw, scale in _COUNT_KW:
                if skip_keyword(kw):
                    out.scaleCount = scale
                    dim = "Count"
                    break
        if dim is None:
            if extras and pos != token:
                continue                # after an extra unit: on with the next word
            # (libpcp 7.2 loops for ever on an unknown word after an extra unit: refused)
            raise _ParseError("unrecognized or duplicate base unit")
        if pos == end or text[pos] in _C_SPACE:
            setattr(out, "dim" + dim, 1)
        else:
            for kw, power in _EXP_KW:
                if skip_keyword(kw):
                    setattr(out, "dim" + dim, power)
                    break
    return out, mult


_TIME_SCALE_SECONDS = (0.000000001, 0.000001, 0.001, 1.0, 60.0, 3600.0)


def parse_units_str(string: str) -> Tuple[pmUnits, float]:
    """Parse "N units / M units"; returns (pmUnits, multiplier).

    Raises pmErr(PM_ERR_CONV, message) on errors, with libpcp's messages.
    """
    slash = string.find("/")
    try:
        if slash < 0:
            top, top_mult = _parse_part(string, 0, len(string))
            bottom, bottom_mult = _UnitsPart(), 1.0
        else:
            top, top_mult = _parse_part(string, 0, slash)
            bottom, bottom_mult = _parse_part(string, slash + 1, len(string))
    except _ParseError as exc:
        raise pmErr(PM_ERR_CONV, str(exc)) from None

    result = pmUnits()
    for name in ("Space", "Time", "Count"):
        dim = getattr(top, "dim" + name) - getattr(bottom, "dim" + name)
        if not -8 <= dim <= 7:      # would not survive the 4-bit bitfield
            raise pmErr(PM_ERR_CONV, "%s dimension out of bounds"
                        % name.lower())
        setattr(result, "dim" + name, dim)

    # Note the reciprocal: the multiplier converts *to* the parsed units.
    mult = bottom_mult / top_mult

    if top.dimSpace == 0 and bottom.dimSpace != 0:
        result.scaleSpace = bottom.scaleSpace
    elif bottom.dimSpace == 0 and top.dimSpace != 0:
        result.scaleSpace = top.scaleSpace
    else:
        result.scaleSpace = PM_SPACE_BYTE
        mult *= math.pow(math.pow(1024.0, float(top.scaleSpace)),
                         -float(top.dimSpace))
        mult *= math.pow(math.pow(1024.0, float(bottom.scaleSpace)),
                         float(bottom.dimSpace))
        if result.dimSpace == 0:
            result.scaleSpace = 0

    if top.dimCount == 0 and bottom.dimCount != 0:
        result.scaleCount = bottom.scaleCount
    elif bottom.dimCount == 0 and top.dimCount != 0:
        result.scaleCount = top.scaleCount
    else:
        result.scaleCount = 0
        mult *= math.pow(math.pow(10.0, float(top.scaleCount)),
                         -float(top.dimCount))
        mult *= math.pow(math.pow(10.0, float(bottom.scaleCount)),
                         float(bottom.dimCount))
        if result.dimCount == 0:
            result.scaleCount = 0

    if top.dimTime == 0 and bottom.dimTime != 0:
        result.scaleTime = bottom.scaleTime
    elif bottom.dimTime == 0 and top.dimTime != 0:
        result.scaleTime = top.scaleTime
    else:
        result.scaleTime = PM_TIME_SEC
        if top.scaleTime > PM_TIME_HOUR or bottom.scaleTime > PM_TIME_HOUR:
            # libpcp asserts (aborting the process) on these inputs, e.g.
            # "time-7 / time-7"; we report a conversion error instead.
            raise pmErr(PM_ERR_CONV, "time scale out of bounds")
        mult *= math.pow(_TIME_SCALE_SECONDS[top.scaleTime],
                         -float(top.dimTime))
        mult *= math.pow(_TIME_SCALE_SECONDS[bottom.scaleTime],
                         float(bottom.dimTime))
        if result.dimTime == 0:
            result.scaleTime = 0
    if top.extraUnit and bottom.extraUnit:
        raise pmErr(PM_ERR_CONV, "extra units cannot appear in both dividend and divisor")
    if top.extraUnit:
        result.extraUnit, result.extraScale = top.extraUnit, top.extraScale
    elif bottom.extraUnit:
        result.extraUnit, result.extraScale = -bottom.extraUnit, bottom.extraScale
    return result, mult


def pmParseUnitsStr(string: Union[str, bytes]) -> Tuple[pmUnits, float]:
    """Reference-compatible wrapper: accepts str or bytes, else PM_ERR_CONV."""
    if not isinstance(string, (bytes, str)):
        raise pmErr(PM_ERR_CONV, str(string))
    # libpcp works on the UTF-8 bytes; a 1:1 latin-1 view of those bytes
    # keeps positions byte-exact and non-ASCII bytes can never match.
    if isinstance(string, str):
        string = string.encode("utf-8")
    string = string.decode("latin-1")
    nul = string.find("\0")
    if nul >= 0:
        string = string[:nul]       # C string semantics
    known = _PARSED.get(string)
    if known is not None:
        return units_from_int(known[0]), known[1]
    units, mult = parse_units_str(string)
    if len(_PARSED) < 256:
        _PARSED[string] = (units_to_int(units), mult)
    return units, mult


# strings pmParseUnitsStr has parsed: (packed units, multiplier); a tool parses the same
# few scales for every metric it reports
_PARSED: Dict[str, Tuple[int, float]] = {}
