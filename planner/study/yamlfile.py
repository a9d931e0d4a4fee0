"""Reading a study file: UTF-8 YAML with duplicate keys rejected and YAML 1.2 floats."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from ..errors import InputError

__all__ = ["read_yaml"]


def _unique_key_loader():
    """A PyYAML SafeLoader that rejects a key given twice in one mapping (PyYAML keeps the last)."""
    class Loader(yaml.SafeLoader):
        pass

    def construct_mapping(loader, node, deep=False):
        seen: dict = {}
        for key_node, _ in node.value:      # the keys written here (merged keys may be overridden)
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = loader.construct_object(key_node, deep=True)
            try:
                hash(key)
            except TypeError:
                continue         # the base constructor reports unhashable keys
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r} (first given on line {seen[key] + 1})",
                    key_node.start_mark)
            seen[key] = key_node.start_mark.line
        loader.flatten_mapping(node)
        return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)

    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)
    # YAML 1.1 (PyYAML) reads 1e-3 and 1e3 as strings (its floats need a dot and a signed
    # exponent); as in YAML 1.2 they are numbers here
    Loader.add_implicit_resolver("tag:yaml.org,2002:float",
                                 re.compile(r"^[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)[eE][-+]?[0-9]+$"),
                                 list("-+0123456789."))
    return Loader


def read_yaml(path: Path):
    """The YAML document in ``path``; :class:`InputError` naming the file and line when it cannot be read."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read study file: {exc.strerror}", file=path) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise InputError(f"not UTF-8 text (byte 0x{data[exc.start]:02x} cannot be decoded); save the "
                         "study file as UTF-8", file=path, line=line) from None
    try:
        return yaml.load(text, Loader=_unique_key_loader())
    except RecursionError:
        raise InputError("invalid YAML: nested too deeply (a study needs a few levels)", file=path) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(f"invalid YAML: {problem}", file=path,
                         line=None if mark is None else mark.line + 1) from None


