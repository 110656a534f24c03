"""The pcp.mmv update workload, runnable under either binding (imports only ``pcp.mmv``,
``pcp.pmapi`` and ``cmmv``): ``python mmv_loop.py DIR OP N REPEATS`` prints one JSON line
with the best nanoseconds per update of REPEATS timed loops of N updates. The time is
the thread's CPU time: on a shared machine it leaves out the time others take.

OPs: inc, set, add (a mapping from lookup_mapping), lookup_inc (by name and instance),
and, on pcp-native only, counter (a bound Registry counter's inc()) and floor (a Python
method incrementing one element of a memoryview: the least any update made from Python
can cost; the issue's yardstick for the bound counter).
"""
import json
import os
import sys
import time


def _values(folder):
    from pcp import mmv, pmapi
    import cmmv
    instances = [mmv.mmv_instance(i, "inst%d" % i) for i in range(4)]
    indom = mmv.mmv_indom(serial=1, shorttext="instances")
    indom.set_instances(instances)
    metric = mmv.mmv_metric(name="requests", item=1, typeof=cmmv.MMV_TYPE_U64,
                            semantics=cmmv.MMV_SEM_COUNTER, dimension=pmapi.pmUnits(),
                            indom=1)
    values = mmv.MemoryMappedValues(os.path.join(folder, "bench.mmv"))
    values.add_indoms([indom])
    values.add_metrics([metric])
    values.start()
    return values


class _Floor:
    """The floor: one attribute load and one memoryview element increment."""

    def __init__(self, view):
        self.view = view

    def inc(self):
        self.view[3] += 1


def loop(op, n, folder):
    """Seconds for n updates of kind ``op`` (the loop written as a user writes it)."""
    values = _values(folder)
    mapping = values.lookup_mapping("requests", "inst2")
    if op == "inc":
        start = time.thread_time()
        for _ in range(n):
            values.inc(mapping)
    elif op == "set":
        start = time.thread_time()
        for i in range(n):
            values.set(mapping, i)
    elif op == "add":
        start = time.thread_time()
        for _ in range(n):
            values.add(mapping, 3)
    elif op == "lookup_inc":
        start = time.thread_time()
        for _ in range(n):
            values.lookup_inc("requests", "inst2")
    elif op == "counter":
        from pcp.mmv import Registry
        registry = Registry(os.path.join(folder, "registry.mmv"))
        counter = registry.counter("requests", "Requests")
        registry.start()
        start = time.thread_time()
        for _ in range(n):
            counter.inc()
        elapsed = time.thread_time() - start
        registry.stop()
        values.stop()
        return elapsed
    elif op == "floor":
        floor = _Floor(memoryview(bytearray(64)).cast("Q"))
        start = time.thread_time()
        for _ in range(n):
            floor.inc()
    else:
        raise ValueError(op)
    elapsed = time.thread_time() - start
    values.stop()
    return elapsed


def best_ns(op, n, repeats, folder):
    return min(loop(op, n, folder) for _ in range(repeats)) / n * 1e9


if __name__ == "__main__":
    folder, op, n, repeats = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    print(json.dumps({"op": op, "ns": best_ns(op, n, repeats, folder)}))
