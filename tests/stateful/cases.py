"""The corpus: shrunk sequences the stateful tester found, as regression tests.

CASES: each a shrunk sequence (the seed it came from, its target relative to
sequences.ARCHIVE_ROOT or "local:", its steps) and, when this package still answers its
last step differently from libpcp 6.0.3, the reason ("known"). A case with no reason must
answer the same on both sides; a case with a reason must still differ (a listed difference
that stops showing fails: mark it fixed).

KNOWN_PATTERNS: the known differences as step patterns (None matches anything), so that
the random run accepts a sequence whose first difference is one of them, wherever it
shows.
"""

CASES = [
    # QA badarchive badlen-3, INTERP with a huge delta: libpcp 6.0.3's __pmLogFetchInterp
    # returns PM_ERR_LOGREC from its search passes without reaching its all_done label,
    # where the request time advances by the delta; so every later fetch asks for the
    # same time and meets the same corrupt record. This package advanced the time after
    # every fetch and answered PM_ERR_EOL at the next. Fixed (interp.py fetch).
    {"seed": 0, "target": "badarchives/badlen-3",
     "steps": [["mode", 0, "INTERP", ["start", 0], 2147483647, None],
               ["fetch", 0, [0, 1, 2], False], ["fetch", 0, [0, 1, 2], False]],
     "known": None},
    # the same family: an instance lookup after the failed fetch is at the time the
    # fetch was at (no domain in force there: PM_ERR_INDOM_LOG), not a delta later.
    # Fixed with it.
    {"seed": 50, "target": "badarchives/badlen-3",
     "steps": [["mode", 0, "INTERP", ["end", -1], 60000, 2],
               ["fetch", 0, [40, 19, 0, 11, 23], False], ["lookupindom", 0, 0, ["inst", 9]]],
     "known": None},
    # INTERP with a PM_XTB_SET(PM_TIME_NSEC) delta of 2^31-1: libpcp's pmSetMode keeps
    # it whole in the 32-bit nsec field of the delta, and the advance adds the two nsec
    # fields as 32-bit ints: the sum wraps negative and the request time goes back
    # about 2.1 s, before the start of eventrec (PM_ERR_EOL at the second fetch). This
    # package normalised the delta. Fixed (pmapi._xtb_delta, interp.py advance).
    {"seed": 50, "target": "archives/eventrec",
     "steps": [["mode", 0, "INTERP", ["start", 1], 2147483647, 0],
               ["fetch", 0, [0, 6, 55, 37, 13], False], ["fetch", 0, [23, 27, 52, 46, 48], False]],
     "known": None},
    # the same arithmetic for PM_TIME_USEC: libpcp computes delta * 1000 in a C int, so
    # 2^31-1 us wraps to -1000 ns and each fetch goes back 1 us (this package went
    # 2147 s forward, past the end: PM_ERR_EOL). Minutes and hours (360 s in 6.0.3)
    # multiply in int too. Fixed (pmapi._xtb_delta).
    {"seed": 0, "target": "archives/omnibus_v3",
     "steps": [["mode", 0, "INTERP", ["start", 1000], 2147483647, 1],
               ["fetch", 0, [1], False], ["fetch", 0, [1], False], ["fetch", 0, [1], False]],
     "known": None},
    # an instance lookup at a time more than 2^31 s before the archive's instance
    # records (INTERP with a delta of -2^31 s, one fetch): libpcp 6.0.3 compares
    # timestamps by the difference of their seconds cut to a 32-bit int
    # (__pmTimestampCmp), so the record counts as in force and the name is found; this
    # package compared the times whole (PM_ERR_INDOM_LOG). Fixed (meta.py indom_at).
    {"seed": 4, "target": "badarchives/ok-truncbin",
     "steps": [["mode", 0, "INTERP", ["end", -1000000000], -2147483648, 3],
               ["fetch", 0, [11, 31, 50, "null", ["derived", 9]], False],
               ["nameindom", 0, 6, ["inst", 6]]],
     "known": None},
    # a multi-archive directory after a pmDupContext: libpcp's dup copies the archive
    # controls and shares their __pmLogCtl (refcnt 2); when either context then changes
    # archive, __pmFindOrOpenArchive leaves the shared one to the other and opens the new
    # archive in a new __pmLogCtl, with that archive's metadata alone: an instance domain
    # of the other archives is no longer known (PM_ERR_INDOM_LOG). This package kept the
    # metadata of every archive of the directory. Fixed (context.py _meta_for).
    {"seed": 6, "target": "archives/multi-xz",
     "steps": [["dup", 0], ["mode", 0, "BACK", ["rec", 8, 1000], -2147483648, 0],
               ["lookupindom", 0, 1, ["inst", 5]]],
     "known": None},
    {"seed": 14, "target": "archives/multi",
     "steps": [["dup", 0], ["mode", 0, "BACK", ["start", 300000000], -1, 0],
               ["lookupindom", 0, 5, "bin-100 extra"]],
     "known": None},
    # the same, positioning: libpcp 6.0.3's __pmLogSetTime takes lcp = acp->ac_log
    # before it calls __pmLogChangeArchive, so after that change started a new block
    # it still reads the previous archive's one: the temporal index and offsets of the
    # previous archive choose the position in the new archive's file (VolSkip alone
    # reads the new block, indexed with that position: past its end when the old
    # index is the longer, a read out of bounds that this package answers
    # PM_ERR_LOGFILE). This package positioned from the new archive's index (the
    # record before, 60 s earlier on QA multi). Fixed (context.py _set_time).
    {"seed": 221, "target": "archives/multi",
     "steps": [["dup", 0], ["mode", 0, "FORW", ["rec", 11, 1000], 2147483647, None],
               ["fetcharchive", 0]],
     "known": None},
    # live pmLookupInDom(desc, ''): libpcp sends the empty name to pmcd and takes the
    # first instance of the answer (the sample PMDA answers the whole domain: 100);
    # this package took an answer of several instances for no match (PM_ERR_INST). Fixed.
    {"seed": 0, "target": "local:", "steps": [["lookupindom", 0, 6, ""]], "known": None},
    # live pmNameInDom(desc, -1): the same request for the whole domain, first name
    # (bin-100) on libpcp, PM_ERR_INST here. Fixed.
    {"seed": 10, "target": "local:", "steps": [["nameindom", 0, 2, -1]], "known": None},
    # archive pmNameInDom(desc, -1): libpcp looks instance -1 up and answers
    # PM_ERR_INST_LOG; this package read -1 as "every instance" and answered the name of
    # a domain with one instance ("sda", "1318", "4688") or PM_ERR_INST. Fixed.
    {"seed": 10, "target": "archives/multi",
     "steps": [["mode", 0, "BACK", ["end", 1000000], 10, 0], ["nameindom", 0, 6, -1]],
     "known": None},
    {"seed": 10, "target": "archives/multi-xz",
     "steps": [["mode", 0, "INTERP", ["end", -1], 2147483647, 2], ["nameindom", 0, 1, -1]],
     "known": None},
    {"seed": 10, "target": "archives/changeinst",
     "steps": [["fetch", 1, [52, "unknown"], False], ["nameindom", 1, 5, -1]],
     "known": None},
    {"seed": 10, "target": "archives/eventrec", "steps": [["nameindom", 0, 0, -1]],
     "known": None},
    {"seed": 10, "target": "archives/omnibus_v3", "steps": [["nameindom", 0, 2, -1]],
     "known": None},
    # the same with no instance domain in force at the current time: PM_ERR_INDOM_LOG
    # comes first on libpcp. Fixed.
    {"seed": 10, "target": "archives/20180416.10.00", "steps": [["nameindom", 0, 4, -1]],
     "known": None},
    {"seed": 10, "target": "archives/multi-xz", "steps": [["nameindom", 0, 3, -1]],
     "known": None},
]

KNOWN_PATTERNS: list = []


def known_reason(target, step, before=()):
    """The reason of the known difference that (target, step) shows after the steps
    `before`, or None. A pattern's "after": operations that must come before, in
    that order."""
    for pattern in KNOWN_PATTERNS:
        if not target.endswith(pattern["target"]) or len(step) != len(pattern["step"]):
            continue
        if not all(want is None or want == got for want, got in zip(pattern["step"], step)):
            continue
        ops = iter(earlier[0] for earlier in before)
        if all(any(op == want for op in ops) for want in pattern.get("after", ())):
            return pattern["reason"]
    return None
