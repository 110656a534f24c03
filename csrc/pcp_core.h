/* Shared definitions for the pcp-native C core: PMAPI error codes, PDU types, limits.
 *
 * The core is sans-I/O: every function takes a buffer and its length and returns a
 * status that is 0/positive on success or a negative PM_ERR_* code (same numbers as
 * libpcp), never touching sockets, files, globals or Python. */
#ifndef PCP_CORE_H
#define PCP_CORE_H

#include <stddef.h>
#include <stdint.h>

/* Error codes: interface facts, identical to libpcp's values. */
#define PCP_ERR_BASE 12345
#define PM_ERR_GENERIC (-PCP_ERR_BASE - 0)
#define PM_ERR_APPVERSION (-PCP_ERR_BASE - 5)
#define PM_ERR_VALUE (-PCP_ERR_BASE - 6)
#define PM_ERR_TIMEOUT (-PCP_ERR_BASE - 8)
#define PM_ERR_NAME (-PCP_ERR_BASE - 12)
#define PM_ERR_PMID (-PCP_ERR_BASE - 13)
#define PM_ERR_INDOM (-PCP_ERR_BASE - 14)
#define PM_ERR_INST (-PCP_ERR_BASE - 15)
#define PM_ERR_CONV (-PCP_ERR_BASE - 17)
#define PM_ERR_TRUNC (-PCP_ERR_BASE - 18)
#define PM_ERR_SIGN (-PCP_ERR_BASE - 19)
#define PM_ERR_IPC (-PCP_ERR_BASE - 21)
#define PM_ERR_NODATA (-PCP_ERR_BASE - 9)
#define PM_ERR_EOL (-PCP_ERR_BASE - 25)
#define PM_ERR_LABEL (-PCP_ERR_BASE - 27)
#define PM_ERR_LOGREC (-PCP_ERR_BASE - 28)
#define PM_ERR_LOGFILE (-PCP_ERR_BASE - 30)
#define PM_ERR_RECTYPE (-PCP_ERR_BASE - 67)
#define PM_ERR_FEATURE (-PCP_ERR_BASE - 68)
#define PM_ERR_NOAGENT (-PCP_ERR_BASE - 41)
#define PM_ERR_TYPE (-PCP_ERR_BASE - 52)
#define PM_ERR_UNIT (-PCP_ERR_BASE - 16)
#define PM_ERR_AGAIN (-PCP_ERR_BASE - 44)
#define PM_ERR_TOOSMALL (-PCP_ERR_BASE - 98)
#define PM_ERR_TOOBIG (-PCP_ERR_BASE - 99)
#define PM_ERR_PMID_LOG (-PCP_ERR_BASE - 33)

/* PDU types (protocol.md section 2.4). */
#define PDU_ERROR 0x7000
#define PDU_RESULT 0x7001
#define PDU_PROFILE 0x7002
#define PDU_FETCH 0x7003
#define PDU_DESC_REQ 0x7004
#define PDU_DESC 0x7005
#define PDU_INSTANCE_REQ 0x7006
#define PDU_INSTANCE 0x7007
#define PDU_TEXT_REQ 0x7008
#define PDU_TEXT 0x7009
#define PDU_CREDS 0x700c
#define PDU_PMNS_IDS 0x700d
#define PDU_PMNS_NAMES 0x700e
#define PDU_PMNS_CHILD 0x700f
#define PDU_PMNS_TRAVERSE 0x7010
#define PDU_ATTR 0x7011
#define PDU_LABEL_REQ 0x7012
#define PDU_LABEL 0x7013
#define PDU_HIGHRES_FETCH 0x7014
#define PDU_HIGHRES_RESULT 0x7015
#define PDU_DESC_IDS 0x7016
#define PDU_DESCS 0x7017

#define PDU_HEADER_LEN 12
/* libpcp accepts server PDUs up to INT_MAX - 1024 bytes. */
#define PDU_MAX_LEN (INT32_MAX - 1024)

/* Metric value types used by the value decoder. */
#define PM_TYPE_32 0
#define PM_TYPE_U32 1
#define PM_TYPE_64 2
#define PM_TYPE_U64 3
#define PM_TYPE_FLOAT 4
#define PM_TYPE_DOUBLE 5
#define PM_TYPE_STRING 6
#define PM_TYPE_AGGREGATE 7
#define PM_TYPE_AGGREGATE_STATIC 8
#define PM_TYPE_EVENT 9
#define PM_TYPE_HIGHRES_EVENT 10
#define PM_TYPE_UNKNOWN 255

/* Bytes of a value of a fixed-size type: 4 (32-bit integers, FLOAT) or 8 (64-bit
 * integers, DOUBLE); 0 for the types whose values are byte strings (STRING, AGGREGATE,
 * AGGREGATE_STATIC); -1 for any other (event arrays, unknown types). The one place the
 * size of a type is written down. */
static inline int pcp_type_size(uint32_t type)
{
    static const int8_t size[9] = {4, 4, 8, 8, 4, 8, 0, 0, 0};
    return type < 9 ? size[type] : -1;
}

/* Smallest value block, its 4-byte header included, that libpcp accepts for a block
 * type: 8 for 32-bit numbers, 12 for 64-bit ones, else just the header. */
static inline uint32_t pcp_block_min_len(uint32_t vtype)
{
    int size = pcp_type_size(vtype);
    return 4u + (uint32_t)(size > 0 ? size : 0);
}

/* A v2 (timeval) timestamp's microseconds as libpcp stores them: multiplied by 1000 in
 * unsigned 32-bit arithmetic into a 32-bit nanosecond field, so garbage wraps as there. */
static inline int64_t pcp_usec_to_nsec(uint32_t usec)
{
    return (int32_t)(usec * 1000u);
}

#define PM_VAL_INSITU 0
#define PM_VAL_DPTR 1
#define PM_VAL_SPTR 2

#define PM_INDOM_NULL 0xffffffff
#define PM_IN_NULL (-1)

/* Metric semantics. */
#define PM_SEM_COUNTER 1
#define PM_SEM_INSTANT 3
#define PM_SEM_DISCRETE 4

#endif
