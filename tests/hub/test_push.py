"""`psp-st push`: the dry run writes exactly what a push uploads; tokens never leak."""

from __future__ import annotations

import json
import logging

import pytest

SECRET = "hf_SeCrEtToKeN1234567890abcdefXYZ"


def _files(folder):
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def test_dry_run_writes_model_files_with_card_for_repo_id(release, tmp_path):
    from psp_st.hub.push import push

    out = tmp_path / "upload"
    push(release, "my-org/psp-en", dry_run=out)
    assert _files(out) == _files(release)
    card = (out / "README.md").read_text()
    assert 'SentenceTransformer("my-org/psp-en")' in card
    assert 'psp_st.load("my-org/psp-en", trainable=True)' in (out / "trainable" / "README.md").read_text()
    assert (out / "model.safetensors").read_bytes() == (release / "model.safetensors").read_bytes()


def test_dry_run_skips_hidden_and_temporary_files(release_copy, tmp_path):
    from psp_st.hub.push import push

    (release_copy / ".cache").mkdir()
    (release_copy / ".cache" / "x").write_text("x")
    (release_copy / "notes.tmp").write_text("x")
    out = tmp_path / "upload"
    push(release_copy, "org/name", dry_run=out)
    assert not (out / ".cache").exists() and not (out / "notes.tmp").exists()


def test_dry_run_refuses_non_empty_folder(release, tmp_path):
    from psp_st.hub.push import push

    (tmp_path / "old.txt").write_text("x")
    with pytest.raises(ValueError, match="not empty"):
        push(release, "org/name", dry_run=tmp_path)


def test_dry_run_into_an_existing_file_says_it_is_a_file(release, tmp_path):
    from psp_st.hub.push import push

    (tmp_path / "a file é").touch()
    with pytest.raises(NotADirectoryError, match="is a file"):
        push(release, "org/name", dry_run=tmp_path / "a file é")


def test_dry_run_into_an_unexpanded_home_is_refused(release, tmp_path, monkeypatch):
    from psp_st.hub.push import push

    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="shell did not expand"):
        push(release, "org/name", dry_run="~/dry")
    assert not (tmp_path / "~").exists()


@pytest.mark.parametrize("repo_id", ["psp-en", "org/", "a/b/c", "org/na me"])
def test_bad_repo_id_is_refused(release, tmp_path, repo_id):
    from psp_st.hub.push import push

    with pytest.raises(ValueError, match="ORG/NAME"):
        push(release, repo_id, dry_run=tmp_path / "out")


def test_real_push_uploads_the_dry_run_files(release, tmp_path, monkeypatch):
    import huggingface_hub

    from psp_st.hub.push import push

    uploaded = {}

    def fake_create_repo(self, repo_id, **kwargs):
        return huggingface_hub.RepoUrl(f"https://huggingface.co/{repo_id}")

    def fake_upload_folder(self, repo_id, folder_path, **kwargs):
        from pathlib import Path

        uploaded["files"] = _files(Path(folder_path))
        uploaded["card"] = (Path(folder_path) / "README.md").read_text()

        class Info:
            commit_url = f"https://huggingface.co/{repo_id}/commit/abc"

        return Info()

    monkeypatch.setattr(huggingface_hub.HfApi, "create_repo", fake_create_repo)
    monkeypatch.setattr(huggingface_hub.HfApi, "upload_folder", fake_upload_folder)
    url = push(release, "org/psp-en", token=SECRET)
    push(release, "org/psp-en", dry_run=tmp_path / "dry")
    assert url.endswith("/commit/abc")
    assert uploaded["files"] == _files(tmp_path / "dry")
    assert uploaded["card"] == (tmp_path / "dry" / "README.md").read_text()


def test_token_never_appears_in_output_logs_or_files(release, tmp_path, capsys, caplog):
    from psp_st.cli import main

    caplog.set_level(logging.DEBUG)
    assert (
        main(["push", str(release), "--repo-id", "org/psp-en", "--dry-run", str(tmp_path / "out"), "--token", SECRET])
        == 0
    )
    captured = capsys.readouterr()
    assert SECRET not in captured.out + captured.err
    assert SECRET not in caplog.text
    for path in (tmp_path / "out").rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes()


def test_token_is_redacted_from_hub_errors_and_logs(release, monkeypatch, caplog):
    import huggingface_hub

    from psp_st.hub.push import push

    def failing_create_repo(self, repo_id, **kwargs):
        logging.getLogger("huggingface_hub").warning("request with Authorization: Bearer %s", SECRET)
        raise OSError(f"401 Unauthorized for token {SECRET}")

    monkeypatch.setattr(huggingface_hub.HfApi, "create_repo", failing_create_repo)
    caplog.set_level(logging.DEBUG)
    with pytest.raises(RuntimeError) as error:
        push(release, "org/psp-en", token=SECRET)
    assert SECRET not in str(error.value) and "***" in str(error.value)
    assert SECRET not in caplog.text


def _drop_hashes(folder):
    """Make the build record one from before hashes (sizes only), so the loaders' own checks are reached."""
    record = json.loads((folder / "psp_build.json").read_text())
    del record["sha256"]
    (folder / "psp_build.json").write_text(json.dumps(record))


def _break(folder, relative, data=None):
    """Replace ``folder/relative`` by same-size junk (``data``: by these bytes), so the build record's sizes match."""
    file = folder / relative
    size = file.stat().st_size
    file.write_bytes((data or b"\x07junk") * size)
    with open(file, "r+b") as handle:
        handle.truncate(size)
    return file


def test_dry_run_refuses_nan_weights_without_build_record(release_copy, tmp_path):
    from safetensors.torch import load_file, save_file

    from psp_st.hub.push import push
    from psp_st.modules.base import ModelFolderError

    (release_copy / "psp_build.json").unlink()  # e.g. a psp-st train output
    file = release_copy / "trainable" / "model.safetensors"
    weights = load_file(str(file))
    weights["embedding.weight"][0, 0] = float("nan")
    save_file(weights, str(file))
    with pytest.raises(ModelFolderError, match=rf"{file}: tensor 'embedding\.weight' has 1 non-finite"):
        push(release_copy, "org/name", dry_run=tmp_path / "out")


@pytest.mark.parametrize("record", [True, False])
def test_dry_run_refuses_a_garbage_tokenizer_naming_the_source(release_copy, tmp_path, record):
    from psp_st.hub.push import push
    from psp_st.modules.base import ModelFolderError

    if not record:
        (release_copy / "psp_build.json").unlink()
    else:
        _drop_hashes(release_copy)
    file = _break(release_copy, "trainable/sentencepiece.model")
    with pytest.raises(ModelFolderError, match=rf"sentencepiece tokenizer {file}"):
        push(release_copy, "org/name", dry_run=tmp_path / "out")


def test_dry_run_refuses_a_bad_config_value_with_build_record(release_copy, tmp_path):
    from psp_st.hub.push import push
    from psp_st.modules.base import ModelFolderError

    _drop_hashes(release_copy)
    config = release_copy / "trainable" / "psp_config.json"
    config.write_text(config.read_text().replace('"lowercase": true', '"lowercase": "tr"'))  # same size
    with pytest.raises(ModelFolderError, match="lowercase must be true or false"):
        push(release_copy, "org/name", dry_run=tmp_path / "out")


def test_failed_dry_run_leaves_no_folder_behind(release_copy, tmp_path, monkeypatch):
    import importlib

    push_module = importlib.import_module("psp_st.hub.push")  # psp_st.hub.push is also the function

    def fail(staged, repo_id):
        assert any(staged.iterdir())  # the files were being copied
        raise RuntimeError("card rendering failed")

    monkeypatch.setattr(push_module, "_refresh_cards", fail)
    out = tmp_path / "out"
    with pytest.raises(RuntimeError):
        push_module.push(release_copy, "org/name", dry_run=out)
    assert not out.exists() and list(tmp_path.iterdir()) == [release_copy]


def test_push_of_a_missing_folder_says_no_such_folder(tmp_path, capsys):
    from psp_st.cli import main

    assert main(["push", str(tmp_path / "absent"), "--repo-id", "me/x", "--dry-run", str(tmp_path / "up")]) == 2
    assert f"no such folder: {tmp_path / 'absent'}" in capsys.readouterr().err


def test_dry_run_refuses_a_root_changed_after_the_build(changed_release, tmp_path):
    from psp_st.hub.push import push
    from psp_st.modules.base import ModelFolderError

    with pytest.raises(ModelFolderError, match="'model.safetensors' differs from the one built"):
        push(changed_release, "me/x", dry_run=tmp_path / "up")
    assert not (tmp_path / "up").exists()


def test_dry_run_refuses_files_that_are_not_part_of_the_release(release_copy, tmp_path):
    """G2: a release uploads exactly its recorded files, the record and the cards."""
    from psp_st.hub.push import push

    (release_copy / "notes.txt").write_text("my private notes")
    with pytest.raises(ValueError, match=r"notes\.txt are not part of the release \(psp_build\.json"):
        push(release_copy, "org/name", dry_run=tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_dry_run_refuses_pickle_files_without_a_build_record(release_copy, tmp_path):
    """G3: e.g. a training checkpoint's optimizer.pt / training_args.bin, or a pickle planted beside safetensors."""
    from psp_st.hub.push import push

    (release_copy / "psp_build.json").unlink()
    (release_copy / "trainable" / "optimizer.pt").write_bytes(b"\x80\x04pickle")
    with pytest.raises(ValueError, match=r"trainable/optimizer\.pt are pickle files, which can run code"):
        push(release_copy, "org/name", dry_run=tmp_path / "out")


def _link_licence_to(release_copy, link):
    """Set the recorded recipe's release to ``license: other`` linked to ``link`` (as a recipe would)."""
    record = release_copy / "psp_build.json"
    info = json.loads(record.read_text())
    info["recipe"]["release"] = {"license": "other", "license_name": "my-terms", "license_link": link}
    record.write_text(json.dumps(info))


def test_dry_run_uploads_the_licence_file_the_card_links_to(release_copy, tmp_path):
    """H8-5: a release's LICENSE, named by release.license_link, was refused as not part of the release."""
    from psp_st.hub.push import push

    _link_licence_to(release_copy, "LICENSE")
    (release_copy / "LICENSE").write_text("my terms")
    push(release_copy, "org/name", dry_run=tmp_path / "upload")
    assert (tmp_path / "upload" / "LICENSE").read_text() == "my terms"


def test_dry_run_refuses_a_card_linking_a_licence_file_the_folder_lacks(release_copy, tmp_path):
    """H8-5: the card's license_link pointed at a file no push uploads (a dead link on the Hub)."""
    from psp_st.hub.push import push

    _link_licence_to(release_copy, "LICENSE")
    with pytest.raises(ValueError, match=r"links its licence to the repository file 'LICENSE'.*lacks"):
        push(release_copy, "org/name", dry_run=tmp_path / "upload")


def test_dry_run_of_a_hub_cache_snapshot_says_push_a_copy(release, tmp_path):
    """H8-8: the advice for the cache's links was "replace it with a copy of the file": edit the cache."""
    import shutil

    from psp_st.hub.push import push

    snapshot = tmp_path / "models--org--m" / "snapshots" / "0123456789abcdef0123456789abcdef01234567"
    shutil.copytree(release, snapshot)
    blob = tmp_path / "models--org--m" / "blobs" / "readme"
    blob.parent.mkdir()
    (snapshot / "README.md").rename(blob)
    (snapshot / "README.md").symlink_to(blob)
    with pytest.raises(ValueError, match=r"cache's copy of org/m, whose files are links.*push a copy of it"):
        push(snapshot, "org/name", dry_run=tmp_path / "upload")
