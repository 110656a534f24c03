"""The JSON imaging both sides of a level's differential program share (tests/versions/
level63_program.py and level72_program.py): a prelude of Python source that each program
puts after its imports (it needs `pmapi` imported), defining

* ``image(value)``: a value as JSON that keeps its Python type (tuple vs list, float by repr,
  bytes, timeval/timespec as :func:`stamp`);
* ``stamp(ts)``: a timeval or timespec with its type, fields and conversions;
* ``err(error)``: an exception as JSON (pmErr/pmiErr by code and text, else type and text);
* ``catch(function, *args, **kwargs)``: the image of a call's answer or of its exception.

The prelude holds no ``%``, so a program may %-format itself after adding it.
"""

PRELUDE = r'''
def image(value):
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return {"float": repr(value)}
    if isinstance(value, bytes):
        return {"bytes": value.decode("latin-1")}
    if isinstance(value, (list, tuple)):
        return {type(value).__name__: [image(v) for v in value]}
    if isinstance(value, dict):
        return {"dict": sorted([image(k), image(v)] for k, v in value.items())}
    if type(value).__name__ in ("timeval", "timespec"):
        return stamp(value)
    return {"type": type(value).__name__}

def stamp(ts):
    """A timeval or timespec: its type, fields and the conveniences."""
    if ts is None:
        return None
    sub = "tv_nsec" if hasattr(ts, "tv_nsec") else "tv_usec"
    return [type(ts).__name__, ts.tv_sec, getattr(ts, sub), str(ts), repr(float(ts)), int(ts)]

def err(error):
    if isinstance(error, pmapi.pmErr):
        return {"pmErr": error.args[0], "str": str(error)}
    if type(error).__name__ == "pmiErr":
        return {"pmiErr": error.args[0], "str": str(error)}
    text = str(error)
    if isinstance(error, AttributeError) and "undefined symbol" in text:
        text = text.rsplit(":", 1)[-1]      # the reference names its library's path
    return {"exception": type(error).__name__, "str": text}

def catch(function, *args, **kwargs):
    try:
        return image(function(*args, **kwargs))
    except Exception as error:
        return err(error)
'''

assert "%" not in PRELUDE
