"""libpcp 7.2's control options of derived metrics: "#control option=value[,...]" lines
of a configuration file and $PCP_DERIVED_CONTROL (do_control_options, setderivedcontrol
and getderivedcontrol of derive_parser.y). Used at API_LEVEL 7.2 only; before 7.2 a
"#control" line is a comment and the variable means nothing.

The options (PCP_DERIVED_* of pmapi.h, by ordinal from 1):

* global_limit: how many global derived metrics may be registered (-1, the default: no
  limit; the two anonymous event metrics are not counted);
* context_limit: the same for the per-context metrics of the current context (kept, not
  enforced: the Python binding has no pmAddDerived); libpcp needs a context with derived
  metrics for it, which neither $PCP_DERIVED_CONTROL nor the configuration loaded at the
  first context has (PM_ERR_NOCONTEXT);
* debug_syntax / debug_semantics / debug_eval: libpcp's "derive" debug flag with appl0 /
  appl1 / appl2 (pmDebug reports them; pcp-native prints none of libpcp's traces beyond
  this module's own "set" lines);
* option_novalue: an operand metric that is not found binds as novalue() (bind.py).

An option name may be abbreviated to any prefix, matched in that order, without regard
to case. Whatever the variable set cannot be changed by a file (PM_ERR_AGAIN). Problems
are reported on stderr directly (libpcp's fprintf, not pmprintf) and end the rest of
that list.
"""
from __future__ import annotations

import sys

from pcp._core.constants import PM_ERR_AGAIN, PM_ERR_ARG, PM_ERR_NAME, PM_ERR_NOCONTEXT
from pcp._core.errors import pmErrStr

TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    from typing import Any, Optional, Tuple

#: the option names, PCP_DERIVED_GLOBAL_LIMIT (1) first
OPTIONS = ("GLOBAL_LIMIT", "CONTEXT_LIMIT", "DEBUG_SYNTAX", "DEBUG_SEMANTICS", "DEBUG_EVAL",
           "OPTION_NOVALUE")
GLOBAL_LIMIT, CONTEXT_LIMIT, DEBUG_SYNTAX, DEBUG_SEMANTICS, DEBUG_EVAL, OPTION_NOVALUE = \
    range(1, len(OPTIONS) + 1)
#: who set an option: libpcp's OPT_NOTSET, OPT_SET_ENV, OPT_SET_APP
NOT_SET, SET_BY_ENV, SET_BY_APP = 0, 1, 2
#: the debug flag each debug option sets along with "derive"
_DEBUG_FLAG = {DEBUG_SYNTAX: "appl0", DEBUG_SEMANTICS: "appl1", DEBUG_EVAL: "appl2"}
#: libpcp's DM_UNLIMITED
UNLIMITED = -1


def _debug_enabled() -> set:
    # pcp._libpcp.options holds what pmSetDebug and -D set; not imported, nothing was
    # (not imported from here: options imports the registry, which imports this module)
    options = sys.modules.get("pcp._libpcp.options")
    return options.DEBUG_ENABLED if options is not None else set()


def derive_debug() -> bool:
    """pmDebugOptions.derive."""
    return "derive" in _debug_enabled()


def _stderr(text: str) -> None:
    sys.stderr.write(text)
    sys.stderr.flush()


def _strtol(text: bytes, start: int) -> Tuple[int, int]:
    """strtol(text + start, &end, 10) cast to int: (value, end); end == start when no
    digits were found."""
    i = start
    while i < len(text) and text[i] in b" \t\n\v\f\r":
        i += 1
    negative = i < len(text) and text[i] == ord("-")
    if i < len(text) and text[i] in b"+-":
        i += 1
    digits = i
    while i < len(text) and 48 <= text[i] <= 57:
        i += 1
    if i == digits:
        return 0, start
    value = int(text[digits:i]) * (-1 if negative else 1)
    value = max(-2 ** 63, min(value, 2 ** 63 - 1))     # strtol saturates a long
    value &= 0xFFFFFFFF                                 # then (int) keeps its low 32 bits
    return (value - (1 << 32) if value & 0x80000000 else value), i


def get_control(reg: Any, context: Any, what: int) -> Tuple[int, int]:
    """getderivedcontrol(): (0, value) or (error code, 0)."""
    if what == GLOBAL_LIMIT:
        return 0, reg.limit
    if what == CONTEXT_LIMIT:
        if context is None:
            return PM_ERR_NOCONTEXT, 0
        return 0, context.limit
    if what in _DEBUG_FLAG:
        enabled = _debug_enabled()
        return 0, int("derive" in enabled and _DEBUG_FLAG[what] in enabled)
    if what == OPTION_NOVALUE:
        return 0, int(reg.map2novalue)
    return PM_ERR_NAME, 0


def set_control(reg: Any, context: Any, where: int, what: int, value: int) -> int:
    """setderivedcontrol(): 0, PM_ERR_ARG (value out of range), PM_ERR_NOCONTEXT,
    PM_ERR_AGAIN (the environment set it first) or PM_ERR_NAME."""
    sts, old = get_control(reg, context, what)
    if sts == 0:
        if old == value:
            if reg.control_state[what] == NOT_SET:
                reg.control_state[what] = where     # the first setter wins, so far
            return 0
        if where != SET_BY_ENV and reg.control_state[what] == SET_BY_ENV:
            return PM_ERR_AGAIN
    sts = 0
    if what in (GLOBAL_LIMIT, CONTEXT_LIMIT):
        if value != UNLIMITED and value <= 0:
            sts = PM_ERR_ARG
        elif what == GLOBAL_LIMIT:
            reg.limit = value
        elif context is None:
            sts = PM_ERR_NOCONTEXT
        else:
            context.limit = value
    elif what in _DEBUG_FLAG or what == OPTION_NOVALUE:
        if value not in (0, 1):
            sts = PM_ERR_ARG
        elif what == OPTION_NOVALUE:
            reg.map2novalue = bool(value)
        else:
            enabled = _debug_enabled()
            for flag in ("derive", _DEBUG_FLAG[what]):
                if value:
                    enabled.add(flag)
                else:
                    enabled.discard(flag)
    else:
        sts = PM_ERR_NAME
    if sts == 0:
        reg.control_state[what] = where
    return sts


def apply_controls(reg: Any, context: Any, text: bytes, fname: Optional[bytes] = None,
                   lineno: int = 0) -> None:
    """do_control_options(): the comma-separated option=value list `text`, from the
    environment (fname None) or from line `lineno` of configuration file `fname`."""
    if fname is None:
        where = SET_BY_ENV
        warning = error = "Warning: $PCP_DERIVED_CONTROL: "
        done = "Derived metric control: $PCP_DERIVED_CONTROL: "
    else:
        where = SET_BY_APP
        place = "[%s:%d] " % (fname.decode("utf-8", "surrogateescape"), lineno)
        warning, error = place + "Warning: ", place + "Error: "
        done = place + "derived metric control: "

    def show(data: bytes) -> str:
        return data.decode("utf-8", "surrogateescape")

    start = 0
    while True:
        equals = text.find(b"=", start)
        if equals < 0:
            _stderr("%smissing '=' in derived metric control (%s)\n" % (error, show(text[start:])))
            return
        name = text[start:equals]
        value_at = equals + 1
        if value_at >= len(text) or text[value_at] == ord(","):
            _stderr("%smissing value in derived metric control (%s)\n"
                    % (warning, show(text[start:])))
            return
        value, end = _strtol(text, value_at)
        if end < len(text) and text[end] != ord(","):
            _stderr("%sbad value (%s) for derived metric control (%s)\n"
                    % (warning, show(text[value_at:]), show(name)))
            return
        # any prefix of an option's name, in the table's order
        what = next((i for i, option in enumerate(OPTIONS, 1)
                     if option.lower().startswith(name.decode("latin-1").lower())), None)
        if what is None:
            _stderr("%sunknown derived metric control (%s)\n" % (warning, show(name)))
        else:
            sts = set_control(reg, context, where, what, value)
            if sts == 0:
                if derive_debug():
                    _stderr("%s%s=%d set\n" % (done, show(name), value))
            else:
                _stderr("%sfailed to set derived metric control %s=%d: %s\n"
                        % (warning, show(name), value, pmErrStr(sts)))
        if end >= len(text):
            return
        start = end + 1
