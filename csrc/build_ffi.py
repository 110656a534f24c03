"""The one cffi build definition (out-of-line API mode) for pcp._native.

Build-time only: setup.py names it in cffi_modules; nothing imports it at run time.
Set PCP_NATIVE_SANITIZE=1 to compile the core with AddressSanitizer and UBSan.
"""
import os
import pathlib

from cffi import FFI

HERE = pathlib.Path(__file__).resolve().parent
SOURCES = ["result.c", "pdu_encode.c", "pdu_decode.c", "store.c"]

CDEF = """
typedef struct {
    int64_t sec;
    int64_t nsec;
    int32_t numpmid;
    int32_t nvalues;
    uint32_t *pmid;
    int32_t *numval;
    int32_t *valfmt;
    int32_t *first;
    int32_t *inst;
    int32_t *vtype;
    int64_t *ival;
    double *dval;
    uint32_t *boff;
    uint32_t *blen;
} pcp_result;

typedef struct {
    size_t sets_off;
    int32_t numpmid;
    int64_t block_base;
} pcp_sets_layout;

size_t pcp_result_mem_size(int32_t numpmid, int32_t nvalues);
void pcp_result_bind(pcp_result *out, void *mem, int32_t numpmid, int32_t nvalues);
int pcp_scan_valuesets(const uint8_t *buf, size_t len, const pcp_sets_layout *layout,
                       int bad, int32_t *nvalues);
int pcp_decode_valuesets(const uint8_t *buf, size_t len, const pcp_sets_layout *layout,
                         int bad, pcp_result *out);
int pcp_scan_result_pdu(const uint8_t *buf, size_t len, int highres,
                        int32_t *numpmid, int32_t *nvalues);
int pcp_decode_result_pdu(const uint8_t *buf, size_t len, int highres, pcp_result *out);

int32_t pcp_pdu_header(const uint8_t *buf, size_t len, int32_t *type, int32_t *from);

int pcp_encode_creds(uint8_t *buf, size_t cap, int32_t from, uint32_t flags);
int pcp_encode_attr(uint8_t *buf, size_t cap, int32_t from, int32_t attr,
                    const uint8_t *value, size_t vlen);
int pcp_encode_profile(uint8_t *buf, size_t cap, int32_t from, int32_t ctxid, int32_t g_state,
                       int32_t numprof, const uint32_t *indoms, const int32_t *states,
                       const int32_t *numinst, const int32_t *insts);
int pcp_encode_fetch(uint8_t *buf, size_t cap, int32_t from, int highres, int32_t ctxid,
                     int32_t numpmid, const uint32_t *pmids);
int pcp_encode_desc_req(uint8_t *buf, size_t cap, int32_t from, uint32_t pmid);
int pcp_encode_ids(uint8_t *buf, size_t cap, int32_t from, int32_t type, int32_t sts,
                   int32_t numids, const uint32_t *ids);
int pcp_encode_instance_req(uint8_t *buf, size_t cap, int32_t from, uint32_t indom,
                            int32_t inst, const uint8_t *name, size_t namelen);
int pcp_encode_text_req(uint8_t *buf, size_t cap, int32_t from, uint32_t ident, int32_t type);
int pcp_encode_pmns_names(uint8_t *buf, size_t cap, int32_t from, int32_t numnames,
                          const uint8_t *names, const int32_t *lens);
int pcp_encode_pmns_node(uint8_t *buf, size_t cap, int32_t from, int32_t type, int32_t subtype,
                         const uint8_t *name, size_t namelen);
int pcp_encode_label_req(uint8_t *buf, size_t cap, int32_t from, int32_t ident, int32_t type);
int pcp_encode_store(uint8_t *buf, size_t cap, int32_t from, int64_t sec, int64_t usec,
                     int32_t numpmid, const uint32_t *pmid, const int32_t *numval,
                     const int32_t *valfmt, const int32_t *inst, const int32_t *lval,
                     const int32_t *vtype, const uint32_t *poff, const uint32_t *plen,
                     const uint8_t *payload, size_t payload_len);

int pcp_decode_error(const uint8_t *buf, size_t len, int32_t *code, uint32_t *datum);

typedef struct {
    uint32_t pmid;
    int32_t type;
    uint32_t indom;
    int32_t sem;
    uint32_t units;
} pcp_desc;

int pcp_decode_desc(const uint8_t *buf, size_t len, pcp_desc *out);
int pcp_decode_descs(const uint8_t *buf, size_t len, int32_t expected, pcp_desc *out);
int pcp_decode_instance(const uint8_t *buf, size_t len, uint32_t *indom, int32_t cap,
                        int32_t *inst, uint32_t *name_off, int32_t *name_len);
int pcp_decode_text(const uint8_t *buf, size_t len, uint32_t *off, int32_t *tlen);
int pcp_decode_pmns_ids(const uint8_t *buf, size_t len, int32_t *sts, int32_t cap,
                        uint32_t *ids);
int pcp_decode_pmns_names(const uint8_t *buf, size_t len, int32_t cap, int32_t *has_status,
                          int32_t *status, uint32_t *name_off, int32_t *name_len);

typedef struct {
    int32_t inst;
    int32_t nlabels;
    uint32_t json_off;
    int32_t json_len;
    int32_t first;
} pcp_labelset;

typedef struct {
    uint32_t name;
    uint32_t namelen;
    uint32_t flags;
    uint32_t value;
    uint32_t valuelen;
} pcp_label;

int pcp_decode_labels(const uint8_t *buf, size_t len, int32_t *ident, int32_t *type,
                      int32_t set_cap, pcp_labelset *sets, int32_t label_cap,
                      pcp_label *labels);
int pcp_decode_attr(const uint8_t *buf, size_t len, int32_t *attr, uint32_t *off,
                    int32_t *vlen);
"""


def _compile_args() -> list:
    args = ["-std=c99", "-O2", "-Wall", "-Wextra"]
    if os.environ.get("PCP_NATIVE_WERROR"):
        args.append("-Werror")
    if os.environ.get("PCP_NATIVE_SANITIZE"):
        args += ["-O1", "-g", "-fno-omit-frame-pointer", "-fsanitize=address,undefined",
                 "-fno-sanitize-recover=undefined"]
    return args


def _link_args() -> list:
    if os.environ.get("PCP_NATIVE_SANITIZE"):
        return ["-fsanitize=address,undefined"]
    return []


ffibuilder = FFI()
ffibuilder.cdef(CDEF)
ffibuilder.set_source(
    "pcp._native",
    '#include "result.h"\n#include "pdu.h"\n',
    sources=[str(pathlib.Path("csrc") / s) for s in SOURCES],
    include_dirs=["csrc"],
    extra_compile_args=_compile_args(),
    extra_link_args=_link_args(),
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
