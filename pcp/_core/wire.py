"""Numbers of the wire protocol and the archive format that the official ``cpmapi`` does
not expose (PDU types, feature bits, archive volume markers), written once. The PMAPI
numbers are in ``pcp._core.constants``."""

# ---- PDU types (protocol.md 2.4) ------------------------------------------------------
PDU_ERROR = 0x7000
PDU_RESULT = 0x7001
PDU_PROFILE = 0x7002
PDU_FETCH = 0x7003
PDU_DESC_REQ = 0x7004
PDU_DESC = 0x7005
PDU_INSTANCE_REQ = 0x7006
PDU_INSTANCE = 0x7007
PDU_TEXT_REQ = 0x7008
PDU_TEXT = 0x7009
PDU_CREDS = 0x700C
PDU_PMNS_IDS = 0x700D
PDU_PMNS_NAMES = 0x700E
PDU_PMNS_CHILD = 0x700F
PDU_PMNS_TRAVERSE = 0x7010
PDU_ATTR = 0x7011
PDU_LABEL_REQ = 0x7012
PDU_LABEL = 0x7013
PDU_HIGHRES_FETCH = 0x7014
PDU_HIGHRES_RESULT = 0x7015
PDU_DESC_IDS = 0x7016
PDU_DESCS = 0x7017

PDU_HEADER_LEN = 12
# the context slot of PROFILE and FETCH PDUs: each connection carries one context
CTXID = 0
PDU_MAX_LEN = 0x7FFFFFFF - 1024

# ---- pmcd feature bits of the connection handshake (protocol.md 4.3) -----------------
FEATURE_SECURE = 0x0001
FEATURE_COMPRESS = 0x0002
FEATURE_AUTH = 0x0004
FEATURE_CREDS_REQD = 0x0008
FEATURE_SECURE_ACK = 0x0010
FEATURE_CONTAINER = 0x0040
FEATURE_CERT_REQD = 0x0080
FEATURE_LABELS = 0x0200
FEATURE_HIGHRES = 0x0400
FEATURE_DESCS = 0x0800

# ---- profiles (protocol.md: the PDU_PROFILE state words) -------------------------------
PM_PROFILE_INCLUDE = 0
PM_PROFILE_EXCLUDE = 1

# ---- labels: the flag libpcp sets on a label set merged from several -------------------
PM_LABEL_COMPOUND = 0x40

# ---- archives (archive-format.md) ------------------------------------------------------
PM_LOG_FEATURE_QA = 0x80000000
VOL_META = -1                    # volume number of the .meta file
VOL_INDEX = -2                   # volume number of the .index file
DYNAMIC_DOMAIN = 511             # the domain of derived and anonymous metrics' pmids
PM_IN_NULL_INT32 = -1            # PM_IN_NULL as the int32 the data records carry

# ---- the C core's own status codes and flags (csrc/archive.h, csrc/archive_columns.h) --
PCP_LOG_END = 1                  # no record in that direction: change volume
PCP_COLS_PAST_END = 2            # a record after the window
PCP_COLS_NEED_COLUMN = 3         # instances without a column: add them, read again
PCP_COLS_NEED_ROOM = 4           # the staging area cannot hold the record's strings
PCP_COLS_PAUSE = 5               # the scan reached the pause position
PCP_ROW_AFTER_MARK = 1           # row flag: a <mark> came before the row
PCP_COLS_REF_SHIFT = 40          # a staged string's reference: length << 40 | offset
PCP_INTERP_NEED_ROOM = 4         # csrc/interp.h: a grid step's strings need more staging
PCP_SELECT_NEED_ROOM = 2         # csrc/archive.h: pmFetch's result needs other room
PCP_RESULT_RESIZE = 1            # csrc/result.h: a RESULT PDU has other sizes than guessed
PCP_EXCHANGE_PARTIAL = 2         # csrc/exchange.h: a reply not in one piece, left to Python
PCP_EXCHANGE_OTHER = 3           # csrc/exchange.h: a whole reply the one-call decoder left alone
PCP_EXCHANGE_UNSENT = 4          # csrc/exchange.h: a request that does not encode in place
PCP_INTERP_STEP_ASIDE = 5        # csrc/interp_steps.h: a grid step the Python driver makes
PCP_INTERP_SWEEP_ASIDE = 6       # csrc/interp_steps.h: an archive a one-pass grid leaves alone
