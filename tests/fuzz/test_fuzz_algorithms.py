"""Fuzzing the scenario parser on the kinds of issue 14: every new kind, with
its own keys given any JSON value, gives a scenario or a one-line error."""

from __future__ import annotations

import contextlib

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bridge.catalog import scenario
from bridge.errors import BridgeError

values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
keys = st.sampled_from(
    ["curve", "bits", "digest", "key_bytes", "salt_bytes", "sizes", "features", "calls", "cipher"]
)
good_calls = st.sampled_from(
    [
        {"python": ["exchange"]},
        {"erlang": ["pbkdf2_hmac"]},
        {"python": ["sign_pkcs1", "load"]},
        {"python": ["aead-reuse"]},
        {"openssl": ["speed-rand"]},
    ]
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(["random", "kdf", "eddsa", "rsa", "agreement", "cipher"]),
    st.dictionaries(keys, values, max_size=6),
    good_calls,
)
def test_new_kinds_parse_or_refuse_in_one_line(kind, fields, calls):
    data = {"name": "f", "description": "f", "kind": kind, "calls": calls, **fields}
    with contextlib.suppress(BridgeError):
        scenario.parse(data, "fuzz.toml")
