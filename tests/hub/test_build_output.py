"""`psp-st build --output`: re-running a build replaces only its own files; unrelated files are never deleted."""

from __future__ import annotations

import json

from psp_st.io.model_names import BUILD_INFO_FILE


def test_rebuild_over_own_release_keeps_unrelated_files(release_copy, build_cli, tiny_recipe, data_dir):
    (release_copy / "notes.txt").write_text("my notes")
    (release_copy / "trainable" / "mine.txt").write_text("mine too")
    assert build_cli(tiny_recipe, data_dir, release_copy.parent, "--output", str(release_copy)) == 0
    assert (release_copy / "notes.txt").read_text() == "my notes"
    assert (release_copy / "trainable" / "mine.txt").read_text() == "mine too"
    info = json.loads((release_copy / BUILD_INFO_FILE).read_text())
    assert "notes.txt" not in info["files"] and (release_copy / "model.safetensors").is_file()


def test_rebuild_over_own_release_warns_that_it_replaces_it(release_copy, build_cli, tiny_recipe, data_dir, caplog):
    """D6-2: the README promised no overwrite without --overwrite; a rebuild replaced the release without a word."""
    assert build_cli(tiny_recipe, data_dir, release_copy.parent, "--output", str(release_copy)) == 0
    assert f"{release_copy} holds an earlier psp-en release: this build replaces it" in caplog.text


def test_rebuild_removes_files_only_the_old_release_recorded(release_copy, build_cli, tiny_recipe, data_dir):
    record = release_copy / BUILD_INFO_FILE
    info = json.loads(record.read_text())
    (release_copy / "stale.bin").write_bytes(b"old")
    info["files"]["stale.bin"] = 3
    record.write_text(json.dumps(info))
    assert build_cli(tiny_recipe, data_dir, release_copy.parent, "--output", str(release_copy)) == 0
    assert not (release_copy / "stale.bin").exists()


def test_overwrite_into_unrelated_folder_keeps_its_files(build_cli, tiny_recipe, data_dir, tmp_path):
    out = tmp_path / "shared-folder"
    out.mkdir()
    (out / "report.md").write_text("keep me")
    assert build_cli(tiny_recipe, data_dir, tmp_path, "--output", str(out)) == 2
    assert build_cli(tiny_recipe, data_dir, tmp_path, "--output", str(out), "--overwrite") == 0
    assert (out / "report.md").read_text() == "keep me" and (out / BUILD_INFO_FILE).is_file()


def test_release_files_get_umask_permissions(release):
    import os

    mask = os.umask(0o022)
    os.umask(mask)
    assert (release / "model.safetensors").stat().st_mode & 0o777 == 0o666 & ~mask
    assert release.stat().st_mode & 0o777 == 0o777 & ~mask


def test_rebuild_refuses_a_record_naming_files_outside_the_folder(
    release_copy, build_cli, tiny_recipe, data_dir, capsys
):
    """S1: a planted psp_build.json listing ../victim.txt made the rebuild delete it."""
    victim = release_copy.parent / "victim.txt"
    victim.write_text("keep")
    record = release_copy / BUILD_INFO_FILE
    info = json.loads(record.read_text())
    info["files"]["../victim.txt"] = 4
    record.write_text(json.dumps(info))
    assert build_cli(tiny_recipe, data_dir, release_copy.parent, "--output", str(release_copy)) == 2
    assert "'../victim.txt', which is outside the folder" in capsys.readouterr().err
    assert victim.read_text() == "keep"
