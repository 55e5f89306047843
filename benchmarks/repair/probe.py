"""Run in a project's test environment (plain stdlib, any Python 3.8+): record the calls the suite makes to one
function, then call that function on those inputs and on varied ones, writing each outcome as canonical text.

    python probe.py capture MODULE QUALNAME OUT.pickle -- PYTEST_ARGS...
    python probe.py run MODULE QUALNAME CALLS.pickle OUT.json   # {"function": the name probed, "results": ..}

`capture` runs pytest with a profile hook that pickles the arguments of every call to the function (as they were
when it was called; a nested function's enclosing one, an __init__'s class); `run` calls the function on each recorded input and on variants of
it (each argument changed in turn: numbers moved by one, zeroed and negated, strings emptied, upper-cased and
doubled, sequences emptied, reversed and extended, booleans flipped), and writes per input its description and
the outcome: the returned value and the arguments afterwards, or the exception's type, as canonical text (object
addresses masked; a returned callable, such as a decorator or a closure, by its behaviour: the results of calling
it with the same sample arguments, see `behaviour`). benchmarks/repair/classify.py compares the outcomes of the original and the patched code.
"""

import inspect
import itertools
import json
import os
import pickle
import re
import signal
import sys

MAX_CALLS = 60  # distinct recorded inputs kept
MAX_INPUTS = 400  # inputs run (recorded and varied)
CALL_SECONDS = 2
MAX_TIMEOUTS = 3  # calls that run out of time before the probe stops
MAX_ITEMS = 1000  # items of a returned iterator compared
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
SAMPLE_ARGUMENTS = ((), (0,), (1,), (1,), (2, 3), ("a",), (None,))  # the calls a returned callable gets
CALLED_DEPTH = 2  # how deep in a returned value callables are still called
PLAIN_STATE = (dict, list, tuple, set, frozenset, str, int, float, bool, type(None))  # attributes shown


def _resolve(module_name, qualname):
    """(function, owner, name, kind) of the function to probe: as found on its module or class; a nested function's
    enclosing function instead (a closure cannot be called alone). kind: "classmethod" (a first `cls` is dropped),
    "init" (the class is called instead) or "function"."""
    target = __import__(module_name, fromlist=["_"])
    owner, name = None, ""
    for part in qualname.split("."):
        if owner is not None and inspect.isfunction(target):
            break  # a function nested in `target`: probe `target`
        if inspect.isclass(target) and part.startswith("__") and not part.endswith("__"):
            part = "_" + target.__name__.lstrip("_") + part  # a private method, by its mangled name
        owner, name, target = target, part, getattr(target, part)
    static = inspect.getattr_static(owner, name) if inspect.isclass(owner) else None
    if isinstance(static, classmethod):
        return target, owner, name, "classmethod"
    return target, owner, name, "init" if inspect.isclass(owner) and name == "__init__" else "function"


def capture(module_name, qualname, out, pytest_args):
    """Run pytest, pickling the arguments of each call to the function."""
    import threading

    import pytest

    function, _, _, kind = _resolve(module_name, qualname)
    code = inspect.unwrap(function).__code__
    where = (
        code.co_filename,
        code.co_firstlineno,
        code.co_name,
    )  # the same code if the module is imported twice
    defaults = _defaults(function)
    calls, seen = [], set()

    def hook(frame, event, arg):
        if event != "call" or len(calls) >= MAX_CALLS:
            return
        found = frame.f_code
        if found is not code and (found.co_filename, found.co_firstlineno, found.co_name) != where:
            return
        blob = _arguments(frame, kind, defaults)
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


def _defaults(function):
    """{parameter: default} of a function (none when it has no signature)."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return {}
    return {p.name: p.default for p in parameters if p.default is not inspect.Parameter.empty}


def _arguments(frame, kind, defaults):
    """The call's (positional, keyword, parameters left at their default) pickled, or None when they do not
    pickle; without `self` for an __init__ (the class is called)."""
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
    defaulted = [n for n in (*names, *kwonly) if n in defaults and _same(values.get(n), defaults[n])]
    if kind == "init":
        positional = positional[1:]
    shown = list(names[1:] if kind == "init" else names)
    try:
        return pickle.dumps((positional, keywords, defaulted, shown))
    except Exception:
        pass
    try:  # a function that does not pickle (a lambda, a local function) given as an argument: a stand-in
        positional = [_portable(value) for value in positional]
        keywords = {key: _portable(value) for key, value in keywords.items()}
        return pickle.dumps((positional, keywords, defaulted, shown))
    except Exception:
        return None


def _portable(value):
    """An argument as it can be recorded: a function that does not pickle becomes _probe_target."""
    if not (inspect.isfunction(value) or inspect.ismethod(value)):
        return value
    try:
        pickle.dumps(value)
        return value
    except Exception:
        return _probe_target


def _same(value, default):
    """Whether an argument is its parameter's default (the call may have left it out)."""
    try:
        return value is default or bool(type(value) is type(default) and value == default)
    except Exception:
        return False


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
    """Each recorded call, the same with the parameters that had their default left out (so a changed default
    shows), then each with one argument varied: [(positional, keywords)]."""
    found = []
    for blob in calls:
        try:
            positional, keywords, defaulted, names = pickle.loads(blob)
        except (
            Exception
        ):  # an argument that cannot be rebuilt here (a function of a test module that is gone)
            continue
        found.append((positional, keywords))
        if defaulted:
            found.append(_without_defaults(positional, keywords, defaulted, names))
        for index, value in enumerate(positional):
            for variant in _variants(value):
                found.append((positional[:index] + [variant] + positional[index + 1 :], keywords))
        for key, value in keywords.items():
            for variant in _variants(value):
                found.append((positional, dict(keywords, **{key: variant})))
    return found[:MAX_INPUTS]


def _without_defaults(positional, keywords, defaulted, names):
    """The call with the defaulted parameters left out (later positional ones passed by name)."""
    kept = []
    by_name = {k: v for k, v in keywords.items() if k not in defaulted}
    for index, value in enumerate(positional):
        name = names[index] if index < len(names) else None
        if name in defaulted:
            continue
        if len(kept) == index:
            kept.append(value)
        elif name is not None:
            by_name[name] = value
    return kept, by_name


def _probe_target(*args, **kwargs):
    """A plain function handed to a returned callable first (a decorator wraps it): what reaches it shows."""
    return ("called with", args, sorted(kwargs.items()))


def behaviour(value, depth):
    """A returned callable (a decorator, a closure, a bound method) by what it does, as text: called with a plain
    function (as a decorator is), then with each of SAMPLE_ARGUMENTS in turn (twice 1: a cache shows its hit),
    then its public attributes shown (plain state it keeps, such as a dict of results) or, when they take no argument,
    called (a cache's cache_info()); each result compared as a returned value, a callable it returns again by its
    behaviour up to CALLED_DEPTH."""
    outcomes = []
    for arguments in ((_probe_target,),) + SAMPLE_ARGUMENTS:
        try:
            outcomes.append("returned " + canonical(value(*arguments), depth + 1, consume=True))
        except TimeoutError:
            raise
        except Exception as error:
            outcomes.append("raised " + type(error).__name__)
    attributes = getattr(value, "__dict__", None)
    for name in sorted(attributes) if isinstance(attributes, dict) else []:
        attribute = attributes[name]
        if name.startswith("_") or inspect.isclass(attribute):
            continue
        if not callable(attribute):  # plain state it keeps (a dict of cached results) after the calls
            if type(attribute) in PLAIN_STATE:  # not objects: their clocks and locks differ from run to run
                outcomes.append(f"{name} = " + canonical(attribute, depth + 1))
            continue
        if _required(attribute):
            continue
        try:
            outcomes.append(f"{name}() returned " + canonical(attribute(), depth + 1, consume=True))
        except TimeoutError:
            raise
        except Exception as error:
            outcomes.append(f"{name}() raised " + type(error).__name__)
    return "called[" + "; ".join(outcomes) + "]"


def _required(function):
    """Whether a callable needs an argument (or its signature cannot be read)."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return True
    kinds = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    return any(p.default is inspect.Parameter.empty and p.kind not in kinds for p in parameters)


def _slots(value):
    """{slot: value} of an object whose class declares __slots__ (no __dict__ to show), or None."""
    names = [n for cls in type(value).__mro__ for n in getattr(cls, "__slots__", ()) if isinstance(n, str)]
    if not names or "__weakref__" in names and len(names) == 1:
        return None
    return {n: getattr(value, n) for n in names if n not in ("__weakref__", "__dict__") and hasattr(value, n)}


def canonical(value, depth=0, consume=False):
    """Comparable text of a value: containers item by item, objects by type and attributes (or slots), addresses
    masked; an iterator's items when `consume` (a returned one), else its type; a returned callable also by its
    behaviour (how it answers the same calls), up to CALLED_DEPTH levels in."""
    if depth > 6:
        return "..."
    if consume and depth <= CALLED_DEPTH and callable(value) and not inspect.isclass(value):
        shown = value.__qualname__ if inspect.isroutine(value) and hasattr(value, "__qualname__") else None
        return (shown or type(value).__name__) + " " + behaviour(value, depth)
    if not inspect.isclass(value) and (inspect.isgenerator(value) or _is_iterator(value)):
        if not consume:
            return type(value).__name__
        items = itertools.islice(value, MAX_ITEMS)
        return "iterator[" + ", ".join(canonical(v, depth + 1, consume) for v in items) + "]"
    if isinstance(value, (list, tuple)):
        return type(value).__name__ + "[" + ", ".join(canonical(v, depth + 1, consume) for v in value) + "]"
    if isinstance(value, dict):
        items = sorted((canonical(k, depth + 1), canonical(v, depth + 1, consume)) for k, v in value.items())
        return "{" + ", ".join(f"{k}: {v}" for k, v in items) + "}"
    if isinstance(value, (set, frozenset)):
        return "set{" + ", ".join(sorted(canonical(v, depth + 1) for v in value)) + "}"
    attributes = getattr(value, "__dict__", None)
    if isinstance(attributes, dict) and not inspect.isroutine(value) and not inspect.isclass(value):
        return type(value).__name__ + canonical(attributes, depth + 1, consume)
    slots = None if inspect.isroutine(value) or inspect.isclass(value) else _slots(value)
    if slots:  # by its fields: a repr shows nothing but the type, or a set's order (complement({'b', 'a'}))
        return type(value).__name__ + canonical(slots, depth + 1, consume)
    return _ADDRESS.sub("", repr(value))


def _is_iterator(value):
    """Whether a value is an iterator (consumed by reading it)."""
    try:
        return hasattr(value, "__next__") and iter(value) is value
    except Exception:
        return False


def _timeout(signum, frame):
    raise TimeoutError("call took too long")


def run(module_name, qualname, calls_path, out):
    """Call the function on every input; write [description, outcome] per input."""
    with open(calls_path, "rb") as handle:
        calls = pickle.load(handle)
    sys.path.append(
        os.getcwd()
    )  # the project's root, as pytest had it: arguments may be its tests' functions
    function, owner, _, kind = _resolve(module_name, qualname)
    call = owner if kind == "init" else function
    signal.signal(signal.SIGALRM, _timeout)
    results, timeouts = [], 0
    for positional, keywords in inputs(calls):
        arguments = positional[1:] if kind == "classmethod" else positional
        described = "(arguments that cannot be shown)"
        signal.alarm(CALL_SECONDS)
        try:
            shown = [canonical(a) for a in arguments] + [f"{k}={canonical(v)}" for k, v in keywords.items()]
            described = "(" + ", ".join(shown)[:300] + ")"
            copied = pickle.loads(pickle.dumps((arguments, keywords)))
            returned = call(*copied[0], **copied[1])
            outcome = "returned " + canonical(returned, consume=True)
            if canonical(copied) != canonical((arguments, keywords)):  # it changed its arguments
                outcome += " and left the arguments as " + canonical(copied)
        except Exception as error:  # the outcome is the exception's type
            outcome = "raised " + type(error).__name__
        finally:
            signal.alarm(0)
        results.append([described, outcome[:2000]])
        timeouts += outcome == "raised TimeoutError"
        if timeouts >= MAX_TIMEOUTS:  # code that hangs: the inputs so far tell (the rest would cost minutes)
            break
    shown = owner.__qualname__ if kind == "init" else getattr(function, "__qualname__", qualname)
    with open(out, "w") as handle:
        json.dump({"function": shown, "results": results}, handle)


if __name__ == "__main__":
    verb, module_name, qualname = sys.argv[1:4]
    if verb == "capture":
        capture(module_name, qualname, sys.argv[4], sys.argv[6:] if sys.argv[5:6] == ["--"] else sys.argv[5:])
    else:
        run(module_name, qualname, sys.argv[4], sys.argv[5])
