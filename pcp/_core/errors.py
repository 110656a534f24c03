"""Exceptions and error texts shared by every layer (pmErr, pmErrStr); pmUsageErr, which
prints the usage message, lives with the options (pcp._libpcp.options).

``pmErrStr`` reproduces libpcp's ``pmErrStr_r`` text for any code, at API_LEVEL (6.3
renamed the "archive log" of 6.0.3's texts "archive"):

* 0 gives "No error";
* -1 .. -12344 give the C library's strerror text (unless that is an
  "Unknown error ..." text and the PCP table knows the code);
* PCP's own codes (PM_ERR_*) give the 6.0.3 message from ``_PCP_MESSAGES``;
* codes below PM_ERR_NYI carry a TLS/SASL library code (``code - PM_ERR_NYI``):
  -1000 .. -1 are SASL codes ("Authentication - ..."), anything lower is an
  unknown secure sockets error;
* everything else is "No such PMAPI error code (<code>)".

The code is first reduced to a signed 32-bit C int, exactly as the official
binding's ctypes call does, and the text is limited to PM_MAXERRMSGLEN bytes
including the terminating NUL.

The module also keeps the two bits of libpcp process state the exceptions
need: the program name (``pmProgname``) and the ``pmprintf`` buffer.
"""
from __future__ import annotations

import operator
import os
import sys
import time

from pcp._core import constants
from pcp._core.cint import wrap_int32
from pcp._core.constants import PM_ERR_NYI, PM_MAXERRMSGLEN
from pcp._core.level import API_LEVEL, error_symbols

# the error codes of the API level served: a later PCP's code is no code at an earlier level
_SYMBOLS = error_symbols()

TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    from typing import Any, List

# Error code -> message, as printed by libpcp 6.0.3 (``pmerr -l``).
_PCP_MESSAGES = {
    -12345: "Generic error, already reported above",                     # PM_ERR_GENERIC
    -12346: "Problems parsing PMNS definitions",                         # PM_ERR_PMNS
    -12347: "PMNS not accessible",                                       # PM_ERR_NOPMNS
    -12348: "Attempt to reload the PMNS",                                # PM_ERR_DUPPMNS
    -12349: "One-line or help text is not available",                    # PM_ERR_TEXT
    -12350: "Metric not supported by this version of monitored application",  # PM_ERR_APPVERSION
    -12351: "Missing metric value(s)",                                   # PM_ERR_VALUE
    -12353: "Timeout waiting for a response from PMCD",                  # PM_ERR_TIMEOUT
    -12354: "Empty archive log file",                                    # PM_ERR_NODATA
    -12355: "PMCD reset or configuration change",                        # PM_ERR_RESET
    -12357: "Unknown metric name",                                       # PM_ERR_NAME
    -12358: "Unknown or illegal metric identifier",                      # PM_ERR_PMID
    -12359: "Unknown or illegal instance domain identifier",             # PM_ERR_INDOM
    -12360: "Unknown or illegal instance identifier",                    # PM_ERR_INST
    -12361: "Illegal pmUnits specification",                             # PM_ERR_UNIT
    -12362: "Impossible value or scale conversion",                      # PM_ERR_CONV
    -12363: "Truncation in value conversion",                            # PM_ERR_TRUNC
    -12364: "Negative value in conversion to unsigned",                  # PM_ERR_SIGN
    -12365: "Explicit instance identifier(s) required",                  # PM_ERR_PROFILE
    -12366: "IPC protocol failure",                                      # PM_ERR_IPC
    -12368: "IPC channel closed",                                        # PM_ERR_EOF
    -12369: "Operation requires context with host source of metrics",    # PM_ERR_NOTHOST
    -12370: "End of PCP archive log",                                    # PM_ERR_EOL
    -12371: "Illegal mode specification",                                # PM_ERR_MODE
    -12372: "Illegal label record at start of a PCP archive log file",   # PM_ERR_LABEL
    -12373: "Corrupted record in a PCP archive log",                     # PM_ERR_LOGREC
    -12374: "Operation requires context with archive source of metrics", # PM_ERR_NOTARCHIVE
    -12375: "Missing PCP archive log file",                              # PM_ERR_LOGFILE
    -12376: "Attempt to use an illegal context",                         # PM_ERR_NOCONTEXT
    -12377: "NULL pmInDom with non-NULL instlist",                       # PM_ERR_PROFILESPEC
    -12378: "Metric not defined in the PCP archive log",                 # PM_ERR_PMID_LOG
    -12379: "Instance domain identifier not defined in the PCP archive log",  # PM_ERR_INDOM_LOG
    -12380: "Instance identifier not defined in the PCP archive log",    # PM_ERR_INST_LOG
    -12381: "Missing profile - protocol botch",                          # PM_ERR_NOPROFILE
    -12386: "No PMCD agent for domain of request",                       # PM_ERR_NOAGENT
    -12387: "No permission to perform requested operation",              # PM_ERR_PERMISSION
    -12388: "PMCD connection limit for this host exceeded",              # PM_ERR_CONNLIMIT
    -12389: "Try again. Information not currently available",           # PM_ERR_AGAIN
    -12390: "Already Connected",                                         # PM_ERR_ISCONN
    -12391: "Not Connected",                                             # PM_ERR_NOTCONN
    -12392: "A non-null port name is required",                          # PM_ERR_NEEDPORT
    -12394: "Metric name is not a leaf in PMNS",                         # PM_ERR_NONLEAF
    -12397: "Unknown or illegal metric type",                            # PM_ERR_TYPE
    -12398: "Operation not supported for multi-threaded applications",   # PM_ERR_THREAD
    -12399: "Container not found",                                       # PM_ERR_NOCONTAINER
    -12400: "Bad input to pmstore",                                      # PM_ERR_BADSTORE
    -12401: "Archives overlap in time",                                  # PM_ERR_LOGOVERLAP
    -12402: "Archives differ by host",                                   # PM_ERR_LOGHOST
    -12404: "The type of a metric has changed in an archive",            # PM_ERR_LOGCHANGETYPE
    -12405: "The semantics of a metric has changed in an archive",       # PM_ERR_LOGCHANGESEM
    -12406: "The instance domain of a metric has changed in an archive", # PM_ERR_LOGCHANGEINDOM
    -12407: "The units of a metric have changed in an archive",          # PM_ERR_LOGCHANGEUNITS
    -12408: "PMCD requires a client certificate",                        # PM_ERR_NEEDCLIENTCERT
    -12409: "Derived metric definition failed",                          # PM_ERR_BADDERIVE
    -12410: "No support for metric label metadata",                      # PM_ERR_NOLABELS
    -12411: "PMDA is currently fenced and unable to respond to requests",  # PM_ERR_PMDAFENCED
    -12412: "Incorrect record type in an archive",                       # PM_ERR_RECTYPE
    -12413: "Archive feature not supported",                             # PM_ERR_FEATURE
    -12414: "TLS protocol failure",                                      # PM_ERR_TLS
    -12415: "Bad value for function argument",                           # PM_ERR_ARG (6.3)
    -12442: "Internal inconsistency detected or assertion failed",       # PM_ERR_BOTCH
    -12443: "Insufficient elements in list",                             # PM_ERR_TOOSMALL
    -12444: "Result size exceeded",                                      # PM_ERR_TOOBIG
    -12445: "QA fault injected",                                         # PM_ERR_FAULT
    -13393: "PMDA is now responsive to requests",                        # PM_ERR_PMDAREADY
    -13394: "PMDA is not yet ready to respond to requests",              # PM_ERR_PMDANOTREADY
    -21344: "Functionality not yet implemented",                         # PM_ERR_NYI
}

if API_LEVEL >= (6, 3):
    # libpcp 6.3 says "archive" where 6.0 said "archive log"
    _PCP_MESSAGES.update({
        -12354: "Empty archive file",                                     # PM_ERR_NODATA
        -12370: "End of PCP archive",                                     # PM_ERR_EOL
        -12372: "Illegal label record at start of a PCP archive file",    # PM_ERR_LABEL
        -12373: "Corrupted record in a PCP archive",                      # PM_ERR_LOGREC
        -12375: "Missing PCP archive file",                               # PM_ERR_LOGFILE
        -12378: "Metric not defined in the PCP archive",                  # PM_ERR_PMID_LOG
        -12379: "Instance domain identifier not defined in the PCP archive",  # PM_ERR_INDOM_LOG
        -12380: "Instance identifier not defined in the PCP archive",     # PM_ERR_INST_LOG
    })

# Cyrus SASL result code -> sasl_errstring() text (English), for codes that
# libpcp folds into the range just below PM_ERR_NYI.
_SASL_MESSAGES = {
    -1: "generic failure",
    -2: "no memory available",
    -3: "overflowed buffer",
    -4: "no mechanism available",
    -5: "bad protocol / cancel",
    -6: "can't request information until later in exchange",
    -7: "invalid parameter supplied",
    -8: "transient failure (e.g., weak key)",
    -9: "integrity check failed",
    -10: "server failed mutual authentication step",
    -11: "mechanism doesn't support requested feature",
    -12: "SASL library is not initialized",
    -13: "authentication failure",
    -14: "authorization failure",
    -15: "mechanism too weak for this user",
    -16: "encryption needed to use mechanism",
    -17: "One time use of a plaintext password will enable requested mechanism for user",
    -18: "passphrase expired, has to be reset",
    -19: "account disabled",
    -20: "user not found",
    -21: "passphrase locked",
    -22: "requested change was not needed",
    -23: "version mismatch with plug-in",
    -24: "remote authentication server unavailable",
    -26: "user exists, but no verifier for user",
    -27: "passphrase is too weak for security policy",
    -28: "user supplied passwords are not permitted",
    -29: "sasl_setpass needs old password in order to perform password change",
    -30: "sasl_setpass can't store a property because of a constraint violation",
    -32: "channel binding failure",
    -100: "error when parsing configuration file",
}
_SASL_UNDEFINED = "undefined error!"

# The first (highest) PCP error code; negative codes above it are errno values.
_PCP_FIRST = constants.PM_ERR_GENERIC

# Lowest SASL code libpcp reports as an authentication error.
_SASL_LOWEST = -1000


def _limit(text: str) -> str:
    """Clip to what fits a PM_MAXERRMSGLEN byte buffer (with its NUL)."""
    raw = text.encode("utf-8", "surrogateescape")
    if len(raw) < PM_MAXERRMSGLEN:
        return text
    return raw[:PM_MAXERRMSGLEN - 1].decode("utf-8", "ignore")


def _message(code: int) -> str:
    if code == 0:
        return "No error"
    if _PCP_FIRST < code < 0:
        system = os.strerror(-code)
        if not system.startswith("Unknown error"):
            return system
        return _PCP_MESSAGES.get(code, system)
    if code in _PCP_MESSAGES and code in _SYMBOLS:
        return _PCP_MESSAGES[code]
    if code < PM_ERR_NYI:
        library_code = code - PM_ERR_NYI
        if library_code >= _SASL_LOWEST:
            return "Authentication - " + _SASL_MESSAGES.get(library_code, _SASL_UNDEFINED)
        return "Unknown secure sockets error %d (%d)" % (code, library_code)
    return "No such PMAPI error code (%d)" % code


def pmErrStr(code: int) -> str:
    """Return libpcp's text for a PMAPI or errno-style (negative) error code."""
    return _limit(_message(wrap_int32(operator.index(code))))


# ---------------------------------------------------------------------------
# libpcp process state: program name and the pmprintf buffer
# ---------------------------------------------------------------------------
_progname = "pcp"
_pmprintf_buffer: List[str] = []


def pmGetProgname() -> str:
    """The program name used in messages (libpcp's pmProgname, default "pcp")."""
    return _progname


def pmSetProgname(name: Any) -> None:
    """Set the program name from a path (its basename), or reset it with None."""
    global _progname  # pylint: disable=global-statement
    if name is None:
        _progname = "pcp"
    else:
        _progname = os.path.basename(str(name))


def pmprintf(text: str) -> None:
    """Append text to the buffer that the next pmflush() writes out."""
    _pmprintf_buffer.append(text)


def pmflush() -> int:
    """Write out and empty the pmprintf buffer.

    The destination follows $PCP_STDERR: unset, empty or "DISPLAY" means
    stderr; anything else names a file to append to.  Returns 0, or a
    negative errno if the file cannot be written.
    """
    text = "".join(_pmprintf_buffer)
    del _pmprintf_buffer[:]
    if not text:
        return 0
    target = os.environ.get("PCP_STDERR", "")
    if target and target != "DISPLAY":
        try:
            with open(target, "a", encoding="utf-8") as stream:
                stream.write(text)
        except OSError as err:
            return -(err.errno or 1)
        return 0
    sys.stderr.write(text)
    sys.stderr.flush()
    return 0


def notify_error(level: str, message: str) -> None:
    """pmNotifyErr(3) without syslog: "[ctime] progname(pid) Level: message" through the
    pmprintf buffer to stderr, with the newline the message lacks. `level` is libpcp's
    word for the syslog priority ("Critical", "Error", "Warning", "Info" ...)."""
    pmprintf("[%.19s] %s(%d) %s: " % (time.ctime(), pmGetProgname(), os.getpid(), level))
    pmprintf(message if message.endswith("\n") else message + "\n")
    pmflush()


# ---------------------------------------------------------------------------
# A Python callback's exception where the official binding's C code called it
# ---------------------------------------------------------------------------
def print_callback_error(err: BaseException) -> None:
    """What the official binding's C extension does with an exception its callback
    raised (cpmapi's pmnsTraverse and option callbacks: PyErr_Print, then on with the
    C loop): the traceback through sys.excepthook from the callback's own frame (the
    caller catches `err` around the callback call, so its own frame is left out), and
    sys.last_* set. A SystemExit goes on up: PyErr_Print ends the process with it."""
    if isinstance(err, SystemExit):
        raise err
    trace = err.__traceback__.tb_next if err.__traceback__ is not None else None
    err = err.with_traceback(trace)
    sys.last_type, sys.last_value, sys.last_traceback = type(err), err, trace
    if sys.version_info >= (3, 12):
        sys.last_exc = err      # type: ignore[attr-defined]
    sys.excepthook(type(err), err, trace)


_UNRAISABLE_ARGS: List[type] = []


def report_unraisable(message: str, obj: Any, err: BaseException,
                      from_callback: bool = True) -> None:
    """What ctypes does with an exception its callback raised (the official binding's
    CFUNCTYPE callbacks: pmMergeLabelSets's filter): sys.unraisablehook with
    `message` ("Exception ignored on calling ctypes callback function") and the
    callback, the traceback from the callback's own frame (`from_callback`; else from
    the frame that caught `err`, as ctypes shows a failed conversion of the callback's
    answer from the frame that called into C); the C code goes on."""
    if not _UNRAISABLE_ARGS:
        # the hook takes only its own struct sequence type, which Python does not
        # name: one is caught from a real unraisable exception, once
        caught: List[Any] = []
        previous = sys.unraisablehook
        sys.unraisablehook = caught.append
        try:
            _Unraisable()
        finally:
            sys.unraisablehook = previous
        _UNRAISABLE_ARGS.append(type(caught[0]))
    trace = err.__traceback__
    if from_callback and trace is not None:
        trace = trace.tb_next
    sys.unraisablehook(_UNRAISABLE_ARGS[0]((type(err), err.with_traceback(trace), trace,
                                            message, obj)))


class _Unraisable:
    """Made and dropped at once: its __del__ raises, which Python reports as unraisable."""

    def __del__(self) -> None:
        raise RuntimeError("the unraisable hook's argument type")


# ---------------------------------------------------------------------------
# Exceptions
# ---------------------------------------------------------------------------
class pmErr(Exception):
    """A PMAPI failure: ``args[0]`` is the (negative) error code.

    Further arguments are appended to the message, separated by spaces.
    """

    # the official binding defines it in pcp.pmapi, which tracebacks name (a PMDA's log
    # shows "pcp.pmapi.pmErr: ..."); pcp.pmapi re-exports this class under that name
    __module__ = "pcp.pmapi"

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        # BaseException stores args as a tuple, whatever is assigned.
        self.args = list(args)  # type: ignore[assignment]
        if args and isinstance(args[0], int):
            self.code: int = args[0]
        else:
            self.code = 0

    def __str__(self) -> str:
        symbol = _SYMBOLS.get(self.code)
        if symbol is None:
            return self.message()
        return "%s %s" % (symbol, self.message())

    def message(self) -> str:
        text = pmErrStr(self.code)
        for extra in self.args[1:]:
            text += " " + str(extra)
        return text

    def progname(self) -> str:
        return pmGetProgname()

    def errno(self) -> int:
        return self.code


def check(status: int) -> int:
    """Raise pmErr(status) for a negative status, else return it."""
    if status < 0:
        raise pmErr(status)
    return status
