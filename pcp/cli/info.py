"""`info`: metric names, descriptors, help text, labels and values, as pminfo prints them.

Where it differs from pminfo: -s (series identifiers), -x (event records unpacked),
-C and --container are not offered; a password in a host spec is not echoed in
"Cannot connect to PMCD on host"."""
from __future__ import annotations

import re
import sys
from types import SimpleNamespace

import cpmapi as c_api
from pcp import pmapi
from pcp._core.cint import wrap_int32
from pcp._core.errors import pmErr, pmErrStr, pmGetProgname, pmprintf
from pcp._libpcp import anon as _anon, options as _libopts
from pcp.cli import _common, _options, _tables
from pcp.cli._common import CliError, Source

TYPE_CHECKING = False      # typing's names without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Tuple

STANDARD = _options.STANDARD

BATCH = 128


TOOL = _tables.TOOLS["info"]

def main(argv: List[str], out: Any = None) -> int:
    """`pcp-native info ARGS`: pminfo's command line (without -a/-h/--demo: the local
    pmcd, as pminfo)."""
    parsed = _options.parse(TOOL, argv)
    opts = parsed.opts
    batch = parsed.value("batch")
    size = BATCH
    if batch is not None:
        size, whole = _libopts.strtol_int(batch)
        if not whole:
            pmprintf("%s: -b requires numeric argument\n" % pmGetProgname())
            opts.errors += 1
    for path in parsed.given.get("derived", ()):
        # pminfo -c: pmLoadDerivedConfig before the context is made; a failure is
        # reported and is not fatal
        sts = _libopts.load_derived_config(path or "")
        if sts < 0:
            sys.stderr.write("%s: derived configuration(s) error: %s\n"
                             % (pmGetProgname(), pmErrStr(sts)))
    _options.finish(parsed, _tables.DEFAULT_SOURCE["info"])
    archive, host = _options.source(opts)
    args = SimpleNamespace(
        parsed=parsed, archive=archive, host=host, names=parsed.operands,
        desc=parsed.flag("desc"), fetch=parsed.flag("fetch"), force=parsed.flag("fetchall"),
        labels=parsed.flag("labels"), pmid=parsed.flag("pmid"),
        fullpmid=parsed.flag("fullpmid"), oneline=parsed.flag("oneline"),
        helptext=parsed.flag("helptext"), batch=max(size, 1),
        fulliid=parsed.flag("fullindom"), verify=parsed.flag("verify"))
    if args.fulliid:
        args.desc = True
    if args.verify:             # pminfo -v: fetch, and report only what failed
        args.desc = args.fetch = args.force = args.labels = args.pmid = False
        args.fullpmid = args.oneline = args.helptext = False
    return run(args, out)


def run(args: Any, out: Any = None) -> int:
    """Print what pminfo prints for the names (every metric without them)."""
    out = out or sys.stdout
    src = Source(args.archive, args.host,
                 local_failure="Cannot make standalone connection on localhost")
    try:
        return _Info(src, args, out).run()
    finally:
        src.close()


def _text(text: Any) -> str:
    return text.decode("utf-8", "replace") if isinstance(text, bytes) else text


class _Info:
    def __init__(self, src: Source, args: Any, out: Any) -> None:
        self.src = src
        self.ctx = src.ctx
        self.args = args
        self.out = out
        self.values = args.fetch or args.force
        self.detail = args.desc or args.helptext or self.values or args.labels
        # pminfo fetches for labels too: in an archive, that moves the context to the
        # metric's first record, where its label records apply
        self.fetching = self.values or args.labels or args.verify
        args.pmid = args.pmid or args.fullpmid
        opts = args.parsed.opts
        _options.context_options(TOOL, args.parsed, self.ctx, src.is_archive)
        self.origin = None
        self._cache: Dict[str, Any] = {}
        self._merged: Dict[Tuple[str, ...], Optional[str]] = {}
        # the time of the record that answered the last metric's fetch from a pass over
        # the archive, until the context is moved there (see _archive_batch)
        self._fetched_at: Optional[Any] = None
        if src.is_archive:
            # pminfo's pmSetMode(PM_MODE_FORW, &opts.origin): -O, else an origin left
            # at zero (pminfo asks for no time window, so pmGetContextOptions leaves
            # it unset): the first record in the file, even one the label says is
            # before the archive's start (badarchives/badlog-4)
            # (pminfo's pmOptions is version 2: a timeval, microseconds)
            sec, nsec = opts.origin if opts.origin_optarg is not None else (0, 0)
            self.origin = pmapi.timespec(sec, nsec // 1000 * 1000)

    def run(self) -> int:
        """pminfo's main loop: each operand in turn, its metrics reported in batches
        (a pmid operand by its name, an instance domain's operand at once)."""
        need_pmid = (self.args.pmid or self.args.fullpmid or self.args.oneline or self.detail
                     or self.args.verify)
        # archives: pminfo reports one metric at a time (whatever -b says), each
        # fetched from the origin; here every metric up to the next instance domain
        # operand is one batch, reported metric by metric (see _archive_batch)
        archive = self.src.is_archive
        size = self.args.batch
        pending: List[str] = []
        status = 0
        for arg in self.args.names or [""]:
            if archive and arg[:1].isdigit() and "." in arg and arg.count(".") == 1:
                # an instance domain operand prints as it is met: what came before first
                self._report(pending, need_pmid)
                pending = []
            names, errors = self._operand(arg)
            if archive and errors:
                # an operand's errors follow what the operands before it printed (on a
                # terminal, where both streams show as they are written)
                self._report(pending, need_pmid)
                pending = []
            for msg in errors:
                sys.stderr.write("Error: %s\n" % msg)
                status = 1
            for name in names:
                pending.append(name)
                if len(pending) >= size and not archive:
                    self._report(pending, need_pmid)
                    pending = []
        self._report(pending, need_pmid)
        return status

    def _operand(self, arg: str) -> Any:
        """The leaf names of one operand (a PMNS name, or "D.C.I" a pmid's name, or
        "D.S" an instance domain, printed here), and the errors to report."""
        digits = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", arg) if arg[:1].isdigit() else None
        if digits is not None and digits.group(3) is not None:
            domain, cluster, item = (int(g) for g in digits.groups())
            pmid = (domain & 0x1FF) << 22 | (cluster & 0xFFF) << 10 | (item & 0x3FF)
            try:
                arg = self.ctx.pmNameID(pmid)
            except pmErr as e:
                return [], ["%s: %s" % (arg, pmErrStr(e.code))]
        elif digits is not None:
            self._indom((int(digits.group(1)) & 0x1FF) << 22 | (int(digits.group(2)) & 0x3FFFFF))
            return [], []
        elif arg[:1].isdigit():
            return [], ["%s: %s" % (arg, pmErrStr(c_api.PM_ERR_NAME))]
        names, errors = self.src.expand([arg])
        if self.src.is_archive and self.args.parsed.opts.nsflag:
            names, errors = self._trim(names, errors)
        return names, errors

    def _report(self, names: List[str], need_pmid: bool) -> None:
        if not names:
            return
        if not need_pmid:
            for name in names:
                self.out.write(name + "\n")
            return
        if self.src.is_archive:
            self._archive_batch(names)
        else:
            self._batch(names)

    def _indom(self, indom: int) -> None:
        """pminfo's doindom: an instance domain's line, its one-line and full help
        text and its labels."""
        if self.args.verify:
            return
        w = self.out.write
        w("\nInDom: %s%s 0x%x" % (_common.indom_text(indom),
                                   " = %u =" % indom if self.args.fulliid else "", indom))
        if self.args.oneline:
            try:
                text = self.ctx.pmLookupInDomText(indom, c_api.PM_TEXT_ONELINE)
                w("%s[%s]" % ("\n    " if self.args.fulliid else " ", _text(text)))
            except pmErr as e:
                w(" One-line Help: Error: %s" % pmErrStr(e.code))
        w("\n")
        if self.args.labels:
            raw = self._raw_labels
            domain = indom >> 22 & 0x1FF
            sets = [self._context_labels(),
                    self._cached("domain", domain, lambda: raw(domain, c_api.PM_LABEL_DOMAIN)),
                    self._cached("indom", indom, lambda: raw(indom, c_api.PM_LABEL_INDOM))]
            merged = self._merge([t for t in sets if t])
            if merged:
                w("    labels %s\n" % merged)
        if self.args.helptext:
            try:
                self._help_text(self.ctx.pmLookupInDomText(indom, c_api.PM_TEXT_HELP))
            except pmErr as e:
                w("Full Help: Error: %s\n" % pmErrStr(e.code))

    def _trim(self, names: List[str], errors: List[str]) -> Any:
        """pminfo's pmTrimNameSpace after -n on an archive: the names of the loaded PMNS
        whose metrics the archive does not hold are gone (a name asked for by itself
        is then unknown); libpcp's anonymous metrics (event.flags ...) stay."""
        held = pmapi.context_of(self.ctx).meta.descs
        pmids = self.ctx.pmLookupName(names, relaxed=1) if names else []
        kept = [n for n, p in zip(names, pmids) if p in held or _anon.is_derived(p)]
        for name in self.args.names:
            if name in names and name not in kept:
                errors.append("%s: %s" % (name, pmErrStr(c_api.PM_ERR_NAME)))
        return kept, errors

    def _batch(self, names: List[str]) -> None:
        """A batch of a host's metrics: looked up and fetched together, as pminfo."""
        w = self.out.write
        pmids = list(self.ctx.pmLookupName(names, relaxed=1))
        keep = [(n, p) for n, p in zip(names, pmids) if p != c_api.PM_ID_NULL]
        for n, p in zip(names, pmids):
            if p == c_api.PM_ID_NULL:
                w("%s: pmLookupName: %s\n" % (n, pmErrStr(c_api.PM_ERR_NAME)))
        if not keep:
            return
        names = [n for n, _ in keep]
        pmids = [p for _, p in keep]
        arrays = None
        if self.fetching:
            try:
                arrays = self.ctx.pmFetch(pmids).contents.as_lists()
            except pmErr as e:
                for n in names:
                    w("%s: pmFetch: %s\n" % (n, pmErrStr(e.code)))
                return
        for i, (name, pmid) in enumerate(zip(names, pmids)):
            self._metric(name, pmid, arrays, i)

    def _archive_batch(self, names: List[str]) -> None:
        """Archive metrics as pminfo reports them, one at a time, each fetched by itself
        from the origin. Looked up together; the values of those the archive's records
        hold are found in one pass over the records (first_fetches). Instance names and
        labels are then those in force where each metric's own fetch would have left
        the context: at the time of the record that answered it."""
        w = self.out.write
        pmids = list(self.ctx.pmLookupName(names, relaxed=1))
        found: Dict[int, Any] = {}
        absent: Optional[int] = None        # the fetch error of a metric not found
        if self.fetching:
            self._rewind()
            found, absent = pmapi.context_of(self.ctx).first_fetches(
                [p for p in pmids if p != c_api.PM_ID_NULL])
        lists: Dict[int, Any] = {}          # a result's columns, by the result's id
        for name, pmid in zip(names, pmids):
            if pmid == c_api.PM_ID_NULL:
                w("%s: pmLookupName: %s\n" % (name, pmErrStr(c_api.PM_ERR_NAME)))
                continue
            arrays = None
            i = 0
            if pmid in found:
                flat, i = found[pmid]
                arrays = lists.get(id(flat))
                if arrays is None:
                    arrays = lists[id(flat)] = pmapi.pmResult(flat).as_lists()
                # the context's time after the metric's own fetch: its instance
                # names (and labels) are those in force then
                if self.args.labels:
                    # every label lookup reads the context's time: move it there
                    self.ctx._set_mode_timespec(
                        c_api.PM_MODE_FORW, pmapi.timespec(flat.sec, flat.nsec), None)
                    self._fetched_at = None
                else:       # instance names alone, when not known already (lazily)
                    self._fetched_at = (flat.sec, flat.nsec)
            elif self.fetching and absent and not _anon.is_derived(pmid):
                self._fetched_at = None     # the failed fetch left the context at the end
                w("%s: pmFetch: %s\n" % (name, pmErrStr(absent)))
                continue
            elif self.fetching:
                self._fetched_at = None
                try:
                    self._rewind()
                    arrays = self.ctx.pmFetch([pmid]).contents.as_lists()
                except pmErr as e:
                    w("%s: pmFetch: %s\n" % (name, pmErrStr(e.code)))
                    continue
            self._metric(name, pmid, arrays, i)

    def _metric(self, name: str, pmid: int, arrays: Any, i: int) -> None:
        """One metric's report; `arrays` holds its values (the set at `i`) when fetched."""
        w = self.out.write
        desc = None
        if self.args.desc or self.values or self.args.labels or self.args.verify:
            try:
                desc = self.src.desc(pmid)
            except pmErr as e:
                w("%s: pmLookupDesc: %s\n" % (name, pmErrStr(e.code)))
                return
        if self.args.verify:
            self._verify(name, desc, arrays, i)
            return
        if self.detail:
            w("\n")
        if (self.args.force and arrays is not None
                and int(arrays.numval[i]) == c_api.PM_ERR_PROFILE):
            arrays = self._fetch_every_instance(name, pmid, desc)
            if arrays is None:
                return
            i = 0
        line = name
        if self.args.pmid:
            line += " PMID: %s" % _common.pmid_text(pmid)
        if self.args.fullpmid:
            line += " = %u = 0x%x" % (pmid, pmid)
        if self.args.oneline:
            line += self._oneline(pmid)
        w(line + "\n")
        if self.args.desc:
            for text in _common.desc_lines(self.ctx, desc, pminfo=True,
                                           fulliid=self.args.fulliid):
                w(text + "\n")
        if self.args.labels:
            self._metric_labels(pmid, desc)
        if self.args.helptext:
            self._help(pmid)
        if self.values:
            self._values(desc, arrays, i)
        if self.args.labels:
            self._instance_labels(pmid, desc)

    def _fetch_every_instance(self, name: str, pmid: int, desc: Any) -> Any:
        """pminfo -F's second try at a metric whose instances must be named
        (PM_ERR_PROFILE): a fetch with every instance pmGetInDom knows in the profile.
        The result's columns, or None once the failure is reported."""
        w = self.out.write
        if self._fetched_at is not None:
            # pmGetInDom answers at the time the metric's own fetch left the context
            self.ctx._set_mode_timespec(c_api.PM_MODE_FORW, pmapi.timespec(*self._fetched_at),
                                        None)
            self._fetched_at = None
        try:
            insts = self.ctx.pmGetInDom(indom=desc.indom)[0] or []
        except pmErr as e:
            w("%s: pmGetIndom: %s\n" % (name, pmErrStr(e.code)))
            return None
        if not insts:
            w("%s: pmGetIndom: No instances?\n" % name)
            return None
        self.ctx.pmDelProfile(desc, None)
        self.ctx.pmAddProfile(desc, insts)
        try:
            if self.src.is_archive:
                self._rewind()
            arrays = self.ctx.pmFetch([pmid]).contents.as_lists()
        except pmErr as e:
            # pminfo leaves the profile as it made it then
            w("%s: pmFetch: %s\n" % (name, pmErrStr(e.code)))
            return None
        self.ctx.pmDelProfile(desc, None)      # back to every instance
        self.ctx.pmAddProfile(desc, None)
        return arrays

    def _verify(self, name: str, desc: Any, arrays: Any, i: int) -> None:
        """pminfo -v: a line for a metric whose value cannot be had, none otherwise."""
        numval = int(arrays.numval[i])
        if desc.type == c_api.PM_TYPE_NOSUPPORT:
            self.out.write("%s: Not Supported\n" % name)
        elif numval < 0:
            self.out.write("%s: %s\n" % (name, pmErrStr(numval)))
        elif numval == 0:
            self.out.write("%s: No value(s) available\n" % name)

    def _rewind(self) -> None:
        self.ctx._set_mode_timespec(c_api.PM_MODE_FORW, self.origin, None)

    def _oneline(self, pmid: int) -> str:
        try:
            text = self.ctx.pmLookupText(pmid, c_api.PM_TEXT_ONELINE)
        except pmErr as e:
            return " One-line Help: Error: %s" % pmErrStr(e.code)
        sep = "\n    " if self.args.fullpmid else " "
        return "%s[%s]" % (sep, _text(text))

    def _help(self, pmid: int) -> None:
        try:
            text = self.ctx.pmLookupText(pmid, c_api.PM_TEXT_HELP)
        except pmErr as e:
            self.out.write("Full Help: Error: %s\n" % pmErrStr(e.code))
            return
        self._help_text(text)

    def _help_text(self, text: Any) -> None:
        """pminfo's myhelptext once the text is found: trailing newlines dropped."""
        text = _text(text).rstrip("\n")
        if text:
            self.out.write("Help:\n%s\n" % text)
        else:
            self.out.write("Help: <empty entry>\n")

    def _values(self, desc: Any, arrays: Any, i: int) -> None:
        w = self.out.write
        numval = int(arrays.numval[i])
        if numval == 0:
            w("No value(s) available!\n")
            return
        if numval < 0:
            w("Error: %s\n" % pmErrStr(numval))
            return
        first = int(arrays.first[i])
        valfmt = int(arrays.valfmt[i])
        mtype = desc.type
        indom = desc.indom
        value_text = _common.value_text
        lines = []
        if indom == c_api.PM_INDOM_NULL:
            for k in range(first, first + numval):
                lines.append("    value %s\n" % value_text(arrays, k, mtype, valfmt))
        else:
            by_id = self._indom_cache(indom)[1]     # the same for each of the values
            insts = arrays.inst
            for k in range(first, first + numval):
                inst = int(insts[k])
                iname = by_id.get(inst)
                if iname is None and self.args.force:
                    # pminfo -F: an instance gone from the instance domain in force
                    # is reported as such, without its value
                    lines.append('    inst [%d "DISAPPEARED"]\n' % inst)
                    continue
                if iname is None:
                    lines.append("pmNameIndom: indom=%s inst=%d: %s\n    inst [%d]" % (
                        _common.indom_text(indom), inst, pmErrStr(c_api.PM_ERR_INST), inst))
                else:
                    lines.append('    inst [%d or "%s"]' % (inst, iname))
                lines.append(" value %s\n" % value_text(arrays, k, mtype, valfmt))
        w("".join(lines))

    # ---- labels and instance names, with pminfo's caches --------------------------
    # pminfo keeps the context labels of its first lookup for the whole run and the
    # most recent domain, indom, cluster, item and instance-domain answers; in an
    # archive, where answers depend on the time, the caches decide what is printed.

    def _cached(self, slot: str, key: Any, fetch: Any) -> Any:
        last = self._cache.get(slot)
        if last is not None and last[0] == key:
            return last[1]
        try:
            value = fetch()
        except pmErr:
            value = None
        self._cache[slot] = (key, value)
        return value

    def _raw_labels(self, ident: int, ltype: int) -> Optional[str]:
        """The label set's JSON text as the source sent it, or None."""
        sets = pmapi.context_of(self.src.ctx).labels(ident, ltype)
        if not sets or sets[0].nlabels <= 0:
            return None
        return sets[0].json.decode("utf-8", "replace")

    def _context_labels(self) -> Any:
        if "context" not in self._cache:
            try:
                labels = self._raw_labels(c_api.PM_IN_NULL, c_api.PM_LABEL_CONTEXT)
            except pmErr:
                labels = None
            if not labels:
                import json     # labels alone need it (start-up)

                labels = json.dumps({"hostname": self.ctx.pmGetContextHostName()},
                                    separators=(",", ":"))
            self._cache["context"] = labels
        return self._cache["context"]

    def _indom_cache(self, indom: int) -> Any:
        """The instance domain's (id, name) pairs now and a name by id (the first of an
        id, as pminfo's search finds it)."""
        def get() -> Any:
            at = self._fetched_at
            host = pmapi.context_of(self.ctx)
            if at is None:
                insts, raw = host.instances(indom)
            else:       # pmGetInDom's answer after the metric's own fetch
                insts, raw = host.instances_at(indom, at)
            # the names' bytes, as pminfo prints them (the binding's pmGetInDom drops
            # every byte past ASCII: procpid-encode's "1µsec")
            names = [_text(n) for n in raw]
            pairs = list(zip(insts or [], names or []))
            by_id: Dict[int, str] = {}
            for i, name in pairs:
                by_id.setdefault(i, name)
            return pairs, by_id
        return self._cached("inames", indom, get) or ([], {})

    def _inst_name(self, indom: int, inst: int) -> Optional[str]:
        return self._indom_cache(indom)[1].get(inst)

    def _label_sets(self, pmid: int, desc: Any, with_indom: bool) -> List[str]:
        raw = self._raw_labels
        domain = pmid >> 22 & 0x1FF
        found = [self._context_labels(),
                 self._cached("domain", domain, lambda: raw(domain, c_api.PM_LABEL_DOMAIN))]
        if with_indom:
            found.append(self._cached("indom", desc.indom,
                                      lambda: raw(desc.indom, c_api.PM_LABEL_INDOM)))
        found.append(self._cached("cluster", pmid >> 10, lambda: raw(pmid, c_api.PM_LABEL_CLUSTER)))
        found.append(self._cached("item", pmid, lambda: raw(pmid, c_api.PM_LABEL_ITEM)))
        return [text for text in found if text]

    def _merge(self, sets: List[str]) -> Optional[str]:
        """pmMergeLabels of the sets, None for none or "{}"; remembered by the sets, as
        the instances of a metric, and metrics alike, merge the same sets over again."""
        if not sets:
            return None
        key = tuple(sets)
        if key in self._merged:
            return self._merged[key]
        try:
            merged = self.ctx.pmMergeLabels(sets)
        except pmErr:
            merged = None
        merged = merged if merged and merged != "{}" else None
        self._merged[key] = merged
        return merged

    def _metric_labels(self, pmid: int, desc: Any) -> None:
        merged = self._merge(self._label_sets(pmid, desc, desc.indom != c_api.PM_INDOM_NULL))
        if merged:
            self.out.write("    labels %s\n" % merged)

    def _instance_labels(self, pmid: int, desc: Any) -> None:
        indom = desc.indom
        if indom == c_api.PM_INDOM_NULL:
            return
        names = self._indom_cache(indom)[0]
        # every instance label set in the order the source gave them, empty ones too
        inst_sets = self._cached("ilabels", indom, lambda: pmapi.context_of(self.src.ctx).labels(
            indom, c_api.PM_LABEL_INSTANCES))
        base = self._label_sets(pmid, desc, True)
        if inst_sets:
            entries = [(s.inst, s.json.decode("utf-8", "replace") if s.nlabels > 0 else None)
                       for s in inst_sets]
        else:
            entries = [(inst, None) for inst, _ in names]
        for inst, extra in entries:
            inst = wrap_int32(inst)
            sets = base + ([extra] if extra else [])
            merged = self._merge(sets)
            if merged:
                iname = self._inst_name(indom, inst)
                self.out.write('    inst [%d or "%s"] labels %s\n' % (
                    inst, "DISAPPEARED" if iname is None else iname, merged))
