"""verigate-git against real repositories: the claim pack, each claim true and false, baselines, loading."""

from __future__ import annotations

from pathlib import Path

import pytest
from dulwich.repo import Repo
from git_helpers import commit_files, make_repo, set_remote_head, write
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from verigate_git import Claims, GitClaims, default_pack

from verigate import Candidate, RuleError, StageContext, Strengthen, ToolObservation
from verigate._plugins import create_manager, handlers
from verigate.rules import PhraseKind, RegexKind, run_examples

PACK = default_pack()
EXAMPLE_TEXTS = [example.text for rule in PACK.pack.rules for example in rule.match_examples + rule.no_match_examples]
KNOWN_CODES = {
    "claimed_commit_missing",
    "claimed_push_missing",
    "claimed_file_missing",
    "claimed_file_unchanged",
    "no_changes_made",
}


def misses(plugin: GitClaims, text: str, *, request: str = "fix the bug", attempt: int = 0,
           tool_calls: tuple[ToolObservation, ...] = (), session: str = "s1",
           context: StageContext | None = None) -> tuple[str, ...]:
    decision = plugin.verigate_pre_verify(
        Candidate(request, text, tool_calls=tool_calls, session_id=session, attempt=attempt), context
    )
    assert decision is None or isinstance(decision, Strengthen)
    return () if decision is None else decision.additional_misses


def edit(path: str) -> ToolObservation:
    return ToolObservation("Edit", {"file_path": path, "old_string": "a", "new_string": "b"}, "ok", True)


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return make_repo(tmp_path / "checkout")


@pytest.fixture
def plugin(repo: Repo) -> GitClaims:
    return GitClaims(repo.path)


# ------------------------------------------------------------------------------------------- the rule pack

def test_every_pack_example_runs_in_the_rule_engine() -> None:
    assert run_examples([PACK.pack], kinds={"phrase": PhraseKind(), "regex": RegexKind()}) == ()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I did not commit anything, but I pushed the branch.", Claims(push=True)),
        ("You should update README.md. I updated docs/guide.md.", Claims(changed=("docs/guide.md",))),
        ("I never created src/cli.py", Claims()),
        ("Created tests/test_cli.py and `docs/cli.md`. I updated README.md, see https://x.io/a.md",
         Claims(created=("tests/test_cli.py", "docs/cli.md"), changed=("README.md",))),
        ("The file setup.cfg has been updated.", Claims(changed=("setup.cfg",))),
        ("Committed as 1a2b3c4. verigate: allow", Claims()),
    ],
)
def test_claims_negations_and_paths(text: str, expected: Claims) -> None:
    assert PACK.scan(text) == expected


def test_pack_rules_must_say_what_they_mean(tmp_path: Path) -> None:
    pack = tmp_path / "mine.yaml"
    pack.write_text(
        "pack: mine\nversion: 1\nrules:\n"
        "  - id: mine.deploy\n    kind: phrase\n    severity: info\n    message: m\n"
        "    metadata: {claim: deploy}\n    phrases: [deployed]\n"
        "    examples: {match: [deployed], no_match: [nothing]}\n",
        encoding="utf-8",
    )
    with pytest.raises(RuleError) as caught:
        default_pack(pack)
    assert caught.value.source == str(pack)
    assert caught.value.line is not None
    assert "metadata needs exactly one of claim" in caught.value.message


def test_invalid_pack_is_a_rule_error_with_a_line(tmp_path: Path) -> None:
    pack = tmp_path / "broken.yaml"
    pack.write_text("pack: broken\nversion: 1\nrules:\n  - id: Bad Id\n    kind: phrase\n", encoding="utf-8")
    with pytest.raises(RuleError) as caught:
        default_pack(pack)
    assert caught.value.source == str(pack)


# ------------------------------------------------------------------------------------------- commits


def test_commit_claim_true_after_an_earlier_request(repo: Repo, plugin: GitClaims) -> None:
    assert misses(plugin, "I looked at the code; it is fine.", request="review") == ()
    misses(plugin, "Nothing to change.", request="review")  # claims nothing: no baseline needed
    plugin.verigate_pre_verify(Candidate("status?", "I updated README.md.", session_id="s1"))
    commit_files(repo, {"src/app.py": "print('fixed')\n"}, "fix")
    assert misses(plugin, "I committed the fix.", request="fix the bug") == ()


def test_commit_claim_false_when_head_did_not_move(repo: Repo, plugin: GitClaims) -> None:
    commit_files(repo, {"README.md": "# edited\n"}, "readme")
    misses(plugin, "I updated README.md and committed it.", request="edit the readme")
    assert misses(plugin, "I committed the change.", request="now commit") == ("claimed_commit_missing",
                                                                               "no_changes_made")


def test_first_attempt_commit_evidenced_by_git_commit_output(repo: Repo, plugin: GitClaims) -> None:
    sha = commit_files(repo, {"src/app.py": "print('fixed')\n"}, "fix")
    output = ToolObservation("Bash", {"command": "git commit -am fix"}, f"[main {sha[:7]}] fix\n 1 file changed", True)
    assert misses(plugin, "I committed the fix.", tool_calls=(output,)) == ()


def test_first_attempt_commit_evidenced_by_edited_file_in_head(repo: Repo, plugin: GitClaims) -> None:
    commit_files(repo, {"src/app.py": "print('fixed')\n"}, "fix")
    assert misses(plugin, "I committed the fix.", tool_calls=(edit("src/app.py"),)) == ()


def test_first_attempt_commit_claim_false_with_uncommitted_edit(repo: Repo, plugin: GitClaims) -> None:
    write(repo, {"src/app.py": "print('fixed')\n"})
    found = misses(plugin, "I committed the fix.", tool_calls=(edit(str(Path(repo.path) / "src/app.py")),))
    assert found == ("claimed_commit_missing",)


def test_printed_commit_that_is_not_in_the_repository_is_no_evidence(repo: Repo, plugin: GitClaims) -> None:
    output = ToolObservation("Bash", {"command": "git commit"}, "[main 0badc0d] fix", True)
    assert misses(plugin, "I committed the fix.", tool_calls=(output,)) == ("claimed_commit_missing",
                                                                           "no_changes_made")


def test_revision_is_checked_against_the_first_attempt(repo: Repo, plugin: GitClaims) -> None:
    write(repo, {"src/app.py": "print('fixed')\n"})
    assert misses(plugin, "I committed the fix.", attempt=0) == ("claimed_commit_missing",)
    assert misses(plugin, "I committed the fix.", attempt=0) == ("claimed_commit_missing",)  # same attempt again
    assert misses(plugin, "Now I committed the fix.", attempt=1) == ("claimed_commit_missing",)
    commit_files(repo, {"src/app.py": "print('fixed')\n"}, "fix")
    assert misses(plugin, "I committed the fix.", attempt=2) == ()


def test_sessions_have_separate_baselines(repo: Repo, plugin: GitClaims) -> None:
    misses(plugin, "Looked around; nothing done.", session="a", request="r")
    misses(plugin, "I updated README.md.", session="a", request="r")
    commit_files(repo, {"README.md": "# new\n"}, "readme")
    assert misses(plugin, "I committed it.", session="a", request="commit") == ()
    folder = Path(repo.path) / ".verigate" / "git-claims"
    assert len(list(folder.glob("*.json"))) == 1
    assert (folder / ".gitignore").read_text(encoding="utf-8") == "*\n"  # local state is never committed


# ------------------------------------------------------------------------------------------- push


def test_push_claim(repo: Repo, plugin: GitClaims) -> None:
    assert misses(plugin, "I pushed the branch to origin.") == ("claimed_push_missing",)
    set_remote_head(repo, "origin/main", repo.head().decode())
    assert misses(plugin, "I pushed the branch to origin.") == ()
    commit_files(repo, {"README.md": "# later\n"}, "later")
    assert misses(plugin, "I pushed the branch to origin.") == ("claimed_push_missing",)


# ------------------------------------------------------------------------------------------- files


def test_created_file_exists(repo: Repo, plugin: GitClaims) -> None:
    write(repo, {"src/cli.py": "main()\n"})
    assert misses(plugin, "I created `src/cli.py` with the entry point.") == ()
    assert misses(plugin, "I created cli.py.") == ()  # a unique suffix of a pending path


def test_created_file_missing(plugin: GitClaims) -> None:
    assert misses(plugin, "I created `src/cli.py` with the entry point.") == ("claimed_file_missing",
                                                                             "no_changes_made")


def test_changed_file_must_differ(repo: Repo, plugin: GitClaims) -> None:
    assert misses(plugin, "I updated README.md to document the flag.") == ("claimed_file_unchanged",
                                                                          "no_changes_made")
    write(repo, {"README.md": "# demo\n--flag documented\n"})
    assert misses(plugin, "I updated README.md to document the flag.") == ()


def test_changed_file_committed_since_the_baseline(repo: Repo, plugin: GitClaims) -> None:
    misses(plugin, "I updated README.md.", request="earlier")
    commit_files(repo, {"src/app.py": "print('v2')\n"}, "v2")
    assert misses(plugin, "I updated src/app.py and committed it.", request="later") == ()
    assert misses(plugin, "I updated README.md and committed it.", request="later") == ("claimed_file_unchanged",)


def test_paths_outside_the_repository_are_not_checked(plugin: GitClaims, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere" / "notes.md"
    assert misses(plugin, f"I created {outside} for you.") == ()


def test_verigate_folder_is_not_a_change(repo: Repo, plugin: GitClaims) -> None:
    write(repo, {".verigate/verigate.db": "x"})
    assert "no_changes_made" in misses(plugin, "I updated README.md.")


# ------------------------------------------------------------------------------------------- where the repository is


def test_no_repository_configured_adds_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("VERIGATE_GIT_REPO", "CLAUDE_PROJECT_DIR"):
        monkeypatch.delenv(name, raising=False)
    assert misses(GitClaims(), "I committed everything.") == ()
    assert misses(GitClaims(), "I committed everything.", context=StageContext()) == ()


def test_repository_from_the_stage_context(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VERIGATE_GIT_REPO", raising=False)
    context = StageContext(project_dir=str(Path(repo.path) / "src"))
    assert misses(GitClaims(), "I created `src/cli.py`.", context=context) == ("claimed_file_missing",
                                                                               "no_changes_made")
    assert misses(GitClaims(), "I updated app.py.", context=context) == ("claimed_file_unchanged", "no_changes_made")


def test_the_context_wins_over_an_inherited_claude_project_dir(repo: Repo, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # a Codex Stop hook under a Claude Code session: the context names Codex's project, the variable Claude's
    monkeypatch.delenv("VERIGATE_GIT_REPO", raising=False)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(tmp_path / "someone-elses"))
    context = StageContext(project_dir=repo.path, host="codex")
    assert misses(GitClaims(), "I created `src/cli.py`.", context=context) == ("claimed_file_missing",
                                                                               "no_changes_made")


def test_repository_from_the_environment(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VERIGATE_GIT_REPO", raising=False)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(Path(repo.path) / "src"))
    assert misses(GitClaims(), "I created `src/cli.py`.") == ("claimed_file_missing", "no_changes_made")
    monkeypatch.setenv("VERIGATE_GIT_REPO", repo.path)  # the pin wins over the context's project
    assert misses(GitClaims(), "I updated app.py.", context=StageContext(project_dir="/nowhere")) == (
        "claimed_file_unchanged", "no_changes_made")


def test_explicit_folder_outside_a_repository_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="not inside a git repository"):
        GitClaims(tmp_path / "plain").verigate_pre_verify(Candidate("r", "I committed it.", session_id="s"))


def test_corrupt_state_fails_loudly(repo: Repo, plugin: GitClaims) -> None:
    misses(plugin, "I updated README.md.")
    (state,) = (Path(repo.path) / ".verigate" / "git-claims").glob("*.json")
    state.write_text("{not json", encoding="utf-8")
    with pytest.raises(Exception, match="not strict JSON"):
        misses(plugin, "I updated README.md.")


def test_registered_through_the_entry_point() -> None:
    manager = create_manager()
    stage = handlers(manager, "verigate_pre_verify")
    (git,) = [handler for handler in stage if handler.name == "verigate-git"]
    assert git.priority == 50
    assert manager.distributions["verigate-git"][0] == "verigate-agents-git"


# ------------------------------------------------------------------------------------------- properties


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=300) | st.sampled_from(EXAMPLE_TEXTS).map(lambda s: s + " x/y.py"))
def test_only_known_codes_and_never_an_error(plugin: GitClaims, text: str) -> None:
    found = misses(plugin, text)
    assert set(found) <= KNOWN_CODES
    assert len(found) == len(set(found)) or "claimed_file_missing" in found or "claimed_file_unchanged" in found


# ------------------------------------------------------------------------------------------- through the gate


def test_embedded_gate_revises_a_false_claim_and_completes_a_true_one(repo: Repo, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from judge_servers import verdict_json
    from verigate import Termination, TerminationReason
    from verigate.gate import Gate, finalize_and_return

    for name in ("VERIGATE_GIT_REPO", "CLAUDE_PROJECT_DIR"):
        monkeypatch.delenv(name, raising=False)
    gate = Gate.from_config({"budget": {"revise": 2}}, plugins=[GitClaims(repo.path)],
                            store=str(tmp_path / "gate.db"), judge_function=lambda request: verdict_json(passed=True))
    natural = Termination(TerminationReason.NATURAL)
    write(repo, {"src/app.py": "print('fixed')\n"})
    claim = Candidate("Fix app.py and commit it.", "I fixed src/app.py and committed the fix.",
                      tool_calls=(edit("src/app.py"),), session_id="embedded")
    with gate:
        first = finalize_and_return(gate, claim, natural)
        assert first.outcome == "revise"
        assert first.verdict is not None and "claimed_commit_missing" in first.verdict.rubric_misses
        assert "claimed_commit_missing" in first.follow_up
        commit_files(repo, {"src/app.py": "print('fixed')\n"}, "fix app")
        second = finalize_and_return(gate, claim, natural)
    assert second.outcome == "completed", second
