"""Parse pmcd host specifications (pcp:, pcps:, local:, unix:, host lists, @proxy, ?attributes)."""
from __future__ import annotations

import errno
import os

from pcp._core.config import pmGetConfig
from pcp._core.constants import PM_ERR_GENERIC, PM_ERR_NOTHOST
from pcp._core.errors import pmErr

TYPE_CHECKING = False      # typing's, without importing typing (the first host context)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional

# Attribute names accepted in "?name=value" mapped to the canonical key (the name libpcp
# prints for it). Anything else is silently ignored, as libpcp does.
_ATTR_KEYS: Dict[str, str] = {
    "compress": "compress",
    "userauth": "userauth", "authorise": "userauth", "authorize": "userauth",
    "user": "username", "username": "username",
    "realm": "realm",
    "authmeth": "method", "method": "method",
    "pass": "password", "password": "password",
    "unix": "unixsock", "unixsock": "unixsock",
    "local": "local",
    "uid": "userid", "userid": "userid",
    "gid": "groupid", "groupid": "groupid",
    "pid": "processid", "processid": "processid",
    "secure": "secure",
    "container": "container",
    "exclusive": "exclusive",
}

# Characters that end a host name (the empty string stands for end of input).
_HOST_END = (":", "@", "/", "?", "")
_PORT_END = (",", "@", "/", "?", "")
_HEX = "0123456789abcdefABCDEF"
_MAXPATHLEN = 4096


class HostSpecError(pmErr):
    """A host specification that libpcp would reject while parsing.

    ``code`` is what pmNewContext returns (PM_ERR_GENERIC for syntax errors); ``detail``
    is libpcp's caret diagram (spec, a marker line, "^ -- reason"), which libpcp prints
    to stderr after "pmNewContext: bad host specification".
    """

    def __init__(self, code: int, spec: str, position: int, reason: str) -> None:
        super().__init__(code)
        self.spec = spec
        self.position = position
        self.reason = reason
        # Keep whitespace (tabs) under the spec so the caret lines up; blank the rest.
        marker = "".join(c if (c.isspace() or not c.isprintable()) else " "
                         for c in spec[:position])
        self.detail = "%s\n%s^ -- %s\n" % (spec, marker, reason)
        self.message = "pmNewContext: bad host specification\n" + self.detail


class _Record:
    """A plain record: equal when its fields are, shown with them (what @dataclass would
    give, without importing dataclasses and inspect with the first host context)."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in self.__slots__)

    __hash__ = None  # type: ignore[assignment]  # mutable, as a dataclass's

    def __repr__(self) -> str:
        return "%s(%s)" % (type(self).__name__, ", ".join(
            "%s=%r" % (f, getattr(self, f)) for f in self.__slots__))


class Host(_Record):
    __slots__ = ("name", "ports")

    def __init__(self, name: str, ports: Optional[List[int]] = None) -> None:
        self.name = name
        # As written in the spec; empty means "use the PMCD_PORT list". libpcp keeps C
        # int values (atoi), so absurd numbers wrap; the transport uses the low 16 bits.
        self.ports: List[int] = [] if ports is None else ports


class HostSpec(_Record):
    __slots__ = ("spec", "protocol", "hosts", "unix_path", "attributes")

    def __init__(self, spec: str, protocol: Optional[str], hosts: List[Host],
                 unix_path: Optional[str],
                 attributes: Optional[Dict[str, Optional[str]]] = None) -> None:
        self.spec = spec
        self.protocol = protocol        # "pcp", "pcps", "local", "unix" or None
        self.hosts = hosts              # [pmcd host, proxy, ...]; empty for socket specs
        self.unix_path = unix_path      # socket path for local:/unix:, else None
        # Canonical attribute name -> URL-decoded value, or None when given without "=".
        # The protocol is recorded as libpcp does: "protocol" for pcp/pcps, "local" or
        # "unixsock" for the socket forms.
        self.attributes: Dict[str, Optional[str]] = {} if attributes is None else attributes

    def replace(self, **changes: object) -> HostSpec:
        """A copy with some fields changed (dataclasses.replace)."""
        fields = {f: getattr(self, f) for f in self.__slots__}
        fields.update(changes)
        return HostSpec(**fields)  # type: ignore[arg-type]

    @property
    def is_local(self) -> bool:
        """local: spec (unix socket first, TCP localhost as fallback)."""
        return self.protocol == "local"

    @property
    def is_unix(self) -> bool:
        """unix: spec (unix socket only)."""
        return self.protocol == "unix"

    @property
    def host(self) -> Optional[Host]:
        return self.hosts[0] if self.hosts else None

    @property
    def proxy(self) -> Optional[Host]:
        return self.hosts[1] if len(self.hosts) > 1 else None


def default_socket_path() -> str:
    """$PMCD_SOCKET, else $PCP_RUN_DIR/pmcd.socket (libpcp's default local socket)."""
    env = os.environ.get("PMCD_SOCKET")
    if env is not None:
        return env
    return "%s/pmcd.socket" % (pmGetConfig("PCP_RUN_DIR") or "")


def _c_atoi(digits: str) -> int:
    # glibc atoi is (int)strtol(): clamp to LONG_MAX, then keep the low 32 bits signed.
    value = min(int(digits), (1 << 63) - 1)
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def _char(spec: str, i: int) -> str:
    return spec[i] if i < len(spec) else ""


def _parse_hosts(spec: str, pos: int) -> "tuple[List[Host], int]":
    """Host list from pos; returns the hosts and the index where parsing stopped."""
    hosts: List[Host] = []
    n = len(spec)
    if _char(spec, pos) in _HOST_END:
        # Nothing before the first delimiter: an empty list, position unchanged.
        return hosts, pos
    while True:
        start = pos
        if _char(spec, pos) == "[":
            close = spec.find("]", pos + 1)
            if close < 0:
                raise HostSpecError(PM_ERR_GENERIC, spec, n, "missing closing ']' for host spec")
            after = close + 1
            if _char(spec, after) not in _HOST_END:
                raise HostSpecError(PM_ERR_GENERIC, spec, after,
                                    "extra characters after host spec")
            if close > pos + 1:
                name, pos = spec[pos + 1:close], after
            else:
                # libpcp quirk: "[]" names the host "]" and scanning resumes after it.
                end = after
                while _char(spec, end) not in _HOST_END:
                    end += 1
                name, pos = spec[close:end], end
        else:
            # After an '@' libpcp takes a leading delimiter as part of the name ("a@@b"
            # -> proxy "@b"); the first host never gets here with a delimiter.
            end = pos + 1 if hosts else pos
            while end < n and _char(spec, end) not in _HOST_END:
                end += 1
            name, pos = spec[start:end], min(end, n)
        host = Host(name)
        hosts.append(host)
        if _char(spec, pos) == ":":
            pos += 1
            while True:
                first = pos
                while _char(spec, pos) not in _PORT_END:
                    if not spec[pos].isdigit() or not spec[pos].isascii():
                        raise HostSpecError(PM_ERR_GENERIC, spec, pos, "non-numeric port")
                    pos += 1
                if pos == first:
                    raise HostSpecError(PM_ERR_GENERIC, spec, pos, "missing port")
                host.ports.append(_c_atoi(spec[first:pos]))
                if _char(spec, pos) != ",":
                    break
                pos += 1
        if _char(spec, pos) == "@":
            pos += 1
            continue
        return hosts, pos


def _parse_socket_path(spec: str, pos: int) -> "tuple[str, int]":
    n = len(spec)
    end = pos
    while end < n and spec[end] not in ":?":
        end += 1
    delimited = end < n
    # libpcp quirk: a one-character path followed by ':' or '?' also means "default".
    if end == pos or (delimited and end == pos + 1):
        path = default_socket_path()
    else:
        path = spec[pos:end]
    if not path.startswith("/"):
        path = "/" + path
    return path[:_MAXPATHLEN - 1], end


def _url_decode(spec: str, start: int, end: int) -> str:
    out = bytearray()
    i = start
    while i < end:
        c = spec[i]
        if c == "%":
            if i + 3 > end or spec[i + 1] not in _HEX or spec[i + 2] not in _HEX:
                # libpcp returns -EINVAL here (and then crashes printing an unset
                # message); report the code it meant, with a proper diagram.
                raise HostSpecError(-errno.EINVAL, spec, i, "invalid URL encoding")
            out.append(int(spec[i + 1:i + 3], 16))
            i += 3
            continue
        out += b" " if c == "+" else c.encode("utf-8", "surrogateescape")
        i += 1
    nul = out.find(0)
    if nul >= 0:        # a C string ends at the first NUL
        del out[nul:]
    return out.decode("utf-8", "surrogateescape")


def _parse_attributes(spec: str, pos: int, attrs: Dict[str, Optional[str]]) -> None:
    n = len(spec)
    while True:
        end = pos
        while end < n and spec[end] not in "&/":
            end += 1
        if end == pos and _char(spec, end) != "&":
            return
        # The name runs to the last '=' of the item ("a=b=c" names "a=b").
        item_eq = spec.rfind("=", pos, end)
        key = _ATTR_KEYS.get(spec[pos:item_eq] if item_eq >= 0 else spec[pos:end])
        if key is not None:
            # Only known attributes are decoded, so bad escapes elsewhere are ignored.
            value = _url_decode(spec, item_eq + 1, end) if item_eq >= 0 else None
            attrs.pop(key, None)    # later duplicates win; keep insertion order fresh
            attrs[key] = value
        if _char(spec, end) != "&":
            return
        pos = end + 1


def parse_hostspec(spec: str) -> HostSpec:
    """Parse spec the way libpcp's pmNewContext(PM_CONTEXT_HOST, spec) does.

    Raises HostSpecError (PM_ERR_GENERIC, or -EINVAL for bad %-escapes) for syntax
    errors and pmErr(PM_ERR_NOTHOST) when no host is named.
    """
    if not isinstance(spec, str):
        spec = bytes(spec).decode("utf-8", "surrogateescape")
    attrs: Dict[str, Optional[str]] = {}
    protocol: Optional[str] = None
    pos = 0
    for proto in ("pcp", "pcps", "local", "unix"):
        if spec.startswith(proto + ":"):
            protocol = proto
            pos = len(proto) + 1
            while _char(spec, pos) == "/":
                pos += 1
            break
    if protocol in ("pcp", "pcps"):
        attrs["protocol"] = protocol
    elif protocol == "local":
        attrs["local"] = "local"
    elif protocol == "unix":
        attrs["unixsock"] = "unix"

    hosts: List[Host] = []
    unix_path: Optional[str] = None
    if protocol in ("local", "unix"):
        unix_path, pos = _parse_socket_path(spec, pos)
    else:
        hosts, pos = _parse_hosts(spec, pos)

    ch = _char(spec, pos)
    if ch == "?":
        pos += 1
    elif ch not in ("", "/"):
        raise HostSpecError(PM_ERR_GENERIC, spec, pos, "unexpected terminal character")
    _parse_attributes(spec, pos, attrs)

    if unix_path is None and not hosts:
        raise pmErr(PM_ERR_NOTHOST)
    return HostSpec(spec=spec, protocol=protocol, hosts=hosts, unix_path=unix_path,
                    attributes=attrs)


def redact_hostspec(spec: Any) -> Any:
    """spec with the value of a password attribute hidden, for messages and exceptions
    (libpcp prints the whole spec; a password must not end up in logs or tracebacks)."""
    if isinstance(spec, bytes):
        return redact_hostspec(spec.decode("utf-8", "surrogateescape")).encode(
            "utf-8", "surrogateescape")
    if not isinstance(spec, str) or "?" not in spec:
        return spec
    import re  # pylint: disable=import-outside-toplevel  (3 ms at a start: only here)

    return re.sub(r"(?<=[?&])(pass|password)=[^&/]*", lambda m: m.group(1) + "=****", spec)
