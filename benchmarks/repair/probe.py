"""Run in a project's test environment (plain stdlib, any Python 3.8+): record the calls the suite makes to one
function, then call that function on those inputs and on varied ones, writing each outcome as canonical text.

    python probe.py capture MODULE QUALNAME OUT.pickle -- PYTEST_ARGS...
    python probe.py run MODULE QUALNAME CALLS.pickle OUT.json

`capture` runs pytest with a profile hook that pickles the arguments of every call to the function (as they were
when it was called) whose code lives in MODULE; `run` calls the function on each recorded input and on variants of
it (each argument changed in turn: numbers moved by one, zeroed and negated, strings emptied, upper-cased and
doubled, sequences emptied, reversed and extended, booleans flipped), and writes per input its description and
the outcome: the returned value and the arguments afterwards, or the exception's type, as canonical text (object
addresses masked). benchmarks/repair/classify.py compares the outcomes of the original and the patched code.
"""

import inspect
import json
import pickle
import re
import signal
import sys

MAX_CALLS = 60  # distinct recorded inputs kept
MAX_INPUTS = 400  # inputs run (recorded and varied)
CALL_SECONDS = 2
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _resolve(module_name, qualname):
    """The module, the function (plain, as found on its class for a method) and whether a first `cls` is dropped."""
    module = __import__(module_name, fromlist=["_"])
    owner, target = None, module
    for part in qualname.split("."):
        owner, target = target, getattr(target, part)
    static = inspect.getattr_static(owner, qualname.split(".")[-1]) if owner is not module else None
    return module, target, isinstance(static, classmethod)


def capture(module_name, qualname, out, pytest_args):
    """Run pytest, pickling the arguments of each call to the function."""
    import threading

    import pytest

    name = qualname.split(".")[-1]
    module_file = [None]
    calls, seen = [], set()

    def hook(frame, event, arg):
        if event != "call" or frame.f_code.co_name != name or len(calls) >= MAX_CALLS:
            return
        if module_file[0] is None:
            module = sys.modules.get(module_name)
            module_file[0] = getattr(module, "__file__", None) or ""
        if frame.f_code.co_filename != module_file[0]:
            return
        blob = _arguments(frame)
        if blob is not None and blob not in seen:
            seen.add(blob)
            calls.append(blob)

    sys.setprofile(hook)
    threading.setprofile(hook)
    try:
        pytest.main(list(pytest_args))
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    with open(out, "wb") as handle:
        pickle.dump(calls, handle)


def _arguments(frame):
    """The call's (positional, keyword) arguments pickled, or None when they do not pickle."""
    code = frame.f_code
    names = code.co_varnames[: code.co_argcount]
    kwonly = code.co_varnames[code.co_argcount : code.co_argcount + code.co_kwonlyargcount]
    values = frame.f_locals
    positional = [values[n] for n in names if n in values]
    keywords = {n: values[n] for n in kwonly if n in values}
    rest = code.co_argcount + code.co_kwonlyargcount
    if code.co_flags & inspect.CO_VARARGS:
        positional += list(values.get(code.co_varnames[rest], ()))
        rest += 1
    if code.co_flags & inspect.CO_VARKEYWORDS:
        keywords.update(values.get(code.co_varnames[rest], {}))
    try:
        return pickle.dumps((positional, keywords))
    except Exception:
        return None


def _variants(value):
    """Nearby values of one argument."""
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, (int, float)):
        return [value + 1, value - 1, 0, -value]
    if isinstance(value, str):
        return ["", value.upper(), value + " " + value, value[::-1]]
    if isinstance(value, (list, tuple)):
        kind = type(value)
        return [kind(), kind(reversed(value)), kind(list(value) + list(value[:1]))]
    return []


def inputs(calls):
    """Each recorded call, then each with one argument varied: (description, skip_first, positional, keywords)."""
    found = []
    for blob in calls:
        positional, keywords = pickle.loads(blob)
        found.append((positional, keywords))
        for index, value in enumerate(positional):
            for variant in _variants(value):
                found.append((positional[:index] + [variant] + positional[index + 1 :], keywords))
        for key, value in keywords.items():
            for variant in _variants(value):
                found.append((positional, dict(keywords, **{key: variant})))
    return found[:MAX_INPUTS]


def canonical(value, depth=0):
    """Comparable text of a value: containers item by item, objects by type and attributes, addresses masked."""
    if depth > 6:
        return "..."
    if isinstance(value, (list, tuple)):
        return type(value).__name__ + "[" + ", ".join(canonical(v, depth + 1) for v in value) + "]"
    if isinstance(value, dict):
        items = sorted((canonical(k, depth + 1), canonical(v, depth + 1)) for k, v in value.items())
        return "{" + ", ".join(f"{k}: {v}" for k, v in items) + "}"
    if isinstance(value, (set, frozenset)):
        return "set{" + ", ".join(sorted(canonical(v, depth + 1) for v in value)) + "}"
    attributes = getattr(value, "__dict__", None)
    if isinstance(attributes, dict) and not inspect.isroutine(value) and not inspect.isclass(value):
        return type(value).__name__ + canonical(attributes, depth + 1)
    return _ADDRESS.sub("", repr(value))


def _timeout(signum, frame):
    raise TimeoutError("call took too long")


def run(module_name, qualname, calls_path, out):
    """Call the function on every input; write [description, outcome] per input."""
    with open(calls_path, "rb") as handle:
        calls = pickle.load(handle)
    _, function, drop_first = _resolve(module_name, qualname)
    signal.signal(signal.SIGALRM, _timeout)
    results = []
    for positional, keywords in inputs(calls):
        arguments = positional[1:] if drop_first else positional
        shown = [canonical(a) for a in arguments] + [f"{k}={canonical(v)}" for k, v in keywords.items()]
        described = "(" + ", ".join(shown)[:300] + ")"
        copied = pickle.loads(pickle.dumps((arguments, keywords)))
        signal.alarm(CALL_SECONDS)
        try:
            returned = function(*copied[0], **copied[1])
            outcome = "returned " + canonical(returned)
            if canonical(copied) != canonical((arguments, keywords)):  # it changed its arguments
                outcome += " and left the arguments as " + canonical(copied)
        except Exception as error:  # the outcome is the exception's type
            outcome = "raised " + type(error).__name__
        finally:
            signal.alarm(0)
        results.append([described, outcome[:2000]])
    with open(out, "w") as handle:
        json.dump(results, handle)


if __name__ == "__main__":
    verb, module_name, qualname = sys.argv[1:4]
    if verb == "capture":
        capture(module_name, qualname, sys.argv[4], sys.argv[6:] if sys.argv[5:6] == ["--"] else sys.argv[5:])
    else:
        run(module_name, qualname, sys.argv[4], sys.argv[5])
