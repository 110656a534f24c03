"""pcp.pmconfig: configuration, metric validation and sampling for pmrep-style tools.

pmrep, pcp2csv, the pcp2xxx exporters and pcp-dstat hand a pmConfig their own tool
object (``util``) and let it:

1. find the configuration (set_config_path), read the [options] section and any
   ``:metricset`` sections' options into util's attributes (read_options), then the
   command line (read_cmd_line);
2. build the metric set from the command line's metric specifications and metricsets,
   the [global] section and the configuration files (prepare_metrics): each metric maps
   to [label, instances, unit, type, width, precision, limit] as written;
3. check the metrics against the context's PMNS, register derived metrics, pick
   instances and units, and put every metric in util.pmfg, a pmapi.fetchgroup
   (validate_metrics / update_metrics), after which util.metrics[name] holds
   [label, instances, (label, units, multiplier), raw, width, fetchgroup item,
   precision, limit];
4. fetch, pause and hand back the values filtered, limited and ranked
   (fetch, pause, get_ranked_results).

Written for this package over its pcp.pmapi, with the official module's method names,
attributes, messages and exit statuses, which the tools rely on.
"""
from __future__ import annotations

import configparser
import configparser as ConfigParser  # noqa: F401 (the official module's name for it)
import csv
import math
import os
import re
import signal
import sys
import time
from collections import OrderedDict
from copy import deepcopy

from pcp import pmapi
from pcp._core.level import API_LEVEL as _API_LEVEL

TYPE_CHECKING = False      # typing's, without importing typing (the tools' start-up)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Tuple

__all__ = ["pmConfig", "TRUNC", "VERSION", "CURR_INSTS"]

TRUNC = "xxx"           # what a value too wide for its column is printed as
VERSION = 1
CURR_INSTS = False      # the default: fetch whole instance domains, not the current ones

_c = pmapi.c_api
NUMERIC_AND_STRING = (_c.PM_TYPE_32, _c.PM_TYPE_U32, _c.PM_TYPE_64, _c.PM_TYPE_U64,
                      _c.PM_TYPE_FLOAT, _c.PM_TYPE_DOUBLE, _c.PM_TYPE_STRING)
TRUE_WORDS = ("true", "True", "y", "yes", "Yes")
FALSE_WORDS = ("false", "False", "n", "no", "No")

# positions in a util.metrics entry, once validated
LABEL, INSTANCES, UNIT, RAW, WIDTH, ITEM, PRECISION, LIMIT = range(8)


def _only_dimension(unit: Any, which: str) -> bool:
    """Whether units have exactly one dimension, `which` (Count, Space or Time), of 1."""
    dims = {"Count": unit.dimCount, "Space": unit.dimSpace, "Time": unit.dimTime}
    return dims.pop(which) == 1 and not any(dims.values())


def _unquoted(value: str) -> str:
    if value.startswith('"') and value.endswith('"'):
        return value[1:-1]
    return value


def _is_plain_word(text: str) -> bool:
    """What the official module takes for a process name: letters and digits, with
    dots, underscores and dashes."""
    return text.replace(".", "").replace("_", "").replace("-", "").isalnum()


def _parse_error_line(error: configparser.Error) -> str:
    """The line number configparser gives for a parse error."""
    if hasattr(error, "lineno"):
        return str(error.lineno)
    return str(error.errors[0][0])      # type: ignore[attr-defined]


class pmConfig:
    """Configuration reader, metric validator and sampler for one tool (``util``)."""

    class pmfg_items_to_indom:
        """Items of one metric's current instances, called like an indom item."""

        def __init__(self, items: List[Tuple[int, str, Any]]) -> None:
            self._items = items

        def __call__(self) -> List[Tuple[int, str, Any]]:
            return self._items

    def __init__(self, util: Any) -> None:
        self.arghelp = ("-?", "--help", "-V", "--version")
        # the specifiers of a metric in a metricset, in their order after the name
        self.metricspec = ("label", "instances", "unit", "type",
                           "width", "precision", "limit", "formula")
        self.util = util
        self.pmids: List[int] = []
        self.descs: List[Any] = []
        self.insts: List[Any] = []
        self.texts: List[Any] = []
        self.labels: List[Any] = []                 # labels of the initial instances
        self.res_labels: Dict[str, Any] = OrderedDict()   # labels of the current results
        self._round = 0
        self._init_ts: Optional[float] = None
        self._pred_indom: List[int] = []
        self._re_cache: Dict[str, List[Any]] = {}
        self._tmp: Any = []                         # passed along pmTraversePMNS walks
        self._conf_metrics: Dict[str, Any] = OrderedDict()
        self._prev_insts: List[Any] = []
        # (key, metrics, items) of _bulk_plan; validate_metrics drops it
        self._plan: Optional[Tuple[Any, List[str], List[Any]]] = None
        # each configuration file parsed once: path -> (its own parser, the parse error)
        self._parsed: Dict[str, Tuple[configparser.ConfigParser,
                                      Optional[configparser.Error]]] = {}

    # ---- configuration files and options ----------------------------------------------

    def set_signal_handler(self) -> None:
        """On SIGHUP or SIGTERM, let the tool finalize and exit 0."""
        def handler(_signum: int, _frame: Any) -> None:
            self.util.finalize()
            sys.exit(0)
        for name in ("SIGHUP", "SIGTERM"):
            try:
                signal.signal(getattr(signal, name), handler)
            except Exception:
                pass

    def set_config_file(self, default_config: List[str]) -> Optional[str]:
        """Deprecated name of set_config_path."""
        return self.set_config_path(default_config)

    def set_config_path(self, default_config: List[str]) -> Optional[str]:
        """The first readable file or directory of `default_config` ($HOME and
        $PCP_SYSCONF_DIR expanded), unless the command line names one with -c/--config
        (which must be readable: IOError otherwise); None when help or the version is
        asked for."""
        home = os.path.expanduser("~")
        sysconf = pmapi.pmContext.pmGetConfig("PCP_SYSCONF_DIR")
        config = None
        for path in default_config:
            path = path.replace("$HOME", home).replace("$PCP_SYSCONF_DIR", sysconf)
            if os.access(path, os.R_OK) and (os.path.isfile(path) or os.path.isdir(path)):
                config = path
                break
        args = iter(sys.argv[1:])
        for arg in args:
            if arg in self.arghelp:
                return None
            if arg in ("-c", "--config") or arg.startswith("-c"):
                try:
                    config = next(args) if arg in ("-c", "--config") else arg.replace("-c", "", 1)
                except StopIteration:
                    break
                if not os.access(config, os.R_OK) or \
                        not (os.path.isfile(config) or os.path.isdir(config)):
                    if not os.path.exists(config):
                        why = "No such file or directory"
                    elif not os.access(config, os.R_OK):
                        why = "Permission denied"
                    else:
                        why = "Not a regular file"
                    raise IOError("Failed to read configuration from '%s':\n%s." % (config, why))
        return config

    def _get_conf_files(self) -> List[str]:
        """The configuration file, or the readable *.conf files of the configuration
        directory in name order."""
        config = self.util.config
        if not config:
            return []
        if os.path.isfile(config):
            return [config]
        files = []
        for name in sorted(os.listdir(config)):
            path = os.path.join(config, name)
            if path.endswith(".conf") and os.access(path, os.R_OK) and os.path.isfile(path):
                files.append(path)
        return files

    @staticmethod
    def _parser() -> configparser.ConfigParser:
        parser = configparser.ConfigParser()
        parser.optionxform = str        # type: ignore[assignment,method-assign]
        return parser

    def _read_into(self, config: configparser.ConfigParser, conf: str) -> None:
        """``config.read(conf)``, the file parsed only once per pmConfig.

        read_options and prepare_metrics both read every file of the configuration into
        their parsers (the shipped pmrep configuration is some twenty files): each file
        is parsed by itself the first time and its sections are merged into `config` as
        configparser's own read merges them (a section already there gets the file's
        options added or replaced in place; a new one goes at the end). Whether a file
        parses and the error it raises depend on the file alone (configparser checks
        duplicates within one read), so the parse error is raised again, after the part
        read before it is merged, as a read would raise it.
        """
        parsed = self._parsed.get(conf)
        if parsed is None:
            single = self._parser()
            error: Optional[configparser.Error] = None
            try:
                single.read(conf)
            except configparser.Error as caught:
                error = caught
            parsed = self._parsed[conf] = (single, error)
        single, error = parsed
        # configparser's own section tables: its public setters would check and convert
        # the raw values, which a read stores as they are
        config._defaults.update(single._defaults)           # type: ignore[attr-defined]
        sections = config._sections                          # type: ignore[attr-defined]
        for name, options in single._sections.items():      # type: ignore[attr-defined]
            if name in sections:
                sections[name].update(options)
            else:
                config.add_section(name)
                sections[name].update(options)
        if error is not None:
            raise error

    def set_attr(self, name: str, value: Any) -> None:
        """Set one option read from a configuration file on the tool."""
        util = self.util
        value = str(value)
        if name == "colxrow":           # pmrep's, kept as written
            util.colxrow = _unquoted(value)
            return
        if value in TRUE_WORDS:
            value = 1
        if value in FALSE_WORDS:
            value = 0
        if name == "speclocal":
            util.speclocal = value
        elif name == "derived":
            if _API_LEVEL >= (6, 3):
                value = str(value)      # 6.3: "yes" is "1" here, where 6.0.3 failed
            util.derived = value if value.find(";") != -1 else value.replace(",", ";")
        elif name == "samples":
            util.opts.pmSetOptionSamples(value)
            util.samples = util.opts.pmGetOptionSamples()
        elif name == "interval":
            util.opts.pmSetOptionInterval(value)
            util.interval = util.opts.pmGetOptionInterval()
        elif name == "type":
            util.type = 1 if value == "raw" else 0
        elif name == "type_prefer":
            util.type_prefer = 1 if value == "raw" else 0
        elif name == "instances":
            if _API_LEVEL >= (6, 3):
                value = str(value)
            util.instances = value.split(",")
        else:
            try:
                setattr(util, name, int(value))
            except ValueError:
                setattr(util, name, _unquoted(value))

    def read_section_options(self, config: configparser.ConfigParser, section: str) -> None:
        """Set the tool's options a section holds (in [options], only options)."""
        if not config.has_section(section):
            return
        for opt in config.options(section):
            if opt in self.util.keys:
                if not config.get(section, opt):
                    raise ValueError("No value set for option %s in [%s]" % (opt, section))
                self.set_attr(opt, config.get(section, opt))
            elif section == "options":
                raise ValueError("Unknown option %s in [%s]" % (opt, section))

    def read_options(self) -> None:
        """Read the options of the configuration files: [options], then the sections
        of the metricsets the command line names (:name)."""
        config = self._parser()
        for conf in self._get_conf_files():
            try:
                self._read_into(config, conf)
                self.read_section_options(config, "options")
                for arg in sys.argv[1:]:
                    if arg.startswith(":") and arg[1:] in config.sections():
                        self.read_section_options(config, arg[1:])
            except configparser.Error as error:
                sys.stderr.write("Failed to read configuration file '%s', line %s:\n%s\n"
                                 % (conf, _parse_error_line(error), str(error.message)))
                sys.exit(1)
            except ValueError as error:
                sys.stderr.write("Failed to read configuration file '%s':\n%s.\n" % (conf, error))
                sys.exit(1)

    def read_cmd_line(self) -> List[str]:
        """Parse the command line with the tool's pmOptions; its operands."""
        _c.pmSetOptionFlags(_c.PM_OPTFLAG_DONE)
        if _c.pmGetOptionsFromList(sys.argv):
            raise pmapi.pmUsageErr()
        return _c.pmGetOperands()

    # ---- metric specifications -------------------------------------------------------

    def parse_instances(self, instances: str) -> List[str]:
        """A comma separated instance list (CSV quoting), each name's outer quotes off."""
        names = []
        for name in next(csv.reader([instances])):
            if name.startswith('"') or name.startswith("'"):
                name = name[1:]
            if name.endswith('"') or name.endswith("'"):
                name = name[:-1]
            names.append(name)
        return names

    def parse_metric_spec_instances(self, spec: str) -> Tuple[str, List[str]]:
        """Split the instances out of a "metric,label,instances,..." specification:
        the specification without them (at least two commas) and the instance list.
        Instances may be quoted (configuration files keep the outer quotes, the shell
        takes them off)."""
        if spec.count(",") < 2:
            return spec + ",,", []
        insts: List[str] = []
        third = spec.split(",")[2]
        quoted = bool(third) and len(third) > 2 and third[0] in "'\""
        if spec.count('"') or spec.count("'"):
            rest = spec.partition(",")[2].partition(",")[2]
            quote = rest[0]
            rest = rest[:rest.rfind(quote) + 1]
            insts = self.parse_instances(rest[1:-1] if quoted else rest)
            spec = spec.replace(rest, "")
        elif third:
            insts = [third]
        if spec.count(",") < 2:
            spec += ",,"
        return spec, insts

    def parse_new_verbose_metric(self, metrics: Dict[str, Any], key: str, value: str) -> None:
        """A metric of a verbose (multi-line) definition: its name, then empty specs."""
        metrics[key] = [value]
        for index in range(len(self.metricspec)):
            if len(metrics[key]) <= index:
                metrics[key].append([] if index == 2 else None)

    def parse_verbose_metric_info(self, metrics: Dict[str, Any], key: str, spec: str,
                                  value: str) -> None:
        """One key.spec = value line of a verbose definition (a formula becomes a
        derived metric definition)."""
        value = _unquoted(value)
        if spec == "formula":
            definition = ";" + metrics[key][0] + "=" + value
            self.util.derived = definition if self.util.derived is None \
                else self.util.derived + definition
            return
        index = self.metricspec.index(spec)
        metrics[key][index + 1] = [value] if index == 1 else value

    def parse_metric_info(self, metrics: Dict[str, Any], key: str, value: str) -> None:
        """One line of a metricset: a compact definition (name = label,instances,...)
        or a line of a verbose one (key = name, key.spec = value). Entries are kept
        under the configuration key, not the metric name."""
        last = key.rsplit(".")[1] if "." in key else None
        compact = "," in value or (last is not None and last not in self.metricspec)
        if "," in value and last == "formula":
            compact = False             # formulas may hold commas
        if compact:
            spec, insts = self.parse_metric_spec_instances(key + "," + value)
            metrics[key] = spec.split(",")
            metrics[key][2] = insts
        elif last is None or last not in self.metricspec:
            self.parse_new_verbose_metric(metrics, key, value)
        else:
            key, spec = key.rsplit(".")
            if key not in metrics:
                raise ValueError("Undeclared metric key %s" % key)
            self.parse_verbose_metric_info(metrics, key, spec, value)

    def _config_error(self, conf: str, text: str) -> None:
        sys.stderr.write("Failed to read configuration file ")
        sys.stderr.write("'%s':\n%s" % (conf, text))
        sys.exit(1)

    def prepare_metrics(self) -> None:
        """Build util.metrics from the [global] section (when util.globals is 1), the
        command line's metric specifications and the metricsets it names."""
        self._prepare_metrics(False)

    def _prepare_metrics(self, pmns: bool) -> None:
        operands = self.util.opts.pmGetOperands()
        if not operands and not pmns:
            sys.stderr.write("No metrics specified.\n")
            raise pmapi.pmUsageErr()
        if not operands:        # 6.3's pmns=True: every top-level name of the namespace
            operands = self.util.context.pmGetChildren('')

        cmdline: Dict[str, Any] = OrderedDict()
        for operand in operands:
            if operand.startswith(":"):
                cmdline[operand[1:]] = None         # a metricset, filled below
            else:
                spec, insts = self.parse_metric_spec_instances(operand)
                fields = spec.split(",")
                fields[2] = insts
                cmdline[fields[0]] = fields[1:]

        globals_: Dict[str, Any] = OrderedDict()
        from_sets: Dict[str, Any] = OrderedDict()
        sources: Dict[str, str] = OrderedDict()     # the file each section came from
        config = self._parser()
        # every section of every file, the last file's wins: name -> {key: value as
        # config.get gives it}
        all_sets: Dict[str, Dict[str, str]] = {}
        for conf in self._get_conf_files():
            try:
                self._read_into(config, conf)
            except configparser.Error as error:
                sys.stderr.write("Failed to read configuration file '%s', line %s:\n%s\n"
                                 % (conf, _parse_error_line(error), str(error.message)))
                sys.exit(1)
            if self.util.globals == 1 and config.has_section("global"):
                parsed: Dict[str, Any] = OrderedDict()
                for key in config.options("global"):
                    if key in self.util.keys:
                        self._config_error(conf, "Section [global] contains options.\n")
                    if not config.get("global", key):
                        self._config_error(conf, "No value set for %s in [global].\n" % key)
                    try:
                        self.parse_metric_info(parsed, key, config.get("global", key))
                    except ValueError as error:
                        # the official module formats this message wrongly (its text
                        # is used as the format): a TypeError, as there
                        sys.stderr.write("Failed to read configuration file ")
                        sys.stderr.write("'%s':\n" + str(error) % conf + ".\n")
                        sys.exit(1)
                for entry in parsed.values():
                    globals_[entry[0]] = entry[1:]
            # a later file's section replaces an earlier one's
            for section in config.sections():
                all_sets.pop(section, None)
                all_sets[section] = self._section_values(config, section)
                sources[section] = conf
                if section not in ("options", "global"):
                    config.remove_section(section)

        ignored = getattr(self.util, "keys_ignore", ())
        for name in cmdline:
            if cmdline[name] is not None or name not in all_sets:
                continue
            parsed = OrderedDict()
            for key, value in all_sets[name].items():
                if not value:
                    self._config_error(sources[name], "No value set for %s in [%s].\n"
                                       % (key, name))
                if key in self.util.keys or key in ignored:
                    continue
                try:
                    self.parse_metric_info(parsed, key, value)
                except ValueError as error:
                    self._config_error(sources[name], str(error) + ".\n")
            for entry in parsed.values():
                from_sets[entry[0]] = entry[1:]
            cmdline[name] = from_sets

        for name in cmdline:
            if cmdline[name] is None:
                sys.stderr.write("Metricset definition ':%s' not found.\n" % name)
                sys.exit(1)

        if self.util.globals == 1:
            for metric, spec in globals_.items():
                self.util.metrics[metric] = spec
        for name, spec in cmdline.items():
            if isinstance(spec, list):
                self.util.metrics[name] = spec
            elif spec:
                for metric in spec:
                    self.util.metrics[metric] = from_sets[metric]
        if not self.util.metrics:
            sys.stderr.write("No metrics specified.\n")
            sys.exit(1)
        self._conf_metrics = deepcopy(self.util.metrics)

    @staticmethod
    def _section_values(config: configparser.ConfigParser, section: str) -> Dict[str, str]:
        """``dict(config.items(section))``: the [DEFAULT] options, then the section's,
        interpolated. Only a value with a "%" in it can interpolate to something else
        (or fail to), so only those go through configparser, in items' order (the
        first bad one raises what items would)."""
        raw = dict(config._defaults)                        # type: ignore[attr-defined]
        raw.update(config._sections[section])               # type: ignore[attr-defined]
        return {key: config.get(section, key) if "%" in value else value
                for key, value in raw.items()}

    # ---- texts and labels ------------------------------------------------------------

    def provide_texts(self) -> bool:
        """Whether the tool wants help texts."""
        return bool(getattr(self.util, "include_texts", False))

    def provide_labels(self) -> bool:
        """Whether the tool wants labels."""
        return bool(getattr(self.util, "include_labels", False))

    def _dict_to_flat_list(self, d: Dict[Any, Any]) -> List[Tuple[Any, Any]]:
        """(key, value) pairs of a dict, nested dicts flattened into them."""
        items: List[Tuple[Any, Any]] = []
        for key, value in d.items():
            if isinstance(value, dict):
                items.extend(self._dict_to_flat_list(value))
            else:
                items.append((key, value))
        return items

    def merge_labels(self, d1: Dict[Any, Any], d2: Dict[Any, Any]) -> Dict[Any, Any]:
        """d1 updated with d2, as a new dict."""
        merged = d1.copy()
        merged.update(d2)
        return merged

    def get_labels_str(self, metric: str, inst: Optional[int] = None, curr: bool = True,
                       combine: bool = True) -> str:
        """A metric's labels, or an instance's (merged with the metric's when
        `combine`), as "{'name':'value',...}"; `curr`: of the current results, else of
        the instances found at validation."""
        if curr:
            ref = self.res_labels[metric]
        else:
            ref = self.labels[list(self.util.metrics.keys()).index(metric)]
        if inst in (None, _c.PM_IN_NULL):
            labels = ref[0]
        else:
            if curr:
                inst_labels = ref[1][inst] if inst in ref[1] else {}
            else:
                inst_labels = ref[1][inst] if ref[1] else {}
            if not combine:
                labels = inst_labels
                if not labels:
                    return "{}"
            else:
                labels = self.merge_labels(ref[0], inst_labels)
        return "{" + ",".join("'%s':'%s'" % (k, v)
                              for k, v in self._dict_to_flat_list(labels)) + "}"

    def do_live_filtering(self) -> bool:
        """Whether instances are filtered at each fetch rather than at validation."""
        return bool(getattr(self.util, "live_filter", False))

    def do_invert_filtering(self) -> bool:
        """Whether the live filter keeps the instances that do not match."""
        return bool(getattr(self.util, "invert_filter", False))

    def get_metric_indom(self, desc: Any) -> Tuple[Any, Any]:
        """The instances of a metric's domain (an archive's: all it ever held)."""
        context = self.util.context
        if context.type == _c.PM_CONTEXT_ARCHIVE:
            return context.pmGetInDomArchive(desc)
        return context.pmGetInDom(desc)

    def get_inst_labels(self, indom: int, curr: bool = True, insts: Any = ()) -> Any:
        """Instance labels of a domain: all of them (a dict), or those of `insts` in
        their order (a list of dicts) when not `curr`."""
        if indom == _c.PM_INDOM_NULL:
            return {} if curr else []
        labels = self.util.context.pmGetInstancesLabels(indom)
        if curr:
            return labels
        return [labels[i] if i in labels else {} for i in insts]

    def get_proc_basename(self, proc: str) -> str:
        """The command name of a process instance's command: "(kthread)" and
        "-bash:" forms unwrapped, a path's last part."""
        if proc.startswith("("):
            return proc[1:-1]
        if proc.startswith("-"):
            proc = proc[1:]
        if proc.endswith(":"):
            proc = proc[:-1]
        return os.path.basename(proc)

    # ---- validation ------------------------------------------------------------------

    def _match_instances(self, wanted: List[str], inst: Tuple[Any, Any]) -> Tuple[Any, Any]:
        """The instances of (ids, names) that the requested instances pick: a number
        picks the instance whose name starts with it (process ids), a plain word every
        process of that command name, and anything else is a regular expression for the
        whole name. A bad one ends the program."""
        found: Tuple[List[Any], List[Any]] = ([], [])
        ids, names = inst
        for request in wanted:
            hit = False
            what = ""
            try:
                if request.isdigit():
                    what = "Invalid instance"
                    if names[0].split()[0].isdigit():
                        for i, name in enumerate(names):
                            first = name.split()[0]
                            if first.isdigit() and int(request) == int(first):
                                found[0].append(ids[i])
                                found[1].append(names[i])
                                hit = True
                                break
                if _is_plain_word(request):
                    what = "Invalid process"
                    if " " in names[0] and names[0].split()[0].isdigit():
                        for i, name in enumerate(names):
                            if request == self.get_proc_basename(name.split()[1]):
                                found[0].append(ids[i])
                                found[1].append(names[i])
                                hit = True
                if not hit:
                    what = "Invalid regex"
                    pattern = re.compile(r"\A" + request + r"\Z")
                    for i, name in enumerate(names):
                        if re.match(pattern, name):
                            found[0].append(ids[i])
                            found[1].append(names[i])
            except Exception as error:
                sys.stderr.write("%s '%s': %s.\n" % (what, request, error))
                sys.exit(1)
        return found

    def check_metric(self, metric: str) -> None:
        """Validate one leaf metric (a pmTraversePMNS callback): look it up (a pmid seen
        before is skipped), check its type, pick its instances, read its texts and labels
        when wanted, and record pmid, descriptor and instances."""
        util = self.util
        context = util.context
        try:
            pmid = context.pmLookupName(metric)[0]
            if pmid in self.pmids:
                return
            desc = context.pmLookupDescs(pmid)[0]
            singular = ([_c.PM_IN_NULL], [None])
            if desc.contents.indom == _c.PM_INDOM_NULL:
                inst = singular
            else:
                inst = self.get_metric_indom(desc)
                if not inst[0]:
                    inst = singular
            if desc.contents.type not in NUMERIC_AND_STRING:
                raise pmapi.pmErr(_c.PM_ERR_TYPE)
            wanted = util.instances if not self._tmp else self._tmp
            if getattr(util, "omit_flat", False) and not inst[1][0]:
                return
            if wanted and inst[1][0] and not self.do_live_filtering():
                inst = self._match_instances(wanted, inst)
                if not inst[0]:
                    return
            self.pmids.append(pmid)
            self.descs.append(desc)
            self.insts.append(inst)
            if self.provide_texts():
                self.texts.append(self._texts(pmid, desc))
            metric_labels: Any = {}
            inst_labels: Any = []
            current_labels: Any = {}
            if self.provide_labels():
                try:
                    metric_labels = context.pmLookupLabels(pmid)
                    inst_labels = self.get_inst_labels(desc.contents.indom, False, inst[0])
                    current_labels = self.get_inst_labels(desc.contents.indom)
                except Exception:
                    pass
            self.labels.append([metric_labels, inst_labels])
            self.res_labels[metric] = [metric_labels, current_labels]
        except pmapi.pmErr as error:
            if getattr(util, "ignore_incompat", False):
                return
            sys.stderr.write("Invalid metric %s (%s).\n" % (metric, str(error)))
            sys.exit(1)

    def _texts(self, pmid: int, desc: Any) -> List[Any]:
        """[one-line help, full help, domain's one-line help, domain's full help] (None
        where there is none)."""
        context = self.util.context
        line = full = dom_line = dom_full = None
        try:
            line = context.pmLookupText(pmid, _c.PM_TEXT_ONELINE)
            full = context.pmLookupText(pmid, _c.PM_TEXT_HELP)
            if desc.contents.indom != _c.PM_INDOM_NULL:
                dom_line = context.pmLookupInDomText(desc, _c.PM_TEXT_ONELINE)
                dom_full = context.pmLookupInDomText(desc, _c.PM_TEXT_HELP)
        except pmapi.pmErr as error:
            if error.args[0] != _c.PM_ERR_TEXT:
                raise
        return [line, full, dom_line, dom_full]

    def ignore_unknown_metrics(self) -> bool:
        """Whether metrics the source does not know are left out rather than fatal."""
        return bool(getattr(self.util, "ignore_unknown", False))

    def format_metric_label(self, label: str) -> str:
        """A rate's units in short form: "Kbyte / sec" -> "Kbyte/s"."""
        if " / " in label:
            for long_form, short in (("nanosec", "ns"), ("microsec", "us"), ("millisec", "ms"),
                                     ("sec", "s"), ("min", "min"), ("hour", "h"),
                                     (" / ", "/")):
                label = label.replace(long_form, short)
        return label

    def integer_roundup(self, value: int, upper: int) -> int:
        """`value` rounded up to a multiple of `upper`."""
        return int(math.ceil(value / float(upper))) * upper

    def validate_common_options(self) -> None:
        """Turn the tool's numeric options into integers (rank and limits may be
        negative; widths, precisions and the header repeat may not): a bad one ends the
        program."""
        util = self.util
        checks = (("rank", False), ("limit_filter", False), ("limit_filter_force", False),
                  ("width", True), ("width_force", True), ("precision", True),
                  ("precision_force", True), ("repeat_header", True))
        err = "Integer expected"
        attr = "unknown"
        try:
            for attr, non_negative in checks:
                value = getattr(util, attr, None)
                if not value:
                    continue
                err = "Non-negative integer expected" if non_negative else "Integer expected"
                if attr == "repeat_header" and value == "auto":
                    continue
                setattr(util, attr, int(value))
                if non_negative and getattr(util, attr) < 0:
                    raise ValueError(err)
        except ValueError:
            sys.stderr.write("Error while reading option %s: %s.\n" % (attr, err))
            sys.exit(1)

    def _register_derived(self) -> None:
        """Load or register the tool's derived metrics (";" separated: a file or
        directory path, or name=expression); a failure ends the program."""
        context = self.util.context
        for derived in filter(None, self.util.derived.split(";")):
            if derived.startswith("/") or derived.startswith("."):
                try:
                    context.pmLoadDerivedConfig(derived)
                except pmapi.pmErr as error:
                    sys.stderr.write("Failed to load derived metric definitions ")
                    sys.stderr.write("from file '%s':\n%s.\n" % (derived, str(error)))
                    sys.exit(1)
                continue
            err = ""
            try:
                name, expr = derived.split("=", 1)
                context.pmLookupName(name.strip())
            except pmapi.pmErr as error:
                if error.args[0] != _c.PM_ERR_NAME:
                    err = error.message()
                else:
                    try:
                        context.pmRegisterDerived(name.strip(), expr.strip())
                        continue
                    except pmapi.pmErr as error2:
                        err = error2.message()
            except ValueError:
                err = "Invalid syntax (expected metric=expression)"
            except Exception:
                err = "Unidentified error"
            if err:
                sys.stderr.write("Failed to register derived metric:\n%s.\n" % err)
                sys.exit(1)

    def _expand_non_leaves(self) -> None:
        """Replace each non-leaf name by its leaves (each with the non-leaf's
        specification unless it has one of its own), keeping the order; unknown names
        stay, or go when the tool ignores unknown metrics of its configuration."""
        metrics = self.util.metrics
        self.util.metrics = OrderedDict()
        context = self.util.context

        def add_leaf(leaf: str) -> None:
            if leaf != self._tmp:
                if leaf not in self.util.metrics:
                    self.util.metrics[leaf] = deepcopy(metrics[self._tmp])
            else:
                self.util.metrics[leaf] = deepcopy(metrics[leaf])

        for metric in list(metrics):
            self._tmp = metric
            try:
                context.pmTraversePMNS(metric, add_leaf)
            except pmapi.pmErr as error:
                if error.args[0] != _c.PM_ERR_NAME:
                    raise
                ignore = False
                try:
                    context.pmLookupName(metric)
                except pmapi.pmErr as error2:
                    if error2.args[0] != _c.PM_ERR_NAME:
                        raise
                    if self.ignore_unknown_metrics() and metric in self._conf_metrics:
                        ignore = True
                if not ignore:
                    self.util.metrics[metric] = deepcopy(metrics[metric])

    def _choose_unit(self, spec: List[Any], unit: Any) -> None:
        """The unit a metric is shown in: the tool's forced scale for its dimension, its
        own spec, the tool's default scale for the dimension, else its native units."""
        util = self.util
        for dimension, prefix in (("Count", "count"), ("Space", "space"), ("Time", "time")):
            if not _only_dimension(unit, dimension):
                continue
            forced = getattr(util, prefix + "_scale_force", None)
            default = getattr(util, prefix + "_scale", None)
            if forced:
                spec[UNIT] = forced
            elif default and not spec[UNIT]:
                spec[UNIT] = default
            elif not spec[UNIT]:
                spec[UNIT] = str(unit)
        if not spec[UNIT]:
            spec[UNIT] = str(unit)
        if getattr(util, "output", None) == "archive":
            spec[UNIT] = str(unit)      # pmlogger's units, so archives can be merged

    @staticmethod
    def _fill_spec(metric: str, spec: List[Any]) -> None:
        """Every field of a metric's spec present; a label made from the name when it
        has none (mem.util.free -> m.u.free)."""
        while len(spec) < 8:
            spec.append([] if len(spec) == INSTANCES else None)
        if not spec[LABEL]:
            parts = metric.split(".")
            spec[LABEL] = "".join(p[0] + "." for p in parts)[:-2] + parts[-1]

    def validate_metrics(self, curr_insts: bool = CURR_INSTS, max_insts: int = 0) -> None:
        """Check util.metrics against the context and make each one fetchable: derived
        metrics registered, non-leaves expanded, instances picked, specs completed and
        fetchgroup items made. Whatever cannot be fixed ends the program."""
        self._plan = None
        util = self.util
        if not hasattr(util, "leaf_only"):
            util.metrics = deepcopy(self._conf_metrics)
        predicate = getattr(util, "predicate", None)
        if predicate:
            for name in predicate.split(","):
                if name not in util.metrics:
                    util.metrics[name] = ["", []]
        if util.derived:
            self._register_derived()
        if not getattr(util, "leaf_only", False):
            self._expand_non_leaves()

        metrics = util.metrics
        util.metrics = OrderedDict()
        for metric in metrics:
            try:
                before = len(self.pmids)
                self._tmp = metrics[metric][1]
                util.context.pmTraversePMNS(metric, self.check_metric)
                if len(self.pmids) != before:
                    util.metrics[metric] = metrics[metric]
            except pmapi.pmErr as error:
                sys.stderr.write("Invalid metric %s (%s).\n" % (metric, str(error)))
                sys.exit(1)

        if not self.insts and not self.ignore_unknown_metrics():
            sys.stderr.write("No matching instances found.\n")
            if util.instances:
                print("\nRequested global instances:")
                print(util.instances)
            sys.exit(1)

        dynamic_insts = not max_insts
        incompatible: Dict[str, int] = OrderedDict()
        for i, metric in enumerate(util.metrics):
            spec = util.metrics[metric]
            self._fill_spec(metric, spec)
            desc = self.descs[i]
            ids = self.insts[i][0]

            if not spec[INSTANCES] and util.instances and ids[0] != _c.PM_IN_NULL:
                spec[INSTANCES] = util.instances
            if ids[0] == _c.PM_IN_NULL:
                spec[INSTANCES] = []
            if dynamic_insts:
                max_insts = self.integer_roundup(len(ids), 1000)

            if hasattr(util, "type_prefer") and not spec[RAW]:
                spec[RAW] = util.type_prefer
            elif spec[RAW] == "raw":
                spec[RAW] = 1
            else:
                spec[RAW] = 0
            # raw values for an archive output, so pmlogger's archives can be merged
            if getattr(util, "type", None) == 1 or spec[RAW] == "raw" or \
                    getattr(util, "output", None) == "archive":
                spec[RAW] = 1

            units = desc.contents.units
            self._choose_unit(spec, units)
            try:
                label = spec[UNIT]
                unitstr, mult = util.context.pmParseUnitsStr(spec[UNIT])
                if spec[RAW] == 0 and desc.contents.type != _c.PM_TYPE_STRING and \
                        desc.sem == _c.PM_SEM_COUNTER and "/" not in label:
                    label += " / s"
                spec[UNIT] = (self.format_metric_label(label), unitstr, mult)
            except pmapi.pmErr as error:
                sys.stderr.write("%s: %s.\n" % (str(error), spec[UNIT]))
                sys.exit(1)

            # doubles unless the units are the native ones; rates always doubles;
            # strings stay strings
            mtype = _c.PM_TYPE_DOUBLE
            if str(unitstr) == str(units):
                mtype = desc.contents.type
            if spec[RAW] == 0 and desc.contents.sem == _c.PM_SEM_COUNTER:
                mtype = _c.PM_TYPE_DOUBLE
            if desc.contents.type == _c.PM_TYPE_STRING:
                mtype = desc.contents.type

            self._set_width(metric, spec)
            self._set_precision(metric, spec)
            self._set_limit(metric, spec, desc)

            try:
                max_insts = max(1, max_insts)
                scale = spec[UNIT][0]
                if curr_insts and spec[INSTANCES]:
                    spec[ITEM] = self._current_items(i, metric, mtype, scale)
                else:
                    spec[ITEM] = util.pmfg.extend_indom(metric, mtype, scale, max_insts)
                if self.do_live_filtering():
                    self._re_cache[metric] = []
                    try:
                        for request in spec[INSTANCES]:
                            self._re_cache[metric].append(re.compile(r"\A" + request + r"\Z"))
                    except Exception as error:
                        sys.stderr.write("Invalid regex '%s': %s.\n" % (request, error))
                        sys.exit(1)
            except Exception:
                if getattr(util, "ignore_incompat", False):
                    incompatible[metric] = i
                else:
                    raise

        for metric in reversed(incompatible):
            i = incompatible[metric]
            del self.pmids[i]
            del self.descs[i]
            del self.insts[i]
            if self.provide_texts():
                del self.texts[i]
            if self.provide_labels():
                del self.labels[i]
            del util.metrics[metric]

        if not util.metrics:
            if not self.ignore_unknown_metrics():
                sys.stderr.write("No compatible metrics found.\n")
            else:
                sys.stderr.write("Not one known metric found.\n")
            sys.exit(1)
        if predicate:
            self.validate_predicate()

    @staticmethod
    def _spec_number(metric: str, written: Any, message: str, non_negative: bool) -> int:
        """A number written in a metric's spec, as an int; a bad one ends the program."""
        try:
            value = int(written)
            if non_negative and value < 0:
                raise ValueError
        except Exception:
            sys.stderr.write("%s: %s\n" % (message, metric))
            sys.exit(1)
        return value

    def _set_width(self, metric: str, spec: List[Any]) -> None:
        """The column width: as written, the tool's, or the label's; never under
        TRUNC's."""
        util = self.util
        if spec[WIDTH]:
            spec[WIDTH] = self._spec_number(metric, spec[WIDTH],
                                            "Non-negative integer expected", True)
        else:
            spec[WIDTH] = getattr(util, "width", 0)
        if getattr(util, "width_force", None) is not None:
            spec[WIDTH] = util.width_force
        if not spec[WIDTH]:
            spec[WIDTH] = len(spec[LABEL])
        spec[WIDTH] = max(spec[WIDTH], len(TRUNC))

    def _set_precision(self, metric: str, spec: List[Any]) -> None:
        """The precision goes to [6]: [5] is where the fetchgroup item will be."""
        util = self.util
        if spec[ITEM]:
            spec[PRECISION] = self._spec_number(metric, spec[ITEM],
                                                "Non-negative integer expected", False)
        else:
            spec[PRECISION] = getattr(util, "precision", 3)
        if getattr(util, "precision_force", None) is not None:
            spec[PRECISION] = util.precision_force
        spec[ITEM] = None

    def _set_limit(self, metric: str, spec: List[Any], desc: Any) -> None:
        """The value limit filter (none for strings)."""
        util = self.util
        if spec[LIMIT]:
            spec[LIMIT] = self._spec_number(metric, spec[LIMIT], "Integer expected", False)
        else:
            spec[LIMIT] = getattr(util, "limit_filter", spec[LIMIT])
        if getattr(util, "limit_filter_force", None):
            spec[LIMIT] = util.limit_filter_force
        if desc.contents.type == _c.PM_TYPE_STRING:
            spec[LIMIT] = None

    def _current_items(self, i: int, metric: str, mtype: int, scale: str) -> Any:
        """One fetchgroup item per instance found at validation (those gone by now are
        dropped, unless all are)."""
        names = self.insts[i][1]
        items = []
        vanished = []
        for j, name in enumerate(names):
            try:
                item = self.util.pmfg.extend_item(metric, mtype, scale, name)
                items.append((self.insts[i][0][j], name, item))
            except pmapi.pmErr as error:
                if error.args[0] == _c.PM_ERR_CONV:
                    raise
                vanished.append(j)
        if items:
            for j in reversed(vanished):
                del self.insts[i][0][j]
                del self.insts[i][1][j]
                if self.provide_labels():
                    del self.labels[i][1][j]
        return self.pmfg_items_to_indom(items)

    def finalize_options(self) -> None:
        """Settle samples and interval: a finish time (-T) makes the run time, which
        with -s gives the interval and without it the sample count."""
        util = self.util
        opts = util.opts
        if opts.pmGetOptionFinishOptarg():
            origin = 0 if opts.pmGetOptionOrigin() is None else float(opts.pmGetOptionOrigin())
            util.runtime = float(opts.pmGetOptionFinish()) - origin
            if opts.pmGetOptionSamples():
                util.samples = max(2, opts.pmGetOptionSamples())
                util.interval = float(util.runtime) / (util.samples - 1)
                opts.pmSetOptionInterval(str(util.interval))
                util.interval = opts.pmGetOptionInterval()
            else:
                util.interval = opts.pmGetOptionInterval()
                if not util.interval:
                    util.interval = pmapi.timeval(0)
                try:
                    util.samples = int(util.runtime / float(util.interval) + 1)
                except Exception:
                    pass
        else:
            util.samples = opts.pmGetOptionSamples()
            util.interval = opts.pmGetOptionInterval()
        if float(util.interval) <= 0:
            sys.stderr.write("Interval must be greater than zero.\n")
            sys.exit(1)

    def clear_metrics(self) -> None:
        """Forget the metric set and empty the fetchgroup."""
        self.util.metrics = OrderedDict()
        self.pmids = []
        self.descs = []
        self.insts = []
        self.texts = []
        self.labels = []
        self.res_labels = OrderedDict()
        self.util.pmfg.clear()
        self.util.pmfg_ts = None

    def update_metrics(self, curr_insts: bool = CURR_INSTS, max_insts: int = 0) -> None:
        """Build the metric set and fetchgroup again (a timestamp item first)."""
        self.clear_metrics()
        self.util.pmfg_ts = self.util.pmfg.extend_timestamp()
        self.validate_metrics(curr_insts, max_insts)

    # ---- sampling --------------------------------------------------------------------

    def names_change_action(self) -> int:
        """What to do when pmcd says its PMNS changed: 0 ignore, 1 abort, 2 update."""
        return getattr(self.util, "names_change", 0)

    def fetch(self) -> int:
        """Fetch the group: 0, or -1 at the end of the archive, -2 past the finish time
        of an uninterpolated archive, -3 (abort) or 1 (update) on a PMNS change."""
        util = self.util
        try:
            state = util.pmfg.fetch()
        except pmapi.pmErr as error:
            if error.args[0] == _c.PM_ERR_EOL:
                return -1
            if error.args[0] == _c.PM_ERR_TOOSMALL:
                raise pmapi.pmErr(_c.PM_ERR_TOOSMALL,
                                  "\nNo metrics or instances to report present.")
            raise error
        if not util.interpol:
            sample = util.pmfg_ts().strftime("%s")
            if float(sample) > float(util.opts.pmGetOptionFinish()):
                return -2
        if state & _c.PMCD_NAMES_CHANGE:
            action = self.names_change_action()
            if action == 1:
                return -3
            if action == 2:
                return 1
        return 0

    def pause(self) -> None:
        """Sleep until the next sample is due (interval steps from the first sample's
        time, so the schedule does not drift)."""
        self._round += 1
        if not self._init_ts:
            self._init_ts = float(self.util.pmfg_ts().strftime("%s.%f"))
        wakeup = self._init_ts + float(self.util.interval) * self._round
        sleep = wakeup - time.time()
        if sleep > 0:
            time.sleep(sleep)

    def filter_instance(self, metric: str, name: str) -> bool:
        """Whether the live filter keeps an instance name of a metric."""
        if not self._re_cache[metric]:
            return True
        for request in self.util.metrics[metric][INSTANCES]:
            if _is_plain_word(request) and " " in name and name.split()[0].isdigit():
                if request == self.get_proc_basename(name.split()[1]):
                    return True
        for pattern in self._re_cache[metric]:
            if re.match(pattern, name):
                return True
        return False

    def rank(self, instances: List[Tuple[int, str, Any]]) -> List[Tuple[int, str, Any]]:
        """The top (rank > 0) or bottom (rank < 0) |rank| values."""
        if not self.util.rank:
            return instances
        return sorted(instances, key=lambda value: value[2],
                      reverse=self.util.rank > 0)[:abs(self.util.rank)]

    def validate_predicate(self) -> None:
        """The predicate metrics must be in the set, with instances, and numeric."""
        for predicate in self.util.predicate.split(","):
            if predicate not in self.util.metrics:
                sys.stderr.write("Predicate metric %s filtered out.\n" % predicate)
                sys.exit(1)
            i = list(self.util.metrics.keys()).index(predicate)
            self._pred_indom.append(self.descs[i].contents.indom)
            if self.insts[i][0][0] == _c.PM_IN_NULL:
                sys.stderr.write("Predicate metric must have instances.\n")
                sys.exit(1)
            if self.descs[i].contents.type == _c.PM_TYPE_STRING:
                sys.stderr.write("Predicate metric values must be numeric.\n")
                sys.exit(1)

    def get_sorted_results(self, valid_only: bool = False) -> Dict[str, Any]:
        """Deprecated name of get_ranked_results."""
        return self.get_ranked_results(valid_only)

    def _values_of(self, metric: str, predicates: Any,
                   early_filter: bool) -> List[Tuple[int, str, Any]]:
        """(instance, name, value) of a metric's last fetch: transient instances (no
        name), live-filtered ones, values that fail and those beyond the limit left
        out."""
        spec = self.util.metrics[metric]
        limit = spec[LIMIT]
        out: List[Tuple[int, str, Any]] = []
        try:
            listing = spec[ITEM]()
        except Exception:
            return out
        for inst, name, read in listing:
            try:
                if inst != _c.PM_IN_NULL and not name:
                    continue
                if early_filter and inst != _c.PM_IN_NULL and \
                        not self.filter_instance(metric, name):
                    continue
                value = read()
                if limit and metric not in predicates:
                    if limit > 0 and value < limit:
                        continue
                    if limit < 0 and value > abs(limit):
                        continue
                out.append((inst, name, value))
            except Exception:
                pass
        return out

    def _refresh_result_labels(self, results: Dict[str, Any]) -> None:
        """Labels of the instances in the results, read again when those change."""
        insts = [(metric, list(zip(*values))[0]) for metric, values in results.items() if values]
        if self._prev_insts == insts:
            return
        previous = self.res_labels
        self.res_labels = OrderedDict()
        self._prev_insts = insts
        i = -1
        for metric in results:
            current = None
            if metric in previous:
                metric_labels = previous[metric][0]
                known = previous[metric][1].keys()
                now = list(zip(*results[metric]))[0] if results[metric] else {}
                if all(inst in known for inst in now):
                    current = previous[metric][1]
            else:
                i = list(self.util.metrics.keys()).index(metric)
                metric_labels = self.util.context.pmLookupLabels(self.pmids[i])
            if current is None:
                # as in the official module, the domain of the last metric looked up
                # above (i is not moved for metrics whose labels were known)
                current = self.get_inst_labels(self.descs[i].contents.indom)
            self.res_labels[metric] = [metric_labels, current]

    def _bulk_plan(self, predicates: Any) -> Tuple[List[str], List[Any]]:
        """The metrics whose fetchgroup items are this package's instance items, and
        those items, that no limit reads one by one: made once per validated metric set
        (util.metrics' items and limits do not change between validations; the plan is
        made again when util.metrics is another dict or has other metrics)."""
        util = self.util
        key = (util.metrics, tuple(util.metrics), tuple(predicates))
        plan = self._plan
        if plan is not None and plan[0][0] is key[0] and plan[0][1:] == key[1:]:
            return plan[1], plan[2]
        indom_items = pmapi.fetchgroup.fetchgroup_indom
        metrics, items = [], []
        if getattr(indom_items, "named_triples", None) is not None:
            for metric, spec in util.metrics.items():
                if type(spec[ITEM]) is indom_items and \
                        (not spec[LIMIT] or metric in predicates):
                    metrics.append(metric)
                    items.append(spec[ITEM])
        self._plan = (key, metrics, items)
        return metrics, items

    def _bulk_values(self, early_filter: bool, predicates: Any) -> Tuple[List[str], List[Any]]:
        """The metrics of the plan above and their values (when no live filter reads them
        one by one), each as a list of (instance, name, value) of the named instances,
        the failed values left out: all of them in one call, no Python call per metric
        or value. A failed item gives [], as its callable's error does in _values_of."""
        if early_filter:
            return [], []
        metrics, items = self._bulk_plan(predicates)
        if not items:
            return [], []
        values = pmapi.fetchgroup.fetchgroup_indom.named_triples(items)
        if None in values:
            values = [[] if v is None else v for v in values]
        return metrics, values

    def get_ranked_results(self, valid_only: bool = False) -> Dict[str, Any]:
        """The last fetch's values by metric, as lists of (instance, name, value):
        filtered, limited, ranked, and restricted to the instances the predicate metrics
        keep."""
        util = self.util
        predicate = getattr(util, "predicate", None)
        predicates = predicate.split(",") if predicate else ()
        early_filter = self.do_live_filtering() and not self.do_invert_filtering()
        metrics, bulk = self._bulk_values(early_filter, predicates)
        if len(metrics) == len(util.metrics):
            # every metric's values in one go, in util.metrics' order (most tools)
            results: Dict[str, Any] = OrderedDict(zip(metrics, bulk))
            if valid_only:
                for metric in [metric for metric, values in zip(metrics, bulk) if not values]:
                    del results[metric]
        else:
            known = dict(zip(metrics, bulk))
            results = OrderedDict()
            for metric in util.metrics:
                values = known.get(metric)
                if values is None:
                    values = self._values_of(metric, predicates, early_filter)
                results[metric] = values
                if valid_only and not values:
                    del results[metric]

        if self.provide_labels():
            self._refresh_result_labels(results)
        if not results:
            return results

        if predicates:
            kept: Dict[int, List[int]] = {}
            for i, name in enumerate(predicates):
                results[name] = self.rank(results[name])
                indom = self._pred_indom[i]
                kept.setdefault(indom, [])
                kept[indom].extend(x[0] for x in results[name] if x[0] not in kept[indom])
            names = list(util.metrics.keys())
            for metric in results:
                if metric in predicates:
                    # ranked before its limit, so other metrics keep their instances
                    limit = util.metrics[metric][LIMIT]
                    if limit and limit > 0:
                        results[metric] = [x for x in results[metric] if x[2] >= limit]
                    elif limit and limit < 0:
                        results[metric] = [x for x in results[metric] if x[2] <= abs(limit)]
                    continue
                indom = self.descs[names.index(metric)].contents.indom
                if indom not in self._pred_indom:
                    results[metric] = self.rank(results[metric])
                else:
                    results[metric] = [x for x in results[metric] if x[0] in kept[indom]]
        elif getattr(util, "rank", None):
            for metric in results:
                results[metric] = self.rank(results[metric])

        if self.do_live_filtering() and self.do_invert_filtering():
            for metric in results:
                results[metric] = [x for x in results[metric]
                                   if self.filter_instance(metric, x[1])]
        return results


def _prepare_metrics_63(self: pmConfig, pmns: bool = False) -> None:
    """Build util.metrics from the [global] section (when util.globals is 1), the
    command line's metric specifications and the metricsets it names; with pmns and no
    metrics on the command line, every metric of the namespace (PCP 6.3)."""
    self._prepare_metrics(pmns)


if _API_LEVEL >= (6, 3):
    _prepare_metrics_63.__name__ = _prepare_metrics_63.__qualname__ = "prepare_metrics"
    pmConfig.prepare_metrics = _prepare_metrics_63  # type: ignore[method-assign]

