"""`psp-st push --dry-run` re-renders the trainable card by loading trainable/: planted code must not run."""

from __future__ import annotations

import json

import pytest

from psp_st.modules.base import ModelFolderError


def test_dry_run_does_not_execute_code_planted_in_trainable(release_copy, tmp_path):
    from psp_st.hub.push import push

    trainable = release_copy / "trainable"
    modules = json.loads((trainable / "modules.json").read_text())
    modules[0]["type"] = "psp_st.Evil"
    (trainable / "modules.json").write_text(json.dumps(modules))
    marker = tmp_path / "marker"
    (trainable / "psp_st.py").write_text(f"from pathlib import Path\nPath({str(marker)!r}).write_text('x')\n")
    (release_copy / "psp_build.json").write_text(
        json.dumps({**json.loads((release_copy / "psp_build.json").read_text()), "files": {}})
    )
    with pytest.raises(ModelFolderError):
        push(release_copy, "org/psp-en", dry_run=tmp_path / "out")
    assert not marker.exists()
