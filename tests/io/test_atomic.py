from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest

from psp_st.io.atomic import atomic_directory, atomic_write_bytes, atomic_write_json


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_write_removes_the_temporaries_of_a_killed_writer_and_keeps_live_ones(tmp_path):
    host = socket.gethostname()
    stale = tmp_path / f".out.npy.{host}-{_dead_pid()}.x1y2z3.tmp"
    live = tmp_path / f".out.npy.{host}-{os.getpid()}.a1b2c3.tmp"  # a writer still running
    remote = tmp_path / ".out.npy.elsewhere-1.d4e5f6.tmp"  # another host's: its pid means nothing here
    other = tmp_path / f".other.npy.{host}-{_dead_pid()}.g7h8i9.tmp"  # another output's
    for path in (stale, live, remote, other):
        path.write_bytes(b"half")
    atomic_write_bytes(tmp_path / "out.npy", b"done")
    assert (tmp_path / "out.npy").read_bytes() == b"done"
    assert not stale.exists() and live.exists() and remote.exists() and other.exists()


def test_a_folder_write_removes_a_killed_writers_temporary_folder(tmp_path):
    stale = tmp_path / f".final.{socket.gethostname()}-{_dead_pid()}.q1w2e3.tmp"
    stale.mkdir()
    (stale / "model.safetensors").write_bytes(b"half")
    with atomic_directory(tmp_path / "final") as folder:
        (folder / "config.json").write_text("{}")
    assert not stale.exists() and (tmp_path / "final" / "config.json").is_file()


def test_a_folder_write_removes_the_temporary_of_a_killed_writers_temporary(tmp_path):
    """K6-2: a build killed in its static export left ``..out.HOST-PID.*.tmp.HOST-PID.*.tmp`` beside the release."""
    outer = f".out.{socket.gethostname()}-{_dead_pid()}.q1w2e3.tmp"
    nested = tmp_path / f".{outer}.{socket.gethostname()}-{_dead_pid()}.r4t5y6.tmp"
    nested.mkdir()
    (nested / "model.safetensors").write_bytes(b"half")
    with atomic_directory(tmp_path / "out") as folder:
        (folder / "config.json").write_text("{}")
    assert not nested.exists() and (tmp_path / "out" / "config.json").is_file()


@pytest.mark.parametrize("name", ["../victim.txt", "{victim}"])
def test_a_folder_write_never_removes_a_file_outside_the_folder(tmp_path, name):
    """S1: ``replaces`` comes from a folder's own record, which may be planted."""
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "old.txt").write_text("old")
    replaces = [name.format(victim=victim)]
    with pytest.raises(ValueError, match="outside the folder"), atomic_directory(tmp_path / "out", replaces=replaces):
        pass
    assert victim.read_text() == "keep"


def test_a_folder_write_never_writes_through_a_linked_subfolder(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "modules.json").write_text("mine")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "trainable").symlink_to(elsewhere)
    match = "'trainable/modules.json', which is outside the folder"
    with pytest.raises(ValueError, match=match), atomic_directory(tmp_path / "out") as folder:
        (folder / "trainable").mkdir()
        (folder / "trainable" / "modules.json").write_text("new")
    assert (elsewhere / "modules.json").read_text() == "mine"


def test_json_holding_a_file_name_that_is_not_utf8_is_written_and_reads_back(tmp_path):  # P6-1
    """os.fsdecode(b"fi\\xe9.txt") (any non-ASCII name under LANG=C with PYTHONUTF8=0) holds a lone surrogate."""
    data = {"source": "fi\udce9.txt", "name": "café"}
    atomic_write_json(tmp_path / "plan.json", data)
    assert json.loads((tmp_path / "plan.json").read_text(encoding="utf-8")) == data


def test_on_windows_no_process_is_signalled_to_see_if_it_runs(tmp_path, monkeypatch):  # P6-10
    """Windows' os.kill(pid, 0) is TerminateProcess: the check for stale temporaries killed the process."""
    killed = []
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setattr(os, "kill", lambda pid, signal: killed.append(pid))
    other = tmp_path / f".out.npy.{socket.gethostname()}-{_dead_pid()}.x1y2z3.tmp"
    other.write_bytes(b"half")
    atomic_write_bytes(tmp_path / "out.npy", b"done")
    assert (tmp_path / "out.npy").read_bytes() == b"done" and other.exists() and killed == []


def test_one_sweep_removes_dead_writers_temporaries_of_every_named_output_and_no_other(tmp_path):
    from psp_st.io.atomic import sweep_temporaries

    host = socket.gethostname()
    dead = [tmp_path / f".{name}.{host}-{_dead_pid()}.x1y2z3.tmp" for name in ("a.npy", "b.json")]
    kept = [
        tmp_path / f".a.npy.{host}-{os.getpid()}.a1b2c3.tmp",  # a live writer
        tmp_path / f".c.npy.{host}-{_dead_pid()}.g7h8i9.tmp",  # a name not asked for
        tmp_path / ".a.npy.elsewhere-1.d4e5f6.tmp",  # another host's
    ]
    for path in dead + kept:
        path.write_bytes(b"half")
    sweep_temporaries(tmp_path, ["a.npy", "b.json"])
    assert not any(path.exists() for path in dead) and all(path.exists() for path in kept)
