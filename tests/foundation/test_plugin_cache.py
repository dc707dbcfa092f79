"""Entry-point discovery remembered by the installed distributions' fingerprint: the same answer as a fresh
discovery, and any change to what is installed (or any doubt) discovers again."""

from __future__ import annotations

import importlib.metadata as metadata
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from verigate import _plugin_cache
from verigate._plugin_cache import CACHE_ENV, Found, discover

GROUP = "verigate"
#: an hour ago: older than the racy window, so the fingerprint is trusted
OLD = 3600


def _fresh() -> tuple[Found, ...]:
    return tuple(sorted(
        (Found(point.name, point.value, (point.dist.name, point.dist.version) if point.dist is not None else None)
         for point in metadata.entry_points(group=GROUP)), key=lambda item: item.name))


def _age(*paths: Path) -> None:
    old = paths[0].stat().st_mtime - OLD
    for path in paths:
        os.utime(path, (old, old))


@pytest.fixture(autouse=True)
def _no_memory() -> Iterator[None]:
    _plugin_cache._memory.clear()
    yield
    _plugin_cache._memory.clear()


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder on sys.path with one distribution declaring one ``verigate`` entry point, old enough to trust."""
    folder = tmp_path / "site"
    _install(folder, "probe_one = verigate_probe_one_module\n")
    monkeypatch.syspath_prepend(str(folder))
    return folder


def _install(folder: Path, points: str, name: str = "verigate_cache_probe") -> None:
    dist_info = folder / f"{name}-1.0.dist-info"
    dist_info.mkdir(parents=True, exist_ok=True)
    (dist_info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n", encoding="utf-8")
    (dist_info / "entry_points.txt").write_text(f"[verigate]\n{points}", encoding="utf-8")
    _age(dist_info / "entry_points.txt", dist_info / "METADATA", dist_info, folder)


def _files(state_home: Path) -> list[Path]:
    return sorted((state_home / "verigate" / "plugin-cache").glob("*.json"))


def test_the_same_answer_as_a_fresh_discovery(site: Path, _private_state_home: Path) -> None:
    found = discover(GROUP)
    assert found == _fresh()
    assert "probe_one" in {item.name for item in found}
    assert len(_files(_private_state_home)) == 1
    _plugin_cache._memory.clear()
    assert discover(GROUP) == found  # from the file


def test_a_new_distribution_is_discovered(site: Path) -> None:
    discover(GROUP)
    _install(site, "probe_two = verigate_probe_two_module\n", name="verigate_cache_probe_two")
    assert "probe_two" in {item.name for item in discover(GROUP)}


def test_an_edited_entry_points_file_is_read_again(site: Path) -> None:
    discover(GROUP)
    points = site / "verigate_cache_probe-1.0.dist-info" / "entry_points.txt"
    points.write_text("[verigate]\nprobe_renamed = verigate_probe_one_module\n", encoding="utf-8")
    old = points.stat().st_mtime - OLD / 2  # another old time: still trusted, but different
    os.utime(points, (old, old))
    names = {item.name for item in discover(GROUP)}
    assert "probe_renamed" in names and "probe_one" not in names


@pytest.mark.parametrize("how", ["in place", "replaced"])
def test_an_entry_points_file_of_the_same_size_and_time_is_read_again(site: Path, how: str) -> None:
    """Whoever may write the installation can set a file's modification time back (``touch -r``, an installer
    keeping an archive's times): a same-sized edit must still be seen (the change time cannot be set back, and
    a replaced file is another inode)."""
    discover(GROUP)
    points = site / "verigate_cache_probe-1.0.dist-info" / "entry_points.txt"
    before = points.stat()
    edited = "[verigate]\nprobe_one = verigate_probe_xxx_module\n"
    assert len(edited) == before.st_size
    if how == "in place":
        points.write_text(edited, encoding="utf-8")
    else:
        other = points.with_name("entry_points.new")
        other.write_text(edited, encoding="utf-8")
        other.replace(points)
    os.utime(points, ns=(before.st_atime_ns, before.st_mtime_ns))
    time.sleep(_plugin_cache._RACY_S + 0.2)  # the change time leaves the racy window: the fingerprint is trusted
    assert discover(GROUP) == _fresh()
    assert {item.value for item in discover(GROUP) if item.name == "probe_one"} == {"verigate_probe_xxx_module"}


def test_a_recent_change_is_never_remembered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             _private_state_home: Path) -> None:
    folder = tmp_path / "recent"
    dist_info = folder / "verigate_recent_probe-1.0.dist-info"
    dist_info.mkdir(parents=True)
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: verigate_recent_probe\nVersion: 1.0\n",
                                        encoding="utf-8")
    # written just now: inside the racy window, an edit of the same size could still hide behind its time
    (dist_info / "entry_points.txt").write_text("[verigate]\nrecent = verigate_recent_module\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder))
    assert discover(GROUP) == _fresh()
    assert "recent" in {item.name for item in discover(GROUP)}
    assert _files(_private_state_home) == [] and not _plugin_cache._memory


def test_files_that_are_no_distribution_do_not_change_the_fingerprint(site: Path) -> None:
    # the working folder is on sys.path (python -m / -c) and changes all the time: only its metadata names count
    before = _plugin_cache.fingerprint()
    (site / "notes.txt").write_text("an agent's edit\n", encoding="utf-8")
    (site / "package").mkdir()
    after = _plugin_cache.fingerprint()
    assert before is not None and after is not None
    assert after == before and after[1]  # the same print, and still trusted although the folder changed now
    _install(site, "probe_two = verigate_probe_two_module\n", name="verigate_cache_probe_two")
    moved = _plugin_cache.fingerprint()
    assert moved is not None and moved[0] != before[0]


def test_a_malformed_or_foreign_file_means_a_fresh_discovery(site: Path, _private_state_home: Path) -> None:
    expected = discover(GROUP)
    [path] = _files(_private_state_home)
    for content in ("not json", '{"format": 1, "fingerprint": "other", "entry_points": []}',
                    path.read_text(encoding="utf-8").replace('"name"', '"nom"')):
        path.write_text(content, encoding="utf-8")
        _plugin_cache._memory.clear()
        assert discover(GROUP) == expected


def test_the_file_can_be_turned_off(site: Path, _private_state_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_ENV, "0")
    assert discover(GROUP) == _fresh()
    assert _files(_private_state_home) == []


def test_metadata_folders_match_in_any_case_and_eggs_are_not_trusted(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # importlib.metadata finds Foo-1.0.DIST-INFO as it finds foo-1.0.dist-info: an edit there changes the print
    info = tmp_path / "Foo-1.0.DIST-INFO"
    info.mkdir()
    points = info / "entry_points.txt"
    points.write_text("[verigate]\nfoo = mod_a:x\n", encoding="utf-8")
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    before = _plugin_cache.fingerprint()
    points.write_text("[verigate]\nfoo = mod_b:xy\n", encoding="utf-8")
    after = _plugin_cache.fingerprint()
    assert before is not None and after is not None and before[0] != after[0]
    (tmp_path / "Bar-1.0-py3.11.egg").mkdir()  # an egg keeps its metadata in EGG-INFO: never cached
    assert _plugin_cache.fingerprint() is None


#: loads every installed plug-in in a fresh process and says whether the distributions' metadata was read
_LOAD_PROBE = ("import sys; from verigate._plugins import create_manager; create_manager(); "
               "print('importlib.metadata' in sys.modules)")


def test_a_remembered_discovery_reads_no_metadata_in_the_next_process(tmp_path: Path,
                                                                       _private_state_home: Path) -> None:
    # a hook process started in a project whose files the agent keeps changing (its folder is sys.path[0])
    project = tmp_path / "project"
    project.mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(entry for entry in sys.path if entry)}
    answers = []
    for edit in ("first.py", "second.py"):
        done = subprocess.run([sys.executable, "-c", _LOAD_PROBE], cwd=project, env=env, capture_output=True,
                              text=True, check=False, timeout=120)
        assert done.returncode == 0, done.stderr
        answers.append(done.stdout.split()[-1])
        (project / edit).write_text("print('edited')\n", encoding="utf-8")
    assert answers == ["True", "False"]  # discovered once, then remembered (importlib.metadata never imported)


_MODULES = ("json", "os.path", "verigate", "verigate.hookspecs", "no_such_verigate_module", "json.decoder")
_ATTRIBUTES = ("", "loads", "JSONDecoder", "join", "hookimpl", "__name__", "missing", "JSONDecoder.decode",
               "hookimpl.project_name", "__class__.__name__")


@given(module=st.sampled_from(_MODULES), attribute=st.sampled_from(_ATTRIBUTES),
       spacing=st.sampled_from(["", " ", "  "]), extras=st.sampled_from(["", "[fast]", " [a, b]"]),
       garbage=st.sampled_from(["", "", "-x", ":", "a b"]))
def test_loading_an_entry_point_finds_what_importlib_metadata_finds(module: str, attribute: str, spacing: str,
                                                                    extras: str, garbage: str) -> None:
    value = f"{module}{spacing}:{spacing}{attribute}{extras}{garbage}" if attribute else f"{module}{extras}{garbage}"
    try:
        expected: object = metadata.EntryPoint(name="probe", value=value, group=GROUP).load()
    except Exception:  # the oracle refuses it (any exception): so must the cache's loader
        with pytest.raises(Exception):  # noqa: B017 (the kind may differ; refusing is what counts)
            Found("probe", value, None).load()
        return
    assert Found("probe", value, None).load() == expected  # the same object (a name made afresh: equal)
