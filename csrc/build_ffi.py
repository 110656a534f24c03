"""The one cffi build definition (out-of-line API mode) for pcp._native.

Build-time only: setup.py names it in cffi_modules; nothing imports it at run time.
Set PCP_NATIVE_SANITIZE=1 to compile the core with AddressSanitizer and UBSan, and
PCP_NATIVE_COVERAGE=1 to count, with gcov, what runs of it.
"""
import os
import pathlib

from cffi import FFI

HERE = pathlib.Path(__file__).resolve().parent
# every C file here is part of the core (a new one needs no edit of this list)
SOURCES = sorted(path.name for path in HERE.glob("*.c"))

# The C headers are the one declaration of the interface: cffi reads their prototypes and
# types (comments and preprocessor lines removed, which cdef cannot take).
HEADERS = ["result.h", "pdu.h", "store.h", "archive.h", "events.h", "archive_columns.h",
           "convert.h", "fetchgroup.h", "interp.h", "interp_steps.h", "archive_write.h",
           "derived.h", "derived_node.h", "derived_program.h", "derived_chunk.h",
           "pdu_agent.h", "printvalue.h", "exchange.h", "zones.h",
           "longdouble.h"]


def _cdef_from_headers() -> str:
    import re

    parts = []
    for name in HEADERS:
        text = (HERE / name).read_text()
        text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
        text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
        parts.append(text)
    return "\n".join(parts)


CDEF = _cdef_from_headers()


def _compile_args() -> list:
    args = ["-std=c99", "-O2", "-Wall", "-Wextra"]
    if os.environ.get("PCP_NATIVE_WERROR"):
        args.append("-Werror")
    if os.environ.get("PCP_NATIVE_SANITIZE"):
        args += ["-O1", "-g", "-fno-omit-frame-pointer", "-fsanitize=address,undefined",
                 "-fno-sanitize-recover=undefined"]
    if os.environ.get("PCP_NATIVE_COVERAGE"):
        # gcov's counts: .ci/sanitize.sh checks that its tests call every entry point
        args.append("--coverage")
    return args


def _link_args() -> list:
    args = []
    if os.environ.get("PCP_NATIVE_SANITIZE"):
        args.append("-fsanitize=address,undefined")
    if os.environ.get("PCP_NATIVE_COVERAGE"):
        args.append("--coverage")
    return args


# A coverage build can be asked to write its counts now: a process that ends without
# running its exit handlers (pytest-xdist's workers end with os._exit) would lose them.
COVERAGE_FLUSH = (
    "void pcp_coverage_flush(void);",
    "extern void __gcov_dump(void);\nvoid pcp_coverage_flush(void) { __gcov_dump(); }\n",
) if os.environ.get("PCP_NATIVE_COVERAGE") else ("", "")

ffibuilder = FFI()
ffibuilder.cdef(CDEF + COVERAGE_FLUSH[0])
ffibuilder.set_source(
    "pcp._native",
    "".join('#include "%s"\n' % h for h in HEADERS) + COVERAGE_FLUSH[1],
    sources=[str(pathlib.Path("csrc") / s) for s in SOURCES],
    include_dirs=["csrc"],
    extra_compile_args=_compile_args(),
    extra_link_args=_link_args(),
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
