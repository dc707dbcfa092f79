"""Real git repositories for the verigate-git tests, built with dulwich in a temporary folder."""

from __future__ import annotations

from pathlib import Path

from dulwich import porcelain
from dulwich.repo import Repo

IDENTITY = b"Test Agent <agent@example.invalid>"


def make_repo(root: Path, files: dict[str, str] | None = None) -> Repo:
    """A repository at ``root``: one commit holding ``files`` (default: README.md and src/app.py), then one
    adding LICENSE, so that HEAD itself touches none of the default files."""
    root.mkdir(parents=True, exist_ok=True)
    repo = Repo.init(str(root))
    commit_files(repo, files or {"README.md": "# demo\n", "src/app.py": "print('hello')\n"}, "initial commit")
    commit_files(repo, {"LICENSE": "MIT\n"}, "add licence")
    return repo


def write(repo: Repo, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = Path(repo.path) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def commit_files(repo: Repo, files: dict[str, str], message: str) -> str:
    """Write, stage and commit ``files``; the new HEAD as hex."""
    write(repo, files)
    porcelain.add(repo, [str(Path(repo.path) / name) for name in files])
    sha = porcelain.commit(repo, message=message.encode(), author=IDENTITY, committer=IDENTITY)
    return sha.decode() if isinstance(sha, bytes) else str(sha)


def set_remote_head(repo: Repo, remote_branch: str, sha: str) -> None:
    """What ``git push`` leaves behind locally: the remote-tracking ref at the pushed commit."""
    repo.refs[f"refs/remotes/{remote_branch}".encode()] = sha.encode()
