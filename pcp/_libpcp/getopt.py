"""pmgetopt_r: libpcp's reentrant GNU getopt_long, as libpcp 6.0.3 behaves.

Options may be permuted after operands (unless the short option string starts with "+",
POSIXLY_CORRECT is set or PM_OPTFLAG_POSIX is given), "--" ends the options, long options
take "=value" or the next word and may be abbreviated while unambiguous, "-W foo" means
"--foo" when the short option string has "W;". Messages go to the pmprintf buffer with
getopt's wording, and only when errors are not silenced (PM_OPTFLAG_QUIET without opterr,
or a short option string starting with ":").

The state lives in a `GetoptState` (libpcp keeps it in the pmOptions structure); argv is
a list this module permutes in place, as libpcp permutes its copy of argv.
"""
from __future__ import annotations

import os

from pcp._core.constants import PM_OPTFLAG_LONG_ONLY, PM_OPTFLAG_POSIX, PM_OPTFLAG_QUIET
from pcp._core.errors import pmGetProgname, pmprintf, pmSetProgname

TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence

EOF = -1
# the ordering of options and operands
REQUIRE_ORDER, PERMUTE, RETURN_IN_ORDER = 0, 1, 2


class LongOption:
    """One pmLongOptions entry: a long name ("" for a usage header or text line), whether it
    takes an argument (0 no, 1 yes, 2 optional), its short form ("" for none; "-" marks a
    usage section header and "|" a line of usage text), the argument's name in the usage
    message and the message (None: an option the usage message does not show)."""

    __slots__ = ("long_opt", "has_arg", "short_opt", "argname", "message")

    def __init__(self, long_opt: str, has_arg: int, short_opt: str, argname: Optional[str],
                 message: Optional[str]) -> None:
        self.long_opt = long_opt
        self.has_arg = has_arg
        self.short_opt = short_opt
        self.argname = argname
        self.message = message

    def _fields(self) -> tuple:
        return (self.long_opt, self.has_arg, self.short_opt, self.argname, self.message)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LongOption):
            return NotImplemented
        return self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  (mutable, compared by value)

    def __repr__(self) -> str:
        return "LongOption(long_opt=%r, has_arg=%r, short_opt=%r, argname=%r, message=%r)" \
            % self._fields()


def set_fields(state: Any, fields: Dict[str, Any]) -> None:
    """Keyword arguments of a state's constructor: only names it has."""
    for name, value in fields.items():
        if not hasattr(state, name):
            raise TypeError("%s() got an unexpected keyword argument %r"
                            % (type(state).__name__, name))
        setattr(state, name, value)


class GetoptState:
    """The getopt fields of libpcp's pmOptions (in and out) and its private scan state.
    Any field may be given by keyword."""

    def __init__(self, **fields: Any) -> None:
        self.short_options: Optional[str] = None
        self.long_options: List[LongOption] = []
        self.flags = 0
        self.index = 0          # the long option found (its position in long_options)
        self.optind = 0
        self.opterr = 0
        self.optopt = 0         # the option character at fault, as a number (0: a long option)
        self.optarg: Optional[str] = None
        self.initialized = 0    # 0 never started, 1 started by pmGetOptions, 2 scanning
        self.nextchar: Optional[str] = None     # the rest of the word being scanned
        self.ordering = PERMUTE
        self.posixly_correct = 0
        self.first_nonopt = 0
        self.last_nonopt = 0
        set_fields(self, fields)


def _code(option: str) -> int:
    """A short option as getopt returns it: the character's code (0 for none)."""
    return ord(option) if option else 0


def _exchange(argv: List[str], d: GetoptState) -> None:
    """Move the options scanned since the skipped operands in front of them."""
    bottom, middle, top = d.first_nonopt, d.last_nonopt, d.optind
    argv[bottom:top] = argv[middle:top] + argv[bottom:middle]
    d.first_nonopt += d.optind - d.last_nonopt
    d.last_nonopt = d.optind


def _initialize(d: GetoptState) -> str:
    optstring = d.short_options or ""
    d.first_nonopt = d.last_nonopt = d.optind
    d.nextchar = None
    d.posixly_correct = int(bool(d.flags & PM_OPTFLAG_POSIX)) | int("POSIXLY_CORRECT" in os.environ)
    if optstring[:1] == "-":
        d.ordering = RETURN_IN_ORDER
        optstring = optstring[1:]
    elif optstring[:1] == "+":
        d.ordering = REQUIRE_ORDER
        optstring = optstring[1:]
    elif d.posixly_correct:
        d.ordering = REQUIRE_ORDER
    else:
        d.ordering = PERMUTE
    return optstring


def _is_operand(word: str) -> bool:
    return word[:1] != "-" or word == "-"


def _find_long(d: GetoptState, name: str, long_only: bool):
    """(option, index, exact, ambiguous) for a possibly abbreviated long option name;
    ambiguous lists the other candidates when no exact match decides."""
    found, found_index, ambiguous = None, -1, []
    for i, p in enumerate(d.long_options):
        if not p.long_opt.startswith(name):
            continue
        if len(p.long_opt) == len(name):
            return p, i, True, []
        if found is None:
            found, found_index = p, i
        elif long_only or found.has_arg != p.has_arg or found.short_opt != p.short_opt:
            ambiguous.append(p)
    return found, found_index, False, ambiguous


def getopt(argv: List[str], d: GetoptState) -> int:
    """The next option: its short character's code, 0 for a long-only option (d.index says
    which), 1 for an operand in RETURN_IN_ORDER mode, "?" (63) or ":" for an error, or EOF
    (-1) at the end, with d.optind at the first operand."""
    argc = len(argv)
    optstring = d.short_options
    quiet = d.flags & PM_OPTFLAG_QUIET
    long_only = bool(d.flags & PM_OPTFLAG_LONG_ONLY)
    print_errors = bool(d.opterr) or not quiet
    if argc < 1 or optstring is None:
        return EOF
    d.optarg = None
    if d.optind == 0 or d.initialized <= 1:
        if d.optind == 0:
            d.optind = 1        # argv[0] is the program name
        if not d.initialized:
            pmSetProgname(argv[0])
        optstring = _initialize(d)
        d.initialized = 2
    elif optstring[:1] in ("-", "+"):
        optstring = optstring[1:]
    if optstring[:1] == ":":
        print_errors = False
    longopts = d.long_options if d.long_options else None

    if not d.nextchar:
        if d.last_nonopt > d.optind:
            d.last_nonopt = d.optind
        if d.first_nonopt > d.optind:
            d.first_nonopt = d.optind
        if d.ordering == PERMUTE:
            if d.first_nonopt != d.last_nonopt and d.last_nonopt != d.optind:
                _exchange(argv, d)
            elif d.last_nonopt != d.optind:
                d.first_nonopt = d.optind
            while d.optind < argc and _is_operand(argv[d.optind]):
                d.optind += 1
            d.last_nonopt = d.optind
        if d.optind != argc and argv[d.optind] == "--":
            d.optind += 1
            if d.first_nonopt != d.last_nonopt and d.last_nonopt != d.optind:
                _exchange(argv, d)
            elif d.first_nonopt == d.last_nonopt:
                d.first_nonopt = d.optind
            d.last_nonopt = argc
            d.optind = argc
        if d.optind == argc:
            if d.first_nonopt != d.last_nonopt:
                d.optind = d.first_nonopt
            return EOF
        if _is_operand(argv[d.optind]):
            if d.ordering == REQUIRE_ORDER:
                return EOF
            d.optarg = argv[d.optind]
            d.optind += 1
            return 1
        word = argv[d.optind]
        d.nextchar = word[2:] if (longopts is not None and word[1] == "-") else word[1:]

    word = argv[d.optind] if d.optind < argc else ""
    if longopts is not None and (word[1:2] == "-" or (long_only and (
            word[2:3] or word[1:2] not in optstring))):
        result = _long_option(argv, d, optstring, long_only, print_errors)
        if result is not None:
            return result
    return _short_option(argv, d, optstring, longopts, long_only, print_errors)


def _long_option(argv: List[str], d: GetoptState, optstring: str, long_only: bool,
                 print_errors: bool) -> Optional[int]:
    argc = len(argv)
    rest = d.nextchar or ""
    name, eq, value = rest.partition("=")
    found, found_index, exact, ambiguous = _find_long(d, name, long_only)
    word = argv[d.optind]
    if ambiguous and not exact:
        if print_errors:
            pmprintf("%s: option '%s' is ambiguous; possibilities:" % (pmGetProgname(), word))
            # libpcp lists the first candidate, then the others newest first
            for p in [found] + ambiguous[::-1]:
                pmprintf(" '--%s'" % p.long_opt)
            pmprintf("\n")
        d.nextchar = ""
        d.optind += 1
        d.optopt = 0
        return ord("?")
    if found is not None:
        d.optind += 1
        if eq:
            if found.has_arg:
                d.optarg = value
            else:
                if print_errors:
                    if word[1] == "-":
                        pmprintf("%s: option '--%s' doesn't allow an argument\n"
                                 % (pmGetProgname(), found.long_opt))
                    else:
                        pmprintf("%s: option '%s%s' doesn't allow an argument\n"
                                 % (pmGetProgname(), word[0], found.long_opt))
                d.nextchar = ""
                d.optopt = _code(found.short_opt)
                return ord("?")
        elif found.has_arg == 1:
            if d.optind < argc:
                d.optarg = argv[d.optind]
                d.optind += 1
            else:
                if print_errors:
                    pmprintf("%s: option '--%s' requires an argument\n"
                             % (pmGetProgname(), found.long_opt))
                d.nextchar = ""
                d.optopt = _code(found.short_opt)
                return ord(":") if optstring[:1] == ":" else ord("?")
        d.nextchar = ""
        d.index = found_index
        return _code(found.short_opt)
    if not long_only or word[1] == "-" or rest[:1] not in optstring:
        if print_errors:
            if word[1] == "-":
                pmprintf("%s: unrecognized option '--%s'\n" % (pmGetProgname(), rest))
            else:
                pmprintf("%s: unrecognized option '%s%s'\n" % (pmGetProgname(), word[0], rest))
        d.nextchar = ""
        d.optind += 1
        d.optopt = 0
        return ord("?")
    return None     # long-only mode: read it as a short option


def _short_option(argv: List[str], d: GetoptState, optstring: str,
                  longopts: Optional[Sequence[LongOption]], long_only: bool,
                  print_errors: bool) -> int:
    argc = len(argv)
    rest = d.nextchar or ""
    c, d.nextchar = rest[:1], rest[1:]
    if not d.nextchar:
        d.optind += 1
    position = optstring.find(c) if c else -1
    if position < 0 or c in (":", ";"):
        if print_errors:
            pmprintf("%s: invalid option -- '%s'\n" % (pmGetProgname(), c))
        d.optopt = _code(c)
        return ord("?")
    spec = optstring[position:position + 3]
    if spec[:2] == "W;":
        return _w_option(argv, d, optstring, longopts, long_only, print_errors, c)
    if spec[1:2] == ":":
        if spec[2:3] == ":":            # an optional argument, only in the same word
            if d.nextchar:
                d.optarg = d.nextchar
                d.optind += 1
            else:
                d.optarg = None
            d.nextchar = None
        else:
            if d.nextchar:
                d.optarg = d.nextchar
                d.optind += 1
            elif d.optind == argc:
                if print_errors:
                    pmprintf("%s: option requires an argument -- '%s'\n" % (pmGetProgname(), c))
                d.optopt = _code(c)
                c = ":" if optstring[:1] == ":" else "?"
            else:
                d.optarg = argv[d.optind]
                d.optind += 1
            d.nextchar = None
    return ord(c)


def _w_option(argv: List[str], d: GetoptState, optstring: str,
              longopts: Optional[Sequence[LongOption]], long_only: bool, print_errors: bool,
              c: str) -> int:
    """POSIX "-W foo": the long option --foo."""
    argc = len(argv)
    if longopts is None:
        d.nextchar = None
        return ord("W")
    if d.nextchar:
        d.optarg = d.nextchar
        d.optind += 1
    elif d.optind == argc:
        if print_errors:
            pmprintf("%s: option requires an argument -- '%s'\n" % (pmGetProgname(), c))
        d.optopt = _code(c)
        return ord(":") if optstring[:1] == ":" else ord("?")
    else:
        d.optarg = argv[d.optind]
        d.optind += 1
    d.nextchar = d.optarg
    name, eq, value = (d.optarg or "").partition("=")
    found, found_index, exact, ambiguous = _find_long(d, name, long_only)
    if ambiguous and not exact:
        if print_errors:
            pmprintf("%s: option '-W %s' is ambiguous\n" % (pmGetProgname(), d.optarg))
        d.nextchar = ""
        d.optind += 1
        return ord("?")
    if found is None:
        d.nextchar = None
        return ord("W")
    if eq:
        if not found.has_arg:
            if print_errors:
                pmprintf("%s: option '-W %s' doesn't allow an argument\n"
                         % (pmGetProgname(), found.long_opt))
            d.nextchar = ""
            return ord("?")
        d.optarg = value
    elif found.has_arg == 1:
        if d.optind < argc:
            d.optarg = argv[d.optind]
            d.optind += 1
        else:
            if print_errors:
                pmprintf("%s: option '-W %s' requires an argument\n"
                         % (pmGetProgname(), found.long_opt))
            d.nextchar = ""
            return ord(":") if optstring[:1] == ":" else ord("?")
    else:
        d.optarg = None
    d.nextchar = ""
    d.index = found_index
    return _code(found.short_opt)
