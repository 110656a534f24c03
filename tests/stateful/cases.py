"""The corpus: shrunk sequences the stateful tester found, as regression tests.

CASES: each a shrunk sequence (seed and target it came from, its steps) and, when this
package still answers its last step differently from libpcp 6.0.3, the reason (KNOWN).
A case with no reason must answer the same on both sides; a case with a reason must
still differ (a listed difference that stops showing fails: move it to fixed).

KNOWN_PATTERNS: the same differences as step patterns (None matches anything), so that
the random run accepts a sequence whose first difference is one of them, wherever it
shows.
"""

LOOKUP_EMPTY_NAME_LIVE = (
    "live pmLookupInDom(desc, ''): libpcp sends the empty name to pmcd and the sample "
    "PMDA answers its first instance (100); this package refuses an empty name itself "
    "(PM_ERR_INST) without asking pmcd")

CASES = [
    {"seed": 0, "target": "local:",
     "steps": [["lookupindom", 0, 6, ""]],
     "known": LOOKUP_EMPTY_NAME_LIVE},
]

KNOWN_PATTERNS = [
    {"target": "local:", "step": ["lookupindom", None, None, ""],
     "reason": LOOKUP_EMPTY_NAME_LIVE},
]


def known_reason(target, step):
    """The reason of the known difference that (target, step) shows, or None."""
    for pattern in KNOWN_PATTERNS:
        if not target.endswith(pattern["target"]) or len(step) != len(pattern["step"]):
            continue
        if all(want is None or want == got for want, got in zip(pattern["step"], step)):
            return pattern["reason"]
    return None
