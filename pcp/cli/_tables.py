"""The subcommands' option tables (pmOptions: letters, long options, usage line), apart
from the commands themselves: `pcp-native COMMAND -?` and `--help` print the usage from
here without importing the PMAPI (pcp.pmapi, cpmapi, numpy), which each command module
imports for its work."""
from __future__ import annotations

from pcp._core.constants import PM_OPTFLAG_BOUNDARIES, PM_OPTFLAG_STDOUT_TZ
from pcp._libpcp.getopt import LongOption
from pcp._libpcp.options import PMAPI_OPTIONS
from pcp.cli import _options

STANDARD = _options.STANDARD
TOOLS: "dict[str, _options.Tool]" = {}
# the source each command takes when the words name none: "host" is the local pmcd
# (pminfo's and pmval's), None none (pmdumplog's usage, export's refusal)
DEFAULT_SOURCE = {"info": "host", "fetch": "host", "dump": None, "export": None}


TOOLS["info"] = _options.Tool(
    "info", "a:b:c:dD:Ffh:IK:lLMmN:n:O:tTvVzZ:?", [
        _options.header("General options"),
        STANDARD["Archive"],
        STANDARD["Debug"],
        STANDARD["Host"],
        STANDARD["LocalPMDA"],
        STANDARD["SpecLocal"],
        STANDARD["Namespace"],
        STANDARD["UniqNames"],
        STANDARD["Origin"],
        STANDARD["TimeZone"],
        STANDARD["HostZone"],
        STANDARD["Version"],
        STANDARD["Help"],
        _options.header("Protocol options"),
        _options.own("batch", "b", "fetch N metrics at a time for -f and -v [128]", "N"),
        _options.own("desc", "d", "get and print metric description"),
        _options.own("fetch", "f", "fetch and print values for all instances"),
        _options.own("fetchall", "F", "fetch and print values for non-enumerable indoms"),
        _options.own("fullindom", "I", "print InDom in verbose format"),
        _options.own("labels", "l", "print InDom, metric and instance labels"),
        _options.own("pmid", "m", "print PMID"),
        _options.own("fullpmid", "M", "print PMID in verbose format"),
        _options.own("oneline", "t", "get and display (terse) oneline text"),
        _options.own("helptext", "T", "get and display (verbose) help text"),
        _options.header("Metrics options"),
        _options.own("derived", "c", "load derived metric definitions from FILE(s)", "FILE"),
        _options.own("verify", "v", "verify mode, be quiet and only report errors"),
        _options.header("pcp-native options"),
        _options.demo_option(),
    ],
    "[options] [metricname | pmid | indom]...", overrides="tT",
    flags=PM_OPTFLAG_STDOUT_TZ, context_for_hosts=False)


TOOLS["dump"] = _options.Tool(
    "dump", "aD:dehIilLmMn:rS:sT:tv:xZ:z?", [
        _options.header("Options"),
        STANDARD["Debug"],
        _options.own("all", "a", "dump everything"),
        _options.own("descs", "d", "dump metric descriptions"),
        _options.own("labelsets", "e", "dump all metric label metadata"),
        _options.own("helptext", "h", "dump all metric help text"),
        _options.own("on-disk-insts", "I", "dump on-disk instance domain descriptions"),
        _options.own("insts", "i", "dump instance domain descriptions"),
        _options.own("", "L", "more verbose form of archive label dump"),
        _options.own("label", "l", "dump the archive label"),
        _options.own("markrecs", "M", "report <mark> records"),
        _options.own("metrics", "m", "dump values of the metrics (default)"),
        STANDARD["Namespace"],
        _options.own("reverse", "r", "process archive in reverse chronological order"),
        STANDARD["Start"],
        _options.own("sizes", "s", "report size of data records in archive"),
        STANDARD["Finish"],
        _options.own("", "t", "dump the temporal index"),
        _options.own("", "v", "verbose hex dump of a physical file in raw format", "FILE"),
        _options.own("", "x", "include date, usec (-xx) and Epoch (-xxx) in reported "
                     "timestamps"),
        STANDARD["TimeZone"],
        STANDARD["HostZone"],
        STANDARD["Version"],
        STANDARD["Help"],
        _options.header("pcp-native options"),
        LongOption("archive", 1, "", "FILE", "the archive (default: the first operand)"),
        _options.demo_option(),
        _options.own("records", "", "dump at most N records", "N"),
    ],
    "[options] [archive [metricname ...]]", overrides="ahLst",
    flags=PM_OPTFLAG_STDOUT_TZ | PM_OPTFLAG_BOUNDARIES)


TOOLS["fetch"] = _options.Tool(
    # pmval's letters but its time-control GUI ones (-g, -p)
    "fetch", PMAPI_OPTIONS.replace("g", "").replace("p:", "") + "f:i:K:LrU:w:", [
        _options.header("General options"),
        STANDARD["Align"], STANDARD["Archive"], STANDARD["Debug"],
        STANDARD["Host"], STANDARD["Namespace"], STANDARD["Origin"],
        STANDARD["Start"], STANDARD["Samples"], STANDARD["Finish"], STANDARD["Interval"],
        STANDARD["TimeZone"], STANDARD["HostZone"], STANDARD["Version"], STANDARD["Help"],
        STANDARD["SpecLocal"], STANDARD["LocalPMDA"], STANDARD["Derived"],
        _options.header("Reporting options"),
        _options.own("precision", "f", "fixed output format with N digits precision", "N"),
        _options.own("instances", "i", "comma-separated metrics instance list", "INST"),
        _options.own("raw", "r", "output raw counter values (no rate conversion)"),
        _options.own("nointerp", "U", "non-interpolated fetching; ignores interval", "FILE"),
        _options.own("width", "w", "set the width of each column of output", "N"),
        _options.header("pcp-native options"),
        _options.demo_option(),
    ],
    "[options] metricname", watch="s",
    flags=PM_OPTFLAG_BOUNDARIES | PM_OPTFLAG_STDOUT_TZ)


TOOLS["export"] = _options.Tool(
    "export", "A:a:D:F:n:O:o:rS:T:t:uVZ:z?", [
        _options.header("General options"),
        STANDARD["Archive"],
        _options.own("output", "o", "output target: csv (default), parquet, or a file whose "
                     "suffix (.csv, .parquet, .pq) names both", "OUTPUT"),
        _options.own("output-file", "F", "output file (default: stdout)", "OUTFILE"),
        STANDARD["Debug"], STANDARD["Namespace"], STANDARD["Version"], STANDARD["Help"],
        _options.header("Reporting options"),
        STANDARD["Align"], STANDARD["Start"], STANDARD["Finish"], STANDARD["Origin"],
        STANDARD["Interval"], STANDARD["TimeZone"], STANDARD["HostZone"],
        _options.own("raw", "r", "output raw counter values (no rate conversion)"),
        _options.own("no-interpol", "u", "disable interpolation mode with archives "
                     "(always: the records as logged)"),
        _options.header("pcp-native options"),
        _options.own("layout", "", "one row per record (wide, default) or per value (long)",
                     "LAYOUT"),
        _options.own("errors", "", "at a damaged record: fail (raise, default), read on "
                     "where libpcp's reader would (skip), or end that volume there (stop)",
                     "RULE"),
        _options.own("strict", "", "several archives: a metric one of them lacks is an error "
                     "(default: a warning, and no rows for it there)"),
        _options.own("progress", "", "show a progress bar (default: when stderr is a terminal)"),
        _options.own("no-progress", "", "never show a progress bar"),
        _options.demo_option(),
    ],
    "[option...] [metricspec ...]", flags=PM_OPTFLAG_BOUNDARIES)
