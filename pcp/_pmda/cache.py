"""libpcp_pmda's instance-domain cache (pmdaCache*): entries kept in instance order,
active or inactive, with a private value and the cache file under
$PCP_VAR_DIR/config/pmda/<indom> in libpcp's format ("2 ins_mode maxinst" then
"inst stamp name" lines)."""
from __future__ import annotations

import os
import time
from typing import Any, Dict, Iterator, List, Optional, Tuple

from pcp._core.config import pmGetConfig
from pcp._core.constants import PM_ERR_GENERIC, PM_ERR_INST, PM_IN_NULL

from pcp._core.constants import (PMDA_CACHE_ACTIVE, PMDA_CACHE_ADD, PMDA_CACHE_CHECK,
                                 PMDA_CACHE_CULL, PMDA_CACHE_DUMP, PMDA_CACHE_DUMP_ALL,
                                 PMDA_CACHE_EMPTY, PMDA_CACHE_HIDE, PMDA_CACHE_INACTIVE,
                                 PMDA_CACHE_LOAD, PMDA_CACHE_REORG, PMDA_CACHE_REUSE,
                                 PMDA_CACHE_SAVE, PMDA_CACHE_SIZE, PMDA_CACHE_SIZE_ACTIVE,
                                 PMDA_CACHE_SIZE_INACTIVE, PMDA_CACHE_STRINGS, PMDA_CACHE_SYNC,
                                 PMDA_CACHE_WALK_NEXT, PMDA_CACHE_WALK_REWIND)

_MAXINST = 0x7fffffff
_DIRTY = 1          # an entry added or culled: PMDA_CACHE_SAVE writes the file
_DIRTY_STAMP = 2    # an entry (re)added: its stamp is due, PMDA_CACHE_SYNC writes it


def _hashlen(name: str) -> int:
    """libpcp matches instance names up to the first space."""
    space = name.find(" ")
    return len(name) if space < 0 else space


class _Entry:
    __slots__ = ("inst", "name", "state", "private", "stamp", "key")

    def __init__(self, inst: int, name: str) -> None:
        self.inst = inst
        self.name = name
        self.state = PMDA_CACHE_INACTIVE
        self.private: Any = None
        self.stamp = 0
        self.key = b""      # pmdaCacheStoreKey's key, as a loaded cache file gives it


class IndomCache:
    """One instance domain's cache."""

    def __init__(self, indom: int) -> None:
        self.indom = indom
        self.entries: List[_Entry] = []     # in instance order
        # lookups by instance and by the name up to its first space (libpcp hashes
        # both): a PMDA looks names up per value in its fetch callback
        self._by_inst: Dict[int, _Entry] = {}
        self._by_key: Dict[str, List[_Entry]] = {}
        self.ins_mode = 0
        self.maxinst = _MAXINST
        self.dirty = 0
        self._walk: Optional[Iterator[_Entry]] = None

    def find_inst(self, inst: int) -> Optional[_Entry]:
        e = self._by_inst.get(inst)
        return e if e is not None and e.state != PMDA_CACHE_EMPTY else None

    def find_name(self, name: str) -> Optional[_Entry]:
        """The first entry (in instance order) whose name is `name`, or matches it up
        to the first space where one of the two has nothing after that part."""
        hashlen = _hashlen(name)
        found: Optional[_Entry] = None
        for e in self._by_key.get(name[:hashlen], ()):
            # same key: the same part before the first space, of the same length
            if e.state == PMDA_CACHE_EMPTY:
                continue
            if e.name == name or hashlen == len(name) or hashlen == len(e.name):
                if found is None or e.inst < found.inst:
                    found = e
        return found

    def remove(self, e: _Entry) -> None:
        self.entries.remove(e)
        if self._by_inst.get(e.inst) is e:
            del self._by_inst[e.inst]
        self._by_key[e.name[:_hashlen(e.name)]].remove(e)

    def clear(self) -> None:
        self.entries = []
        self._by_inst = {}
        self._by_key = {}

    def insert(self, name: str, inst: int = PM_IN_NULL) -> _Entry:
        if not name:
            raise _CacheError(PM_ERR_GENERIC)
        if inst != PM_IN_NULL:
            e = self.find_inst(inst)
            if e is not None:
                return e
            e = self.find_name(name)
            if e is not None:
                return e
        else:
            if self.ins_mode == 0 and self.entries:
                inst = self.entries[-1].inst + 1
                if self.entries[-1].inst >= self.maxinst:
                    self.ins_mode = 1
                    inst = PM_IN_NULL
            elif not self.entries:
                inst = 0
            if inst == PM_IN_NULL:
                inst = 0
                for e in self.entries:
                    if inst < e.inst:
                        break
                    inst += 1
        e = _Entry(inst, name)
        at = len(self.entries)
        while at > 0 and self.entries[at - 1].inst > inst:
            at -= 1
        self.entries.insert(at, e)
        self._by_inst[inst] = e
        self._by_key.setdefault(name[:_hashlen(name)], []).append(e)
        self.dirty |= _DIRTY
        return e

    def walk_rewind(self) -> None:
        self._walk = iter(list(self.entries))

    def walk_next(self) -> int:
        if self._walk is None:
            return -1
        for e in self._walk:
            if e.state == PMDA_CACHE_ACTIVE:
                return e.inst
        return -1

    def active(self) -> List[_Entry]:
        return [e for e in self.entries if e.state == PMDA_CACHE_ACTIVE]

    def path(self) -> Optional[str]:
        var = pmGetConfig("PCP_VAR_DIR")
        if var is None:
            return None
        from pcp._libpcp.strings import pmInDomStr
        directory = os.path.join(var, "config", "pmda")
        try:
            os.mkdir(directory, 0o755)      # one level, as libpcp's mkdir2
        except OSError:
            pass
        return os.path.join(directory, pmInDomStr(self.indom))

    def save(self, when: int = _DIRTY) -> int:
        """save_cache: the file, if the cache is dirty in one of the `when` ways."""
        if not self.dirty & when:
            return 0
        path = self.path()
        if path is None:
            return PM_ERR_GENERIC
        try:
            with open(path, "w", encoding="utf-8") as f:
                f.write("2 %d %d\n" % (self.ins_mode, self.maxinst))
                now = int(time.time())
                count = 0
                for e in self.entries:
                    if e.state == PMDA_CACHE_EMPTY:
                        continue
                    if e.stamp == 0:
                        e.stamp = now
                    if e.key:
                        f.write("%d %d [%s] %s\n" % (e.inst, e.stamp, e.key.hex(), e.name))
                    else:
                        f.write("%d %d %s\n" % (e.inst, e.stamp, e.name))
                    count += 1
        except OSError as exc:
            return -exc.errno
        self.dirty = 0
        return count

    def load(self) -> int:
        path = self.path()
        if path is None:
            return PM_ERR_GENERIC
        try:
            with open(path, "r", encoding="utf-8", errors="surrogateescape") as f:
                lines = f.read().splitlines()
        except OSError as exc:
            return -exc.errno
        if not lines:
            return 0
        head = lines[0].split()
        if len(head) < 2 or not head[0].isdigit() or int(head[0]) not in (1, 2):
            return PM_ERR_GENERIC
        self.ins_mode = int(head[1])
        if int(head[0]) == 2 and len(head) >= 3:
            self.maxinst = int(head[2])
        count = 0
        for line in lines[1:]:
            fields = line.lstrip().split(None, 2)
            if len(fields) < 3 or not fields[0].isdigit():
                return PM_ERR_GENERIC
            name = fields[2]
            key = b""
            if name.startswith("["):
                key, name = _split_key(name)
                if key is None:
                    return PM_ERR_GENERIC
            e = self.insert(name, int(fields[0]))
            e.stamp = int(fields[1]) if fields[1].isdigit() else 0
            e.key = key
            count += 1
        return count


def _split_key(text: str) -> Tuple[Optional[bytes], str]:
    """A cache file's "[hex] name" as libpcp's load_cache reads it: the key is the
    first len/2 hex pairs inside the brackets, and the name starts two characters
    after the last pair read (the "]" and the space, or whatever stands there), then
    past blanks. (None, "") for a record libpcp calls illegal."""
    end = text.find("]")
    if end < 0:
        return None, ""
    pairs = (end - 1) // 2
    key = bytearray()
    for i in range(pairs):
        pair = text[1 + 2 * i:3 + 2 * i]
        try:
            key.append(int(pair, 16))
        except ValueError:       # sscanf's %2x read nothing: libpcp keeps a stale byte
            key.append(0)
    after = 1 + 2 * pairs + 2
    if after > len(text):
        return None, ""
    name = text[after:].lstrip()
    if not name:
        return None, ""
    return bytes(key), name


class _CacheError(Exception):
    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


_caches: Dict[int, IndomCache] = {}
# Bumped by every operation that may change a cache's entries or states: the agent's
# fetch plans (instance lists per indom) are kept while it stays the same.
generation = 0


def check(indom: int) -> bool:
    return indom in _caches


def get(indom: int) -> IndomCache:
    global generation
    cache = _caches.get(indom)
    if cache is None:
        generation += 1         # a new cache indom: check() changes its answer
        cache = _caches[indom] = IndomCache(indom)
    return cache


def cache_op(indom: int, op: int) -> int:
    """pmdaCacheOp."""
    global generation
    if op == PMDA_CACHE_CHECK:
        return 1 if indom in _caches else 0
    generation += 1
    cache = get(indom)
    if op == PMDA_CACHE_LOAD:
        return cache.load()
    if op == PMDA_CACHE_SAVE:
        return cache.save(_DIRTY)
    if op == PMDA_CACHE_SYNC:
        return cache.save(_DIRTY | _DIRTY_STAMP)
    if op in (PMDA_CACHE_ACTIVE, PMDA_CACHE_INACTIVE):
        for e in cache.entries:
            if e.state != PMDA_CACHE_EMPTY:
                e.state = op
        return 0
    if op == PMDA_CACHE_CULL:
        cache.clear()
        cache.dirty |= _DIRTY
        return 0
    if op == PMDA_CACHE_SIZE:
        return len([e for e in cache.entries if e.state != PMDA_CACHE_EMPTY])
    if op == PMDA_CACHE_SIZE_ACTIVE:
        return len(cache.active())
    if op == PMDA_CACHE_SIZE_INACTIVE:
        return len([e for e in cache.entries if e.state == PMDA_CACHE_INACTIVE])
    if op == PMDA_CACHE_WALK_REWIND:
        cache.walk_rewind()
        return 0
    if op == PMDA_CACHE_WALK_NEXT:
        return cache.walk_next()
    if op in (PMDA_CACHE_REUSE, PMDA_CACHE_REORG, PMDA_CACHE_DUMP, PMDA_CACHE_DUMP_ALL,
              PMDA_CACHE_STRINGS):
        if op == PMDA_CACHE_REUSE:
            cache.ins_mode = 1
        return 0
    return -22     # -EINVAL


def store(indom: int, op: int, name: str, private: Any) -> int:
    """pmdaCacheStore: ADD (active), HIDE (inactive) or CULL one name; the inst."""
    global generation
    generation += 1
    cache = get(indom)
    if op == PMDA_CACHE_CULL:
        e = cache.find_name(name)
        if e is None:
            return PM_ERR_INST
        cache.remove(e)
        cache.dirty |= _DIRTY
        return e.inst
    e = cache.find_name(name)
    if e is None:
        if op != PMDA_CACHE_ADD:
            return PM_ERR_INST
        try:
            e = cache.insert(name)
        except _CacheError as exc:
            return exc.code
    if op == PMDA_CACHE_ADD:
        e.state = PMDA_CACHE_ACTIVE
        e.private = private
        e.key = b""             # pmdaCacheStore stores no key
        e.stamp = 0             # stamped at the next save
        cache.dirty |= _DIRTY_STAMP
    elif op == PMDA_CACHE_HIDE:
        e.state = PMDA_CACHE_INACTIVE
    return e.inst


def lookup(indom: int, inst: int) -> Optional[_Entry]:
    cache = _caches.get(indom)
    return None if cache is None else cache.find_inst(inst)


def lookup_name(indom: int, name: str) -> Optional[_Entry]:
    cache = _caches.get(indom)
    return None if cache is None else cache.find_name(name)


def resize(indom: int, maximum: int) -> int:
    global generation
    generation += 1
    cache = get(indom)
    if maximum < 0:
        return -22
    for e in cache.entries:
        if e.inst > maximum:
            return -22
    cache.maxinst = maximum
    return 0
