"""The two forms texts are compared in, case aside: ``caseless`` for keyword tests, ``fold`` for phrases. One
module with no package around it: the rule engine's text views and the self-gate's fast keyword test (imported on
every tool call, where loading the rule engine would cost more than the test) read texts the same way."""

from __future__ import annotations

import unicodedata

__all__ = ["caseless", "fold"]

# what str.lower() keeps apart from an ASCII letter that re's IGNORECASE matches with it: the dotless i (U+0131, as
# "i"), the long s (U+017F, as "s"), and the dot above (U+0307) that lower() gives the dotted capital I (U+0130). A
# keyword test must hold wherever a case-insensitive pattern matches; applied after lower(), character by
# character, so a keyword found in ``text.lower()`` is found here too. casefold() reads the long s as "s" already
_CASELESS = (("\u0131", "i"), ("\u017f", "s"), ("\u0307", ""))
# curly quotes and primes read as the straight quotes a phrase is written with; the dotless i as "i" and the dot
# above dropped (_CASELESS: casefold() gives the dotted capital I as "i" and U+0307, which no phrase is written
# with; NFKC has already joined the dot to every letter that has a form with it)
_FOLDED_AS = (("\u2018", "'"), ("\u2019", "'"), ("\u201b", "'"), ("\u02bc", "'"), ("\u2032", "'"),
              ("\u201c", '"'), ("\u201d", '"'), ("\u201f", '"'), ("\u2033", '"'), ("\u0131", "i"), ("\u0307", ""))


def _replaced(text: str, pairs: tuple[tuple[str, str], ...]) -> str:
    """Each character of ``pairs`` replaced, as ``str.translate`` would: no replacement holds a replaced character,
    so the order does not matter. translate looks every character up in a mapping (tens of ns each past ASCII):
    on a long text ten times what a scan per character costs here."""
    for character, replacement in pairs:
        if character in text:
            text = text.replace(character, replacement)
    return text


def fold(text: str) -> str:
    """NFKC, case folding and straight quotes: the form phrases and folded text are compared in."""
    if text.isascii():  # NFKC leaves ASCII as it is, casefold() is lower() there, and nothing is replaced
        return text.lower()
    return _replaced(unicodedata.normalize("NFKC", text).casefold(), _FOLDED_AS)


def caseless(text: str) -> str:
    """``text.lower()`` with the letters IGNORECASE equates to an ASCII letter read as that letter (``_CASELESS``):
    the form keyword prefilters test, a rule's keywords included. Its offsets are not the text's."""
    return text.lower() if text.isascii() else _replaced(text.lower(), _CASELESS)
