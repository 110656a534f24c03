"""pickle of a pmContext, as the official binding's: the instance holds the context type,
target and handle (not the context), so an unpickled context works where that handle
names the same context (the same process, a child forked after it was made) and raises
pmErr(PM_ERR_NOCONTEXT) anywhere else (a spawned process); a copy that goes destroys the
context it shares. pcp2pdf hands objects holding contexts to multiprocessing.

One program, run under the official binding and under this package, prints what each
kind of unpickled context can do; the two outputs must be the same."""
import json

import pytest

from support.difftest import require_reference, run_script

pytestmark = pytest.mark.reference

PROGRAM = r'''
import copy, gc, json, pickle, multiprocessing as mp
from pcp import pmapi
import cpmapi as c_api

ARCHIVE = "/var/lib/pcp/testsuite/archives/20041125"

def probe(ctx):
    out = {}
    calls = (("label", lambda: ctx.pmGetArchiveLabel().get_hostname()),
             ("lookup", lambda: ctx.pmLookupName(["kernel.all.cpu.user"])[0]),
             ("fetch", lambda: ctx.pmFetchArchive().contents.numpmid),
             ("properties", lambda: [ctx.type, ctx.target, ctx.ctx]),
             # this package's instance also holds the context object itself (_host),
             # which pickling leaves out
             ("state", lambda: sorted(k for k in vars(ctx) if k != "_host")),
             ("pickled again", lambda: pickle.loads(pickle.dumps(ctx)).target))
    for name, call in calls:
        try:
            out[name] = call()
        except pmapi.pmErr as e:
            out[name] = {"pmErr": e.args[0]}
        except Exception as e:
            out[name] = {type(e).__name__: str(e)}
    return out

def child(data, queue):
    queue.put(probe(pickle.loads(data)))

if __name__ == "__main__":
    ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, ARCHIVE)
    data = pickle.dumps(ctx)
    out = {}
    for method in ("fork", "spawn"):
        mpc = mp.get_context(method)
        queue = mpc.Queue()
        proc = mpc.Process(target=child, args=(data, queue))
        proc.start()
        out[method] = queue.get(timeout=60)
        proc.join()
    twin = pickle.loads(data)
    out["same process"] = probe(twin)
    out["copy.copy"] = probe(copy.copy(ctx))
    gc.collect()
    out["original after its copies went"] = probe(ctx)
    out["protocols"] = [pickle.loads(pickle.dumps(ctx, protocol=p)).ctx == ctx.ctx
                        for p in range(pickle.HIGHEST_PROTOCOL + 1)]
    out["a new context"] = probe(pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, ARCHIVE))
    print(json.dumps(out, sort_keys=True))
'''


def test_unpickled_contexts_do_what_the_official_ones_do():
    require_reference()
    ref = run_script(PROGRAM, [], ours=False, timeout=120)
    ours = run_script(PROGRAM, [], ours=True, timeout=120)
    assert ref["status"] == 0, ref["stderr"]
    assert ours["status"] == 0, ours["stderr"]
    want = json.loads(ref["stdout"])
    got = json.loads(ours["stdout"])
    assert got == want
    # what the README says: the same context in the process and in a forked child,
    # no context in a spawned one, none left once a copy sharing it has gone
    assert got["fork"]["label"] == got["same process"]["label"] == "mortenb.oslo.sgi.com"
    assert got["spawn"]["label"] == {"pmErr": -12376}
    assert got["original after its copies went"]["fetch"] == {"pmErr": -12376}
