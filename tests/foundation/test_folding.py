"""The two comparison forms of ``verigate._folding`` are exactly what their docstrings define, written with
``str.translate`` here as the oracle (the module replaces characters one by one: translate looks each character up
in a dict, ten times slower on long texts past ASCII)."""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from verigate._folding import caseless, fold

#: the characters either form treats specially, with their neighbours: generated texts hit them often
_SPECIAL = "\u0131\u017f\u0307\u2018\u2019\u201b\u02bc\u2032\u201c\u201d\u201f\u2033\u0130Iißİ'\"é\u0301"
_CASELESS_ORACLE = str.maketrans({"\u0131": "i", "\u017f": "s", "\u0307": None})
_FOLD_ORACLE = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201b": "'", "\u02bc": "'", "\u2032": "'",
                              "\u201c": '"', "\u201d": '"', "\u201f": '"', "\u2033": '"', "\u0131": "i",
                              "\u0307": None})
texts = st.text(st.sampled_from(_SPECIAL) | st.characters(), max_size=60)


@given(texts)
def test_caseless_is_lower_with_the_ignorecase_letters_read_as_ascii(text: str) -> None:
    assert caseless(text) == text.lower().translate(_CASELESS_ORACLE)


@given(texts)
def test_fold_is_nfkc_casefold_and_straight_quotes(text: str) -> None:
    assert fold(text) == unicodedata.normalize("NFKC", text).casefold().translate(_FOLD_ORACLE)


def test_the_special_characters_themselves() -> None:
    assert caseless("\u0130STANBUL \u017fun \u0131") == "istanbul sun i"
    assert fold("\u201cApproved\u201d \u2018yes\u2019 \u0130 e\u0301") == "\"approved\" 'yes' i é"
    assert fold("ASCII Text") == "ascii text" and caseless("ASCII") == "ascii"
