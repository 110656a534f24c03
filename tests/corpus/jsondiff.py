"""Where two JSON images differ: a list of (path, reference, ours) for each leaf that
differs, the path a tuple of keys and indexes from the root."""

import json


def differences(ref, ours, path=(), out=None, limit=None):
    """Differing leaves of two JSON values, at most `limit` of them (None: all)."""
    if out is None:
        out = []
    if limit is not None and len(out) >= limit:
        return out
    if isinstance(ref, dict) and isinstance(ours, dict):
        for k in sorted(set(ref) | set(ours)):
            if k not in ref or k not in ours:
                out.append((path + (k,), ref.get(k, "<absent>"), ours.get(k, "<absent>")))
            else:
                differences(ref[k], ours[k], path + (k,), out, limit)
    elif isinstance(ref, list) and isinstance(ours, list):
        for i in range(max(len(ref), len(ours))):
            if i >= len(ref) or i >= len(ours):
                out.append((path + (i,), ref[i] if i < len(ref) else "<absent>",
                            ours[i] if i < len(ours) else "<absent>"))
            else:
                differences(ref[i], ours[i], path + (i,), out, limit)
    elif type(ref) is not type(ours) or ref != ours:
        out.append((path, ref, ours))
    return out


def leaves(x):
    """How many leaf values a JSON value holds (what a comparison of it compares)."""
    if isinstance(x, dict):
        return sum(leaves(v) for v in x.values())
    if isinstance(x, list):
        return sum(leaves(v) for v in x)
    return 1


def shown(diffs, limit=15):
    """The first `limit` differences as the corpus tests report them: each leaf's path,
    then the reference's value and ours (JSON, cut at 300 characters)."""
    return "\n".join("  %s\n    libpcp: %s\n    ours:   %s" % (
        "/".join(map(str, p)), json.dumps(r)[:300], json.dumps(o)[:300])
        for p, r, o in diffs[:limit])
