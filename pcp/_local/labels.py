"""The CONTEXT label set of a PM_CONTEXT_LOCAL context, built the way libpcp 6.0.3 does.

A LOCAL context has no pmcd to ask, so libpcp composes the context labels itself
(local_context_labels() in labels.c), in three steps, each merged into one growing label
set by __pmAddLabels (pcp._libpcp.labels.add_labels here), later values winning:

1. every directory entry of ``$PCP_SYSCONF_DIR/labels`` whose name does not start with
   a dot, in strcmp order (scandir + alphasort in the C locale), each read as label
   JSON with flags PM_LABEL_CONTEXT|PM_LABEL_COMPOUND; then the same for
   ``labels/optional`` with PM_LABEL_OPTIONAL added.  Any name counts, not only
   ``*.json``; a sub-directory (``labels/optional`` itself) reads as empty text.  A
   file that does not parse is skipped.  A missing ``labels`` directory fails the whole
   request with -errno (-ENOENT); a missing ``labels/optional`` does not.
2. ``{"hostname":H,"domainname":D,"machineid":M}`` with PM_LABEL_CONTEXT only.  H is
   gethostname() ("localhost" when it fails), D is getdomainname() ("localdomain" when
   it fails, is empty or is "(none)"; a 64-character one loses its last character), M is
   the first word of /etc/machine-id ("localmachine" without one).  ``machineid_hash = sha256`` in the [global] section of
   ``$PCP_SYSCONF_DIR/labels.conf`` renames the label "machineid_sha256" and makes M
   the hex SHA-256 of the id.  The text is printed with no JSON escaping.
3. ``{"groupid":G,"userid":U}`` (getgid(), getuid()) with PM_LABEL_CONTEXT and
   PM_LABEL_OPTIONAL.

Steps 2 and 3 override labels of the same name from the files.
"""
from __future__ import annotations

import errno
import hashlib
import os

from pcp._core.config import pmGetConfig
from pcp._core.constants import (PM_LABEL_CONTEXT, PM_LABEL_DOMAIN, PM_LABEL_OPTIONAL,
                                 PM_MAXLABELJSONLEN)
from pcp._core.errors import pmErr
from pcp._core.wire import PM_LABEL_COMPOUND
from pcp._decode.pdu import LabelSetData
from pcp._libpcp.labels import AddedLabels, add_labels, parse_label_set

TYPE_CHECKING = False      # typing's, without importing typing (a start's cost)
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Tuple

# PM_IN_NULL as the label PDU decoder reports it (a signed 32-bit field).
_INST_NULL = -1
# Buffer sizes libpcp uses on Linux: MAXHOSTNAMELEN (sys/param.h), MAXDOMAINNAMELEN and
# MAXMACHINEIDLEN (platform_defs.h), BUFSIZ for labels.conf lines read by fgets.
_MAXHOSTNAMELEN = 64
_MAXDOMAINNAMELEN = 64
_MAXMACHINEIDLEN = 256
_BUFSIZ = 8192
_MACHINE_ID_FILE = "/etc/machine-id"
_DOMAINNAME_FILE = "/proc/sys/kernel/domainname"


class LocalLabelSetData(LabelSetData):
    """A LabelSetData plus the compound names libpcp keeps with a LOCAL context's set.

    ``compound_names`` maps a name offset to the dotted name libpcp's hash table holds
    for it ({} when the pmLabelSet's ``compound`` bit is 0).  They are the names of the
    first label file the set was created from, keyed by offsets into *that* file's
    text, so pmMergeLabelSets on this set may print one of them for an unrelated label
    that now sits at that offset; a label set read from pmcd never has any."""

    __slots__ = ("compound_names",)

    def __init__(self, inst: int, nlabels: int, json: bytes,
                 labels: List[Tuple[int, int, int, int, int]],
                 compound_names: Dict[int, bytes]) -> None:
        super().__init__(inst, nlabels, json, labels)
        self.compound_names = compound_names


def _directory_labels(current: Optional[AddedLabels], path: bytes,
                      flags: int) -> Optional[AddedLabels]:
    """__pmGetContextLabelSet: merge each entry of `path` into `current`.

    Raises pmErr(-errno) when the directory cannot be listed."""
    try:
        names = os.listdir(path)
    except OSError as exc:
        raise pmErr(-(exc.errno or errno.EIO)) from None
    # alphasort compares with strcoll; libpcp's callers leave LC_COLLATE at "C"
    for name in sorted(n for n in names if not n.startswith(b".")):
        text = _read_label_file(path + b"/" + name)
        try:
            current = add_labels(current, text, flags)
        except pmErr:
            continue  # libpcp ignores a file it cannot parse (or merge)
    return current


def _read_label_file(path: bytes) -> bytes:
    """labelfile(): at most PM_MAXLABELJSONLEN-1 bytes, as a C string; empty when the
    entry cannot be opened or read (a directory opens but reads nothing)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(PM_MAXLABELJSONLEN - 1)
    except OSError:
        return b""
    nul = data.find(b"\0")
    return data if nul < 0 else data[:nul]


def _host_name() -> bytes:
    """__pmGetLabelConfigHostName's value: gethostname() into a MAXHOSTNAMELEN buffer."""
    name = os.fsencode(os.uname().nodename)
    if len(name) + 1 > _MAXHOSTNAMELEN:  # glibc fails with ENAMETOOLONG
        return b"localhost"
    return name


def _domain_name() -> bytes:
    """__pmGetLabelConfigDomainName's value: getdomainname() (the UTS namespace's NIS
    domain, which Linux also shows in /proc), or "localdomain"."""
    try:
        with open(_DOMAINNAME_FILE, "rb") as handle:
            name = handle.read().rstrip(b"\n")
    except OSError:
        return b"localdomain"
    if not name or name == b"(none)":
        return b"localdomain"
    # glibc copies what fits in the buffer and libpcp terminates it at the last byte
    return name[:_MAXDOMAINNAMELEN - 1]


def _machine_id() -> bytes:
    """getmachineid(): fscanf("%256s") of /etc/machine-id cut to MAXMACHINEIDLEN-1."""
    try:
        with open(_MACHINE_ID_FILE, "rb") as handle:
            words = handle.read().split()
    except OSError:
        words = []
    if not words:
        return b"localmachine"
    word = words[0][:_MAXMACHINEIDLEN]
    word = word.split(b"\0", 1)[0]
    return word[:_MAXMACHINEIDLEN - 1]


def _machineid_hash_is_sha256(sysconf: bytes) -> bool:
    """labels.conf's [global] machineid_hash, read line by line like libpcp does."""
    try:
        with open(sysconf + b"/labels.conf", "rb") as handle:
            content = handle.read()
    except OSError:
        return False
    for line in _fgets_lines(content):
        text = line.lstrip(b" \t\n\v\f\r")
        if not text or text.startswith(b"#") or text.startswith(b"[global]"):
            continue
        if text.startswith(b"["):
            break
        if not text.startswith(b"machineid_hash"):
            continue
        # libpcp steps over the 14-character key plus one more (the separator)
        value = text[15:].lstrip(b" \t\n\v\f\r:=")
        return value.startswith(b"sha256")
    return False


def _fgets_lines(content: bytes) -> List[bytes]:
    """The pieces successive fgets(buf, BUFSIZ) calls return, each cut at a NUL."""
    pieces = []
    start = 0
    while start < len(content):
        end = content.find(b"\n", start, start + _BUFSIZ - 1)
        end = start + _BUFSIZ - 1 if end < 0 else end + 1
        end = min(end, len(content))
        pieces.append(content[start:end].split(b"\0", 1)[0])
        start = end
    return pieces


def _host_labels(sysconf: bytes) -> bytes:
    """local_host_labels(): the hostname, domainname and machine id label text."""
    machine_label, machine = b"machineid", _machine_id()
    if _machineid_hash_is_sha256(sysconf):
        machine_label, machine = b"machineid_sha256", hashlib.sha256(machine).hexdigest().encode()
    return b'{"hostname":"%s","domainname":"%s","%s":"%s"}' % (
        _host_name(), _domain_name(), machine_label, machine)


def _user_labels() -> bytes:
    """local_user_labels(): the calling process's group and user ids."""
    return b'{"groupid":%d,"userid":%d}' % (os.getgid() & 0xFFFFFFFF, os.getuid() & 0xFFFFFFFF)


def context_labels() -> Optional[LocalLabelSetData]:
    """The CONTEXT label set libpcp 6.0.3 answers for a PM_CONTEXT_LOCAL context
    (pmGetContextLabels, and the first set of pmLookupLabels), or None when it has no
    labels (libpcp then answers 0 sets).

    The set has inst PM_IN_NULL (-1), the label JSON text and one (name offset, name
    length, flags, value offset, value length) tuple per label, sorted by name, the
    shape pcp._live.context.HostContext.labels() gives for a pmcd's answer, plus the
    compound names libpcp keeps with it (see LocalLabelSetData).  Raises
    pmErr(-errno) when $PCP_SYSCONF_DIR/labels cannot be listed (-ENOENT when there is
    none), as libpcp does."""
    sysconf = os.fsencode(pmGetConfig("PCP_SYSCONF_DIR") or "")
    directory = sysconf + b"/labels"
    flags = PM_LABEL_CONTEXT | PM_LABEL_COMPOUND
    current = _directory_labels(None, directory, flags)
    try:
        current = _directory_labels(current, directory + b"/optional",
                                    flags | PM_LABEL_OPTIONAL)
    except pmErr:
        pass  # the optional labels are optional: libpcp ignores this status
    for text, extra_flags in ((_host_labels(sysconf), PM_LABEL_CONTEXT),
                              (_user_labels(), PM_LABEL_CONTEXT | PM_LABEL_OPTIONAL)):
        current = add_labels(current, text, extra_flags)
        if not current.labels:
            return None
    entries: List[Tuple[int, int, int, int, int]] = current.entries()
    names: Dict[int, bytes] = {}
    if current.hash is not None:
        # what a lookup finds: the newest name stored under each offset
        names = {offset: chain[0] for offset, chain in current.hash.table.items() if chain}
    return LocalLabelSetData(_INST_NULL, len(entries), current.json, entries, names)


def domain_labels(name: str) -> LabelSetData:
    """__pmGetDomainLabels: the DOMAIN labels libpcp supplies for a DSO whose PMDA
    interface predates labels, ``{"agent":NAME}`` with NAME the table's DSO name (a
    "pmda" prefix and a " DSO" suffix dropped)."""
    if name.startswith("pmda") and len(name) > 4:
        name = name[4:]
    if len(name) > 4 and name.endswith(" DSO"):
        name = name[:-4]
    json, labels, _ = parse_label_set(('{"agent":"%s"}' % name).encode("utf-8", "surrogateescape"),
                                      PM_LABEL_DOMAIN)
    return LabelSetData(_INST_NULL, len(labels), json, labels)
