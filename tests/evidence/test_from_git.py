"""``evidence produce --from-git``: the name from the origin URL, with the repository folder read as hostile input
(a FIFO, an endless file, bytes that are not UTF-8 never hang or crash it), across the layouts real git makes."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from evidence_helpers import produce_args, run_cli

from verigate._errors import InputError
from verigate.evidence import repository_name

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git binary to make the layouts")


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"})


def _repo(tmp_path: Path, url: str = "https://github.com/owner/plangate.git") -> Path:
    repo = tmp_path / "clone"
    repo.mkdir()
    _git("init", "-q", cwd=repo)
    _git("remote", "add", "origin", url, cwd=repo)
    return repo


def _refusal(repo: Path) -> str:
    with pytest.raises(InputError) as caught:
        repository_name(repo)
    assert caught.value.field == "--from-git"
    return str(caught.value)


@needs_git
def test_the_layouts_git_makes(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    assert repository_name(repo) == "plangate"
    (repo / "README").write_text("x", encoding="utf-8")
    _git("-c", "user.name=t", "-c", "user.email=t@example.invalid", "add", "README", cwd=repo)
    _git("-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "one", cwd=repo)
    # a linked worktree: .git is a file naming its git folder, whose commondir names the shared one
    _git("worktree", "add", "-q", str(tmp_path / "linked"), cwd=repo)
    assert (tmp_path / "linked" / ".git").is_file()
    assert repository_name(tmp_path / "linked") == "plangate"
    bare = tmp_path / "bare.git"
    _git("clone", "-q", "--bare", str(repo), str(bare), cwd=tmp_path)
    _git("remote", "set-url", "origin", "git@github.com:owner/other-name.git", cwd=bare)
    assert repository_name(bare) == "other-name"


@needs_git
def test_a_hostile_config_is_refused_never_waited_on(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    config = repo / ".git" / "config"
    config.unlink()
    os.mkfifo(config)  # dulwich's own reader would wait here for a writer, for ever
    assert "FIFO" in _refusal(repo)
    config.unlink()
    config.symlink_to("/dev/zero")  # endless
    assert "not a regular file" in _refusal(repo)
    config.unlink()
    config.write_bytes(b"[core]\n" + b"#" * (2 * 1024 * 1024) + b"\n")  # past the bound, never parsed
    assert "past the bound" in _refusal(repo)
    # the command as a user runs it: a clear error, exit 2, no wait
    config.unlink()
    os.mkfifo(config)
    done = run_cli(*produce_args(repo, repository=None), "--from-git", str(repo))
    assert done.returncode == 2 and "FIFO" in done.stderr and "Traceback" not in done.stderr


@needs_git
def test_bytes_that_are_no_url_are_refused(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    config = repo / ".git" / "config"
    config.write_bytes(b'[remote "origin"]\n\turl = https://example.invalid/\xff\xfe.git\n')
    assert "not UTF-8" in _refusal(repo)
    config.write_bytes(b'[remote "origin"\n')
    assert "cannot be parsed" in _refusal(repo)
    config.write_bytes(b"[core]\n\tbare = false\n")
    assert "no remote 'origin'" in _refusal(repo)
    config.write_bytes(b'[remote "origin"]\n\turl = https://example.invalid/owner/.git\n')
    assert "cannot take a repository name" in _refusal(repo)


@needs_git
def test_includes_are_not_followed(tmp_path: Path) -> None:
    """The origin url must be in the repository's own config (where git clone writes it): an include could name
    any file (a FIFO, /dev/zero, another user's), so none is opened."""
    repo = _repo(tmp_path)
    elsewhere = tmp_path / "included"
    elsewhere.write_text('[remote "origin"]\n\turl = https://example.invalid/owner/included.git\n', encoding="utf-8")
    config = repo / ".git" / "config"
    config.write_text(f"[include]\n\tpath = {elsewhere}\n", encoding="utf-8")
    assert "no remote 'origin'" in _refusal(repo)
    os.mkfifo(tmp_path / "fifo")
    config.write_text(f'[include]\n\tpath = {tmp_path / "fifo"}\n[remote "origin"]\n\turl = x/plangate\n',
                      encoding="utf-8")
    assert repository_name(repo) == "plangate"


def test_pointer_files_are_bounded_and_checked(tmp_path: Path) -> None:
    repo = tmp_path / "work"
    repo.mkdir()
    assert "is not a git repository" in _refusal(repo)
    dot_git = repo / ".git"
    dot_git.write_bytes(b"gitdir: \xff\n")
    assert "not UTF-8" in _refusal(repo)
    dot_git.write_text("not a pointer\n", encoding="utf-8")
    assert "does not name a git folder" in _refusal(repo)
    dot_git.write_text("gitdir: missing-folder\n", encoding="utf-8")
    assert "does not exist" in _refusal(repo)
    dot_git.unlink()
    os.mkfifo(dot_git)
    assert "FIFO" in _refusal(repo)


def test_a_pointer_to_a_folder_that_is_no_git_folder_is_never_read(tmp_path: Path) -> None:
    # git's own test of a git folder (HEAD, objects, refs) before its config is read: a .git naming ~/.ssh must not
    # have ~/.ssh/config parsed, or any of its lines repeated in the error
    secrets = tmp_path / "dot-ssh"
    secrets.mkdir()
    (secrets / "config").write_text("Host bastion.internal\n  User deploy\n", encoding="utf-8")
    repo = tmp_path / "work"
    repo.mkdir()
    (repo / ".git").write_text(f"gitdir: {secrets}\n", encoding="utf-8")
    message = _refusal(repo)
    assert "not a git repository" in message and "bastion" not in message
    # a name the file system refuses (ENAMETOOLONG, not ENOENT) is an answer, not an internal error
    (repo / ".git").unlink()
    (repo / ".git").symlink_to("x" * 300)
    assert "--from-git" in _refusal(repo)


@needs_git
@pytest.mark.parametrize("url", ["https://example.invalid/owner/re\u202epo.git", "x:owner/name\nmore",
                                 "https://example.invalid/" + "n" * 101, "https://example.invalid/owner/.."])
def test_only_a_plain_repository_name_reaches_the_ev(tmp_path: Path, url: str) -> None:
    repo = _repo(tmp_path)
    quoted = url.replace("\\", "\\\\").replace("\n", "\\n")
    (repo / ".git" / "config").write_text(f'[remote "origin"]\n\turl = "{quoted}"\n', encoding="utf-8")
    assert "cannot take a repository name" in _refusal(repo)
