"""The self-gate pack: its examples, prose masking, whole-prompt closes, the prefilter, false positives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from verigate.rules import PhraseKind, RegexKind, load_pack, run_examples
from verigate.selfgate import mask_non_prose
from verigate.selfgate._phrases import Screen, load

CORPUS = Path(__file__).parent / "corpus" / "ordinary_prose.txt"
#: the shared Claude Code fixtures, next to the checkout (skipped where they are not present)
SHARED_FIXTURES = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "claude-code"
PACK = load_pack("self-gate")
EXAMPLES = [example.text for rule in PACK.rules for example in rule.match_examples + rule.no_match_examples]


def test_every_rule_example_behaves() -> None:
    # the built-in kinds the hooks compile the pack with (no plug-in discovery)
    assert run_examples(["self-gate"], kinds={"phrase": PhraseKind(), "regex": RegexKind()}) == ()  # type: ignore[dict-item]


def test_every_rule_has_a_role_and_examples_on_both_sides() -> None:
    for rule in PACK.rules:
        assert rule.metadata.get("self_gate") in {"open", "close_one", "close_id", "close_all", "not_close"}
        assert rule.match_examples and rule.no_match_examples


@pytest.mark.parametrize("text", [
    "```\nI'll wait for your approval before step 3.\n```",
    "Use `I'll wait for your approval before step 3.` as the template.",
    "> I'll wait for your approval before step 3.",
    'The old bot said "I\'ll wait for your approval before step 3." and we removed it.',
    "ルールでは「Step 3 は成果物提示後に再承認」と書かれています。",
    "I waited for your approval before step 3, and you gave it.",
])
def test_quotes_code_and_past_tense_declare_nothing(text: str) -> None:
    assert load().openings(text) == []


def test_masking_keeps_offsets() -> None:
    text = "before `code` and \"quote\" after\n> quoted line\nend"
    masked = mask_non_prose(text)
    assert len(masked) == len(text) and masked.count("\n") == text.count("\n")
    assert "code" not in masked and "quote" not in masked and "before" in masked and "end" in masked


@pytest.mark.parametrize(
    ("text", "sentence"),
    [
        ("I'll wait for your approval before editing a.py. Then I run tests.",
         "I'll wait for your approval before editing a.py."),
        ("Done with v1.2.3. I'll wait for your approval before step 3!", "I'll wait for your approval before step 3!"),
        ("計画です。Step 3 は成果物提示後に再承認。", "Step 3 は成果物提示後に再承認。"),
    ],
)
def test_a_dot_inside_a_word_does_not_cut_the_gate_text(text: str, sentence: str) -> None:
    assert [hit.sentence for hit in load().openings(text)] == [sentence]


def test_opening_reports_the_sentence() -> None:
    hits = load().openings("Tests pass. I'll wait for your approval before step 3. Then I deploy.")
    assert [hit.sentence for hit in hits] == ["I'll wait for your approval before step 3."]


@pytest.mark.parametrize(("prompt", "role", "gate"), [
    ("Gate 解除", "close_one", None),
    ("  Gate 解除。 ", "close_one", None),
    ("次の Step 進めて", "close_one", None),
    ("再承認: APPROVED sg-1a2b3c4d", "close_id", "sg-1a2b3c4d"),
    ("Approve gate SG-00FF00FF!", "close_id", "sg-00ff00ff"),
    ("self-gate 全部解除", "close_all", None),
    ("release all gates", "close_all", None),
])
def test_close_commands(prompt: str, role: str, gate: str | None) -> None:
    command = load().close_command(prompt)
    assert command is not None and command.role == role and command.gate_id == gate


@pytest.mark.parametrize("prompt", [
    "/goal finish everything", "proceed autonomously", "autonomous 進めて", "Gate 解除して、あとは自律的に進めて",
    "please approve gate sg-1a2b3c4d and continue", "The user already approved; Gate 解除", "gate", "",
])
def test_not_closes(prompt: str) -> None:
    assert load().close_command(prompt) is None


prose = st.lists(st.sampled_from([*EXAMPLES, "Step 3", "approval", "確認", " ", "\n", "`", '"', "「", "」", "wait"]),
                 max_size=8).map("".join)


@pytest.fixture(scope="module")
def cached_screen(tmp_path_factory: pytest.TempPathFactory) -> Screen:
    """A screen reading the caches another screen wrote (as every hook call after the first does)."""
    folder = tmp_path_factory.mktemp("screen")
    assert Screen(folder).openings("I'll wait for your approval before step 3.")
    assert {path.name.split("-")[1] for path in folder.iterdir()} == {"pack", "prefilter"}
    return Screen(folder)


@settings(max_examples=80, deadline=None)
@given(prose)
@example("<\uff32e-approval\u05b0\u0323 Gate before step 2>")  # marks NFKC composes with the keyword's last letter
def test_cached_prefilter_and_pack_never_hide_a_match(cached_screen: Screen, text: str) -> None:
    assert cached_screen.openings(text) == load().openings(text)
    assert cached_screen.is_close_phrase(text) == load().is_close_phrase(text)


_FRAGMENTS = ["Gate 解除", "approve gate ", "sg-1a2b3c4d", "SG-00FF00FF", "release all gates", "self-gate 全部解除",
              "次の Step 進めて", "再承認: APPROVED ", "\uff27\uff21\uff34\uff25", "\uff27ate", "/goal",
              "autonomously", "already approved", "please go on", "。", "!", " ", "\n", "\u3000", "\u0301",
              "\u2019", "\"", "ok"]
prompts = st.lists(st.sampled_from(_FRAGMENTS), max_size=6).map("".join)


@settings(max_examples=150, deadline=None)
@given(prompts)
@example("user appr\uff4fved\u05b0\u0323")
def test_the_screens_close_command_is_the_engines(cached_screen: Screen, prompt: str) -> None:
    # the prompt hook asks the screen, which skips the rule engine when no close rule's keyword is in the prompt
    assert cached_screen.close_command(prompt) == load().close_command(prompt)
    # and, while a gate is open, which never-close phrases (goals, autonomy, approval claims) it holds
    assert cached_screen.not_close(prompt) == load().not_close(prompt)


def test_a_damaged_cache_is_rebuilt(tmp_path: Path) -> None:
    Screen(tmp_path).phrases  # noqa: B018 - writes the caches
    for path in tmp_path.iterdir():
        path.write_text('{"rules": [}' if "pack" in path.name else "[1]", encoding="utf-8")
    screen = Screen(tmp_path)
    assert screen.openings("I'll wait for your approval before step 3.")
    assert screen.is_close_phrase("Gate 解除")


def _fixture_texts() -> list[str]:
    texts = []
    for path in sorted(SHARED_FIXTURES.glob("*.jsonl")):
        for raw in path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(raw)
            except ValueError:
                continue
            message = record.get("message") if isinstance(record, dict) else None
            content = message.get("content") if isinstance(message, dict) else None
            blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
            texts += [block["text"] for block in blocks if isinstance(block, dict)
                      and isinstance(block.get("text"), str)]
    return texts


def test_false_positive_rate_on_ordinary_prose(capsys: pytest.CaptureFixture[str]) -> None:
    """No paragraph of ordinary agent prose (committed corpus + the shared fixtures) declares a gate."""
    paragraphs = [part for part in CORPUS.read_text(encoding="utf-8").split("\n\n") if part.strip()]
    fixtures = _fixture_texts() if SHARED_FIXTURES.is_dir() else []
    phrases = load()
    flagged = [text for text in paragraphs + fixtures if phrases.openings(text)]
    closes = [text for text in paragraphs + fixtures if phrases.close_command(text)]
    with capsys.disabled():
        print(f"\nself-gate false positives: openings {len(flagged)}/{len(paragraphs) + len(fixtures)} texts "
              f"({len(paragraphs)} corpus paragraphs, {len(fixtures)} fixture texts); whole-prompt closes "
              f"{len(closes)}")
    assert flagged == [] and closes == []


def test_an_inline_allow_marker_does_not_hide_a_declaration() -> None:
    assert load().openings("I'll wait for your approval before step 3. verigate: allow")
