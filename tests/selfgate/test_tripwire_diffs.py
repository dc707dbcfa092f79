"""A diff-applying tool's input names the files the patch writes, in every header form ``git apply`` and GNU
``patch`` read. The oracle is the tools themselves: each patch below, applied in the project, changes a protected
file, and the check refuses it; the same forms naming an ordinary file pass."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from test_tripwire_attacks import Project, project

__all__ = ["project"]  # the fixture, imported to be used here

_OLD, _NEW = '-{"x": 1}\n', '+{"x": 2}\n'
_HUNK = "@@ -1 +1 @@\n" + _OLD + _NEW
_ISO = "2024-01-01 00:00:00.000000000 +0000"
#: (the applying tool and its options, the patch): each writes a protected file
WRITING = {
    "quoted": (["git", "apply"], 'diff --git "a/verigate.yaml" "b/verigate.yaml"\n--- "a/verigate.yaml"\n'
                                 '+++ "b/verigate.yaml"\n' + _HUNK),
    "quoted, octal escape": (["git", "apply"], '--- "a/veri\\147ate.yaml"\n+++ "b/veri\\147ate.yaml"\n' + _HUNK),
    "iso timestamp after a blank": (["patch", "-s", "-p0"], f"--- verigate.yaml {_ISO}\n+++ verigate.yaml {_ISO}\n"
                                                            + _HUNK),
    "ctime timestamp after a blank": (["patch", "-s", "-p0"], "--- verigate.yaml Thu Jan  1 00:00:00 1970\n"
                                                              "+++ verigate.yaml Thu Jan  1 00:00:00 1970\n" + _HUNK),
    "git, timestamp after a blank": (["git", "apply"], f"--- a/verigate.yaml {_ISO}\n+++ b/verigate.yaml {_ISO}\n"
                                                       + _HUNK),
    "rename": (["git", "apply"], "diff --git a/notes.txt b/.claude/settings.local.json\nsimilarity index 100%\n"
                                 "rename from notes.txt\nrename to .claude/settings.local.json\n"),
    "copy": (["git", "apply"], "diff --git a/notes.txt b/.claude/settings.local.json\nsimilarity index 100%\n"
                               "copy from notes.txt\ncopy to .claude/settings.local.json\n"),
    "new empty file, names only on the diff line": (["git", "apply"], "diff --git a/.claude/settings.local.json "
                                                    "b/.claude/settings.local.json\nnew file mode 100644\n"
                                                    "index 0000000..e69de29\n"),
    "mode change only": (["git", "apply"], "diff --git a/verigate.yaml b/verigate.yaml\nold mode 100644\n"
                                           "new mode 100755\n"),
    "subversion Index line": (["patch", "-s", "-p0"], "Index: verigate.yaml\n" + "=" * 67 + "\n--- \n+++ \n"
                                                      + _HUNK),
    # found by an attack review: git splits a diff line wherever its halves are equal without their first
    # components (any prefixes); both tools end a name at a NUL byte; a quoted name git cannot unquote is read as
    # written up to its tab; a time zone may hold a colon
    "mode change, any prefixes": (["git", "apply"], "diff --git x/verigate.yaml y/verigate.yaml\nold mode 100644\n"
                                                    "new mode 100755\n"),
    "mode change, one prefix twice": (["git", "apply"], "diff --git a/verigate.yaml a/verigate.yaml\n"
                                                        "old mode 100644\nnew mode 100755\n"),
    "new file, any prefixes": (["git", "apply"], "diff --git x/.claude/settings.local.json y/.claude/settings.local."
                                                 "json\nnew file mode 100644\nindex 0000000..e69de29\n"),
    "a NUL byte in the name": (["patch", "-s", "-p0"], "--- verigate.yaml\x00x\n+++ verigate.yaml\x00x\n" + _HUNK),
    "a quoted name git cannot unquote": (["git", "apply"], '--- "a/verigate.yaml\t\\q"\n+++ "b/verigate.yaml\t\\q"\n'
                                                           + _HUNK),
    "a time zone with a colon": (["git", "apply"], "--- /dev/null\n+++ b/.claude/settings x.json 2024-01-01 00:00:00 "
                                                   "+00:00\n@@ -0,0 +1 @@\n+{}\n"),
    # found by a second review: a quoted name decoding to a NUL; GNU patch renames what the diff line's first
    # split names, whatever the rename lines say; git strips -p1 before it cuts a name at a carriage return or a
    # timestamp of another shape
    "a quoted name holding an escaped NUL": (["git", "apply"], '--- "a/verigate.yaml\\000x"\n'
                                                               '+++ "b/verigate.yaml\\000x"\n' + _HUNK),
    "GNU patch renames by the diff line": (["patch", "-s", "-p1"], "diff --git a/notes.txt b/verigate.yaml\n"
                                                                   "similarity index 100%\nrename from x1\n"
                                                                   "rename to x2\n"),
    "a blank in the first component, a carriage return": (["git", "apply"], "--- x y/verigate.yaml\rjunk\n"
                                                                             "+++ x y/verigate.yaml\rjunk\n" + _HUNK),
    "a two-digit year": (["git", "apply"], "--- x y/verigate.yaml 24-01-01 10:00:00\n"
                                           "+++ x y/verigate.yaml 24-01-01 10:00:00\n" + _HUNK),
    "a date alone": (["git", "apply"], "--- x y/verigate.yaml 2024-01-01\n+++ x y/verigate.yaml 2024-01-01\n"
                                       + _HUNK),
}
#: the same forms naming ordinary files
ORDINARY = {
    "quoted": 'diff --git "a/src/app.py" "b/src/app.py"\n--- "a/src/app.py"\n+++ "b/src/app.py"\n'
              "@@ -1 +1 @@\n-a = 1\n+a = 2\n",
    "timestamp": f"--- src/app.py {_ISO}\n+++ src/app.py {_ISO}\n@@ -1 +1 @@\n-a = 1\n+a = 2\n",
    "rename": "diff --git a/notes.txt b/docs/notes.md\nsimilarity index 100%\nrename from notes.txt\n"
              "rename to docs/notes.md\n",
    "a settings file elsewhere": "diff --git a/.vscode/settings.json b/.vscode/settings.json\nnew file mode 100644\n"
                                 "index 0000000..e69de29\n",
}


def _protected_state(project: Project) -> tuple[object, ...]:
    claude = project.project / ".claude"
    return (project.snapshot(), sorted(path.name for path in claude.iterdir()),
            {name: (project.project / name).stat().st_mode for name in ("verigate.yaml",)})


@pytest.mark.parametrize("form", sorted(WRITING))
def test_a_patch_writing_a_protected_file_is_refused(project: Project, form: str) -> None:
    command, text = WRITING[form]
    if shutil.which(command[0]) is None:
        pytest.skip(f"needs {command[0]} (the oracle)")
    refused = project.check("mcp__diff__apply_diff", {"diff": text})
    before = _protected_state(project)
    applied = subprocess.run(command, input=text, text=True, cwd=project.project, capture_output=True, timeout=30,
                             check=False)
    assert applied.returncode == 0, applied.stderr
    assert _protected_state(project) != before, "the oracle: the patch writes a protected file"
    assert refused is not None and "names" in refused, refused


@pytest.mark.parametrize("form", sorted(ORDINARY))
def test_the_same_forms_naming_ordinary_files_pass(project: Project, form: str) -> None:
    assert project.check("mcp__diff__apply_diff", {"diff": ORDINARY[form]}) is None
