"""What the store writes is unchanged by how it is computed: canonical JSON against ``json.dumps`` with the same
options, stored timestamps against ``strftime`` of the documented format."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from verigate.store._chain import _plain, canonical_json
from verigate.store._clock import format_timestamp

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.tuples(children, children)
    | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=25)


@settings(max_examples=400, deadline=None)
@given(_JSON)
def test_canonical_json_is_json_dumps_with_its_options(value: Any) -> None:
    expected = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False,
                          default=_plain)
    assert canonical_json(value) == expected


@settings(max_examples=1000, deadline=None)
@given(st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)),
       st.integers(min_value=-23 * 60, max_value=23 * 60))
def test_a_stored_timestamp_is_the_documented_format(moment: datetime, offset_minutes: int) -> None:
    aware = moment.replace(tzinfo=timezone(timedelta(minutes=offset_minutes)))
    assert format_timestamp(aware) == aware.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
