"""The built-in structural checks: empty_turn (fixable) and model_action_required (unfixable, EN + JA)."""

from __future__ import annotations

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verigate import Candidate, Termination, ToolObservation
from verigate.gate import asks_user_to_act, check_candidate
from verigate.gate._structural import _hand_backs
from verigate.rules import TextView
from verigate.rules._kinds import PhraseMatcher

HAND_BACKS = [
    "Please run `pytest -q` and paste the output here.",
    "Could you run the migration and let me know if it succeeds?",
    "You'll need to run the deploy script yourself.",
    "Run it yourself and tell me what happens.",
    "I can't execute commands in this environment, so please run `make test`.",
    "I am unable to access the database; you will need to check the table.",
    "Once you've run the build, let me know the result.",
    "Share the output with me and I will continue.",
    "Let me know what output you get.",
    "ご自身で以下のコマンドを実行してください。",
    "手動で設定を確認してください。",
    "このスクリプトを実行して結果を教えてください。",
    "エラーログを貼り付けてください。",
    "私はこの環境でコマンドを実行できないため、代わりにお願いします。",
]
ANSWERS = [
    "I ran `pytest -q`: 42 passed. The fix is in src/app.py.",
    "To install it, run `pip install verigate`.",  # the user asked how: instructions are the answer
    "The tests pass. You can now deploy when you are ready.",
    "Run `make docs` to rebuild the documentation; I already rebuilt it once and it succeeded.",
    "I checked the logs myself and found the cause: a missing index.",
    "The output of the command was: OK.",
    "テストを実行し、すべて成功しました。",
    "インストールするには `pip install verigate` を実行します。",
    "ログを確認したところ、原因はインデックスの欠落でした。",
    "",
]


@pytest.mark.parametrize("text", HAND_BACKS)
def test_hand_backs_are_model_action_required(text: str) -> None:
    assert asks_user_to_act(text)
    findings = check_candidate(Candidate("do it", text), Termination("natural"))
    assert [(f.code, f.fixable) for f in findings] == [("model_action_required", False)]


@pytest.mark.parametrize("text", ANSWERS)
def test_answers_are_not_model_action_required(text: str) -> None:
    assert not asks_user_to_act(text)


def test_empty_turn_is_fixable() -> None:
    findings = check_candidate(Candidate("do it", "  \n"), Termination("natural"))
    assert [(f.code, f.fixable) for f in findings] == [("empty_turn", True)]


def test_actionable_partial_with_successful_tool_work_is_not_empty() -> None:
    work = (ToolObservation("Edit", {"path": "a.py"}, "written", ok=True),)
    assert check_candidate(Candidate("do it", "", tool_calls=work), Termination("actionable_partial")) == []


def test_actionable_partial_with_only_failed_tool_work_is_empty() -> None:
    failed = (ToolObservation("Bash", {"cmd": "make"}, "error 2", ok=False), ToolObservation("Read", {}, "", None))
    findings = check_candidate(Candidate("do it", "", tool_calls=failed), Termination("actionable_partial"))
    assert [f.code for f in findings] == ["empty_turn"]


def test_natural_with_tool_work_but_no_text_is_still_empty() -> None:
    work = (ToolObservation("Edit", {}, "written", ok=True),)
    assert [f.code for f in check_candidate(Candidate("do it", "", tool_calls=work), Termination("natural"))] == [
        "empty_turn"
    ]


def test_the_phrases_live_in_the_structural_rule_pack_and_its_examples_pass() -> None:
    from verigate.rules import PhraseKind, load_pack, run_examples

    pack = load_pack("structural")
    assert all(rule.metadata == {"structural": "model_action_required"} for rule in pack.rules)
    assert run_examples([pack], kinds={"phrase": PhraseKind()}) == ()


def test_an_answer_cannot_opt_itself_out_with_an_allow_marker() -> None:
    assert asks_user_to_act("Please run `make` and paste the output.  # verigate: allow")


#: words of the structural patterns, with look-alikes folding keeps or makes (dotless i, Kelvin sign, full width)
_PIECES = [*HAND_BACKS, *ANSWERS, "please ", "could you ", "can you ", "would you ", "run ", "execute ",
           "try running ", "and ", "then ", "paste", "share", "send", "post", "tell", "show", "report",
           "let me know", "yourself", "it ", "the build ", "you'll need to ", "you will have to ", "i ", "I ",
           "can't ", "can\u2019t ", "cannot ", "am unable to ", "'m unable to ", "am not able to ",
           "don't have access ", "check ", "test ", ", ", "; ", ". ", "so ", "you can", "you should", "me ", "the ",
           "its ", "their ", "output", "result", "error", "logs", "once you've ", "once you have ", "tried ",
           "what ", "\u0131", "\u0130", "\u212a", "\u017f", "\uff30\uff21\uff33\uff34\uff25",
           "\uff39\uff2f\uff35\uff32\uff33\uff25\uff2c\uff26", "\u3000", "\xa0", "\n", "\t", "?", "ご自身で",
           "自分で", "手動で", "実行", "確認して", "ください", "お願い", "結果", "出力", "エラー", "\uff74\uff97\uff70",
           "ログ", "を", "教えて", "貼り付けて", "私は", "わたしには", "できない", "ため", "ので", "。",
           # one phrase per alternative of every pattern, so that each keyword is needed by some text
           "paste ", "share ", "send ", "post ", "send me the logs", "post their log", "share its results",
           "paste the error", "let me know what result", "could you run x then tell", "can you execute y and post",
           "would you try running z and share", "please run it and report", "and let me know",
           "i cannot test it, so please", "i can't run x; you should", "i am not able to check. you can",
           "i don't have the ability to run it, you will need to", "i'm unable to access it; please",
           "ご自分で", "手動で確認を", "試してお願い", "実行して結果を見せて", "試し出力を送って",
           "ログを共有してください",
           "わたしにはアクセスすることができないので", "私には確認できないため"]


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=10).map("".join))
def test_the_keywords_of_the_structural_pack_skip_only_texts_without_a_match(text: str) -> None:
    """Each rule's keywords are a prefilter, not a change: the rule with them finds what it finds without them."""
    view = TextView(text)
    for item in _hand_backs().compiled:
        matcher = item.matcher
        assert isinstance(matcher, PhraseMatcher) and matcher.keywords, item.rule.id
        unfiltered = attrs.evolve(matcher, keywords=())
        assert list(matcher.find(view)) == list(unfiltered.find(view)), (item.rule.id, text)
