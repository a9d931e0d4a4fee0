"""Reading a study file: UTF-8 YAML with duplicate keys rejected and YAML 1.2 floats."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from ..collection.text import regular_file
from ..errors import InputError

__all__ = ["MAX_STUDY_BYTES", "MAX_YAML_NODES", "read_yaml"]

#: largest study file read (a study of a hundred scenarios is a few kilobytes)
MAX_STUDY_BYTES = 1 << 20
#: most values a study may hold once its aliases (``*name``) are expanded: a 600-byte
#: "billion laughs" file of nested aliases would otherwise expand to gigabytes
MAX_YAML_NODES = 100_000


def _expanded_size(node, memo: dict, active: set) -> int:
    """Number of nodes of ``node`` with every alias expanded (each shared node counted once
    per use); a node that holds itself is a ConstructorError."""
    key = id(node)
    if key in memo:
        return memo[key]
    if key in active:
        raise yaml.constructor.ConstructorError(None, None, "an alias refers to a value that holds it "
                                                "(a recursive alias)", node.start_mark)
    active.add(key)
    size = 1
    if isinstance(node, yaml.SequenceNode):
        size += sum(_expanded_size(v, memo, active) for v in node.value)
    elif isinstance(node, yaml.MappingNode):
        size += sum(_expanded_size(k, memo, active) + _expanded_size(v, memo, active) for k, v in node.value)
    active.discard(key)
    memo[key] = size
    if size > MAX_YAML_NODES:
        raise yaml.constructor.ConstructorError(
            None, None, f"more than {MAX_YAML_NODES} values once its aliases are expanded (the limit "
            "of a study file, MAX_YAML_NODES)", node.start_mark)
    return size


def _construct_int(loader, node):
    """An integer; one of more than Python's 4,300 digits is a ConstructorError with its line."""
    try:
        return yaml.SafeLoader.construct_yaml_int(loader, node)
    except ValueError:
        raise yaml.constructor.ConstructorError(None, None, "integer too long (more than 4,300 digits)",
                                                node.start_mark) from None


def _unique_key_loader():
    """A PyYAML SafeLoader that rejects a key given twice in one mapping (PyYAML keeps the last)."""
    class Loader(yaml.SafeLoader):
        def construct_document(self, node):
            _expanded_size(node, {}, set())       # bounded before anything is built
            return super().construct_document(node)

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
    Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)
    # YAML 1.1 (PyYAML) reads 1e-3 and 1e3 as strings (its floats need a dot and a signed
    # exponent); as in YAML 1.2 they are numbers here
    Loader.add_implicit_resolver("tag:yaml.org,2002:float",
                                 re.compile(r"^[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)[eE][-+]?[0-9]+$"),
                                 list("-+0123456789."))
    return Loader


def read_yaml(path: Path):
    """The YAML document in ``path``; :class:`InputError` naming the file and line when it cannot be read."""
    regular_file(path, "study")
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_STUDY_BYTES + 1)
    except OSError as exc:
        raise InputError(f"cannot read study file: {exc.strerror}", file=path) from None
    if len(data) > MAX_STUDY_BYTES:
        raise InputError(f"larger than the limit of a study file ({MAX_STUDY_BYTES >> 20} MB, "
                         "MAX_STUDY_BYTES)", file=path)
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


