"""pcp.pmcc: the official binding's convenience classes over pcp.pmapi.

PCP's pmcc-based tools (pmiostat and the like) build a MetricGroupManager from their
options, put named groups of metrics in it, and let its run loop fetch and hand each
fetch to a MetricGroupPrinter. This module offers the same classes, attributes and
behaviour as the official module (written for this package, over its pmapi):

- MetricCore: what PMAPI knows of one metric name (pmid, descriptor).
- Metric: one metric of a group, with its last two value sets, the values as
  (pmValue, instance name, value) triples and counters converted to rates.
- MetricCache: a pmContext that remembers metric cores and instance domains.
- MetricGroup: a dict of Metrics fetched together with one pmFetch.
- MetricGroupPrinter: the report hook a tool overrides.
- MetricGroupManager: a dict of MetricGroups and the fetch/report loop.

The official module's quirks are kept where a tool can see them: an instance name is a
str, but a singular metric's is b'PM_IN_NULL'; a counter whose value went down since the
previous fetch is left out of the rates; errors while looking names up or fetching are
written to stderr and end the program (SystemExit), a fetch past the end of an archive
with status 0.
"""
from __future__ import annotations

import sys
# POINTER, c_int, cast, pmDesc and pmValue are names of the official module, which imports them
from ctypes import POINTER, c_char_p, c_int, c_uint, cast  # noqa: F401
from itertools import repeat

from cpmapi import (PM_CONTEXT_ARCHIVE, PM_CONTEXT_HOST, PM_ERR_EOL, PM_ID_NULL,
                    PM_IN_NULL, PM_INDOM_NULL, PM_SEM_COUNTER, PM_TYPE_DOUBLE)
from pcp.pmapi import pmContext, pmDesc, pmErr, pmValue, timeval  # noqa: F401

TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    from typing import Any, Dict, Iterable, List, Optional, Tuple
    Triple = Tuple[Any, Any, Any]       # (pmValue, instance name, value)

__all__ = ["MetricCore", "Metric", "MetricCache", "MetricGroup", "MetricGroupPrinter",
           "MetricGroupManager"]



def _as_bytes(name: Any) -> bytes:
    return name if isinstance(name, bytes) else name.encode("utf-8")


def _as_text(name: Any) -> str:
    return name.decode() if isinstance(name, bytes) else name


class MetricCore:
    """What PMAPI knows of one metric: its context, name (kept as bytes, as the official
    module keeps it), pmid, and descriptor once looked up."""

    def __init__(self, ctx: "MetricCache", name: Any, pmid: int) -> None:
        self.ctx = ctx
        self.name = _as_bytes(name)
        self.pmid = pmid
        self.desc: Any = None
        self.text: Any = None
        self.help: Any = None


class Metric:
    """One metric of a MetricGroup: the value sets of its last two fetches, and its
    values extracted (computeValues) or rate converted (convertValues) on demand."""

    def __init__(self, core: MetricCore) -> None:
        self._core = core
        self._desc: Any = None          # core.desc when _indom, _intype, _names were read
        self._names: Optional[Dict[int, Any]] = None
        self._indom = 0
        self._intype = 0
        self._vset: Any = None          # the value set of the last fetch
        self._values: Any = None
        self._prevvset: Any = None      # and of the fetch before it
        self._prevValues: Any = None
        self._convType = core.desc.contents.type
        self._convUnits: Any = None
        self._errorStatus: Any = None
        self._netValues: Optional[List[Triple]] = None
        self._netPrevValues: Optional[List[Triple]] = None
        self._netConvValues: Optional[List[Triple]] = None
        # (value set, (type, units, names, edits), triples) of the last computeValues of
        # the last two value sets, when their values were read in one go: a tool reads
        # netValues and netPrevValues at each fetch, and a fetch's values are the next
        # fetch's previous ones (this package's results are not changed by later fetches;
        # `edits` tells when a caller changed one)
        self._computed: List[Tuple[Any, Tuple[int, Any, Dict[int, Any], int], List[Triple]]] = []

    # ---- what the core knows ----------------------------------------------------------

    @property
    def ctx(self) -> "MetricCache":
        return self._core.ctx

    @property
    def name(self) -> str:
        return self._core.name.decode()

    @property
    def pmid(self) -> int:
        return self._core.pmid

    @property
    def desc(self) -> Any:
        return self._core.desc

    @property
    def text(self) -> Any:
        return self._core.text

    @property
    def help(self) -> Any:
        return self._core.help

    # ---- value sets -------------------------------------------------------------------

    def get_vlist(self, vset: Any, vlist_idx: int) -> Any:  # pylint: disable=no-self-use
        """The pmValue at position vlist_idx of a value set."""
        return vset.contents.vlist[vlist_idx]

    def get_inst(self, vset: Any, vlist_idx: int) -> int:
        """The instance of the value at position vlist_idx of a value set."""
        return self.get_vlist(vset, vlist_idx).inst

    def _names(self) -> Dict[int, Any]:
        return self.ctx.mcGetInstD(self.desc.contents.indom)

    def _scaled(self, atom: Any, atom_type: int) -> Any:
        """A pmAtomValue rescaled to convUnits, when those are set."""
        if not self._convUnits:
            return atom
        return self.ctx.pmConvScale(atom_type, atom, [self.desc], 0, self._convUnits)

    def _read_desc(self) -> None:
        """Read the core's descriptor's indom and type once: its pointer's contents cost a
        ctypes object per read, and a tool reads every metric's values twice a sample."""
        desc = self._core.desc
        self._desc = desc
        self._indom, self._intype = desc.contents.indom, desc.contents.type
        ctx = self._core.ctx
        # a cached domain's instances are read once (MetricCache._mcAdd) and never
        # replaced: looked up once too, unless a subclass looks them up its own way
        self._names = ctx._mcIndomD.get(self._indom) \
            if type(ctx).mcGetInstD is MetricCache.mcGetInstD else None

    def computeValues(self, inValues: Any) -> List[Triple]:
        """Each value of a value set as (pmValue, instance name, value), converted to
        convType (and convUnits); an instance the cache does not know is named ''."""
        vset = inValues
        core = self._core
        if core.desc is not self._desc:
            self._read_desc()
        names = self._names
        if names is None:
            names = core.ctx.mcGetInstD(self._indom)
        outtype = self._convType
        units = self._convUnits
        # this package's value sets count the changes callers made to their values
        key = (outtype, units, names, getattr(vset, "edits", None))
        for done in self._computed:
            if done[0] is vset and done[1] == key:
                return done[2][:]
        if self._intype == outtype and not units and key[3] is not None:
            # this package's value sets give every value of their own type in one go
            found = vset.own_type_values(outtype)
            if found is not None:
                instvals, insts, values = found
                out = list(zip(instvals, map(names.get, insts, repeat("")), values))
                # kept: this one and those of the metric's last two value sets
                kept = [(vset, key, out[:])]
                current, previous = self._vset, self._prevvset
                for done in self._computed:
                    if done[0] is current or done[0] is previous:
                        kept.append(done)
                self._computed = kept[:3]
                return out
        return self._compute(vset, names, outtype)

    def _compute(self, vset: Any, names: Dict[int, Any], outtype: int) -> List[Triple]:
        ctx = self.ctx
        intype = self.desc.type
        out: List[Triple] = []
        valfmt = vset.valfmt
        for i in range(vset.numval):
            instval = self.get_vlist(vset, i)
            atom = self._scaled(ctx.pmExtractValue(valfmt, instval, intype, outtype), outtype)
            out.append((instval, names.get(instval.inst, ""), atom.dref(outtype)))
        return out

    def _find_previous_instval(self, index: int, inst: int, pvset: Any) -> Any:
        """The value of instance `inst` in the previous value set: tried first at the same
        position, then searched for."""
        if index < pvset.numval:
            guess = self.get_vlist(pvset, index)
            if guess.inst == inst:
                return guess
        for pi in range(pvset.numval):
            candidate = self.get_vlist(pvset, pi)
            if candidate.inst == inst:
                return candidate
        return None

    def convertValues(self, values: Any, prevValues: Any, delta: float) -> Optional[List[Triple]]:
        """For a counter, each value as (pmValue, instance name, rate over `delta`
        seconds) against the previous value set (None without one; instances missing
        from it, or whose counter went down, are left out); other metrics as
        computeValues gives them."""
        if self.desc.sem != PM_SEM_COUNTER:
            return self.computeValues(values)
        if prevValues is None:
            return None
        vset, pvset = values, prevValues
        ctx = self.ctx
        names = self._names()
        intype = self.desc.type
        out: List[Triple] = []
        for i in range(vset.numval):
            instval = self.get_vlist(vset, i)
            pinstval = self._find_previous_instval(i, instval.inst, pvset)
            if pinstval is None:
                continue
            name = names.get(instval.inst, "")
            now = self._scaled(ctx.pmExtractValue(vset.valfmt, instval, intype,
                                                  PM_TYPE_DOUBLE), PM_TYPE_DOUBLE)
            then = self._scaled(ctx.pmExtractValue(pvset.valfmt, pinstval, intype,
                                                   PM_TYPE_DOUBLE), PM_TYPE_DOUBLE)
            value, pvalue = now.dref(PM_TYPE_DOUBLE), then.dref(PM_TYPE_DOUBLE)
            if value >= pvalue:
                out.append((instval, name, (value - pvalue) / delta))
        return out

    @property
    def values(self) -> Any:
        return self._values

    @values.setter
    def values(self, values: Any) -> None:
        # as in the official module, which reads an attribute it never sets here
        self._prev = self._values
        self._values = values
        self._netPrev = self._netValue      # type: ignore[attr-defined]
        self._netValue = None

    @property
    def prevValues(self) -> Any:
        return self._prevValues

    @property
    def convType(self) -> int:
        return self._convType

    @convType.setter
    def convType(self, value: int) -> None:
        self._convType = value

    @property
    def convUnits(self) -> Any:
        return self._convUnits

    @convUnits.setter
    def convUnits(self, value: Any) -> None:
        self._convUnits = value

    @property
    def errorStatus(self) -> Any:
        return self._errorStatus

    @property
    def netValues(self) -> Optional[List[Triple]]:
        """The last fetch's values (computeValues), or None before the first fetch."""
        if not self._vset:
            return None
        self._netValues = self.computeValues(self._vset)
        return self._netValues

    @property
    def netPrevValues(self) -> Optional[List[Triple]]:
        """The values of the fetch before the last, or None before there is one."""
        if not self._prevvset:
            return None
        self._netPrevValues = self.computeValues(self._prevvset)
        return self._netPrevValues

    @property
    def netConvValues(self) -> Optional[List[Triple]]:
        """What the last metricConvert computed."""
        return self._netConvValues

    def metricPrint(self) -> None:
        """Print the metric's instance domain and each instance's value."""
        print("   ", "indom:", self.ctx.pmInDomStr(self.desc.indom))
        self.ctx.mcGetInstD(self.desc.indom)
        for _, name, value in self.netValues:
            print("   ", name, value)

    def metricConvert(self, delta: float) -> Optional[List[Triple]]:
        """Rate convert the last two fetches' values over `delta` seconds."""
        self._netConvValues = self.convertValues(self._vset, self._prevvset, delta)
        return self._netConvValues


class MetricCache(pmContext):
    """A pmContext that keeps the MetricCores it has looked up (by name and by pmid) and
    the instances of their domains, read once."""

    def __init__(self, typed: int = PM_CONTEXT_HOST, target: Any = "local:") -> None:
        pmContext.__init__(self, typed, target)
        self._mcIndomD: Dict[int, Dict[int, Any]] = {}
        self._mcByNameD: Dict[str, MetricCore] = {}
        self._mcByPmidD: Dict[int, MetricCore] = {}
        self._mcCounter = 0     # counters among the cached metrics
        self._mcMetrics = 0     # metrics cached

    def mcGetInstD(self, indom: int) -> Dict[int, Any]:
        """The instance id -> name dictionary of a cached instance domain."""
        return self._mcIndomD[indom]

    def _mcAdd(self, core: MetricCore) -> None:
        """Cache a core, reading its instance domain the first time it is seen."""
        indom = core.desc.contents.indom
        if indom not in self._mcIndomD:
            if indom == PM_INDOM_NULL:
                instmap: Dict[int, Any] = {PM_IN_NULL: b"PM_IN_NULL"}
            else:
                if self._type == PM_CONTEXT_ARCHIVE:
                    insts, names = self.pmGetInDomArchive(core.desc)
                else:
                    insts, names = self.pmGetInDom(core.desc)
                instmap = dict(zip(insts, names)) if insts is not None and names is not None else {}
            self._mcIndomD[indom] = instmap
        if core.desc.contents.sem == PM_SEM_COUNTER:
            self._mcCounter += 1
        self._mcMetrics += 1
        self._mcByNameD[core.name.decode()] = core
        self._mcByPmidD[core.pmid] = core

    def mcGetCoresByName(self, nameL: Iterable[Any]) -> Tuple[List[Any], Optional[List[Any]]]:
        """The cores of these names, from the cache or looked up (one pmLookupName for
        all the missing ones), in the order given; and the names that have none."""
        cores: List[Any] = []
        missing: Dict[str, int] = {}
        errors: Optional[List[Any]] = None
        for index, name in enumerate(nameL):
            name = _as_text(name)
            core = self._mcByNameD.get(name)
            if not core:
                missing[name] = index       # a repeated name keeps its last position
            cores.append(core)
        if missing:
            found, errors = self.mcFetchPmids(missing.keys())
            for name, pmid in found:
                if pmid == PM_ID_NULL:
                    errors = (errors or []) + [name]
                else:
                    cores[missing[name]] = self._mcCreateCore(name, pmid)
        return cores, errors

    def _mcCreateCore(self, name: Any, pmid: int) -> MetricCore:
        """A new core with its descriptor, cached; a descriptor that cannot be had ends
        the program."""
        core = MetricCore(self, name, pmid)
        try:
            core.desc = self.pmLookupDesc(pmid)
        except pmErr as error:
            sys.stderr.write("%s: pmLookupDesc: %s" % (error.progname(), error.message()))
            raise SystemExit(1)
        self._mcAdd(core)
        return core

    def mcFetchPmids(self, nameL: Iterable[Any]) -> Tuple[Any, Optional[List[Any]]]:
        """(name, pmid) pairs for these names, from one pmLookupName; a name that cannot
        be resolved ends the program."""
        names = list(nameL)
        array = (c_char_p * len(names))(*[_as_bytes(name) for name in names])
        try:
            pmids = self.pmLookupName(array)
            if len(pmids) < len(array):
                sys.stderr.write("Cannot resolve %d of %d metric names"
                                 % (len(pmids), len(array)))
                raise SystemExit(1)
        except pmErr as error:
            sys.stderr.write("%s: pmLookupName: %s" % (error.progname(), error.message()))
            raise SystemExit(1)
        return zip(names, pmids), None


def _add_group(owner: dict, attr: Any, value: Any) -> None:
    """owner[attr] = a new MetricGroup of the names in `value` over `owner` (the official
    module's rule for both groups and managers); a key is never replaced."""
    if attr in owner:
        raise KeyError("metric group with that key already exists")
    dict.__setitem__(owner, attr, MetricGroup(owner, inL=value))


class MetricGroup(dict):
    """Metrics fetched together (one pmFetch), by name; the last two results are kept
    for rate conversion."""

    def __init__(self, contextCache: Any, inL: Iterable[Any] = ()) -> None:
        dict.__init__(self)
        self._ctx = contextCache
        self._pmidArray: Any = None
        self._result: Any = None
        self._prev: Any = None
        self._altD: Dict[int, Metric] = {}
        self.mgAdd(inL)

    def __setitem__(self, attr: Any, value: Any) -> None:
        _add_group(self, attr, value)

    @property
    def contextCache(self) -> Any:
        return self._ctx

    @property
    def nonCounters(self) -> bool:
        """Whether the context's cache holds metrics that are not counters."""
        return self._ctx._mcCounter != self._ctx._mcMetrics

    @property
    def pmidArray(self) -> Any:
        return self._pmidArray

    @property
    def result(self) -> Any:
        return self._result

    @result.setter
    def result(self, pmresult: Any) -> None:
        self._prev = self._result
        self._result = pmresult

    @property
    def timestamp(self) -> Any:
        return self._result.contents.timestamp

    @property
    def prev(self) -> Any:
        return self._prev

    @property
    def prevTimestamp(self) -> Any:
        return self._prev.contents.timestamp

    def mgAdd(self, nameL: Iterable[Any]) -> None:
        """Add these metrics to the group (a Metric each, by name and by pmid)."""
        cores, _ = self._ctx.mcGetCoresByName(nameL)
        for core in cores:
            metric = Metric(core)
            dict.__setitem__(self, metric.name, metric)     # not a nested group
            self._altD[metric.pmid] = metric
        self._pmidArray = (c_uint * len(self))(*[metric.pmid for metric in self.values()])

    def mgFetch(self) -> Any:
        """Fetch every metric of the group, moving each one's last value set to the
        previous; the result's timestamp. The end of an archive ends the program with
        status 0, another fetch error with status 1 (the error on stderr)."""
        try:
            pmresult = self._ctx.pmFetch(self._pmidArray)
            self._prev, self._result = self._result, pmresult      # as the result setter
            result = pmresult.contents
            value_sets = getattr(result, "value_sets", None)    # this package's results
            if value_sets is not None:
                sets = value_sets()
            else:
                sets = [(result.get_pmid(i), result.get_vset(i)) for i in range(result.numpmid)]
            altD = self._altD
            for pmid, vset in sets:
                metric = altD[pmid]
                metric._prevvset = metric._vset
                metric._vset = vset
        except pmErr as error:
            if error.args[0] == PM_ERR_EOL:
                raise SystemExit(0)
            sys.stderr.write("%s: pmFetch: %s" % (error.progname(), error.message()))
            raise SystemExit(1)
        return result.timestamp

    def mgDelta(self) -> float:
        """Seconds between the last two fetches (since the epoch for the first)."""
        previous = float(self.prevTimestamp) if self._prev is not None else 0.0
        return float(self.timestamp) - previous


class MetricGroupPrinter:
    """The report hook of a MetricGroupManager's run loop: tools override report()."""

    def report(self, manager: "MetricGroupManager") -> None:
        """Print every metric of every group (the base implementation)."""
        for group_name in manager.keys():
            group = manager[group_name]
            for metric_name in group.keys():
                group[metric_name].metricPrint()

    def convert(self, manager: "MetricGroupManager") -> None:
        """Rate convert every metric of every group over its group's fetch interval."""
        for group_name in manager.keys():
            group = manager[group_name]
            delta = group.mgDelta()
            for metric_name in group.keys():
                group[metric_name].metricConvert(delta)


class MetricGroupManager(dict, MetricCache):
    """MetricGroups by name over one context, with the fetch-and-report loop a tool runs
    (its sample count, finish time and pause worked out from the tool's options)."""

    def __init__(self, typed: int = PM_CONTEXT_HOST, target: Any = "local:") -> None:
        dict.__init__(self)
        MetricCache.__init__(self, typed, target)
        self._options: Any = None
        self._default_delta = timeval(1, 0)
        self._default_pause: Any = None
        self._printer: Any = None
        self._counter = 0

    def __setitem__(self, attr: Any, value: Any) -> None:
        _add_group(self, attr, value)

    @property
    def options(self) -> Any:
        """The tool's pmOptions."""
        return self._options

    @options.setter
    def options(self, options: Any) -> None:
        self._options = options

    @property
    def default_delta(self) -> Any:
        """The sampling interval used when the command line gives none."""
        return self._default_delta

    @default_delta.setter
    def default_delta(self, delta: Any) -> None:
        self._default_delta = delta

    @property
    def default_pause(self) -> Any:
        """The pause between reports (archives: none unless set)."""
        return self._default_pause

    @default_pause.setter
    def default_pause(self, pause: Any) -> None:
        self._default_pause = pause

    printer = property(None, lambda self, printer: setattr(self, "_printer", printer), None,
                       "The MetricGroupPrinter called after each fetch (write only).")

    @property
    def counter(self) -> int:
        """Fetches reported so far."""
        return self._counter

    @classmethod
    def builder(cls, options: Any, argv: Any) -> "MetricGroupManager":
        """A manager over the context the command line names (pmContext.fromOptions),
        with the options' default interval (options.delta seconds)."""
        manager = cls.fromOptions(options, argv)
        manager._default_delta = timeval(options.delta, 0)
        manager._options = options
        return manager

    @staticmethod
    def _tv2float(tv: Any) -> float:
        """A timeval as seconds since the epoch (None: 0.0)."""
        if tv is None:
            return 0.0
        return float(tv.tv_sec) + float(tv.tv_usec) / 1e6

    def _computeSamples(self) -> Tuple[int, Any]:
        """The number of fetches to make (0: until interrupted or the archive ends) and
        the finish time (None: none): from --samples, or from the window between origin
        and --finish at the interval; one more when every group is only counters."""
        if self._options is None:
            return 0, None
        extra = 1
        for group in self.keys():
            if self[group].nonCounters:
                extra = 0
        samples = self._options.pmGetOptionSamples()
        if samples is not None:
            return samples + extra, None
        if self._options.pmGetOptionFinishOptarg() is None:
            return 0, None
        origin = self._options.pmGetOptionOrigin()
        finish = self._options.pmGetOptionFinish()
        delta = self._options.pmGetOptionInterval()
        if delta is None:
            delta = self._default_delta
        window = (self._tv2float(finish) - self._tv2float(origin)) / self._tv2float(delta)
        return int(window + 0.5) + extra, finish

    def _computePauseTime(self) -> Any:
        """The pause between reports: as set, else none for an archive, else the
        command line's interval or the default one."""
        if self._default_pause is not None:
            return self._default_pause
        if self.type == PM_CONTEXT_ARCHIVE:
            self._default_pause = timeval(0, 0)
        elif self._options is not None:
            pause = self._options.pmGetOptionInterval()
            self._default_pause = pause if pause is not None else self._default_delta
        else:
            self._default_pause = self._default_delta
        return self._default_pause

    def checkMissingMetrics(self, nameL: List[Any]) -> Optional[List[Any]]:
        """The names the context does not know (None when it knows them all)."""
        array = (c_char_p * len(nameL))(*[_as_bytes(name) for name in nameL])
        missing = []
        try:
            pmContext.pmLookupName(self, array)
        except pmErr:
            for i, name in enumerate(array):
                try:
                    pmContext.pmLookupName(self, name)
                except pmErr:
                    missing.append(nameL[i])
        return missing or None

    def fetch(self) -> Any:
        """Fetch every group; the latest of their timestamps."""
        if len(self) == 1:          # the usual case: that group's timestamp
            return dict.__getitem__(self, next(iter(self))).mgFetch()
        fetchtime = None
        latest = 0.0
        for group in self.keys():
            stamp = self[group].mgFetch()
            if fetchtime is None or self._tv2float(stamp) > latest:
                fetchtime = stamp
                latest = self._tv2float(stamp)
        return fetchtime

    def run(self) -> Any:
        """Fetch, report and pause until the sample count or finish time is reached, the
        archive ends or the user interrupts; 0, or the SystemExit that ended it."""
        samples, finish = self._computeSamples()
        timer = self._computePauseTime()
        try:
            curtime = self.fetch()
            while True:
                if self._counter >= samples > 0:
                    break
                if finish is not None and self._tv2float(curtime) >= self._tv2float(finish):
                    break
                self._printer.report(self)
                timer.sleep()
                curtime = self.fetch()
                self._counter += 1
        except SystemExit as code:
            return code
        except KeyboardInterrupt:
            pass
        return 0
