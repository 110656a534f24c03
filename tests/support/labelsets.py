"""Program text shared by the label tests that run on both bindings: pmLabelSet
structures built by hand with ctypes (as a user of the official binding builds them),
for pmMergeLabelSets. Paste LABELSETS into a program that has imported pmapi, c_api
(cpmapi), cast and POINTER; it defines labelset() and two sets, `a` (context labels
{"a":1,"b":"x"}) and `b` (item labels {"a":2,"c":3})."""

LABELSETS = r'''
def labelset(js, pairs, flags):
    raw = js.encode()
    ls = pmapi.pmLabelSet()
    ls.json = raw
    ls.jsonlen = len(raw)
    ls.nlabels = len(pairs)
    ls.inst = c_api.PM_IN_NULL
    arr = (pmapi.pmLabel * max(1, len(pairs)))()
    for i, (n, nl, v, vl) in enumerate(pairs):
        arr[i].name, arr[i].namelen, arr[i].value, arr[i].valuelen = n, nl, v, vl
        arr[i].flags = flags
    ls.labels = cast(arr, POINTER(pmapi.pmLabel))
    KEEP.append((raw, arr))
    return ls
KEEP = []
a = labelset('{"a":1,"b":"x"}', [(2, 1, 5, 1), (8, 1, 11, 3)], c_api.PM_LABEL_CONTEXT)
b = labelset('{"a":2,"c":3}', [(2, 1, 5, 1), (8, 1, 11, 1)], c_api.PM_LABEL_ITEM)
'''
