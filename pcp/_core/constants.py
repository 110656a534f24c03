"""Every number of the PMAPI, written once: the values the official ``cpmapi`` module
exposes on 64-bit little-endian Linux with PCP 6.0.3. ``cpmapi`` re-exports them all; every
module of the package imports its numbers from here (wire-only numbers, such as PDU types,
are in ``pcp._core.wire``)."""

# ---------------------------------------------------------------------------
# Build / ABI facts (x86_64 Linux, little-endian bit-field allocation)
# ---------------------------------------------------------------------------
HAVE_BITFIELDS_LTOR = 0
HAVE_BITFIELDS_RTOL = 1
PM_SIZEOF_SUSECONDS_T = 8
PM_SIZEOF_TIME_T = 8

# ---------------------------------------------------------------------------
# PMAPI versions
# ---------------------------------------------------------------------------
PMAPI_VERSION_2 = 2
PMAPI_VERSION_3 = 3
PMAPI_VERSION = PMAPI_VERSION_3

# ---------------------------------------------------------------------------
# Null identifiers (all bits set in a 32-bit word)
# ---------------------------------------------------------------------------
PM_ID_NULL = 0xFFFFFFFF
PM_INDOM_NULL = 0xFFFFFFFF
PM_IN_NULL = 0xFFFFFFFF

# ---------------------------------------------------------------------------
# Namespace (PMNS) locations and node status
# ---------------------------------------------------------------------------
PM_NS_DEFAULT = 0
PMNS_LOCAL = 1
PMNS_REMOTE = 2
PMNS_ARCHIVE = 3
PMNS_LEAF_STATUS = 0
PMNS_NONLEAF_STATUS = 1

# ---------------------------------------------------------------------------
# Metric value types (pmDesc.type)
# ---------------------------------------------------------------------------
PM_TYPE_NOSUPPORT = -1
PM_TYPE_32 = 0
PM_TYPE_U32 = 1
PM_TYPE_64 = 2
PM_TYPE_U64 = 3
PM_TYPE_FLOAT = 4
PM_TYPE_DOUBLE = 5
PM_TYPE_STRING = 6
PM_TYPE_AGGREGATE = 7
PM_TYPE_AGGREGATE_STATIC = 8
PM_TYPE_EVENT = 9
PM_TYPE_HIGHRES_EVENT = 10
PM_TYPE_UNKNOWN = 255

# ---------------------------------------------------------------------------
# Metric semantics (pmDesc.sem)
# ---------------------------------------------------------------------------
PM_SEM_COUNTER = 1
PM_SEM_INSTANT = 3
PM_SEM_DISCRETE = 4

# ---------------------------------------------------------------------------
# Units: space scale, time scale, count scale (pmUnits fields)
# ---------------------------------------------------------------------------
PM_SPACE_BYTE = 0
PM_SPACE_KBYTE = 1
PM_SPACE_MBYTE = 2
PM_SPACE_GBYTE = 3
PM_SPACE_TBYTE = 4
PM_SPACE_PBYTE = 5
PM_SPACE_EBYTE = 6
PM_SPACE_ZBYTE = 7
PM_SPACE_YBYTE = 8

PM_TIME_NSEC = 0
PM_TIME_USEC = 1
PM_TIME_MSEC = 2
PM_TIME_SEC = 3
PM_TIME_MIN = 4
PM_TIME_HOUR = 5

PM_COUNT_ONE = 0

# ---------------------------------------------------------------------------
# Context types and context flags (pmNewContext)
# ---------------------------------------------------------------------------
PM_CONTEXT_UNDEF = -1
PM_CONTEXT_HOST = 1
PM_CONTEXT_ARCHIVE = 2
PM_CONTEXT_LOCAL = 3
PM_CONTEXT_TYPEMASK = 0xFF

PM_CTXFLAG_EXCLUSIVE = 1 << 9
PM_CTXFLAG_SECURE = 1 << 10
PM_CTXFLAG_COMPRESS = 1 << 11
PM_CTXFLAG_RELAXED = 1 << 12
# PCP 6.3's (served from API level 6.3: SINCE below)
PM_CTXFLAG_SHALLOW = 1 << 8
PM_CTXFLAG_AUTH = 1 << 13
PM_CTXFLAG_CONTAINER = 1 << 14
PM_CTXFLAG_NO_FEATURE_CHECK = 1 << 15
PM_CTXFLAG_METADATA_ONLY = 1 << 16

# ---------------------------------------------------------------------------
# Archive time-travel modes (pmSetMode) and the extended time base flag
# ---------------------------------------------------------------------------
PM_MODE_LIVE = 0
PM_MODE_INTERP = 1
PM_MODE_FORW = 2
PM_MODE_BACK = 3

PM_XTB_FLAG = 0x1000000

# ---------------------------------------------------------------------------
# Help and one-line text requests (pmLookupText / pmLookupInDomText)
# ---------------------------------------------------------------------------
PM_TEXT_ONELINE = 1
PM_TEXT_HELP = 2
PM_TEXT_PMID = 4
PM_TEXT_INDOM = 8
PM_TEXT_DIRECT = 16

# ---------------------------------------------------------------------------
# Metric labels
# ---------------------------------------------------------------------------
PM_LABEL_CONTEXT = 1 << 0
PM_LABEL_DOMAIN = 1 << 1
PM_LABEL_INDOM = 1 << 2
PM_LABEL_CLUSTER = 1 << 3
PM_LABEL_ITEM = 1 << 4
PM_LABEL_INSTANCES = 1 << 5
PM_LABEL_OPTIONAL = 1 << 7
PM_MAXLABELS = 255
PM_MAXLABELJSONLEN = 65535

# ---------------------------------------------------------------------------
# Value encodings inside a pmValueSet (valfmt) and pmValueBlock header
# ---------------------------------------------------------------------------
PM_VAL_INSITU = 0
PM_VAL_DPTR = 1
PM_VAL_SPTR = 2
PM_VAL_HDR_SIZE = 4
PM_VAL_VLEN_MAX = 0xFFFFFF

# ---------------------------------------------------------------------------
# Event record flags
# ---------------------------------------------------------------------------
PM_EVENT_FLAG_POINT = 1 << 0
PM_EVENT_FLAG_START = 1 << 1
PM_EVENT_FLAG_END = 1 << 2
PM_EVENT_FLAG_ID = 1 << 3
PM_EVENT_FLAG_PARENT = 1 << 4
PM_EVENT_FLAG_MISSED = 1 << 31

# ---------------------------------------------------------------------------
# PMCD state-change flags (reported in pmResult numpmid / pmcd.*)
# ---------------------------------------------------------------------------
PMCD_NO_CHANGE = 0
PMCD_ADD_AGENT = 1 << 0
PMCD_RESTART_AGENT = 1 << 1
PMCD_DROP_AGENT = 1 << 2
PMCD_AGENT_CHANGE = PMCD_ADD_AGENT | PMCD_RESTART_AGENT | PMCD_DROP_AGENT
PMCD_LABEL_CHANGE = 1 << 3
PMCD_NAMES_CHANGE = 1 << 4
PMCD_HOSTNAME_CHANGE = 1 << 5   # PCP 6.3's

# ---------------------------------------------------------------------------
# Archive files
# ---------------------------------------------------------------------------
PM_LOG_MAGIC = 0x50052600
PM_LOG_VERS02 = 2
PM_LOG_VERS03 = 3
PM_LOG_VOL_TI = -2
PM_LOG_VOL_META = -1
PM_LOG_MAXHOSTLEN = 64

# ---------------------------------------------------------------------------
# Size limits
# ---------------------------------------------------------------------------
PM_MAXERRMSGLEN = 128
PM_MAX_HOSTNAMELEN = 256
PM_MAX_TIMEZONELEN = 256
PM_MAX_ZONEINFOLEN = 256
PM_TZ_MAXLEN = 40

# ---------------------------------------------------------------------------
# Debug bits reserved for applications
# ---------------------------------------------------------------------------
PM_DEBUG_APPL0 = 1 << 11
PM_DEBUG_APPL1 = 1 << 12
PM_DEBUG_APPL2 = 1 << 13

# ---------------------------------------------------------------------------
# Command line option flags (pmOptions.flags)
# ---------------------------------------------------------------------------
PM_OPTFLAG_INIT = 1 << 0
PM_OPTFLAG_DONE = 1 << 1
PM_OPTFLAG_MULTI = 1 << 2
PM_OPTFLAG_USAGE_ERR = 1 << 3
PM_OPTFLAG_RUNTIME_ERR = 1 << 4
PM_OPTFLAG_EXIT = 1 << 5
PM_OPTFLAG_POSIX = 1 << 6
PM_OPTFLAG_MIXED = 1 << 7
PM_OPTFLAG_ENV_ONLY = 1 << 8
PM_OPTFLAG_LONG_ONLY = 1 << 9
PM_OPTFLAG_BOUNDARIES = 1 << 10
PM_OPTFLAG_STDOUT_TZ = 1 << 11
PM_OPTFLAG_NOFLUSH = 1 << 12
PM_OPTFLAG_QUIET = 1 << 13

# ---------------------------------------------------------------------------
# Error codes (negative; PM_ERR_BASE is 12345)
# ---------------------------------------------------------------------------
PM_ERR_GENERIC = -12345
PM_ERR_PMNS = -12346
PM_ERR_NOPMNS = -12347
PM_ERR_DUPPMNS = -12348
PM_ERR_TEXT = -12349
PM_ERR_APPVERSION = -12350
PM_ERR_VALUE = -12351
PM_ERR_TIMEOUT = -12353
PM_ERR_NODATA = -12354
PM_ERR_RESET = -12355
PM_ERR_NAME = -12357
PM_ERR_PMID = -12358
PM_ERR_INDOM = -12359
PM_ERR_INST = -12360
PM_ERR_UNIT = -12361
PM_ERR_CONV = -12362
PM_ERR_TRUNC = -12363
PM_ERR_SIGN = -12364
PM_ERR_PROFILE = -12365
PM_ERR_IPC = -12366
PM_ERR_EOF = -12368
PM_ERR_NOTHOST = -12369
PM_ERR_EOL = -12370
PM_ERR_MODE = -12371
PM_ERR_LABEL = -12372
PM_ERR_LOGREC = -12373
PM_ERR_NOTARCHIVE = -12374
PM_ERR_LOGFILE = -12375
PM_ERR_NOCONTEXT = -12376
PM_ERR_PROFILESPEC = -12377
PM_ERR_PMID_LOG = -12378
PM_ERR_INDOM_LOG = -12379
PM_ERR_INST_LOG = -12380
PM_ERR_NOPROFILE = -12381
PM_ERR_NOAGENT = -12386
PM_ERR_PERMISSION = -12387
PM_ERR_CONNLIMIT = -12388
PM_ERR_AGAIN = -12389
PM_ERR_ISCONN = -12390
PM_ERR_NOTCONN = -12391
PM_ERR_NEEDPORT = -12392
PM_ERR_NONLEAF = -12394
PM_ERR_TYPE = -12397
PM_ERR_THREAD = -12398
PM_ERR_NOCONTAINER = -12399
PM_ERR_BADSTORE = -12400
PM_ERR_LOGOVERLAP = -12401
PM_ERR_LOGHOST = -12402
PM_ERR_LOGCHANGETYPE = -12404
PM_ERR_LOGCHANGESEM = -12405
PM_ERR_LOGCHANGEINDOM = -12406
PM_ERR_LOGCHANGEUNITS = -12407
PM_ERR_NEEDCLIENTCERT = -12408
PM_ERR_BADDERIVE = -12409
PM_ERR_NOLABELS = -12410
PM_ERR_PMDAFENCED = -12411
PM_ERR_RECTYPE = -12412
PM_ERR_FEATURE = -12413
PM_ERR_TLS = -12414
PM_ERR_ARG = -12415             # PCP 6.3's
PM_ERR_BOTCH = -12442
PM_ERR_TOOSMALL = -12443
PM_ERR_TOOBIG = -12444
PM_ERR_FAULT = -12445
PM_ERR_PMDAREADY = -13393
PM_ERR_PMDANOTREADY = -13394
PM_ERR_NYI = -21344

# Error code -> symbolic name (same entries, and same insertion order, as the
# official module's dictionary).
pmErrSymDict = {
    PM_ERR_GENERIC: "PM_ERR_GENERIC",
    PM_ERR_PMNS: "PM_ERR_PMNS",
    PM_ERR_NOPMNS: "PM_ERR_NOPMNS",
    PM_ERR_DUPPMNS: "PM_ERR_DUPPMNS",
    PM_ERR_TEXT: "PM_ERR_TEXT",
    PM_ERR_APPVERSION: "PM_ERR_APPVERSION",
    PM_ERR_VALUE: "PM_ERR_VALUE",
    PM_ERR_TIMEOUT: "PM_ERR_TIMEOUT",
    PM_ERR_NODATA: "PM_ERR_NODATA",
    PM_ERR_RESET: "PM_ERR_RESET",
    PM_ERR_NAME: "PM_ERR_NAME",
    PM_ERR_PMID: "PM_ERR_PMID",
    PM_ERR_INDOM: "PM_ERR_INDOM",
    PM_ERR_INST: "PM_ERR_INST",
    PM_ERR_TYPE: "PM_ERR_TYPE",
    PM_ERR_UNIT: "PM_ERR_UNIT",
    PM_ERR_CONV: "PM_ERR_CONV",
    PM_ERR_TRUNC: "PM_ERR_TRUNC",
    PM_ERR_SIGN: "PM_ERR_SIGN",
    PM_ERR_PROFILE: "PM_ERR_PROFILE",
    PM_ERR_IPC: "PM_ERR_IPC",
    PM_ERR_EOF: "PM_ERR_EOF",
    PM_ERR_NOTHOST: "PM_ERR_NOTHOST",
    PM_ERR_EOL: "PM_ERR_EOL",
    PM_ERR_MODE: "PM_ERR_MODE",
    PM_ERR_LABEL: "PM_ERR_LABEL",
    PM_ERR_LOGREC: "PM_ERR_LOGREC",
    PM_ERR_LOGFILE: "PM_ERR_LOGFILE",
    PM_ERR_NOTARCHIVE: "PM_ERR_NOTARCHIVE",
    PM_ERR_NOCONTEXT: "PM_ERR_NOCONTEXT",
    PM_ERR_PROFILESPEC: "PM_ERR_PROFILESPEC",
    PM_ERR_PMID_LOG: "PM_ERR_PMID_LOG",
    PM_ERR_INDOM_LOG: "PM_ERR_INDOM_LOG",
    PM_ERR_INST_LOG: "PM_ERR_INST_LOG",
    PM_ERR_NOPROFILE: "PM_ERR_NOPROFILE",
    PM_ERR_NOAGENT: "PM_ERR_NOAGENT",
    PM_ERR_PERMISSION: "PM_ERR_PERMISSION",
    PM_ERR_CONNLIMIT: "PM_ERR_CONNLIMIT",
    PM_ERR_AGAIN: "PM_ERR_AGAIN",
    PM_ERR_ISCONN: "PM_ERR_ISCONN",
    PM_ERR_NOTCONN: "PM_ERR_NOTCONN",
    PM_ERR_NEEDPORT: "PM_ERR_NEEDPORT",
    PM_ERR_NONLEAF: "PM_ERR_NONLEAF",
    PM_ERR_PMDAREADY: "PM_ERR_PMDAREADY",
    PM_ERR_PMDANOTREADY: "PM_ERR_PMDANOTREADY",
    PM_ERR_BOTCH: "PM_ERR_BOTCH",
    PM_ERR_TOOSMALL: "PM_ERR_TOOSMALL",
    PM_ERR_TOOBIG: "PM_ERR_TOOBIG",
    PM_ERR_FAULT: "PM_ERR_FAULT",
    PM_ERR_THREAD: "PM_ERR_THREAD",
    PM_ERR_NOCONTAINER: "PM_ERR_NOCONTAINER",
    PM_ERR_BADSTORE: "PM_ERR_BADSTORE",
    PM_ERR_LOGOVERLAP: "PM_ERR_LOGOVERLAP",
    PM_ERR_LOGHOST: "PM_ERR_LOGHOST",
    PM_ERR_LOGCHANGETYPE: "PM_ERR_LOGCHANGETYPE",
    PM_ERR_LOGCHANGESEM: "PM_ERR_LOGCHANGESEM",
    PM_ERR_LOGCHANGEINDOM: "PM_ERR_LOGCHANGEINDOM",
    PM_ERR_LOGCHANGEUNITS: "PM_ERR_LOGCHANGEUNITS",
    PM_ERR_NEEDCLIENTCERT: "PM_ERR_NEEDCLIENTCERT",
    PM_ERR_BADDERIVE: "PM_ERR_BADDERIVE",
    PM_ERR_NOLABELS: "PM_ERR_NOLABELS",
    PM_ERR_PMDAFENCED: "PM_ERR_PMDAFENCED",
    PM_ERR_RECTYPE: "PM_ERR_RECTYPE",
    PM_ERR_FEATURE: "PM_ERR_FEATURE",
    PM_ERR_TLS: "PM_ERR_TLS",
    PM_ERR_ARG: "PM_ERR_ARG",
    PM_ERR_NYI: "PM_ERR_NYI",
}

# ---------------------------------------------------------------------------
# libpcp_import (the official ``cpmi`` module's numbers: PMI_ERR_* of import.h).
# ``cpmi`` re-exports this section; ``cpmapi`` does not have these names.
# ---------------------------------------------------------------------------
PMI_MAXERRMSGLEN = 128
PMI_ERR_BASE = 20000
PMI_ERR_DUPMETRICNAME = -PMI_ERR_BASE - 1
PMI_ERR_DUPMETRICID = -PMI_ERR_BASE - 2
PMI_ERR_DUPINSTNAME = -PMI_ERR_BASE - 3
PMI_ERR_DUPINSTID = -PMI_ERR_BASE - 4
PMI_ERR_INSTNOTNULL = -PMI_ERR_BASE - 5
PMI_ERR_INSTNULL = -PMI_ERR_BASE - 6
PMI_ERR_BADHANDLE = -PMI_ERR_BASE - 7
PMI_ERR_DUPVALUE = -PMI_ERR_BASE - 8
PMI_ERR_BADTYPE = -PMI_ERR_BASE - 9
PMI_ERR_BADSEM = -PMI_ERR_BASE - 10
PMI_ERR_NODATA = -PMI_ERR_BASE - 11
PMI_ERR_BADMETRICNAME = -PMI_ERR_BASE - 12
PMI_ERR_BADTIMESTAMP = -PMI_ERR_BASE - 13
PMI_ERR_BADTEXTTYPE = -PMI_ERR_BASE - 14
PMI_ERR_BADTEXTCLASS = -PMI_ERR_BASE - 15
PMI_ERR_BADTEXTID = -PMI_ERR_BASE - 16
PMI_ERR_EMPTYTEXTCONTENT = -PMI_ERR_BASE - 17
PMI_ERR_DUPTEXT = -PMI_ERR_BASE - 18
PMI_ERR_BADLABELTYPE = -PMI_ERR_BASE - 19
PMI_ERR_BADLABELID = -PMI_ERR_BASE - 20
PMI_ERR_BADLABELINSTANCE = -PMI_ERR_BASE - 21
PMI_ERR_EMPTYLABELNAME = -PMI_ERR_BASE - 22
PMI_ERR_EMPTYLABELVALUE = -PMI_ERR_BASE - 23
PMI_ERR_ADDLABELERROR = -PMI_ERR_BASE - 24
PMI_ERR_BADVERSION = -PMI_ERR_BASE - 25

# Code -> symbol and code -> pmiErrStr text, in import.h's order.
pmiErrSymDict = {code: name for name, code in sorted(
    ((name, value) for name, value in globals().items()
     if name.startswith("PMI_ERR_") and name != "PMI_ERR_BASE"),
    key=lambda item: -item[1])}
pmi_error_texts = {
    PMI_ERR_DUPMETRICNAME: "Metric name already defined",
    PMI_ERR_DUPMETRICID: "Metric pmID already defined",
    PMI_ERR_DUPINSTNAME: "External instance name already defined",
    PMI_ERR_DUPINSTID: "Internal instance identifer already defined",
    PMI_ERR_INSTNOTNULL: "Null instance expected for a singular metric",
    PMI_ERR_INSTNULL: "Null instance not allowed for a non-singular metric",
    PMI_ERR_BADHANDLE: "Illegal handle",
    PMI_ERR_DUPVALUE: "Value already assigned for this metric-instance",
    PMI_ERR_BADTYPE: "Illegal metric type",
    PMI_ERR_BADSEM: "Illegal metric semantics",
    PMI_ERR_NODATA: "No data to output",
    PMI_ERR_BADMETRICNAME: "Illegal metric name",
    PMI_ERR_BADTIMESTAMP: "Illegal result timestamp",
    PMI_ERR_BADTEXTTYPE: "Illegal text type",
    PMI_ERR_BADTEXTCLASS: "Illegal text class",
    PMI_ERR_BADTEXTID: "Illegal text identifier",
    PMI_ERR_EMPTYTEXTCONTENT: "Text is empty",
    PMI_ERR_DUPTEXT: "Help text already exists",
    PMI_ERR_BADLABELTYPE: "Illegal label type",
    PMI_ERR_BADLABELID: "Illegal label identifier",
    PMI_ERR_BADLABELINSTANCE: "Illegal label instance",
    PMI_ERR_EMPTYLABELNAME: "Label name is empty",
    PMI_ERR_EMPTYLABELVALUE: "Label value is empty",
    PMI_ERR_ADDLABELERROR: "Error adding label",
    PMI_ERR_BADVERSION: "Illegal log version",
}

# libpcp_mmv (PCP 6.0.3's mmv_stats.h and mmv_dev.h): what the official ``cmmv`` module
# exposes, and the on-disk numbers of the mmv(5) file format.
MMV_NAMEMAX = 64
MMV_INDOM_NULL = 0xFFFFFFFF     # PCP 6.3's mmv_stats.h
MMV_STRINGMAX = 256
MMV_LABELMAX = 244
MMV_TYPE_NOSUPPORT = -1
MMV_TYPE_I32 = 0
MMV_TYPE_U32 = 1
MMV_TYPE_I64 = 2
MMV_TYPE_U64 = 3
MMV_TYPE_FLOAT = 4
MMV_TYPE_DOUBLE = 5
MMV_TYPE_STRING = 6
MMV_TYPE_ELAPSED = 9
MMV_SEM_COUNTER = 1
MMV_SEM_INSTANT = 3
MMV_SEM_DISCRETE = 4
MMV_FLAG_NOPREFIX = 1
MMV_FLAG_PROCESS = 2
MMV_FLAG_SENTINEL = 4
MMV_STRING_TYPE = 1
MMV_NUMBER_TYPE = 2
MMV_BOOLEAN_TYPE = 3
MMV_NULL_TYPE = 4
MMV_ARRAY_TYPE = 5
MMV_MAP_TYPE = 6
MMV_VERSION1 = 1
MMV_VERSION2 = 2
MMV_VERSION3 = 3
MMV_TOC_INDOMS = 1
MMV_TOC_INSTANCES = 2
MMV_TOC_METRICS = 3
MMV_TOC_VALUES = 4
MMV_TOC_STRINGS = 5
MMV_TOC_LABELS = 6
# ---------------------------------------------------------------------------
# libpcp_pmda's numbers (pmda.h), which the official ``cpmda`` exposes
# ---------------------------------------------------------------------------
PMDA_FETCH_NOVALUES = 0
PMDA_FETCH_STATIC = 1
PMDA_FETCH_DYNAMIC = 2
PMDA_CACHE_LOAD = 1
PMDA_CACHE_ADD = 2
PMDA_CACHE_HIDE = 3
PMDA_CACHE_CULL = 4
PMDA_CACHE_EMPTY = 5
PMDA_CACHE_SAVE = 6
PMDA_CACHE_STRINGS = 7
PMDA_CACHE_ACTIVE = 8
PMDA_CACHE_INACTIVE = 9
PMDA_CACHE_SIZE = 10
PMDA_CACHE_SIZE_ACTIVE = 11
PMDA_CACHE_SIZE_INACTIVE = 12
PMDA_CACHE_REUSE = 13
PMDA_CACHE_WALK_REWIND = 14
PMDA_CACHE_WALK_NEXT = 15
PMDA_CACHE_CHECK = 16
PMDA_CACHE_REORG = 17
PMDA_CACHE_SYNC = 18
PMDA_CACHE_DUMP = 19
PMDA_CACHE_DUMP_ALL = 20
PMDA_FLAG_AUTHORIZE = 1 << 2
PMDA_FLAG_CONTAINER = 1 << 6
PMDA_ATTR_USERNAME = 5
PMDA_ATTR_USERID = 11
PMDA_ATTR_GROUPID = 12
PMDA_ATTR_PROCESSID = 14
PMDA_ATTR_CONTAINER = 15
# pmdaExt's e_flags bits that set_notify_change raises (pmda.h)
PMDA_EXT_LABEL_CHANGE = 1 << 5
PMDA_EXT_NAMES_CHANGE = 1 << 6

# ---------------------------------------------------------------------------
# Names of the official C modules (cpmapi, cmmv ...) that a later PCP added: each is served
# from the API level given (pcp/_core/level.py); below it the public module lacks the name
# and pmErrSymDict its code, as that version's binding does. The numbers above stay
# defined for this package's own use at every level.
# ---------------------------------------------------------------------------
SINCE = {
    "PM_CTXFLAG_SHALLOW": (6, 3), "PM_CTXFLAG_AUTH": (6, 3), "PM_CTXFLAG_CONTAINER": (6, 3),
    "PM_CTXFLAG_NO_FEATURE_CHECK": (6, 3), "PM_CTXFLAG_METADATA_ONLY": (6, 3),
    "PMCD_HOSTNAME_CHANGE": (6, 3), "PM_ERR_ARG": (6, 3), "MMV_INDOM_NULL": (6, 3),
}
#: Names a later PCP's C modules dropped: each is served below the level given.
UNTIL = {}  # type: ignore[var-annotated]

