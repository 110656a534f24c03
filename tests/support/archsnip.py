"""Snippet code shared by the archive differential tests.

``snippet(body, **consts)`` returns difftest snippet text: constant
assignments (repr'ed), then HELPERS, then `body`.  Everything here uses only
the official ``pcp.pmapi`` API (plus ctypes on what it returns) and the
prelude helpers of difftest (catch, err_info, jsonable, _dump_vset, ...).
"""

HELPERS = r'''
EOL = c_api.PM_ERR_EOL
FORW, BACK, INTERP = c_api.PM_MODE_FORW, c_api.PM_MODE_BACK, c_api.PM_MODE_INTERP

def actx(name, flags=0):
    return pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE | flags, name)

_DESC_TYPE = {}
def desc_type(ctx, pmid):
    key = (id(ctx), int(pmid))
    if key not in _DESC_TYPE:
        try:
            _DESC_TYPE[key] = ctx.pmLookupDesc(pmid).contents.type
        except pmapi.pmErr as e:
            _DESC_TYPE[key] = None
    return _DESC_TYPE[key]

def cc(fn, *args):
    """Compact catch: the value, or just the error code / exception type."""
    try:
        return jsonable(fn(*args))
    except pmapi.pmErr as e:
        return {"err": e.code}
    except Exception as e:
        return {"exc": tname(e)}

def fake_desc(indom, pmid=0, type=0):
    """A pmDesc pointer built by hand (for calls taking a pmDesc)."""
    d = pmapi.pmDesc()
    d.pmid, d.type, d.indom = pmid, type, indom
    return ctypes.pointer(d)

def ts_pair(ts, highres):
    return [ts.tv_sec, ts.tv_nsec if highres else ts.tv_usec]

def rec_image(ctx, res, highres=False, event_blobs=False):
    """Field-by-field image of one archive record (pmResult pointer)."""
    c = res.contents
    out = {"ts": ts_pair(c.timestamp, highres), "numpmid": c.numpmid, "vsets": []}
    for i in range(c.numpmid):
        pmid = c.get_pmid(i)
        t = desc_type(ctx, pmid)
        try:
            vs = _dump_vset(c, i, -1 if t is None else t, True, ())
            if t is None:
                vs["no_desc"] = True
            if event_blobs and t in (c_api.PM_TYPE_EVENT, c_api.PM_TYPE_HIGHRES_EVENT) \
                    and c.get_numval(i) > 0:
                blobs = []
                for j in range(c.get_numval(i)):
                    blk = c.get_vlist(i, j).value.pval.contents
                    blobs.append(ctypes.string_at(addressof(blk), blk.vlen).hex())
                vs["event_blobs"] = blobs
        except Exception as e:
            vs = {"image_error": err_info(e)}
        out["vsets"].append(vs)
    return out

def rec_brief(res, highres=False):
    """Timestamp, pmids and numvals only."""
    c = res.contents
    return {"ts": ts_pair(c.timestamp, highres), "numpmid": c.numpmid,
            "sets": [[c.get_pmid(i), c.get_numval(i)] for i in range(c.numpmid)]}

def walk(ctx, highres=False, cap=200, sticky=3, brief=False, event_blobs=False):
    """pmFetch(HighRes)Archive until PM_ERR_EOL; at most `cap` calls, and at
    most `sticky` identical errors in a row."""
    fetch = ctx.pmFetchHighResArchive if highres else ctx.pmFetchArchive
    out = []
    last, repeat = None, 0
    for _ in range(cap):
        try:
            r = fetch()
        except pmapi.pmErr as e:
            out.append(err_info(e))
            if e.code == EOL:
                break
            repeat = repeat + 1 if e.code == last else 1
            last = e.code
            if repeat >= sticky:
                out.append({"stopped": "sticky error"})
                break
            continue
        except Exception as e:
            out.append(err_info(e))
            break
        last, repeat = None, 0
        out.append(rec_brief(r, highres) if brief else rec_image(ctx, r, highres, event_blobs))
    else:
        out.append({"stopped": "cap"})
    return out

def set_back_at_end(ctx, highres=False):
    if highres:
        end = ctx.pmGetHighResArchiveEnd()
        ctx.pmSetModeHighRes(BACK, end, None)
    else:
        end = ctx.pmGetArchiveEnd()
        ctx.pmSetMode(BACK, end, 0)

def tv(sec, usec):
    return pmapi.timeval(sec, usec)

def tsp(sec, nsec):
    return pmapi.timespec(sec, nsec)

def label_image(lab, highres):
    out = {"type": tname(lab), "magic": lab.magic, "pid": lab.pid_t,
           "hostname": lab.get_hostname(), "raw_hostname": jsonable(lab.hostname),
           "tz": lab.get_timezone()}
    if highres:
        out["start"] = [lab.start.tv_sec, lab.start.tv_nsec]
        out["zoneinfo"] = lab.get_zoneinfo()
        out["raw_timezone"] = jsonable(lab.timezone)
        out["raw_zoneinfo"] = jsonable(lab.zoneinfo)
    else:
        out["start"] = [lab.start.tv_sec, lab.start.tv_usec]
        out["raw_tz"] = jsonable(lab.tz)
    out["start_type"] = tname(lab.start)
    return out

def fetch_image(ctx, pmids, highres=False):
    f = ctx.pmFetchHighRes if highres else ctx.pmFetch
    r = f(pmids)
    c = r.contents
    out = {"ts": ts_pair(c.timestamp, highres), "numpmid": c.numpmid, "vsets": []}
    for i in range(c.numpmid):
        pmid = c.get_pmid(i)
        t = desc_type(ctx, pmid)
        try:
            out["vsets"].append(_dump_vset(c, i, -1 if t is None else t, True, ()))
        except Exception as e:
            out["vsets"].append({"image_error": err_info(e)})
    return out

def fetch_seq(ctx, pmids, n=400, highres=False):
    out = []
    for _ in range(n):
        try:
            out.append(fetch_image(ctx, pmids, highres))
        except pmapi.pmErr as e:
            out.append(err_info(e))
            break
    return out

def fetch_ts_seq(ctx, pmids, n=400, highres=False):
    """Timestamps and numvals of successive pmFetch results."""
    f = ctx.pmFetchHighRes if highres else ctx.pmFetch
    out = []
    for _ in range(n):
        try:
            r = f(pmids)
        except pmapi.pmErr as e:
            out.append(err_info(e))
            break
        c = r.contents
        out.append([ts_pair(c.timestamp, highres),
                    [c.get_numval(i) for i in range(c.numpmid)]])
    return out
'''


def snippet(body, **consts):
    head = "".join("%s = %r\n" % (k, v) for k, v in sorted(consts.items()))
    return head + HELPERS + body


# ---------------------------------------------------------------------------
# test-side comparison with a focused diff: archive sections are large (full
# walks), and a unified diff of megabytes of JSON is both slow and unreadable.

def _focus(ours, ref, path):
    """Descend to the smallest element that differs; return (path, ours, ref,
    note)."""
    from support import difftest
    if difftest.same(ours, ref):
        return None
    if isinstance(ours, list) and isinstance(ref, list):
        for i, (a, b) in enumerate(zip(ours, ref)):
            if not difftest.same(a, b):
                return _focus(a, b, "%s[%d]" % (path, i))
        n = min(len(ours), len(ref))
        return (path, ours[n:n + 3], ref[n:n + 3],
                "length %d (ours) != %d (reference); first extra elements shown"
                % (len(ours), len(ref)))
    if isinstance(ours, dict) and isinstance(ref, dict) and set(ours) == set(ref):
        for k in sorted(ours):
            if not difftest.same(ours[k], ref[k]):
                return _focus(ours[k], ref[k], "%s.%s" % (path, k))
    return (path, ours, ref, "")


def check(pair, key):
    """Like Pair.check(key), but on a difference shows only the smallest
    differing element (with its path), not the whole section."""
    from support import difftest
    ref = pair.ref_section(key)
    ours = pair.ours_section(key)
    if difftest.same(ours, ref):
        return ref
    if isinstance(ours, dict) and "__crash__" in ours:
        difftest.assert_equal(ours, ref, key)
    path, o, r, note = _focus(ours, ref, key)
    raise AssertionError("%s: ours differs from the reference at %s %s\nfirst difference: %s\n%s"
                         % (key, path, note, difftest._first_diff(o, r),
                            difftest.diff_text(o, r, limit=120)))


def prebuild(pair_for, keys, workers=None):
    """Build the Pairs of `keys` concurrently (each runs two interpreters
    that mostly wait on file I/O), so that parametrised tests do not pay for
    them one after the other.  Errors surface later, when a test asks for
    the failed key again."""
    import concurrent.futures
    import os
    workers = workers or max(2, min(8, (os.cpu_count() or 2)))
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as ex:
        futs = [ex.submit(pair_for, k) for k in keys]
        for f in futs:
            try:
                f.result()
            except Exception:
                pass


class PairCache:
    """The Pairs of one test module, one per archive variant (or damaged case): each is
    built once by `build(key)`, and the first test that asks builds them all
    concurrently (prebuild). `fixture()` is the module's parametrised `pair` fixture."""

    def __init__(self, build, keys):
        self.build = build
        self.keys = list(keys)
        self.pairs = {}
        self.prebuilt = False

    def __call__(self, key):
        if key not in self.pairs:
            self.pairs[key] = self.build(key)
        return self.pairs[key]

    def fixture(self, accept=None):
        """A module-scoped fixture over the keys giving each key's Pair; `accept(pair)`,
        when given, may turn a value into an xfail or skip first."""
        import pytest

        @pytest.fixture(scope="module", params=self.keys)
        def pair(request, pmcd, reference_binding):
            if not self.prebuilt:
                self.prebuilt = True
                prebuild(self, self.keys)
            got = self(request.param)
            return accept(got) if accept is not None else got
        return pair
