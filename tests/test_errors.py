"""Every exception class robustbnn defines survives pickling: a worker process sends its errors
back pickled, and one that cannot be rebuilt kills the whole pool (a bare BrokenProcessPool)."""

from __future__ import annotations

import importlib
import inspect
import pickle
import pkgutil

import pytest

import robustbnn

# Sample arguments by annotation, for exception classes whose __init__ takes more than a message.
SAMPLES = {"str": "a-value", "int": 7, "float": 0.25, "bool": True, "list[str]": ["b", "a"],
           "tuple[str, ...]": ("a", "b"), "dict[str, str]": {"k": "v"}}


def _exception_classes() -> list[type[BaseException]]:
    """Every subclass of BaseException defined in a module of the robustbnn package."""
    found = {}
    for info in pkgutil.walk_packages(robustbnn.__path__, "robustbnn."):
        try:
            module = importlib.import_module(info.name)
        except ImportError as err:  # an optional extra (Ray, torchattacks) that is not installed
            if info.name.startswith("robustbnn.") and "robustbnn" in str(err.name or ""):
                raise
            continue
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, BaseException) and obj.__module__ == module.__name__:
                found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return [found[k] for k in sorted(found)]


CLASSES = _exception_classes()


def _build(cls: type[BaseException]) -> BaseException:
    """An instance of ``cls``, its ``__init__`` arguments filled from :data:`SAMPLES`."""
    own = next(k for k in cls.__mro__ if "__init__" in vars(k))
    if own.__module__ in ("builtins",):
        return cls("what went wrong; how to fix it")
    args, kwargs = [], {}
    for param in list(inspect.signature(cls.__init__).parameters.values())[1:]:
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        annotation = param.annotation if isinstance(param.annotation, str) else getattr(
            param.annotation, "__name__", str(param.annotation))
        assert annotation in SAMPLES, (
            f"{cls.__qualname__}.__init__({param.name}: {annotation}): add a sample value for "
            "this annotation to SAMPLES")
        value = SAMPLES[annotation]
        if param.kind == param.KEYWORD_ONLY:
            kwargs[param.name] = value
        else:
            args.append(value)
    return cls(*args, **kwargs)


def test_every_exception_class_is_found() -> None:
    names = {f"{c.__module__}.{c.__qualname__}" for c in CLASSES}
    assert {"robustbnn.errors.UnknownNameError", "robustbnn.errors.NumericalFaultError",
            "robustbnn.errors.UserError", "robustbnn.run.store.RunFolderConflict"} <= names


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: f"{c.__module__}.{c.__qualname__}")
def test_every_exception_survives_pickling(cls: type[BaseException]) -> None:
    err = _build(cls)
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is cls
    assert str(back) == str(err) and back.args == err.args
    assert vars(back) == vars(err)
    if hasattr(err, "exit_code"):
        assert back.exit_code == err.exit_code


def test_an_unknown_name_keeps_its_fields_and_message() -> None:
    from robustbnn.errors import UnknownNameError

    err = pickle.loads(pickle.dumps(UnknownNameError("model", "rank1_bnn", ["mlp", "bbb"])))
    assert (err.kind, err.name, err.known) == ("model", "rank1_bnn", ["mlp", "bbb"])
    assert str(err) == "unknown model 'rank1_bnn'; known: ['bbb', 'mlp']"
    assert isinstance(err, KeyError) and err.exit_code == 2
