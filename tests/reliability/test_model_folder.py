"""Model folders: nothing in a folder runs code unless the user passes trust_remote_code=True."""

from __future__ import annotations

import importlib
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from psp_st.inference.load import ModelNotFoundError, load
from psp_st.io.model_names import resolve_model_name
from psp_st.modules.base import ModelFolderError
from psp_st.modules.trusted import TRUSTED_MODULE_CLASSES, trusted_module_class

EVIL_CODE = """\
from pathlib import Path
Path({marker!r}).write_text("pwned")
from torch import nn
class Evil(nn.Module):
    pass
"""


def _plant_evil(folder, marker):
    """The exploit from issue 17: modules.json names ``psp_st.Evil`` and ``psp_st.py`` beside it defines it."""
    modules = json.loads((folder / "modules.json").read_text())
    modules[0]["type"] = "psp_st.Evil"
    (folder / "modules.json").write_text(json.dumps(modules))
    (folder / "psp_st.py").write_text(EVIL_CODE.format(marker=str(marker)))


def test_planted_psp_st_class_and_file_do_not_execute(saved_model, tmp_path):
    marker = tmp_path / "marker"
    _plant_evil(saved_model, marker)
    with pytest.raises(ModelFolderError):
        load(saved_model)
    assert not marker.exists()


def test_planted_psp_st_class_without_code_file_is_refused(saved_model, tmp_path):
    marker = tmp_path / "marker"
    _plant_evil(saved_model, marker)
    (saved_model / "psp_st.py").unlink()
    with pytest.raises(ModelFolderError, match=r"psp_st\.Evil.*trust_remote_code=True"):
        load(saved_model)


def test_folder_with_python_file_is_refused(saved_model):
    (saved_model / "helper.py").write_text("x = 1\n")
    with pytest.raises(ModelFolderError, match=r"carries Python code \(helper\.py\).*trust_remote_code=True"):
        load(saved_model)


def test_folder_with_python_file_loads_when_user_trusts_it(saved_model):
    from psp_st.modules.psp import PSPEmbedding

    (saved_model / "helper.py").write_text("x = 1\n")
    assert isinstance(load(saved_model, trust_remote_code=True)[0], PSPEmbedding)


@pytest.mark.parametrize(
    "class_path",
    ["psp_st.Evil", "psp_st.modules.psp.PSPEmbeddingX", "psp_st.modules.base.PSPInputModule", "psp_st.modules.psp"],
)
def test_allow_list_is_exact_not_a_prefix(class_path):
    assert trusted_module_class(class_path) is None


def test_every_allow_listed_class_imports_from_the_installed_package():
    from pathlib import Path

    import psp_st

    package = Path(psp_st.__file__).resolve().parent
    for class_path in TRUSTED_MODULE_CLASSES:
        cls = trusted_module_class(class_path)
        assert cls is not None, class_path
        assert Path(__import__(cls.__module__, fromlist=["_"]).__file__).resolve().is_relative_to(package)


def test_psp_root_folder_loads_without_flag(saved_model, monkeypatch):
    """A training run's final/ (PSPEmbedding at the root) loads, and ST is never handed trust_remote_code."""
    import sentence_transformers

    from psp_st.modules.psp import PSPEmbedding

    seen = []
    original = sentence_transformers.SentenceTransformer.__init__

    def spy(self, *args, **kwargs):
        seen.append(kwargs.get("trust_remote_code"))
        original(self, *args, **kwargs)

    monkeypatch.setattr(sentence_transformers.SentenceTransformer, "__init__", spy)
    assert isinstance(load(saved_model, trainable=True)[0], PSPEmbedding)
    assert seen and not any(seen)


def test_hub_download_for_trainable_is_not_trusted(saved_model, tmp_path, monkeypatch):
    """psp_st.load("<hub id>", trainable=True): the downloaded folder is checked like any other, no flag set."""
    load_module = importlib.import_module("psp_st.inference.load")

    marker = tmp_path / "marker"
    _plant_evil(saved_model, marker)
    monkeypatch.setattr(load_module, "_download", lambda repo_id, **kwargs: saved_model)
    with pytest.raises(ModelFolderError):
        load("someone/evil-model", trainable=True)
    assert not marker.exists()


def test_hub_download_for_trainable_loads_clean_model(saved_model, monkeypatch):
    load_module = importlib.import_module("psp_st.inference.load")
    from psp_st.modules.psp import PSPEmbedding

    monkeypatch.setattr(load_module, "_download", lambda repo_id, **kwargs: saved_model)
    assert isinstance(load("someone/model", trainable=True)[0], PSPEmbedding)


def test_planted_short_name_folder_without_build_record_is_ignored(saved_model, tmp_path, monkeypatch, caplog):
    planted = tmp_path / "psp-en"
    saved_model.rename(planted)
    monkeypatch.chdir(tmp_path)
    with caplog.at_level(logging.WARNING, logger="psp_st.io.model_names"):
        assert resolve_model_name("psp-en") == "psp-st/psp-en"
    assert "ignoring the folder" in caplog.text and "psp_build.json" in caplog.text
    with pytest.raises(ModelNotFoundError, match=r"the folder .*psp-en has no psp-st build record \(psp_build\.json\)"):
        load("psp-en")


def test_planted_short_name_folder_with_other_build_name_is_ignored(saved_model, tmp_path, monkeypatch):
    planted = tmp_path / "psp-en"
    saved_model.rename(planted)
    (planted / "psp_build.json").write_text(json.dumps({"name": "something-else", "format_version": 1}))
    monkeypatch.chdir(tmp_path)
    assert resolve_model_name("psp-en") == "psp-st/psp-en"


def test_short_name_local_build_is_used_and_logged(saved_model, tmp_path, monkeypatch, caplog):
    built = tmp_path / "psp-en"
    saved_model.rename(built)
    (built / "psp_build.json").write_text(json.dumps({"name": "psp-en", "format_version": 1, "files": {}}))
    monkeypatch.chdir(tmp_path)
    with caplog.at_level(logging.INFO, logger="psp_st.io.model_names"):
        assert resolve_model_name("psp-en") == "psp-en"
    assert str(built.resolve()) in caplog.text


def test_explicit_path_to_any_folder_is_used(saved_model):
    assert resolve_model_name(str(saved_model)) == str(saved_model)


def test_combined_encoder_refuses_non_allow_listed_class(saved_model, tmp_path):
    from psp_st.modules.combine import CombinedEncoder

    folder = tmp_path / "combined"
    (folder / "encoder_0").mkdir(parents=True)
    (folder / "psp_config.json").write_text(
        json.dumps(
            {"format_version": 1, "encoders": [{"class": "psp_st.modules.base.PSPInputModule", "folder": "encoder_0"}]}
        )
    )
    with pytest.raises(ModelFolderError, match="only psp-st's own module classes"):
        CombinedEncoder.load(str(folder))


def test_nan_weights_are_refused_naming_the_file(saved_model, poison):
    poison(saved_model, float("nan"))
    with pytest.raises(ModelFolderError, match=r"model\.safetensors: tensor 'embedding\.weight' has 1 non-finite"):
        load(saved_model)


def test_a_nan_in_the_last_chunk_of_a_tensor_is_found():
    import torch

    from psp_st.modules.folder_format import tensor_is_finite

    weights = torch.zeros(10, 3)
    assert tensor_is_finite(weights, chunk=4)
    weights[9, 2] = float("nan")
    assert not tensor_is_finite(weights, chunk=4) and not tensor_is_finite(weights)


def test_the_finite_check_of_a_loaded_model_adds_little_peak_memory():  # T3
    code = (
        "import resource, torch\n"
        "from psp_st.modules.trusted import _finite\n"
        "model = torch.nn.Embedding(1 << 15, 1024)  # 128 MiB of float32\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "_finite(model, 'model')\n"
        "print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]), "OMP_NUM_THREADS": "1"}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert int(run.stdout) < 32, f"checking 128 MiB of weights raised peak memory by {run.stdout.strip()} MiB"


def fork_then_run_parallel_torch(setup: str) -> None:
    """Run ``setup`` (Python at two torch threads) in a fresh process, fork it, and fail unless the child finishes
    a parallel torch op: one that hangs if ``setup`` started torch's OpenMP threads (gunicorn ``--preload``)."""
    code = setup + (
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    signal.alarm(30)  # a hung child ends itself\n"
        "    torch.ones(1 << 22).add(1).sum()  # hangs if the parent started OpenMP threads\n"
        "    os._exit(0)\n"
        "raise SystemExit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=90)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_process_forked_after_the_finite_check_runs_parallel_torch_ops():  # V1: gunicorn --preload
    code = (
        "import os, signal, numpy as np, torch\n"
        "from psp_st.modules.folder_format import tensor_is_finite\n"
        "torch.set_num_threads(2)\n"
        "weights = torch.from_numpy(np.zeros(1 << 22, dtype=np.float32))  # made without a torch op\n"
        "assert tensor_is_finite(weights) and tensor_is_finite(weights.view(torch.bfloat16))\n"
    )
    fork_then_run_parallel_torch(code)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_process_forked_after_loading_a_trainable_model_runs_parallel_torch_ops(sp_tokenizer, tmp_path):  # V3
    sp_tokenizer.save(tmp_path / "sp.model")
    code = (
        "import os, signal, numpy as np, torch\n"
        "from psp_st.modules.psp import PSPEmbedding\n"
        "torch.set_num_threads(2)\n"
        f"path = {str(tmp_path / 'sp.model')!r}\n"
        "weights = np.ones((PSPEmbedding(path, embedding_dim=1).vocab_size, 4096), dtype=np.float16)\n"
        "assert PSPEmbedding(path, embedding_weights=weights).embedding.weight[0, 0] == 1\n"
    )
    fork_then_run_parallel_torch(code)


def test_bfloat16_weights_with_an_inf_are_found():
    import torch

    from psp_st.modules.folder_format import tensor_is_finite

    weights = torch.zeros(10, 3, dtype=torch.bfloat16)
    assert tensor_is_finite(weights, chunk=4)
    weights[9, 2] = float("-inf")
    assert not tensor_is_finite(weights, chunk=4)


def test_inf_weights_of_a_static_export_are_refused(saved_model, tmp_path, poison):
    from psp_st.modules.psp import PSPEmbedding

    static = tmp_path / "static"
    PSPEmbedding.load(str(saved_model)).export_static(static)
    poison(static, float("inf"))
    with pytest.raises(ModelFolderError, match=r"non-finite \(NaN/inf\)"):
        load(static)


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"format_version": "one"}'])
def test_corrupt_psp_config_names_the_file(saved_model, content):
    config = next(saved_model.rglob("psp_config.json"))
    config.write_text(content)
    with pytest.raises(ModelFolderError, match=r"psp_config\.json.*(corrupt|invalid)"):
        load(saved_model)


@pytest.mark.parametrize("name", ["psp_config.json", "config_sentence_transformers.json"])
def test_a_model_json_file_nested_too_deeply_is_named_not_a_recursion_error(saved_model, name):  # S6-4
    from psp_st.inference.engine import load_engine

    file = next(saved_model.rglob(name))
    file.write_text('{"x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(ModelFolderError, match=f"{name} is not a readable JSON file"):
        load_engine(file.parent)


def test_a_build_record_nested_too_deeply_is_named_not_a_recursion_error(saved_model):  # S6-4
    from psp_st.inference.engine import load_engine

    (saved_model / "psp_build.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ModelFolderError, match=r"psp_build\.json is not a valid JSON object"):
        load_engine(saved_model)


def test_corrupt_modules_json_names_the_file(saved_model):
    (saved_model / "modules.json").write_text('["not", "a", "module"]')
    with pytest.raises(ModelFolderError, match=r"modules\.json"):
        load(saved_model)


def test_short_name_without_local_build_says_what_was_tried(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ModelNotFoundError) as caught:
        load("psp-en")
    message = str(caught.value)
    assert "\n" not in message
    assert "no local folder" in message and "psp-st/psp-en" in message and "unreachable" in message
    assert "psp-st build psp-en" in message


def test_path_typo_says_check_the_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ModelNotFoundError, match=r"no local folder .*psp-enn.*not a valid Hub id.*check the path"):
        load("./psp-enn")


def test_empty_model_name_is_refused_not_the_current_folder(saved_model, monkeypatch):
    """`--model "$UNSET"`: "" is no name; it loaded whatever model folder the command ran in."""
    monkeypatch.chdir(saved_model)
    with pytest.raises(ValueError, match="the model name is empty"):
        load("")


@pytest.mark.parametrize("opener", ["load", "load_engine", "resolve_model_name"])
def test_a_model_name_of_none_is_a_type_error(opener):
    """AP5: None became the name "None" ("no local folder ./None; Hub id None: ... unreachable")."""
    from psp_st.inference import load_engine

    function = {"load": load, "load_engine": load_engine, "resolve_model_name": resolve_model_name}[opener]
    with pytest.raises(TypeError, match="model name must be a str or path .* got NoneType None"):
        function(None)


def test_saved_model_files_get_umask_permissions(psp_model, tmp_path):
    import os

    old = os.umask(0o022)
    try:
        psp_model.save(str(tmp_path / "m"))
    finally:
        os.umask(old)
    weights = next((tmp_path / "m").rglob("model.safetensors"))
    assert weights.stat().st_mode & 0o777 == 0o644


@pytest.mark.parametrize("export", ["export_static", "export_model2vec"])
def test_exports_are_written_whole_with_umask_permissions(psp_module, tmp_path, monkeypatch, export):
    """export_model2vec left its weights 0600 (no umask) and both wrote straight into the folder: a failed
    export left a partial one."""
    import os

    from psp_st.io import atomic

    if export == "export_model2vec":
        pytest.importorskip("model2vec")
    old = os.umask(0o022)
    try:
        getattr(psp_module, export)(tmp_path / "ok")
        monkeypatch.setattr(atomic, "apply_umask", lambda path: 1 / 0)  # fails after the files are written
        with pytest.raises(ZeroDivisionError):
            getattr(psp_module, export)(tmp_path / "failed")
    finally:
        os.umask(old)
    assert (tmp_path / "ok" / "model.safetensors").stat().st_mode & 0o777 == 0o644
    assert not (tmp_path / "failed").exists()


def test_recipe_init_from_does_not_execute_planted_code(saved_model, tmp_path):
    from psp_st.training.recipe import build_model

    marker = tmp_path / "marker"
    _plant_evil(saved_model, marker)
    with pytest.raises(ModelFolderError):
        build_model({"name": "t", "data": {"sources": ["x"]}, "model": {"init_from": str(saved_model)}}, None, 0)
    assert not marker.exists()


@pytest.mark.parametrize("entry", [{"type": 5}, {"path": 5}, {"type": ["psp_st.modules.psp.PSPEmbedding"]}])
def test_modules_json_entry_with_a_non_string_type_or_path_is_refused_naming_the_file(saved_model, entry):
    """S5: a TypeError/AttributeError from deep in the folder check, not a message."""
    from psp_st.inference import load_engine

    modules = json.loads((saved_model / "modules.json").read_text())
    modules[0].update(entry)
    (saved_model / "modules.json").write_text(json.dumps(modules))
    for opener in (load, load_engine):
        with pytest.raises(
            ModelFolderError, match=r"modules\.json must be a list of module entries .*'type' and 'path'"
        ):
            opener(saved_model)
