"""Random but valid sequences of calls, deterministic per seed: what interpreter.py plays.

Steps (lists, so that they are JSON and can be written back into the corpus):
  ["mode", slot, "FORW"|"BACK"|"INTERP", ["start"|"end", offset_us], delta, units|None]
        pmSetMode at that time (before, at or after the first or last record), delta in
        ms, or in PM_XTB_SET(units) units when units is given
  ["fetch", slot, [metric index | "unknown", ...], duplicates allowed]
        pmFetch of a subset of pmids (named once each unless duplicates are allowed)
  ["fetcharchive", slot]
  ["addprofile"|"delprofile", slot, indom metric, [instance index | "odd"] | None]
  ["lookupindom", slot, indom metric, name | ["inst", k]]
  ["nameindom", slot, indom metric, id | ["inst", k]]
  ["extract", slot, output type]          pmExtractValue of the last result's values
  ["dup", slot]   ["destroy", slot, "own" | k]   ["which"]   ["new"]

Calls left out because libpcp 6.0.3 itself misbehaves on them (issue 38):
  * an INTERP pmFetch naming the same pmid twice hangs in libpcp, so a fetch has no
    duplicates while its context may be in INTERP mode (contexts start in INTERP);
  * a FORW/BACK pmFetch naming an event metric twice frees a record twice in libpcp
    (abort, "double free detected"), so fetches on the archive of event records have no
    duplicates in any mode;
  * derived metrics are not registered at all: a derived pmid named twice aborts, and
    FORW/BACK fetches of derived metrics read uninitialised memory.
"""
import random
from typing import List

# The QA archives played: v2 and v3, multi-volume compressed, a multi-archive directory
# (plain and xz), event records, a changing instance domain, a QA badarchive.
ARCHIVE_ROOT = "/var/lib/pcp/testsuite/"
ARCHIVES = ("archives/omnibus_v3", "archives/20180416.10.00", "archives/multi",
            "archives/multi-xz", "archives/eventrec", "archives/changeinst",
            "badarchives/badlen-3")
LIVE = "local:"
NO_DUPLICATE_FETCH = ("archives/eventrec",)

ODD_NAMES = ("", " ", "-1", "bin-", "bin-100 extra", "x" * 300, "\u00e9t\u00e9", "0")
ODD_IDS = (-1, 0, 1, 2 ** 31 - 1, -2 ** 31, 2 ** 32 - 1, 2 ** 40)
OFFSETS_US = (-10 ** 9, -1, 0, 1, 500, 10 ** 6, 3 * 10 ** 8)
DELTAS_MS = (0, 1, 10, 1000, 60000, 2 ** 31 - 1)
TIME_UNITS = (None, None, 0, 1, 2, 3)     # PM_TIME_NSEC .. PM_TIME_SEC


def targets(live: bool = True) -> List[str]:
    names = [ARCHIVE_ROOT + a for a in ARCHIVES]
    return names + [LIVE] if live else names


def generate(seed: int, target: str, length: int = 12) -> dict:
    """The sequence of `length` steps for seed on target."""
    rng = random.Random("%d/%s" % (seed, target))
    live = target.startswith("local:")
    steps = []
    slots = 1
    # The mode each slot may be in: INTERP until a FORW or BACK is set.
    interp = [True]
    for _ in range(length):
        slot = rng.randrange(slots)
        ops = ["fetch", "fetch", "fetch", "addprofile", "delprofile", "lookupindom",
               "nameindom", "extract", "dup", "destroy", "which"]
        if not live:
            ops += ["mode", "mode", "mode", "fetcharchive", "fetcharchive"]
        if slots < 3:
            ops.append("new")
        op = rng.choice(ops)
        if op == "mode":
            mode = rng.choice(("FORW", "BACK", "INTERP"))
            at = [rng.choice(("start", "end")), rng.choice(OFFSETS_US)]
            delta, units = rng.choice(DELTAS_MS), rng.choice(TIME_UNITS)
            if units == 0 and delta > 10 ** 9:
                delta = 10 ** 9     # a known difference (cases.NSEC_HUGE_DELTA)
            steps.append(["mode", slot, mode, at, delta, units])
            interp[slot] = mode == "INTERP"
        elif op == "fetch":
            count = rng.randint(1, 5)
            pmids = [rng.randrange(60) for _ in range(count)]
            if rng.random() < 0.2:
                pmids.insert(rng.randrange(len(pmids) + 1), "unknown")
            duplicates = not interp[slot] and not target.endswith(NO_DUPLICATE_FETCH)
            if duplicates and rng.random() < 0.3:
                pmids.append(pmids[0])
            steps.append(["fetch", slot, pmids, duplicates])
        elif op == "fetcharchive":
            steps.append(["fetcharchive", slot])
        elif op in ("addprofile", "delprofile"):
            insts = None if rng.random() < 0.3 else [
                rng.randrange(10) if rng.random() < 0.8 else "odd"
                for _ in range(rng.randint(1, 3))]
            steps.append([op, slot, rng.randrange(8), insts])
        elif op == "lookupindom":
            name = ["inst", rng.randrange(10)] if rng.random() < 0.5 else rng.choice(ODD_NAMES)
            steps.append(["lookupindom", slot, rng.randrange(8), name])
        elif op == "nameindom":
            inst = ["inst", rng.randrange(10)] if rng.random() < 0.5 else rng.choice(ODD_IDS)
            steps.append(["nameindom", slot, rng.randrange(8), inst])
        elif op == "extract":
            steps.append(["extract", slot, rng.randrange(7)])
        elif op == "dup":
            steps.append(["dup", slot])
        elif op == "destroy":
            steps.append(["destroy", slot, "own" if rng.random() < 0.15 else rng.randrange(3)])
        elif op == "which":
            steps.append(["which"])
        elif op == "new":
            steps.append(["new"])
            slots += 1
            interp.append(True)
    return {"target": target, "steps": steps}
