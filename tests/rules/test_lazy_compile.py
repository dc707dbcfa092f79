"""A rule's regexes compile at its first use: that changes nothing a scan finds, a bad pattern is still an error
when its pack loads, and a record of checked rules (``rules._checked``) is never trusted over the patterns.

The oracle is the same packs compiled by subclasses of the built-in kinds: a subclass never takes a rule from
the record, so it compiles every pattern while its pack loads, as every kind did before."""

from __future__ import annotations

import functools
import json
import os
import random
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from redact.secret_corpus import SECRET_RULES, near_misses, planted
from verigate import RuleError
from verigate.redact._prefilter import RulePrefilter
from verigate.rules import PhraseKind, RegexKind, RuleSet, load_pack, load_pack_text, shipped_packs
from verigate.rules._cache import cache_folder


class _EagerRegex(RegexKind):
    """The regex kind compiling at load (a subclass is always checked by compiling)."""


class _EagerPhrase(PhraseKind):
    """The phrase kind compiling at load."""


PACKS = [load_pack(name) for name in shipped_packs()]
EAGER = RuleSet.compile(PACKS, kinds={"regex": _EagerRegex(), "phrase": _EagerPhrase()})
BUILTIN = {"regex": RegexKind(), "phrase": PhraseKind()}


def _compiled(ruleset: RuleSet) -> list[bool]:
    return [item.matcher.compiled for item in ruleset.compiled]  # type: ignore[attr-defined]


def _lazy() -> RuleSet:
    """The shipped packs compiled by the built-in kinds once their rules are checked: nothing compiled yet."""
    RuleSet.compile(PACKS, kinds=BUILTIN)  # checks every shipped rule (unless this process or the record did)
    ruleset = RuleSet.compile(PACKS, kinds=BUILTIN)
    assert not any(_compiled(ruleset))
    return ruleset


@functools.cache
def _shared() -> tuple[RuleSet, RulePrefilter]:
    """One lazy set for every example (so later examples meet rules compiled by earlier ones) and the redactor's
    prefilter over another (re2 from the first text, where installed)."""
    return _lazy(), RulePrefilter(_lazy(), re2_after=0)


def test_a_rule_set_of_checked_rules_compiles_nothing_until_a_scan_needs_it() -> None:
    fresh = _lazy()
    assert all(_compiled(EAGER))
    rule, keyword = next((item.rule, item.matcher.keywords[0]) for item in fresh.compiled  # type: ignore[attr-defined]
                         if item.rule.kind == "regex" and item.matcher.keywords)  # type: ignore[attr-defined]
    fresh.scan(f"a text about {keyword} only")
    compiled = {item.rule.id for item in fresh.compiled if item.matcher.compiled}  # type: ignore[attr-defined]
    assert rule.id in compiled
    assert len(compiled) < len(fresh.compiled) // 2  # a text needs few rules: the others stay uncompiled


def _keywords() -> list[str]:
    return sorted({keyword for item in EAGER.compiled for keyword in getattr(item.matcher, "keywords", ())})


_EXAMPLES = sorted({example.text for pack in PACKS for rule in pack.rules
                    for example in (*rule.match_examples, *rule.no_match_examples)})
# pieces that make rules fire (keywords, true tokens, every rule's examples, phrases in Japanese and English),
# near misses, random text and what changes lower() or folding
_PIECES = st.one_of(
    st.sampled_from(_keywords()),
    st.builds(lambda rule_id, seed: planted(rule_id, random.Random(seed)).text, st.sampled_from(SECRET_RULES),
              st.integers(0, 2**32)),
    st.sampled_from(_EXAMPLES),
    st.sampled_from(near_misses()),
    st.text(max_size=20),
    st.sampled_from([" ", "\n", "=", ": ", "\"", "verigate: allow", "\u0130", "\u212a", "\uff33\uff54\uff45\uff50",
                     "4111 1111 1111 1111", "GB82 WEST 1234 5698 7654 32", "+81 90-1234-5678", "/home/hanako/x"]),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_PIECES, max_size=30))
def test_a_lazily_compiled_rule_set_finds_what_the_eagerly_compiled_one_finds(pieces: list[str]) -> None:
    text = " ".join(pieces)
    lazy, prefiltered = _shared()
    expected = EAGER.scan(text)
    assert lazy.scan(text) == expected
    assert prefiltered.scan(text) == expected  # the redactor's prefilter: re2 sets and guards, where installed


def test_threads_scanning_a_fresh_rule_set_compile_each_pattern_once_and_agree() -> None:
    fresh = _lazy()
    texts = [" ".join(example for example in _EXAMPLES[start::7]) for start in range(7)]
    expected = [EAGER.scan(text) for text in texts]
    barrier = threading.Barrier(8)
    results: list[object] = []
    patterns: list[list[object]] = []
    lock = threading.Lock()

    def work() -> None:
        barrier.wait()
        found = [fresh.scan(text) for text in texts]
        seen = [item.matcher.pattern for item in fresh.compiled]  # type: ignore[attr-defined]
        with lock:
            results.append(found)
            patterns.append(seen)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [expected] * 8
    assert all(all(one is other for one, other in zip(seen, patterns[0], strict=True)) for seen in patterns)


def _pack(pattern: str, *, kind: str = "regex") -> str:
    field = f"pattern: {json.dumps(pattern)}" if kind == "regex" else f"patterns: [{json.dumps(pattern)}]"
    return (f"pack: lazy\nversion: 1\nrules:\n  - id: lazy-rule\n    kind: {kind}\n    severity: low\n"
            f"    message: m\n    {field}\n    examples: {{match: [x], no_match: [y]}}\n")


@pytest.mark.parametrize(("kind", "pattern", "detail"), [
    ("regex", "tok-(", "invalid regular expression"),
    ("regex", "(?<=a+)tok", "invalid regular expression"),  # an error of re's compiler, not of its parser
    ("regex", "x*", "matches the empty string"),
    ("phrase", "[unclosed", "invalid regular expression"),
    ("phrase", "(?i)late", "invalid regular expression"),  # valid alone, not inside the combined pattern
])
def test_a_bad_pattern_is_an_error_when_its_pack_loads_every_time(kind: str, pattern: str, detail: str) -> None:
    pack = load_pack_text(_pack(pattern, kind=kind), "<lazy>")
    for _ in range(2):  # a failure is never recorded as checked
        with pytest.raises(RuleError, match=detail):
            RuleSet.compile([pack], kinds=BUILTIN)


def test_a_record_claiming_a_bad_rule_was_checked_moves_the_error_to_the_first_scan(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whoever writes the record (it is a file in the user's state folder) cannot make a bad rule match nothing:
    the rule is checked in full at first use and the scan raises what loading would have."""
    from verigate.rules import _checked
    from verigate.rules._cache import write_entry

    source = _pack("forged-(")
    pack = load_pack_text(source, "<forged>")
    with pytest.raises(RuleError) as at_load:
        RuleSet.compile([pack], kinds=BUILTIN)
    rule_digest = _checked.digest("regex", pack.rules[0].fields)
    assert rule_digest is not None
    monkeypatch.setenv("VERIGATE_STATE_HOME", str(tmp_path / "state"))  # a folder no record was read from yet
    write_entry(_checked._key(), [rule_digest], folder=_checked.FOLDER)
    ruleset = RuleSet.compile([pack], kinds=BUILTIN)
    for _ in range(2):
        with pytest.raises(RuleError) as at_scan:
            ruleset.scan("forged-( anything")
        assert str(at_scan.value) == str(at_load.value)


def _child(code: str, state: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "VERIGATE_STATE_HOME": str(state)}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)


_COUNT_COMPILED = ("import json; from verigate.rules import RuleSet, shipped_packs; "
                   "rs = RuleSet.compile(shipped_packs()); "
                   "print(json.dumps(sum(item.matcher.compiled for item in rs.compiled)))")


def test_a_later_process_takes_checked_rules_from_the_record_and_a_damaged_record_from_nobody(tmp_path: Path) -> None:
    state = tmp_path / "state"
    first = _child(_COUNT_COMPILED, state)
    assert first.returncode == 0, first.stderr
    total = len(EAGER.compiled)
    assert json.loads(first.stdout) == total  # nothing recorded yet: every rule is checked by compiling it
    second = _child(_COUNT_COMPILED, state)
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout) == 0
    env_folder = cache_folder({"VERIGATE_STATE_HOME": str(state)}, name="rule-packs/checks")
    (entry,) = Path(env_folder).glob("*.json")
    for damage in (b"not json", entry.read_bytes().replace(b'"data":["', b'"data":["0')):
        entry.write_bytes(damage)
        damaged = _child(_COUNT_COMPILED, state)
        assert damaged.returncode == 0, damaged.stderr
        assert json.loads(damaged.stdout) == total
