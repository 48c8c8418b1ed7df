"""Attribute values become the strings pdata's AsString gives, which the contrib exporter stores."""

import pytest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue, KeyValueList

from tracerl.collector.anyvalue import as_string, go_float


@pytest.mark.parametrize("value,text", [
    (3.0, "3"), (-0.0, "-0"), (0.0, "0"), (0.1, "0.1"), (-2.5, "-2.5"), (123456789.125, "123456789.125"),
    (1e-6, "0.000001"), (1.2e-5, "0.000012"), (9.99e-7, "9.99e-7"), (1e-7, "1e-7"), (1.5e-10, "1.5e-10"),
    (1e16, "10000000000000000"), (1.5e20, "150000000000000000000"), (1e21, "1e+21"), (1.5e22, "1.5e+22"),
    (-1e300, "-1e+300"), (5e-324, "5e-324"),
])
def test_doubles_format_like_go(value, text):
    assert go_float(value) == text


def av(**kw):
    return AnyValue(**kw)


def array(*values):
    return av(array_value=ArrayValue(values=list(values)))


def kvlist(**items):
    return av(kvlist_value=KeyValueList(values=[KeyValue(key=k, value=v) for k, v in items.items()]))


@pytest.mark.parametrize("value,text", [
    (av(string_value="a<b>&c"), "a<b>&c"),  # a plain string stays as it is
    (av(int_value=-7), "-7"),
    (av(bool_value=True), "true"),
    (av(double_value=float("nan")), "json: unsupported value: NaN"),
    (av(double_value=float("inf")), "json: unsupported value: +Inf"),
    (av(bytes_value=b"\x00\xff"), "AP8="),
    (av(), ""),
    (array(), "[]"),
    (array(av(int_value=1), av(int_value=-2), av(int_value=0), av(int_value=2**62)), "[1,-2,0,4611686018427387904]"),
    (array(av(double_value=-0.5), av(double_value=2.0), av(double_value=3e-7)), "[-0.5,2,3e-7]"),
    (array(av(double_value=-0.5), av(double_value=-1.25)), "[-0.5,-1.25]"),
    (array(av(string_value="é\n\"<>&\u2028")), '["é\\n\\"\\u003c\\u003e\\u0026\\u2028"]'),
    (array(av(int_value=1), av(string_value="x"), av(bool_value=False), av(), av(bytes_value=b"hi")),
     '[1,"x",false,null,"aGk="]'),
    (array(av(double_value=float("nan"))), ""),  # json.Marshal fails; AsString ignores the error
    (kvlist(z=av(int_value=1), a=av(array_value=ArrayValue(values=[av(bool_value=True)]))), '{"a":[true],"z":1}'),
    (kvlist(), "{}"),
])
def test_as_string_matches_pdata(value, text):
    assert as_string(value) == text


def test_long_int_arrays_take_the_columnar_path_and_match():
    """Token-id arrays are decoded from the wire bytes in numpy; every varint width and sign must
    come out as Go's json.Marshal would write it."""
    import random

    rng = random.Random(7)
    edge = [0, 1, 127, 128, 16383, 16384, 2**31, -1, -(2**63), 2**63 - 1]
    for n in (16, 17, 600, 2000):
        values = [rng.choice(edge + [rng.randint(-(2**40), 2**40)]) for _ in range(n)]
        assert as_string(array(*(av(int_value=v) for v in values))) == "[" + ",".join(map(str, values)) + "]"
    mixed = [av(int_value=i) for i in range(20)] + [av(string_value="x")]
    assert as_string(array(*mixed)) == "[" + ",".join(map(str, range(20))) + ',"x"]'


def test_double_arrays_match_go_whatever_the_exponent():
    """Logprob arrays go through orjson; numbers where its notation differs from Go's are rewritten."""
    import random

    rng = random.Random(3)
    edge = [0.0, -0.0, 1.0, -3.0, 1e-7, -1.2e-5, 1e-6, 9.99e-7, 1e16, 1e21, 1.5e22, 5e-324, 0.1]
    for _ in range(300):
        values = [rng.choice(edge + [-rng.random() * 30, rng.uniform(-1e-4, 1e-4)]) for _ in range(rng.choice([1, 3, 40]))]
        assert as_string(array(*(av(double_value=v) for v in values))) == "[" + ",".join(map(go_float, values)) + "]"
