"""Random but valid sequences of calls, deterministic per seed: what interpreter.py plays.

Steps (lists, so that they are JSON and can be written back into the corpus):
  ["mode", slot, "FORW"|"BACK"|"INTERP", at, delta, units|None]
        pmSetMode at `at`: ["start"|"end", offset_us] (before, at or after the first or
        last record), ["rec", k, offset_us] (around the k-th record) or None (the
        context's time kept); delta in ms, or
        in PM_XTB_SET(units) units when units is given (PM_TIME_NSEC .. PM_TIME_HOUR,
        and an unknown unit, which libpcp takes as ms); deltas of both signs
  ["fetch", slot, [metric index | "unknown" | "unknown2" | "null" | ["derived", k], ...],
   duplicates allowed]
        pmFetch of a subset of pmids (named once each unless duplicates are allowed)
  ["fetcharchive", slot]
  ["addprofile"|"delprofile", slot, indom metric, [instance index | "odd"] | None]
  ["lookupindom", slot, indom metric, name | ["inst", k] | ["word", k]]
  ["nameindom", slot, indom metric, id | ["inst", k]]
  ["getindom", slot, indom metric]         pmGetInDom (at the current time in archives)
  ["extract", slot, output type]          pmExtractValue of the last result's values
  ["convscale", slot, units]              pmConvScale of the last result's first value
  ["derive", slot, metric index, expression index]
        pmRegisterDerived of a new global metric (interpreter.DERIVED_EXPRESSIONS,
        valid and invalid), which later fetches of ["derived", k] name
  ["store", slot, write_me index, value index]     live, in sequences with "stores"
  ["dup", slot]   ["destroy", slot, "own" | k]   ["use", slot, k]   ["which"]   ["new"]
  ["drop"]        the last slot made goes (its pmContext deleted: pmDestroyContext)

Calls left out because libpcp 6.0.3 itself misbehaves on them (issue 38):
  * an INTERP pmFetch naming the same pmid twice hangs in libpcp, so a fetch has no
    duplicates while its context may be in INTERP mode (contexts start in INTERP);
  * a FORW/BACK pmFetch naming an event metric twice frees a record twice in libpcp
    (abort, "double free detected"), so fetches on the archives of event records have
    no duplicates in any mode;
  * a derived pmid named twice in one pmFetch aborts libpcp (the interpreter names each
    once), and FORW/BACK fetches of derived metrics read uninitialised memory (found
    by the first version of this tester), so derived metrics are fetched only while
    the context is in INTERP mode, or live;
  * on multi-archive directories libpcp aborts ("double free or corruption") at the
    second INTERP fetch after one naming derived metrics while the time moves
    backwards: multi-corrupted, from a record's time with a delta of -1 ms, fetches
    [36, derived] then [37, 43, derived, 53, 48]; multi-xz with a PM_TIME_USEC delta of
    2^31-1 (libpcp's int arithmetic makes it -1 us while the direction stays forward),
    fetches [derived, 55, 53, 2, 13, unknown, 29] then [53, 5, 55, 22]. So derived
    metrics are fetched only while the INTERP time moves forward (_steps_forward),
    and never on multi-corrupted;
  * pmDestroyContext is a no-op in the official binding (the context dies with its
    object: "drop"), and destroying an eventrec context after a pmDupContext frees
    twice in libpcp: no "drop" on the event archives once a context was duplicated.
    The contexts left at the end are not destroyed (interpreter.main).
"""
import random
from typing import List

# The QA archives played: v2 (with <mark> records) and v3, multi-volume (plain and xz), a
# multi-archive directory (plain and xz), event records, changing instance domains,
# <mark> records between records, a truncated archive, QA badarchives.
ARCHIVE_ROOT = "/var/lib/pcp/testsuite/"
ARCHIVES = ("archives/omnibus_v3", "archives/omnibus_v2", "archives/20190628.04.03",
            "archives/ok-mv-bigbin",
            "archives/multi", "archives/multi-xz", "archives/eventrec",
            "archives/changeinst", "archives/dyninsts", "archives/interpmark",
            "archives/20101004-trunc", "badarchives/badlen-3", "badarchives/badlog-1",
            "badarchives/badti-1", "badarchives/ok-truncbin")
# More, run on demand (PCP_STATEFUL_TARGETS=all)
MORE_ARCHIVES = ("archives/20180416.10.00", "archives/mark-bug", "archives/markmerge", "archives/count-mark",
                 "archives/multi-corrupted", "badarchives/badlen-0",
                 "badarchives/badmeta-1", "badarchives/20180608.04.23-01",
                 "archives/bigace_v2", "archives/eventrec-old")
LIVE = "local:"
NO_DUPLICATE_FETCH = ("archives/eventrec", "archives/eventrec-old")
NO_DERIVED_FETCH = ("archives/multi-corrupted",)

ODD_NAMES = ("", " ", "-1", "bin-", "bin-100 extra", "bin-100 ", " bin-100", "BIN-100",
             "x" * 300, "\u00e9t\u00e9", "0", "100", "red", "node0 ")
ODD_IDS = (-1, 0, 1, 100, 2 ** 31 - 1, -2 ** 31, 2 ** 32 - 1, 2 ** 40)
OFFSETS_US = (-10 ** 9, -1, 0, 1, 500, 10 ** 6, 3 * 10 ** 8)
RECORD_OFFSETS_US = (-1000, -1, 0, 1, 1000)
DELTAS = (0, 1, 10, 1000, 60000, 2 ** 31 - 1, -1, -1000, -60000, -2 ** 31)
TIME_UNITS = (None, None, 0, 1, 2, 3, 4, 5, 9)     # PM_TIME_NSEC .. HOUR, an unknown one
N_EXPRESSIONS = 24      # len(interpreter.DERIVED_EXPRESSIONS)
N_CONV_UNITS = 9        # len(interpreter.CONV_UNITS)


def _steps_forward(delta: int, units) -> bool:
    """Whether libpcp 6.0.3's INTERP time moves forward (or stays) with this pmSetMode
    delta: not for a negative delta, nor where its int arithmetic wraps a positive one
    negative (microseconds, minutes, hours; see pcp/pmapi.py _xtb_delta)."""
    factor = {1: 1000, 4: 60, 5: 360}.get(units, 1)
    return 0 <= delta * factor < 2 ** 31


def targets(live: bool = True, more: bool = False) -> List[str]:
    names = [ARCHIVE_ROOT + a for a in ARCHIVES + (MORE_ARCHIVES if more else ())]
    return names + [LIVE] if live else names


def _at(rng: random.Random) -> list:
    if rng.random() < 0.4:
        return ["rec", rng.randrange(16), rng.choice(RECORD_OFFSETS_US)]
    return [rng.choice(("start", "end")), rng.choice(OFFSETS_US)]


def _fetch_items(rng: random.Random, derived: bool, duplicates: bool) -> list:
    items: list = [rng.randrange(60) for _ in range(rng.randint(1, 5))]
    if rng.random() < 0.25:
        items.insert(rng.randrange(len(items) + 1), rng.choice(("unknown", "unknown2", "null")))
    if derived and rng.random() < 0.5:
        items.insert(rng.randrange(len(items) + 1), ["derived", rng.randrange(20)])
    if duplicates and rng.random() < 0.3:
        items.append(items[rng.randrange(len(items))])
    return items


def generate(seed: int, target: str, length: int = 12, stores: bool = False) -> dict:
    """The sequence of `length` steps for seed on target (with pmStore steps into the
    sample PMDA when stores, live only)."""
    rng = random.Random("%d/%s%s" % (seed, target, "/stores" if stores else ""))
    live = target.startswith("local:")
    steps: list = []
    slots = 1
    # The mode each slot may be in: INTERP until a FORW or BACK is set; and whether
    # it may fetch derived metrics (INTERP with a time moving forward).
    interp = [True]
    derivable = [True]
    duplicated = False
    for _ in range(length):
        slot = rng.randrange(slots)
        ops = ["fetch", "fetch", "fetch", "addprofile", "delprofile", "lookupindom",
               "nameindom", "getindom", "extract", "convscale", "derive", "dup",
               "destroy", "use", "which"]
        if not live:
            ops += ["mode", "mode", "mode", "fetcharchive", "fetcharchive"]
        if stores:
            ops += ["store", "store", "store"]
        if slots < 3:
            ops.append("new")
        if slots > 1 and not (duplicated and target.endswith(NO_DUPLICATE_FETCH)):
            ops.append("drop")
        op = rng.choice(ops)
        if op == "mode":
            mode = rng.choice(("FORW", "BACK", "INTERP"))
            delta, units = rng.choice(DELTAS), rng.choice(TIME_UNITS)
            steps.append(["mode", slot, mode, _at(rng), delta, units])
            interp[slot] = mode == "INTERP"
            derivable[slot] = interp[slot] and _steps_forward(delta, units)
        elif op == "fetch":
            duplicates = (live or not interp[slot]) and not target.endswith(NO_DUPLICATE_FETCH)
            derived = derivable[slot] and not target.endswith(NO_DERIVED_FETCH)
            steps.append(["fetch", slot, _fetch_items(rng, derived, duplicates), duplicates])
        elif op == "fetcharchive":
            steps.append(["fetcharchive", slot])
        elif op in ("addprofile", "delprofile"):
            insts = None if rng.random() < 0.3 else [
                rng.randrange(10) if rng.random() < 0.8 else "odd"
                for _ in range(rng.randint(1, 3))]
            steps.append([op, slot, rng.randrange(8), insts])
        elif op == "lookupindom":
            pick = rng.random()
            name = ["inst", rng.randrange(10)] if pick < 0.4 else \
                ["word", rng.randrange(10)] if pick < 0.55 else rng.choice(ODD_NAMES)
            steps.append(["lookupindom", slot, rng.randrange(8), name])
        elif op == "nameindom":
            inst = ["inst", rng.randrange(10)] if rng.random() < 0.5 else rng.choice(ODD_IDS)
            steps.append(["nameindom", slot, rng.randrange(8), inst])
        elif op == "getindom":
            steps.append(["getindom", slot, rng.randrange(8)])
        elif op == "extract":
            steps.append(["extract", slot, rng.randrange(7)])
        elif op == "convscale":
            steps.append(["convscale", slot, rng.randrange(N_CONV_UNITS)])
        elif op == "derive":
            steps.append(["derive", slot, rng.randrange(60), rng.randrange(N_EXPRESSIONS)])
        elif op == "store":
            steps.append(["store", slot, rng.randrange(7), rng.randrange(9)])
        elif op == "dup":
            steps.append(["dup", slot])
            duplicated = True
        elif op == "drop":
            steps.append(["drop"])
        elif op == "destroy":
            steps.append(["destroy", slot, "own" if rng.random() < 0.15 else rng.randrange(3)])
        elif op == "use":
            steps.append(["use", slot, rng.randrange(4)])
        elif op == "which":
            steps.append(["which"])
        elif op == "new":
            steps.append(["new"])
            slots += 1
            interp.append(True)
            derivable.append(True)
    sequence = {"target": target, "steps": steps}
    if stores:
        sequence["stores"] = True
    return sequence


# Targeted shapes for the classes of difference the issue reported and the random runs
# did not meet (issue 38): each a generator of sequences around one shape, over the
# archives where it was seen.
def _forw_then_fetcharchive(rng: random.Random) -> list:
    """FORW (at odd times), a few fetches, then pmFetchArchive, on multi-archive
    directories, with direction changes between, after a pmDupContext or not."""
    steps: list = [["mode", 0, "FORW", _at(rng), rng.choice(DELTAS), None]]
    if rng.random() < 0.5:
        steps.insert(0, ["dup", 0])     # the dup shares libpcp's log control block
    for _ in range(rng.randint(0, 3)):
        steps.append(["fetch", 0, _fetch_items(rng, False, True), True])
    for _ in range(rng.randint(3, 9)):
        pick = rng.random()
        if pick < 0.6:
            steps.append(["fetcharchive", 0])
        elif pick < 0.8:
            steps.append(["fetch", 0, _fetch_items(rng, False, True), True])
        else:
            steps.append(["mode", 0, rng.choice(("FORW", "BACK")),
                          None if rng.random() < 0.5 else _at(rng), 0, None])
    return steps


def _back_after_huge_interp(rng: random.Random) -> list:
    """INTERP with a huge delta (both signs, ms or XTB units), fetches that walk far
    outside the archive, then BACK (at the time reached, or at odd times) and fetches."""
    steps: list = [["mode", 0, "INTERP", _at(rng),
                    rng.choice((2 ** 31 - 1, -2 ** 31, 2 ** 30, -60000, 10 ** 9)),
                    rng.choice(TIME_UNITS)]]
    for _ in range(rng.randint(1, 3)):
        steps.append(["fetch", 0, _fetch_items(rng, False, False), False])
    steps.append(["mode", 0, "BACK", None if rng.random() < 0.5 else _at(rng),
                  rng.choice(DELTAS), None])
    for _ in range(rng.randint(1, 4)):
        if rng.random() < 0.7:
            steps.append(["fetch", 0, _fetch_items(rng, False, True), True])
        else:
            steps.append(["fetcharchive", 0])
    return steps


def _derived_constants_interp(rng: random.Random) -> list:
    """Derived constants and expressions registered, then INTERP fetches of them (with
    archive metrics) at odd times and deltas, on truncated and bad archives."""
    steps: list = []
    for _ in range(rng.randint(1, 3)):
        steps.append(["derive", 0, rng.randrange(60), rng.choice((0, 1, 2, 3, 3, 4, 5, 8))])
    for _ in range(rng.randint(1, 3)):
        delta, units = rng.choice(DELTAS), rng.choice(TIME_UNITS)
        steps.append(["mode", 0, "INTERP", _at(rng), delta, units])
        for _ in range(rng.randint(1, 3)):
            count = rng.randint(1, 3) if _steps_forward(delta, units) else 0
            items: list = [["derived", k] for k in range(count)]
            items += [rng.randrange(60) for _ in range(rng.randint(0, 2))]
            rng.shuffle(items)
            steps.append(["fetch", 0, items, False])
    return steps


TARGETED = {
    "forw-fetcharchive": (_forw_then_fetcharchive,
                          ("archives/multi", "archives/multi-xz", "archives/markmerge",
                           "archives/multi-corrupted")),
    "back-after-interp": (_back_after_huge_interp,
                          ("archives/omnibus_v3", "archives/multi", "archives/ok-mv-bigbin",
                           "badarchives/badlen-3", "archives/20101004-trunc")),
    "derived-interp": (_derived_constants_interp,
                       ("archives/20101004-trunc", "badarchives/ok-truncbin",
                        "badarchives/badlen-3", "badarchives/badlog-1",
                        "archives/interpmark")),
}


def targeted(seed: int) -> List[dict]:
    """One sequence of each targeted shape on each of its archives, for seed."""
    out = []
    for kind, (shape, archives) in sorted(TARGETED.items()):
        for archive in archives:
            rng = random.Random("%d/%s/%s" % (seed, kind, archive))
            out.append({"target": ARCHIVE_ROOT + archive, "steps": shape(rng)})
    return out
