"""Open each path of a not-archive corpus (not_archive_corpus.py) through the calls that
take an archive name and print what each gave, one JSON object on the last line.

The same file runs under both bindings (the official one on /usr/bin/python3, this
package on the venv's interpreter). It reads its request from stdin:
{"calls": [...], "seconds": N, "cases": [[id, {"str": name} | {"bytes": hex}], ...]}.

Calls: "context" (pmContext(PM_CONTEXT_ARCHIVE, name)), "options" (pmContext.fromOptions
with -a name), "window" (the same with -S, which makes pmGetOptions open the archive to
find its time window), "pmcc" (pmcc.MetricGroupManager.builder); on this package only,
"bulk_read" (pcp.bulk.read_archive), "bulk_reader" (pcp.bulk.ArchiveReader), "scan"
(pcp.bulk.scan_archive), "dask" (pcp.dask.read_archives) and "cli_info", "cli_dump",
"cli_export", "cli_fetch" (`pcp-native info|dump|export|fetch -a`, the status; the
message is in "stderr"). Each image is the error
(code and text), or a summary of the opened archive; "stderr" is what the call wrote on
file descriptor 2 (libpcp writes there directly). A call still blocked after N seconds
(libpcp opening a FIFO waits for a writer) is interrupted and imaged {"blocked": true}.
"""
import json
import os
import signal
import sys
import tempfile

from pcp import pmapi
import cpmapi as c_api

OURS = hasattr(pmapi, "__implementation__")


class Blocked(Exception):
    pass


def _alarm(signum, frame):
    raise Blocked()


def image_error(e):
    if isinstance(e, pmapi.pmErr):
        return {"error": e.args[0] if e.args else None, "str": str(e)}
    if isinstance(e, Blocked):
        return {"blocked": True}
    if isinstance(e, SystemExit):
        return {"exit": e.code}
    return {"exception": type(e).__name__, "str": str(e)[:300]}


def summary(ctx):
    """What an opened context shows: its label's host, and the first fetches' status."""
    out = {"host": ctx.pmGetArchiveLabel().get_hostname()}
    fetches = []
    for _ in range(3):
        try:
            res = ctx.pmFetchArchive()
            fetches.append(res.contents.numpmid)
            ctx.pmFreeResult(res)
        except pmapi.pmErr as e:
            fetches.append({"error": e.args[0]})
            break
    out["fetches"] = fetches
    return out


def open_context(name):
    return summary(pmapi.pmContext(c_api.PM_CONTEXT_ARCHIVE, name))


def from_options(name, extra=()):
    opts = pmapi.pmOptions("a:S:")
    ctx = pmapi.pmContext.fromOptions(opts, ["reader", "-a", name] + list(extra))
    return summary(ctx)


def with_pmcc(name):
    from pcp import pmcc
    opts = pmapi.pmOptions("a:S:")
    manager = pmcc.MetricGroupManager.builder(opts, ["reader", "-a", name])
    return summary(manager)


def bulk_read(name):
    from pcp import bulk
    table = bulk.read_archive(name)
    return {"metrics": len(table.metrics) if hasattr(table, "metrics") else None}


def bulk_reader(name):
    from pcp import bulk
    bulk.ArchiveReader(name)
    return {"opened": True}


def scan(name):
    from pcp import bulk
    return {"records": sum(1 for _ in bulk.scan_archive(name))}


def dask(name):
    from pcp import dask as pcp_dask
    frame = pcp_dask.read_archives(name)
    return {"rows": int(len(frame.compute()))}


def command(words):
    """A `pcp-native` command line (ours only): its exit status, its stdout thrown away."""
    def run(name):
        from pcp import cli
        saved = os.dup(1)
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            try:
                status = cli.main([words[0], "-a", os.fsdecode(name)] + words[1:])
            finally:
                sys.stdout.flush()
                os.dup2(saved, 1)
                os.close(saved)
        return {"status": status}
    return run


CALLS = {"context": open_context, "options": from_options,
         "window": lambda name: from_options(name, ["-S", "+1"]), "pmcc": with_pmcc,
         "bulk_read": bulk_read, "bulk_reader": bulk_reader, "scan": scan, "dask": dask,
         "cli_info": command(["info"]), "cli_dump": command(["dump"]),
         "cli_export": command(["export"]),
         "cli_fetch": command(["fetch", "-s", "1", "sample.seconds"])}
COMMANDS = ("cli_info", "cli_dump", "cli_export", "cli_fetch")
OURS_ONLY = ("bulk_read", "bulk_reader", "scan", "dask") + COMMANDS
ARGV_CALLS = ("options", "window", "pmcc")      # argv: UTF-8 str only (see _utf8)


def _utf8(name):
    """Whether a name can be an argv string of the official binding: bytes cannot, and
    its cpmapi.pmGetOptionsFromList dies (SIGSEGV) on a str that is not UTF-8."""
    if not isinstance(name, str):
        return False
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def run_call(call, name, seconds):
    """(image, stderr text) of one call, file descriptor 2 captured around it."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as err:
        os.dup2(err.fileno(), 2)
        signal.alarm(seconds)
        try:
            image = {"ok": CALLS[call](name)}
        except BaseException as e:      # pmErr, SystemExit from pmUsageErr, Blocked, ...
            image = image_error(e)
        finally:
            signal.alarm(0)
            try:
                pmapi.pmContext.pmflush()
            except Exception:
                pass
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
        err.seek(0)
        text = err.read().decode("utf-8", "replace")
    return image, text


def main():
    request = json.load(sys.stdin)
    # imported before the first alarm: an import slower than the alarm would be cut short
    # and leave its modules half made
    from pcp import pmcc  # noqa: F401
    if OURS:
        from pcp import bulk, cli, dask  # noqa: F401
    signal.signal(signal.SIGALRM, _alarm)
    for case_id, target in request["cases"]:
        print("BEGIN " + case_id, flush=True)
        name = target["str"] if "str" in target else bytes.fromhex(target["bytes"])
        images = {}
        for call in request["calls"]:
            if call in OURS_ONLY and not OURS:
                continue
            if call in ARGV_CALLS and not _utf8(name):
                continue
            # this package's own readers never block (the test checks it), so their budget
            # is only a guard: a dask compute on a loaded machine can take seconds
            seconds = max(request["seconds"], 20) if call in OURS_ONLY else request["seconds"]
            image, text = run_call(call, name, seconds)
            image["stderr"] = text
            images[call] = image
        print(json.dumps({"id": case_id, "images": images}, sort_keys=True), flush=True)


if __name__ == "__main__":
    main()
