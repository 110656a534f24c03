"""A fetchgroup program run unchanged on both sides (the official binding and
pcp-native): it builds a fetchgroup from a JSON plan (argv[1]), fetches it, and prints
everything the value objects hand out as one JSON line.

The plan: {"type": PM_CONTEXT_*, "target": str, "mode": [mode, offset_ms, step_ms] or
absent (archives: positioned at the start, or at the end when the offset is negative),
"items": [[kind, ...arguments]], "fetches": n, "sleep": seconds between fetches,
"clear_after": fetch index after which clear() runs (then the old objects are called
once more), "times": whether timestamps are compared (archives) or only their type}.
Kinds: ["item", metric, mtype, scale, instance], ["indom", metric, mtype, scale, maxnum],
["event", metric, field, ftype, scale, instance, maxnum], ["ts"], ["timespec"]."""

PROGRAM = r'''
import datetime, json, re, struct, sys, time
from pcp import pmapi
import cpmapi as c_api

plan = json.loads(sys.argv[1])
times = plan.get("times", False)


def image(v):
    if isinstance(v, float):
        return ["f", struct.pack(">d", v).hex()]
    if isinstance(v, datetime.datetime):
        return v.isoformat() if times else "datetime"
    return [type(v).__name__, v]


def call(fn):
    try:
        return ["ok", image(fn())]
    except pmapi.pmErr as e:
        return ["err", e.args[0]]


def show(kind, obj):
    try:
        got = obj()
    except pmapi.pmErr as e:
        return ["err", e.args[0]]
    if kind == "item":
        return ["ok", image(got)]
    if kind == "indom":
        return ["ok", [[i, n, call(f)] for i, n, f in got]]
    if kind == "event":
        return ["ok", [[image(t), call(f)] for t, f in got]]
    return ["ok", image(got)]


fg = pmapi.fetchgroup(plan["type"], plan["target"])
ctx = fg.get_context()
if plan.get("mode"):
    mode, offset_ms, step_ms = plan["mode"]
    if offset_ms < 0:
        base = ctx.pmGetHighResArchiveEnd()
    else:
        base = ctx.pmGetHighResArchiveLabel().start
    total = base.tv_sec * 10**9 + base.tv_nsec + offset_ms * 10**6
    ctx.pmSetMode(mode, pmapi.timeval(total // 10**9, total % 10**9 // 1000), step_ms)

handles = []
extends = []
for spec in plan["items"]:
    kind, args = spec[0], spec[1:]
    try:
        if kind == "item":
            h = fg.extend_item(*args)
        elif kind == "indom":
            h = fg.extend_indom(*args)
        elif kind == "event":
            h = fg.extend_event(*args)
        elif kind == "timespec":
            h = fg.extend_timespec()
        else:
            h = fg.extend_timestamp()
        handles.append((kind, h))
        extends.append(0)
    except pmapi.pmErr as e:
        extends.append([e.args[0], re.sub("0x[0-9a-f]+", "0xADDR", str(e))])

before = [show(k, h) for k, h in handles]
rows = []
for n in range(plan.get("fetches", 2)):
    try:
        status = fg.fetch()
        times = plan.get("times", False)
    except pmapi.pmErr as e:
        status = ["err", e.args[0]]
        times = False       # a failed fetch's timestamp is the time of day
    rows.append([status] + [show(k, h) for k, h in handles])
    if plan.get("clear_after") == n:
        fg.clear()
        rows.append(["cleared"] + [show(k, h) for k, h in handles])
        break
    if plan.get("sleep"):
        time.sleep(plan["sleep"])
print(json.dumps({"extend": extends, "before": before, "rows": rows}))
'''
