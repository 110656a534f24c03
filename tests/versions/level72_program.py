"""The program tests/versions/test_level72.py runs on each side: what PCP 7 changed in the
PMAPI binding, each answer imaged as JSON. It runs on 7.2.2's binding and on this package at
level 7.2 (on the host, PCP_NATIVE_API_LEVEL=7.2). Arguments: the QA archive to read, and a
directory (seen at the same path by both sides) where pcp.pmi writes its archives."""

from support.jsonimage import PRELUDE

PROGRAM = r'''
import ctypes, datetime, json, math, os, sys
from pcp import pmapi, pmi
import cpmapi as c_api

ARCHIVE = %(archive)r
OUTPUT = %(output)r
HOST = "127.0.0.1"

''' + PRELUDE + r'''
def result_image(res, with_time=True):
    r = res.contents
    out = [type(r).__name__, type(r.timestamp).__name__, r.numpmid, r.get_numpmid()]
    if with_time:
        out += [stamp(r.timestamp), r.get_sec(), r.get_nsec()]
    for i in range(r.numpmid):
        numval = r.get_numval(i)
        # (libpcp leaves valfmt unset in a set without values: no value to compare)
        out.append([r.get_pmid(i), numval, r.get_valfmt(i) if numval > 0 else None,
                    [r.get_inst(i, j) for j in range(max(numval, 0))]])
    return out

def code_of(function, *args):
    """A call's answer, or only the code of its pmErr: pmParseInterval's message is a
    c_char_p (an address) in the official binding, libpcp's text here."""
    try:
        return image(function(*args))
    except pmapi.pmErr as error:
        return {"pmErr": error.args[0]}
    except Exception as error:
        return err(error)

out = {}

# ---- an archive: its label, end, records and positioning by timespecs
ctx = pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, ARCHIVE)
label = ctx.pmGetArchiveLabel()
out["label"] = [type(label).__name__, label.magic, stamp(label.start), label.get_hostname(),
                label.get_timezone(), label.get_zoneinfo(),
                [name for name, _ in type(label)._fields_], ctypes.sizeof(label)]
out["end"] = stamp(ctx.pmGetArchiveEnd())
records = []
for _ in range(5):
    records.append(result_image(ctx.pmFetchArchive()))
out["records"] = records
ids = ctx.pmLookupName(["kernel.all.load", "hinv.ncpu"])
out["setmode"] = [catch(ctx.pmSetMode, c_api.PM_MODE_FORW, label.start, None),
                  result_image(ctx.pmFetch(ids)),
                  catch(ctx.pmSetMode, c_api.PM_MODE_BACK, ctx.pmGetArchiveEnd(), None),
                  result_image(ctx.pmFetch(ids)),
                  catch(ctx.pmSetMode, c_api.PM_MODE_FORW, pmapi.timeval(0, 0), None),
                  catch(ctx.pmSetMode, c_api.PM_MODE_FORW, label.start, 0),
                  catch(ctx.pmSetMode, c_api.PM_MODE_INTERP, label.start,
                        pmapi.timespec(3600, 0)),
                  result_image(ctx.pmFetch(ids))[:5]]
out["archive_errors"] = [catch(ctx.pmSetMode, c_api.PM_MODE_LIVE, None, None),
                         catch(ctx.pmSetMode, 42, label.start, None)]

# ---- a live context over TCP: the shape of a result (the times differ)
live = pmapi.pmContext(c_api.PM_CONTEXT_HOST, HOST)
lids = live.pmLookupName(["sample.long.one", "sample.colour", "sample.string.hullo"])
res = live.pmFetch(lids)
r = res.contents
out["live"] = [result_image(res, with_time=False), type(r.timestamp.tv_nsec).__name__,
               r.get_sec() == r.timestamp.tv_sec, r.get_nsec() == r.timestamp.tv_nsec,
               catch(live.pmSetMode, c_api.PM_MODE_LIVE, None, None),
               catch(live.pmSetMode, c_api.PM_MODE_FORW, None, None),
               catch(live.pmStore, res)]
out["live_names"] = [hasattr(live, name) for name in (
    "pmFetchHighRes", "pmHighResFetch", "pmFetchHighResArchive", "pmSetModeHighRes",
    "pmGetHighResArchiveLabel", "pmGetHighResArchiveEnd", "pmStoreHighRes",
    "pmFreeHighResResult", "pmSortHighResInstances", "pmParseHighResInterval",
    "pmProgname", "pmGetProgname", "pmSetDebug")]

# ---- intervals
P = pmapi.pmContext
out["intervals"] = [[image(text), code_of(lambda t: P.pmParseInterval(t)[0], text)]
                    for text in ("10", "1.5", "1.5 sec", "2min 30s", "1 hour", "0.000000001",
                                 "250 msec", "1e3", b"3 minutes", "", "bogus", "-1")]
out["interval_classes"] = [catch(pmapi.timespec.fromInterval, "2.25"),
                           catch(pmapi.timeval.fromInterval, "2.25"),
                           catch(pmapi.timeval.fromInterval, b"2.25"),
                           catch(pmapi.timeval.fromInterval, 7),
                           code_of(pmapi.timespec.fromInterval, "nonsense")]

# ---- debug options and the program name
out["debug"] = [catch(P.pmGetProgname), catch(P.pmDebug, "pdu"), catch(P.pmSetDebug, "pdu"),
                catch(P.pmDebug, "pdu"), catch(P.pmDebug, "fetch"), catch(P.pmDebug, "pdu,fetch"),
                catch(P.pmDebug, "all"), catch(P.pmSetDebug, b"fetch,APPL1"),
                catch(P.pmDebug, "appl1"), catch(P.pmSetDebug, "nonsense"),
                catch(P.pmDebug, "nonsense"), catch(P.pmSetDebug, "pdu,"),
                catch(P.pmSetDebug, ",pdu"), catch(P.pmDebug, ""), catch(P.pmSetDebug, ""),
                catch(P.pmDebug, 1), catch(pmapi.pmErr(-12357).progname)]

# ---- units: the extra units in every pmUnits path
units = []
for extra_unit in (-16, -4, -1, 0, 1, 2, 3, 4, 5, 15):
    for extra_scale in range(8):
        for dims in ((0, 0, 0, 0, 0, 0), (1, -1, 0, 1, 3, 0), (0, 0, 0, 0, 0, 2),
                     (0, -2, 1, 0, 4, 3), (-1, 0, 0, 2, 0, 0)):
            u = pmapi.pmUnits(*dims, extra_unit, extra_scale)
            units.append([extra_unit, extra_scale, str(u), P.pmUnitsStr(u), int(u),
                          u.extraUnit, u.extraScale, u.scaleCount])
out["units_str"] = units
out["units_int"] = [catch(c_api.pmUnits_int, *args) for args in (
    (1, 2, 3), (1, 2, 3, 4, 5, 6), (1, 2, 3, 4, 5, 6, 1, 1), (1, 2, 3, 4, 5, 6, 7, 8, 9),
    ("a", 2, 3, 4, 5, 6, 7, 8), (1, 2, 3, 4, 5, 6, 2 ** 40, 1), (-1, 0, 0, 0, 0, 0, 0, 0),
    (0, 0, 0, 0, 0, 0, -16, 8))]
out["units_int"].append(catch(c_api.pmUnits_int, dimSpace=1, dimTime=0, dimCount=0,
                              scaleSpace=0, scaleTime=0, scaleCount=0, extraUnit=1,
                              extraScale=2))
parsed = []
for text in ("temperature (C)", "Temperature (f) / sec", "sec / power (kW)",
             "power (W) power (mW)", "voltage (mV)/temperature (K)", "2 current (uA) Kbyte",
             "temperature (X)", "voltage (V", "current (mA)  count x 10^3 / hour",
             "power (W) / power (W)", "count x 10^-1", "x 10^3",
             "TEMPERATURE (c)", "voltage (uV) 1000"):
    try:
        u, mult = P.pmParseUnitsStr(text)
        parsed.append([text, int(u), repr(mult), str(u)])
    except Exception as error:
        parsed.append([text, err(error)])
out["units_parse"] = parsed
conversions = []
fields = {c_api.PM_TYPE_32: "l", c_api.PM_TYPE_U32: "ul", c_api.PM_TYPE_64: "ll",
          c_api.PM_TYPE_U64: "ull", c_api.PM_TYPE_FLOAT: "f", c_api.PM_TYPE_DOUBLE: "d",
          c_api.PM_TYPE_STRING: "cp"}
for intype, field in sorted(fields.items()):
    for extra_unit, scales in ((1, 3), (2, 3), (3, 3), (4, 4), (5, 2)):
        for iscale in range(scales + 1):
            for oscale in range(scales + 1):
                for number in (-40, 0, 37, 1000, 123456789):
                    atom = pmapi.pmAtomValue()
                    if field == "cp":
                        atom.cp = b"12"
                    else:
                        setattr(atom, field, number if number >= 0 or field[0] != "u" else 5)
                    desc = pmapi.pmDesc()
                    desc.type = intype
                    desc.units = pmapi.pmUnits(0, 0, 0, 0, 0, 0, extra_unit, iscale)
                    try:
                        got = P.pmConvScale(intype, atom, [ctypes.pointer(desc)], 0,
                                            pmapi.pmUnits(0, 0, 0, 0, 0, 0, extra_unit, oscale))
                        conversions.append(repr(getattr(got, field)))
                    except Exception as error:
                        conversions.append(err(error))
out["units_convert"] = conversions
mixed = []
for iu, ou in (((1, -1, 0, 1, 3, 0, 1, 1), (1, -1, 0, 2, 3, 0, 1, 3)),
               ((0, 0, 0, 0, 0, 0, 1, 1), (0, 0, 1, 0, 0, 0, 0, 0)),
               ((0, 0, 0, 0, 0, 0, 0, 0), (0, 0, 0, 0, 0, 0, 2, 1)),
               ((0, 0, 0, 0, 0, 2, 4, 2), (0, 0, 0, 0, 0, 0, 4, 1))):
    atom = pmapi.pmAtomValue()
    atom.d = 98.6
    desc = pmapi.pmDesc()
    desc.type = c_api.PM_TYPE_DOUBLE
    desc.units = pmapi.pmUnits(*iu)
    mixed.append(catch(lambda: repr(P.pmConvScale(c_api.PM_TYPE_DOUBLE, atom,
                                                  [ctypes.pointer(desc)], 0,
                                                  pmapi.pmUnits(*ou)).d)))
out["units_convert_mixed"] = mixed

# ---- pmOptions: every time a timespec
opts = pmapi.pmOptions("a:S:T:O:A:t:s:z")
opts.pmSetLongOptionArchive()
argv = ["tool", "-a", ARCHIVE, "-S", "@ 2018-01-02 01:00:00", "-T", "+2h", "-O", "+30m",
        "-A", "10min", "-t", "1.5 sec", "-z"]
octx = pmapi.pmContext.fromOptions(opts, argv)
out["options"] = [catch(opts.pmGetOptionStart), catch(opts.pmGetOptionFinish),
                  catch(opts.pmGetOptionOrigin), catch(opts.pmGetOptionInterval),
                  catch(opts.pmGetOptionAlignment), catch(opts.pmGetOptionAlignOptarg),
                  [hasattr(opts, name) for name in (
                      "pmGetOptionHighResStart", "pmGetOptionHighResFinish",
                      "pmGetOptionHighResOrigin", "pmGetOptionHighResInterval",
                      "pmGetOptionHighResAlignment")],
                  catch(pmapi.pmContext.get_mode_step, 0, 1, opts.pmGetOptionInterval())]
try:
    octx.prepare_execute(opts, 0, 1, opts.pmGetOptionInterval())
    out["prepare_execute"] = result_image(octx.pmFetch(octx.pmLookupName(["hinv.ncpu"])))[:6]
except Exception as error:
    out["prepare_execute"] = err(error)

# ---- the module's names
out["names"] = [hasattr(pmapi, name) for name in (
    "pmResult", "pmResult_v2", "pmHighResResult", "pmLogLabel", "pmHighResLogLabel",
    "integer_types", "text_type", "long", "pyFileToCFile")] + [
    hasattr(c_api, name) for name in ("PM_XTB_SET", "PM_XTB_GET", "PM_XTB_FLAG",
                                      "PMAPI_VERSION_3", "PMAPI_VERSION_4", "PM_DEBUG_APPL0",
                                      "PM_UNIT_POWER", "PM_PAD_TIMESPEC")] + [
    c_api.PMAPI_VERSION, c_api.PM_POWER_uW, c_api.PM_TEMPERATURE_K]

# ---- pcp.pmi: the calls 7.x added or changed (the archives are compared by pmdumplog)
out["pmi_errors"] = [str(pmi.pmiErr(code)) for code in (
    -20001, -20010, -20020, -20025, -12345, -12415, 0, -1, -20100)]
# PMI_PROCESS (4): a long-running importer, whose registration has its pid and goes at the end
log = pmi.pmiLogImport(os.path.join(OUTPUT, "written"), 4)
calls = [catch(log.pmiSetHostname, "h1"), catch(log.pmiSetTimezone, "UTC"),
         catch(log.pmiSetZoneinfo, ":Europe/Berlin")]
pmid = log.pmiID(60, 2, 0)
indom = log.pmiInDom(60, 2)
calls += [catch(log.pmiAddMetric, "kernel.all.load", pmid, c_api.PM_TYPE_FLOAT, indom,
                c_api.PM_SEM_INSTANT, log.pmiUnits(0, 0, 0, 0, 0, 0)),
          catch(log.pmiAddMetric, "sample.temp", log.pmiID(29, 0, 7), c_api.PM_TYPE_DOUBLE,
                c_api.PM_INDOM_NULL, c_api.PM_SEM_INSTANT,
                pmapi.pmUnits(0, 0, 0, 0, 0, 0, c_api.PM_UNIT_TEMPERATURE, c_api.PM_TEMPERATURE_C)),
          catch(log.pmiAddMetric, "sample.power", log.pmiID(29, 0, 8), c_api.PM_TYPE_U64,
                c_api.PM_INDOM_NULL, c_api.PM_SEM_COUNTER,
                pmapi.pmUnits(0, -1, 0, 0, 3, 0, c_api.PM_UNIT_POWER, c_api.PM_POWER_mW))]
for inst, name in ((1, "1 minute"), (5, "5 minute"), (15, "15 minute")):
    calls.append(catch(log.pmiAddInstance, indom, name, inst))
calls += [catch(log.pmiPutText, c_api.PM_TEXT_PMID, c_api.PM_TEXT_ONELINE, pmid, "load"),
          catch(log.pmiPutLabel, c_api.PM_LABEL_CONTEXT, 0, 0, "site", '"lab"'),
          catch(log.pmiPutLabel, c_api.PM_LABEL_ITEM, pmid, 0, "rank", "12"),
          catch(log.pmiPutLabel, c_api.PM_LABEL_ITEM, pmid, 0, "scale", " -1.5e3"),
          catch(log.pmiPutLabel, c_api.PM_LABEL_ITEM, pmid, 0, "word", "plain"),
          catch(log.pmiPutLabel, c_api.PM_LABEL_ITEM, pmid, 0, "flag", "TRUE"),
          catch(log.pmiPutLabel, c_api.PM_LABEL_ITEM, pmid, 0, "bad", "inf")]
# (2014: before the QA archive's 2018 records, which pmiPutResult then adds at the end)
when = (1400000000.25, (1400000001, 123456789),
        datetime.datetime(2014, 5, 13, 16, 53, 22, 500000, tzinfo=datetime.timezone.utc),
        (1400000004, -5), 1400000005, (1400000006, 1999999999), 1400000001)
for k, at in enumerate(when):
    calls += [catch(log.pmiPutValue, "kernel.all.load", "1 minute", "%%f" %% (0.25 * k)),
              catch(log.pmiPutValue, "kernel.all.load", "5 minute", "%%f" %% (0.5 * k)),
              catch(log.pmiPutValue, "sample.temp", None, "%%f" %% (20.5 + k)),
              catch(log.pmiPutValue, "sample.power", None, "%%d" %% (1000 * k))]
    calls.append(catch(log.pmiWrite, *at) if isinstance(at, tuple) else catch(log.pmiWrite, at))
calls += [catch(log.pmiWrite, datetime.datetime(2014, 5, 13, 16, 53, 28)),
          catch(log.pmiPutMark), catch(log.pmiHighResWrite, 1400000010, 5),
          catch(log.pmiSetImportProgram, "", "1.2", "", ""),
          catch(log.pmiSetImportProgram, "pcp-native-test", "1.2", "-a -b", "written")]
registered = os.path.join(os.environ["PCP_IMPORTRUN_DIR"], "pcp-native-test")
with open(registered) as stream:
    out["pmi_import_program"] = [line if not line.startswith("pid=") else
                                 ["pid", line == "pid=%%d\n" %% os.getpid()]
                                 for line in stream]
ctx.pmSetMode(c_api.PM_MODE_FORW, label.start, None)   # a record as it is (no interpolation)
calls += [catch(log.pmiPutResult, ctx.pmFetch(ids)), catch(log.pmiEnd),
          os.path.exists(registered)]
out["pmi_calls"] = calls
out["pmi_names"] = [hasattr(log, name) for name in (
    "put_result", "put_highres_result", "pmiPutResult", "pmiSetZoneinfo",
    "pmiSetImportProgram", "pmiHighResWrite")]
print(json.dumps(out))
'''


def program(archive: str, output: str) -> str:
    """The program, reading `archive` and writing pcp.pmi's archive into `output`."""
    return PROGRAM % {"archive": archive, "output": output}
