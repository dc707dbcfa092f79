"""Guards: for some shipped patterns, a re2 pattern every match of theirs implies, so that one re2 pass can rule
out rules whose keyword is common (``/``, ``+``, ``://``) or that have none (card, IBAN, My Number numbers).

A guard is written for one exact pattern (its text and flags): it matches the same text wherever the pattern
matches, because it keeps a prefix of every match the pattern can make and reads a one-character lookbehind
``(?<!X)`` as "the text starts here, or the character before is not X" (what the lookbehind means) and drops
every other lookaround (which only removes matches). re2 classes read ``\\s`` as ASCII white space only, so a
guard's ``[^\\s...]`` admits more than Python's: still implied. A pack whose pattern differs by one character
gets no guard and the rule runs as before; ``tests/redact/test_prefilter.py`` checks each guard on generated
and adversarial text against the pattern itself, and fails when a shipped pattern no longer has its guard.
"""

from __future__ import annotations

__all__ = ["GUARDS"]

#: pattern text -> guard (both for a pack rule without ``flags``: Python's ``re.UNICODE`` only)
GUARDS: dict[str, str] = {
    # payment-card-number: a first digit 2-6 not after a digit, dot, comma or hyphen, then 12 more digits
    r"(?P<secret>[2-6](?<![0-9.,-][2-6])[0-9]{3}(?:[ -]?[0-9]){9,15})(?![0-9])":
        r"(?:^|[^0-9.,-])[2-6][0-9]{3}(?:[ -]?[0-9]){9}",
    # japan-my-number
    r"(?P<secret>[0-9](?<![0-9.,-][0-9])[0-9]{3}[ -]?[0-9]{4}[ -]?[0-9]{4})(?![0-9-])":
        r"(?:^|[^0-9.,-])[0-9]{4}[ -]?[0-9]{4}[ -]?[0-9]{4}",
    # iban
    r"(?P<secret>[A-Z](?<![A-Za-z0-9][A-Z])[A-Z][0-9]{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?)(?![A-Za-z0-9])":
        r"(?:^|[^A-Za-z0-9])[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]{4}){2}",
    # phone-number-japan: the pattern itself, its lookbehind read as a character before
    r"(?P<secret>0(?<![A-Za-z0-9_+.-]0)(?:[5789]0-?[0-9]{4}-?[0-9]{4}|[0-9]{1,4}-[0-9]{1,4}-[0-9]{4}"
    r"|[0-9]{1,4}\([0-9]{1,4}\)[0-9]{4}|120-?[0-9]{3}-?[0-9]{3}|800-?[0-9]{3}-?[0-9]{4}))(?![A-Za-z0-9_-])":
        r"(?:^|[^A-Za-z0-9_+.-])0(?:[5789]0-?[0-9]{4}-?[0-9]{4}|[0-9]{1,4}-[0-9]{1,4}-[0-9]{4}"
        r"|[0-9]{1,4}\([0-9]{1,4}\)[0-9]{4}|120-?[0-9]{3}-?[0-9]{3}|800-?[0-9]{3}-?[0-9]{4})",
    # phone-number-international: "+", a country code and two more digit groups
    r"(?<![A-Za-z0-9_+])(?P<secret>\+[1-9][0-9]{0,2}(?:[ .-]?\(?[0-9]{1,4}\)?){2,6})(?![0-9])":
        r"(?:^|[^A-Za-z0-9_+])\+[1-9][0-9]{0,2}(?:[ .-]?\(?[0-9]{1,4}\)?){2}",
    # posix-absolute-path: a slash that starts a path (not inside a URL or word), a name and a second slash
    r"(?<![A-Za-z0-9_.:/~$\\@+-])(?P<secret>/(?:[A-Za-z0-9_.@+~-]+/)+[A-Za-z0-9_.@+~-]*)":
        r"(?:^|[^A-Za-z0-9_.:/~$\\@+-])/[A-Za-z0-9_.@+~-]+/",
    # windows-absolute-path: a drive and one path character, or a UNC host and one path character
    r"(?<![A-Za-z0-9])(?P<secret>[A-Za-z]:(?:[\\/]{1,2}[^\\/:*?" r'"<>|\s]+)+[\\/]{0,2}'
    r"|\\\\[A-Za-z0-9._$-]+(?:\\[^\\/:*?" r'"<>|\s]+)+)':
        r"(?:^|[^A-Za-z0-9])(?:[A-Za-z]:[\\/]{1,2}[^\\/:*?" r'"<>|\s]'
        r"|\\\\[A-Za-z0-9._$-]+\\[^\\/:*?" r'"<>|\s])',
    # url-credentials: "://", a user part, ":", a password part and "@"
    r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{1,20}://(?P<secret>[^\s:/?#@'" r'"<>\[\]]*:[^\s/?#@' r"'"
    r'"<>]+)@(?=[A-Za-z0-9.\[_-])':
        r"://[^\s:/?#@'" r'"<>\[\]]*:[^\s/?#@' r"'" r'"<>]+@',
}

# What Python's ``\s`` matches in a str pattern (every ``str.isspace()`` character), as a re2 class: re2's own
# ``\s`` is ASCII only, and a guard admitting less white space than its pattern could skip a match
_PY_SPACE = r"[\t-\r\x{1c}-\x{20}\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}]"
# Python's IGNORECASE also matches "i" with the dotted and the dotless I (U+0130, U+0131), re2's (?i) does not
# (both fold k with the Kelvin sign and s with the long s)
_PY_I = r"[iI\x{130}\x{131}]"
_ASSIGNMENT_KEYS = (r'''(?i:password|passwd|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|auth[_-]?key'''
                    r'''|private[_-]?key|credentials?)[A-Za-z0-9_.-]*\\*["']?(?:\s*(?:=|:=|:|=>)|(?<=["'])\s*,)'''
                    r'''\s*(?:[bru]{0,2}\\*["'`])?''')
# generic-secret-assignment and secret-assignment-head: their keywords are words of prose too ("token", "auth"),
# and Python's re tries the keyword alternation at every position of such a line (~0.8 ms per rule for a 4 KB
# answer about a tokenizer). The guard is their common head: a keyword, name characters, escaped quotes, then `=`
# or `:` (`:=`, `=>`) after white space, or a comma after a quote (the pattern's ``(?<=["'])``: a keyword and name
# characters never end in a quote, so only the optional quote can stand before that comma).
_ASSIGNMENT_HEAD = (
    r'''(?i:password|passwd|pwd|secret|token|ap<i>[_-]?key|ap<i>key|access[_-]?key|auth[_-]?key|pr<i>vate[_-]?key'''
    r'''|credent<i>als?)[A-Za-z0-9_.-]*\\*(?:["']?<s>*[=:]|["']<s>*,)'''
).replace("<i>", _PY_I).replace("<s>", _PY_SPACE)
GUARDS[_ASSIGNMENT_KEYS + r'''(?P<secret>(?:[A-Za-z0-9+/=_\-.~!@#$%^*]|&(?![A-Za-z_][A-Za-z0-9_.\[\]-]*=)){8,}+)'''
       r'''[(\[{]?'''] = _ASSIGNMENT_HEAD
GUARDS[_ASSIGNMENT_KEYS + r'''(?P<secret>(?:[A-Za-z0-9+/_\-.~!@#$%^*]|&(?![A-Za-z_][A-Za-z0-9_.\[\]-]*=)){8,}+)'''
       r'''(?==+[A-Za-z0-9+/_\-.~!@#$%^*])'''] = _ASSIGNMENT_HEAD

#: the only flags a guard was written for: a rule without ``flags:`` (none of the patterns above sets a global flag
#: inline, so each compiles with ``re.UNICODE`` alone; ``tests/redact/test_prefilter.py`` checks it)
GUARD_FLAGS = 0
