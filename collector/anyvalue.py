"""OTLP attribute values as strings, exactly as the contrib ClickHouse exporter stores them.

The exporter writes ``pcommon.Value.AsString()``: strings as they are, ints and bools as their
text, doubles in the ES6 number style, bytes as standard base64, arrays and maps as Go's
``json.Marshal`` of the raw value (compact, map keys sorted, ``<>&`` escaped as ``\\u003c``…).
Reproducing it byte for byte lets SQL written against that exporter's tables work on ours.
"""

from __future__ import annotations

import base64
import json
import math
import re
import struct
from decimal import Decimal

import numpy as np
import orjson

_HTML_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


class _Unsupported(ValueError):
    """A NaN or infinity inside an array or map: Go's json.Marshal fails, AsString gives ""."""


def go_float(f: float) -> str:
    """A double formatted like Go's ``strconv.AppendFloat`` in the ES6 style of AsString."""
    a = abs(f)
    r = repr(f)
    if a != 0 and (a < 1e-6 or a >= 1e21):
        mantissa, _, exp = r.partition("e")
        if not exp:  # repr chose fixed notation; force the exponent form
            mantissa, _, exp = f"{f:e}".partition("e")
        sign = exp[0] if exp[0] in "+-" else "+"
        digits = exp.lstrip("+-").lstrip("0") or "0"
        if len(digits) == 1 and sign == "+":
            digits = "0" + digits  # Go keeps two exponent digits except for e-0X, which it trims
        if "." in mantissa:
            mantissa = mantissa.rstrip("0").rstrip(".")
        return f"{mantissa}e{sign}{digits}"
    if "e" in r or "E" in r:
        r = format(Decimal(r), "f")
    if r.endswith(".0"):
        r = r[:-2]
    return r


def _special_float(f: float) -> str:
    if math.isnan(f):
        return "json: unsupported value: NaN"
    return "json: unsupported value: " + ("+Inf" if f > 0 else "-Inf")


def json_string(s: str) -> str:
    out = json.dumps(s, ensure_ascii=False)
    if any(c in out for c in "<>&\u2028\u2029"):
        out = "".join(_HTML_ESCAPES.get(c, c) for c in out)
    return out


def _json_value(v) -> str:
    kind = v.WhichOneof("value")
    if kind == "string_value":
        return json_string(v.string_value)
    if kind == "int_value":
        return str(v.int_value)
    if kind == "double_value":
        d = v.double_value
        if math.isnan(d) or math.isinf(d):
            raise _Unsupported
        return go_float(d)
    if kind == "bool_value":
        return "true" if v.bool_value else "false"
    if kind == "array_value":
        return _json_array(v.array_value)
    if kind == "kvlist_value":
        return _json_map(v.kvlist_value.values)
    if kind == "bytes_value":
        return '"' + base64.b64encode(v.bytes_value).decode() + '"'
    return "null"


# Wire shapes of an ArrayValue whose elements are all ints or all doubles (field 1, one AnyValue
# each: int_value is field 3 varint, double_value field 4 fixed64). Matching them on the serialized
# bytes checks a whole token-id or logprob array in one C-level pass instead of one Python call
# per element.
_ALL_INTS = re.compile(rb"(?:\x0a[\x02-\x0b]\x18[\x80-\xff]{0,9}[\x00-\x7f])*")
_ALL_DOUBLES = re.compile(rb"(?:\x0a\x09\x21[\x00-\xff]{8})*")


def _varints(wire: bytes) -> "np.ndarray":
    """The int_values of an all-ints ArrayValue (``_ALL_INTS`` matched), decoded in numpy.

    Every element is four runs that end on a byte below 0x80: the tag 0x0a, the length, the tag
    0x18 and the varint itself; so the varint of element i spans from after the third to the
    fourth such byte, and its value is the sum of its 7-bit groups shifted into place.
    """
    b = np.frombuffer(wire, dtype=np.uint8)
    ends = np.flatnonzero(b < 0x80)
    starts, stops = ends[2::4] + 1, ends[3::4] + 1
    lengths = stops - starts
    offsets = np.cumsum(lengths) - lengths
    position = np.arange(int(lengths.sum())) - np.repeat(offsets, lengths)
    groups = b[np.repeat(starts, lengths) + position].astype(np.uint64) & np.uint64(0x7F)
    return np.add.reduceat(groups << (np.uint64(7) * position.astype(np.uint64)), offsets).view(np.int64)


def _json_array(array) -> str:
    values = array.values
    if not values:
        return "[]"
    wire = array.SerializeToString()
    if _ALL_INTS.fullmatch(wire):
        if len(values) < 16:
            return "[" + ",".join([str(x.int_value) for x in values]) + "]"
        return orjson.dumps(_varints(wire), option=orjson.OPT_SERIALIZE_NUMPY).decode()
    if _ALL_DOUBLES.fullmatch(wire):
        # orjson writes the same shortest digits as Go; only its exponent cut-offs and a
        # trailing ".0" differ, so just those numbers are rewritten. NaN and infinities come out
        # as null, where Go's json.Marshal fails and AsString gives "".
        text = orjson.dumps(struct.unpack("<" + "3xd" * len(values), wire)).decode()
        if "null" in text:
            raise _Unsupported
        if "e" in text or ".0," in text or text.endswith(".0]"):
            text = "[" + ",".join(p if "e" not in p and not p.endswith(".0") else go_float(float(p))
                                  for p in text[1:-1].split(",")) + "]"
        return text
    return "[" + ",".join([_json_value(x) for x in values]) + "]"


def _json_map(kvs) -> str:
    items = {kv.key: kv.value for kv in kvs}  # last duplicate wins, as in Go's map
    return "{" + ",".join(json_string(k) + ":" + _json_value(items[k]) for k in sorted(items)) + "}"


def as_string(v) -> str:
    """``AnyValue`` -> the exporter's string."""
    kind = v.WhichOneof("value")
    if kind == "string_value":
        return v.string_value
    if kind == "int_value":
        return str(v.int_value)
    if kind == "double_value":
        d = v.double_value
        return _special_float(d) if (math.isnan(d) or math.isinf(d)) else go_float(d)
    if kind == "bool_value":
        return "true" if v.bool_value else "false"
    try:
        if kind == "array_value":
            return _json_array(v.array_value)
        if kind == "kvlist_value":
            return _json_map(v.kvlist_value.values)
    except _Unsupported:
        return ""
    if kind == "bytes_value":
        return base64.b64encode(v.bytes_value).decode()
    return ""


def attributes(kvs) -> dict[str, str]:
    """A repeated ``KeyValue`` -> ``{key: AsString(value)}``; the hot path inlines scalars."""
    out = {}
    for kv in kvs:
        v = kv.value
        kind = v.WhichOneof("value")
        if kind == "string_value":
            out[kv.key] = v.string_value
        elif kind == "int_value":
            out[kv.key] = str(v.int_value)
        else:
            out[kv.key] = as_string(v)
    return out
