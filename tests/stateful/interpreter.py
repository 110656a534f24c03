"""The program that plays sequences of calls: run as it is on both sides (the official
binding under /usr/bin/python3 and this package), with ``main(BATCH_JSON)`` appended by
driver.py. Plain Python that only uses the public pcp.pmapi / cpmapi API, so that either
side can run it; it prints one JSON line: for each sequence, the answer of each step.

A sequence is {"target": archive path or "local:", "steps": [step, ...]}; the steps are
described in sequences.py. Every answer is an error code or a compact image of the
result, so that the two sides' answers can be compared step by step. An exception that is
not a pmErr is imaged by type and text (the comparison shows it), never raised.
"""
import ctypes
import json
import os
import sys

import cpmapi as c_api
from pcp import pmapi

LIVE_METRICS = ("sample.long.one", "sample.long.ten", "sample.long.hundred",
                "sample.float.ten", "sample.double.hundred", "sample.string.hullo",
                "sample.bin", "sample.dupnames.two.bin", "sample.ulong.million")
# A pmid no archive or PMDA knows (domain 500, cluster 4000, item 999).
UNKNOWN_PMID = (500 << 22) | (4000 << 10) | 999
MODES = {"FORW": c_api.PM_MODE_FORW, "BACK": c_api.PM_MODE_BACK,
         "INTERP": c_api.PM_MODE_INTERP}
XTB_FLAG = 1 << 24
DERIVED_DOMAIN = 511


def xtb(units):
    """libpcp's PM_XTB_SET(units): the delta of pmSetMode is in those time units."""
    return XTB_FLAG | ((units & 0xff) << 16)


def error_image(exc):
    if isinstance(exc, pmapi.pmErr):
        return {"err": exc.code}
    return {"exc": type(exc).__name__, "str": str(exc)[:200]}


class Slot(object):
    """One pmContext of the sequence, with what was learnt of its namespace."""

    def __init__(self, target):
        if target.startswith("local:"):
            self.ctx = pmapi.pmContext(c_api.PM_CONTEXT_HOST, target)
            self.live = True
            names = list(LIVE_METRICS)
        else:
            self.ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, target)
            self.live = False
            names = []
            self.ctx.pmTraversePMNS("", names.append)
            names = sorted(names)
        pmids = list(self.ctx.pmLookupName(names)) if names else []
        # Derived metrics (domain 511, from libpcp's global derived configuration) are
        # left out: libpcp 6.0.3 reads uninitialised memory in FORW/BACK fetches of them
        # and aborts on one named twice (issue 38).
        # Unique pmids (two names of an archive can share one), so that a fetch of
        # distinct indexes names no pmid twice: an INTERP fetch that does hangs.
        self.pmids = list(dict.fromkeys(p for p in pmids if p >> 22 != DERIVED_DOMAIN))[:60]
        self.descs = list(self.ctx.pmLookupDescs(self.pmids)) if self.pmids else []
        self.desc_of = dict(zip(self.pmids, self.descs))
        self.last = None
        if not self.live:
            label = self.ctx.pmGetArchiveLabel()
            self.start = float(label.start)
            try:
                self.end = float(self.ctx.pmGetArchiveEnd())
            except pmapi.pmErr:
                # a corrupt last record (QA badarchives): times relative to the start
                self.end = self.start

    def metric(self, k):
        return self.pmids[k % len(self.pmids)] if self.pmids else UNKNOWN_PMID

    def indom_desc(self, k):
        """The k-th metric (of those with an instance domain) and its desc."""
        with_indom = [d for d in self.descs if d.contents.indom != c_api.PM_INDOM_NULL]
        pool = with_indom or self.descs
        return pool[k % len(pool)] if pool else None

    def instances(self, desc):
        try:
            if self.live:
                return list(self.ctx.pmGetInDom(desc)[0])
            return list(self.ctx.pmGetInDomArchive(desc)[0])
        except pmapi.pmErr:
            return []


def when(slot, spec):
    """A timeval for ["start"|"end", offset_us]: that much after the start or the end
    of the archive (offset negative for before)."""
    base = slot.start if spec[0] == "start" else slot.end
    sec = base + spec[1] / 1e6
    whole = int(sec // 1)
    return pmapi.timeval(whole, int(round((sec - whole) * 1e6)))


def result_image(slot, res):
    c = res.contents
    out = {"t": [c.timestamp.tv_sec, c.timestamp.tv_usec] if not slot.live else None,
           "v": []}
    for i in range(c.numpmid):
        pmid = c.get_pmid(i)
        numval = c.get_numval(i)
        vset = [pmid, numval]
        if numval > 0:
            desc = slot.desc_of.get(pmid)
            vals = []
            for j in range(numval):
                inst = c.get_inst(i, j)
                if desc is None:
                    vals.append([inst])
                    continue
                t = desc.contents.type
                try:
                    atom = slot.ctx.pmExtractValue(c.get_valfmt(i), c.get_vlist(i, j), t, t)
                    value = atom.dref(t)
                    if isinstance(value, bytes):
                        value = value.decode("latin-1")
                    elif t in (c_api.PM_TYPE_AGGREGATE, c_api.PM_TYPE_AGGREGATE_STATIC,
                               c_api.PM_TYPE_EVENT, c_api.PM_TYPE_HIGHRES_EVENT):
                        value = "<%d>" % t
                    elif isinstance(value, float) and value != value:
                        value = "nan"
                except Exception as exc:     # the error is the answer
                    value = error_image(exc)
                vals.append([inst, value])
            vset.append(vals)
        out["v"].append(vset)
    return out


def extract(slot, outtype):
    """pmExtractValue of the first value of every vset of the last result to outtype."""
    if slot.last is None:
        return None
    c = slot.last.contents
    out = []
    for i in range(c.numpmid):
        desc = slot.desc_of.get(c.get_pmid(i))
        if c.get_numval(i) <= 0 or desc is None:
            continue
        t = desc.contents.type
        if t not in range(0, 7):
            continue
        try:
            v = slot.ctx.pmExtractValue(c.get_valfmt(i), c.get_vlist(i, 0), t, outtype)
            value = v.dref(outtype)
            if isinstance(value, bytes):
                value = value.decode("latin-1")
            if isinstance(value, float) and value != value:
                value = "nan"
            out.append(value)
        except Exception as exc:
            out.append(error_image(exc))
    return out


def play_step(state, step):
    op = step[0]
    slots = state["slots"]
    if op == "new":
        slots.append(Slot(state["target"]))
        return len(slots) - 1
    if op == "which":
        return "ok" if pmapi.pmContext.pmWhichContext() >= 0 else "none"
    slot = slots[step[1] % len(slots)]
    if op == "mode":
        _, _, mode, at, delta, units = step
        code = MODES[mode]
        if units is not None:
            code |= xtb(units)
        return slot.ctx.pmSetMode(code, when(slot, at), delta)
    if op == "fetch":
        pmids = [UNKNOWN_PMID if k == "unknown" else slot.metric(k) for k in step[2]]
        if not step[3]:
            # distinct indexes may name one pmid (modulo a short list); an INTERP fetch
            # naming one twice hangs libpcp 6.0.3, so the generator asks for none
            pmids = list(dict.fromkeys(pmids))
        slot.last = slot.ctx.pmFetch((ctypes.c_uint * len(pmids))(*pmids))
        return result_image(slot, slot.last)
    if op == "fetcharchive":
        slot.last = slot.ctx.pmFetchArchive()
        return result_image(slot, slot.last)
    if op in ("addprofile", "delprofile"):
        desc = slot.indom_desc(step[2])
        if desc is None:
            return "no-indom"
        insts = slot.instances(desc)
        chosen = [insts[k % len(insts)] if isinstance(k, int) and insts else k
                  for k in step[3]] if step[3] is not None else None
        chosen = [i if isinstance(i, int) else -1 for i in chosen] if chosen else chosen
        call = slot.ctx.pmAddProfile if op == "addprofile" else slot.ctx.pmDelProfile
        return call(desc, chosen)
    if op == "lookupindom":
        desc = slot.indom_desc(step[2])
        if desc is None:
            return "no-indom"
        name = step[3]
        if isinstance(name, list):        # ["inst", k]: the k-th instance's name
            insts = slot.instances(desc)
            if not insts:
                return "no-instances"
            name = slot.ctx.pmNameInDom(desc, insts[name[1] % len(insts)])
        return slot.ctx.pmLookupInDom(desc, name)
    if op == "nameindom":
        desc = slot.indom_desc(step[2])
        if desc is None:
            return "no-indom"
        inst = step[3]
        if isinstance(inst, list):
            insts = slot.instances(desc)
            if not insts:
                return "no-instances"
            inst = insts[inst[1] % len(insts)]
        return slot.ctx.pmNameInDom(desc, inst)
    if op == "extract":
        return extract(slot, step[2])
    if op == "dup":
        state["dups"].append(slot.ctx.pmDupContext())
        return "dup"
    if op == "destroy":
        # ["destroy", slot, "own"] or ["destroy", slot, k]: the k-th duplicate
        if step[2] == "own":
            handle = slot.ctx.ctx
        elif state["dups"]:
            handle = state["dups"][step[2] % len(state["dups"])]
        else:
            return "no-dup"
        return slot.ctx.pmDestroyContext(handle)
    raise ValueError("unknown step %r" % (step,))


def play(sequence):
    state = {"target": sequence["target"], "slots": [], "dups": []}
    answers = []
    try:
        state["slots"].append(Slot(sequence["target"]))
    except Exception as exc:
        return [error_image(exc)]
    for step in sequence["steps"]:
        try:
            answers.append(play_step(state, step))
        except Exception as exc:
            answers.append(error_image(exc))
    for slot in state["slots"]:
        slot.last = None
    return answers


def main(batch_json):
    batch = json.loads(batch_json)
    out = [play(sequence) for sequence in batch]
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
    # Contexts are not closed at exit: libpcp 6.0.3 frees twice or crashes in
    # pmDestroyContext of some archives (eventrec after a pmDupContext; the QA sweep's
    # known_differences.py lists others), which would lose the whole batch's answers.
    os._exit(0)
