"""The instance profile of a context (pmAddProfile / pmDelProfile): a global state plus
per-indom entries, kept as libpcp keeps it. Host contexts send it to pmcd (protocol.md
9.2); archive contexts filter values with it locally."""
from __future__ import annotations

from pcp._core.constants import PM_ERR_PROFILESPEC, PM_INDOM_NULL
from pcp._core.errors import pmErr
from pcp._core.wire import CTXID, PM_PROFILE_EXCLUDE, PM_PROFILE_INCLUDE
from pcp._decode import pdu

TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    from typing import List, Optional, Sequence, Tuple


class Profile:
    """The instance profile (protocol.md 9.2): a global state plus per-indom entries."""

    __slots__ = ("g_state", "entries", "sent", "version")

    def __init__(self) -> None:
        self.g_state = PM_PROFILE_INCLUDE
        # indom -> [state, instance list]; dicts keep creation order, as libpcp sends it
        self.entries: dict = {}
        self.sent = False
        self.version = 0        # bumped by every change: caches of the profile key on it

    def copy(self) -> "Profile":
        p = Profile()
        p.g_state = self.g_state
        p.entries = {k: [v[0], list(v[1])] for k, v in self.entries.items()}
        return p

    def _change(self, indom: int, insts: Optional[Sequence[int]], adding: bool) -> None:
        self.sent = False
        self.version += 1
        if indom == PM_INDOM_NULL:
            if insts:
                raise pmErr(PM_ERR_PROFILESPEC)
            self.entries.clear()
            self.g_state = PM_PROFILE_INCLUDE if adding else PM_PROFILE_EXCLUDE
            return
        entry = self.entries.get(indom)
        if entry is None:
            # A new entry starts as "exclude everything" (libpcp behaviour).
            entry = self.entries[indom] = [PM_PROFILE_EXCLUDE, []]
        if not insts:
            entry[0] = PM_PROFILE_INCLUDE if adding else PM_PROFILE_EXCLUDE
            entry[1] = []
            return
        state, listed = entry
        # INCLUDE entries list exclusions, EXCLUDE entries list inclusions.
        grow = (state == PM_PROFILE_EXCLUDE) == adding
        if grow:
            for i in insts:
                if i not in listed:
                    listed.append(i)
        else:
            drop = set(insts)
            entry[1] = [i for i in listed if i not in drop]

    def add(self, indom: int, insts: Optional[Sequence[int]]) -> None:
        self._change(indom, insts, True)

    def delete(self, indom: int, insts: Optional[Sequence[int]]) -> None:
        self._change(indom, insts, False)

    def includes(self, indom: int, inst: int) -> bool:
        """Whether an instance passes the profile (archives filter values locally)."""
        entry = self.entries.get(indom)
        if entry is None:
            return self.g_state == PM_PROFILE_INCLUDE
        state, listed = entry
        # INCLUDE entries list exclusions, EXCLUDE entries list inclusions.
        return (inst in listed) == (state == PM_PROFILE_EXCLUDE)

    def passing(self) -> Tuple[bool, List[Tuple[int, bool, List[int]]]]:
        """The profile as the C filters take it: whether an indom with no entry passes,
        and per entry (indom, whether its listed instances are the only ones that pass,
        its instances)."""
        return (self.g_state == PM_PROFILE_INCLUDE,
                [(indom, state == PM_PROFILE_EXCLUDE, list(listed))
                 for indom, (state, listed) in self.entries.items()])

    def encode(self, from_: int) -> bytes:
        entries = [(indom, st, lst) for indom, (st, lst) in self.entries.items()]
        return pdu.encode_profile(from_, CTXID, self.g_state, entries)
