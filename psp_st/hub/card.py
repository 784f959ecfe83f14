"""Model cards: the template ``resources/model_card.md`` filled from the build record, rendered as Sentence-Transformers
renders its own (ours because ST's cannot know each form's usage, the numbers, the files' licences, the recipe)."""

from __future__ import annotations

import math
import os
import re
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from psp_st.evaluation.report import THRESHOLD_NOTE
from psp_st.io.model_names import TRAINABLE_SUBFOLDER, read_build_record
from psp_st.modules.trusted import load_trusted

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

#: Placeholder ST writes into usage snippets when a card has no model id yet.
ST_PLACEHOLDER = "sentence_transformers_model_id"

#: Display names of the evaluation suite's task keys.
TASK_NAMES: dict[str, str] = {
    "stsb-dev": "STS Benchmark dev",
    "stsb-test": "STS Benchmark test",
    "sick-r-test": "SICK-R test",
    "sts17-en-en": "STS 2017 en-en",
    "pawsx-en-test": "PAWS-X en test",
    "msrpc-test": "MSRPC test",
}

FORMS = ("static", "trainable")

#: A language with fewer distinct training pairs than this gets a note in the card.
SMALL_LANGUAGE_PAIRS = 5_000


def template_path() -> Path:
    """The model card template shipped as package data."""
    return Path(str(resources.files("psp_st") / "resources" / "model_card.md"))


def _file_rows(
    names: list[str], rows: dict[str, int | None] | None = None, sources: list[Any] | None = None
) -> list[dict[str, Any]]:
    from psp_st.data.licenses import source_license

    return [
        {"name": name, "rows": (rows or {}).get(name), "genre": genre, "licence": licence}
        for name in names
        for genre, licence in [source_license(name, sources or [])]
    ]


def _licence_terms(files: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The License section's lists: the files (each once) whose licence is ``"restricted"`` (non-commercial, research
    use or no licence stated) and those only ``"share_alike"``, each with its name and licence."""
    from psp_st.data.licenses import restrictions

    lists: dict[str, list[dict[str, Any]]] = {"restricted": [], "share_alike": []}
    seen = set()
    for row in files:
        if row["name"] in seen:
            continue
        seen.add(row["name"])
        terms = restrictions(row["licence"])
        if terms and terms != ["ShareAlike"]:
            lists["restricted"].append({"name": row["name"], "licence": row["licence"]})
        elif terms:
            lists["share_alike"].append({"name": row["name"], "licence": row["licence"]})
    return lists


def _genre_shares(files: list[dict[str, Any]], pairs_per_source: dict[str, int]) -> list[dict[str, Any]]:
    """Share of the pairs trained per epoch by genre, largest first: each source's pairs (keyed by the recipe's path
    or glob) spread over its files by their rows; the files' rows when no source matches. Rowless files are left out."""
    weights = {row["name"]: float(row["rows"] or 0) for row in files}
    from psp_st.data.licenses import source_matches

    matched = {source: [name for name in weights if source_matches(name, source)] for source in pairs_per_source}
    if any(matched.values()):
        shares = dict.fromkeys(weights, 0.0)
        for source, names in matched.items():
            rows = sum(weights[name] for name in names)
            for name in names:
                shares[name] += pairs_per_source[source] * weights[name] / rows if rows else 0.0
        weights = shares
    totals: dict[str, float] = {}
    for row in files:
        totals[row["genre"]] = totals.get(row["genre"], 0.0) + weights[row["name"]]
    total = sum(totals.values())
    ranked = sorted(((genre, value) for genre, value in totals.items() if value), key=lambda item: -item[1])
    return [{"genre": genre, "share": value / total} for genre, value in ranked] if total else []


def language_rows(info: dict[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """Per language of a multilingual build: training pairs and FLORES-200 retrieval error; and the notes on small or
    untrained languages. ``([], [])`` for a build without languages."""
    from psp_st.data.sources import NO_LANGUAGE

    counts = dict((info.get("training") or {}).get("pairs_per_language") or {})
    metrics = (info.get("evaluation") or {}).get("metrics") or {}
    flores = {key.partition(" / ")[0].removeprefix("flores-") for key in metrics if key.startswith("flores-")}
    untagged = counts.pop(NO_LANGUAGE, None)
    if not counts:
        return [], []
    rows, notes = [], []
    for lang in sorted(set(counts) | flores - {"mean"}):
        pairs = counts.get(lang, {})
        x2en, en2x = (metrics.get(f"flores-{lang} / {name} error %") for name in ("x->en", "en->x"))
        rows.append(
            {"lang": lang, "pairs": pairs.get("pairs"), "distinct": pairs.get("distinct"), "x2en": x2en, "en2x": en2x}
        )
        errors = "" if x2en is None else f"; FLORES-200 devtest retrieval error {x2en:.1f}% x->en, {en2x:.1f}% en->x"
        if not pairs:
            notes.append(
                f"{lang}: no training pairs (evaluated only; anything it gets is through shared pieces){errors}."
            )
        elif pairs["distinct"] < SMALL_LANGUAGE_PAIRS:
            larger = any(other.get("distinct", 0) > pairs["distinct"] for other in counts.values())
            compared = "the languages with more bitext" if larger else "a model trained on more bitext"
            notes.append(
                f"{lang}: only {pairs['distinct']:,} distinct training pairs (seen {pairs['pairs'] / pairs['distinct']:.1f} "
                f"times per epoch){errors}: expect weaker results in {lang} than in {compared}."
            )
    if untagged:
        rows.append({"lang": "en (paraphrase pairs)", **untagged, "x2en": None, "en2x": None})
    return rows, notes


def card_fields(info: dict[str, Any]) -> dict[str, Any]:
    """The template's placeholders that come from the build record ``info`` (``{}`` for a folder without one)."""
    import yaml

    import psp_st
    from psp_st.data.licenses import data_license
    from psp_st.losses.margin import PSP_CITATION  # torch: only where a card is filled
    from psp_st.training.soup import SOUP_CITATION
    from psp_st.training.wise_ft import WISE_FT_CITATION

    training = info.get("training") or {}
    evaluation = info.get("evaluation") or {}
    recipe = info.get("recipe")
    sources = {
        section: ((recipe or {}).get(section) or {}).get("sources") or [] for section in ("data", "distillation")
    }
    files = _file_rows(list(training.get("files") or {}), training.get("files"), sources["data"])
    distillation = dict(training.get("distillation") or {})
    if distillation:
        distillation["files"] = _file_rows(list(distillation.get("files") or []), sources=sources["distillation"])
        distillation["licence"] = data_license(str(distillation.get("teacher") or ""))[1]
        distillation["sentences"] = int(distillation.get("sentences") or 0)
    metrics = []
    for key, value in (evaluation.get("metrics") or {}).items():
        task, _, metric = key.partition(" / ")
        metrics.append({"task": TASK_NAMES.get(task, task), "metric": metric or "-", "value": float(value)})
    teacher_init = None  # piece vectors from the teacher: a source even without the distillation term (weight 0)
    if ((recipe or {}).get("model") or {}).get("init") == "teacher":
        from psp_st.training.schema import DistillationSection

        teacher = ((recipe or {}).get("distillation") or {}).get("teacher") or DistillationSection().teacher
        teacher_init = {"name": teacher, "licence": data_license(teacher)[1]}
    recipe_text = yaml.safe_dump(recipe, sort_keys=False).rstrip() if recipe is not None else ""
    name = info.get("name")
    languages, language_notes = language_rows(info)
    release = (recipe or {}).get("release") or {}
    teachers = [
        {"name": name, "licence": licence}
        for name, licence in {
            **({distillation["teacher"]: distillation["licence"]} if distillation.get("teacher") else {}),
            **({teacher_init["name"]: teacher_init["licence"]} if teacher_init else {}),
        }.items()
    ]
    return {
        **_licence_terms([*files, *(distillation.get("files") or []), *teachers]),
        "license_name": release.get("license_name"),
        "license_link": release.get("license_link"),
        "language_rows": languages,
        "language_notes": language_notes,
        "description": (recipe or {}).get("description", ""),
        "release": bool(name),
        "float16": info.get("weights_dtype") == "float16",
        "build_command": info.get("command") or (f"psp-st build {name}" if name else "psp-st build"),
        "psp_st_version": info.get("psp_st_version", psp_st.__version__),
        "suite": evaluation.get("suite", "quick"),
        "metrics": metrics,
        "threshold_note": THRESHOLD_NOTE if any(row["metric"] == "majority rate" for row in metrics) else "",
        "files": files,
        "genres": _genre_shares(files, training.get("pairs_per_source") or {}),
        "pairs_per_source": training.get("pairs_per_source") or {},
        "pairs": training.get("pairs"),
        "init_from": ((recipe or {}).get("model") or {}).get("init_from"),
        "distillation": distillation,
        "teacher_init": teacher_init,
        "stages": info.get("stage_seconds") or {},
        "resumed_from": training.get("resumed_from"),  # the times are the last process's
        "recipe": recipe_text,
        "fence": "`" * max([3, *(len(run) + 1 for run in re.findall("`{3,}", recipe_text))]),  # longer than any inside
        "seed": info.get("seed"),
        "max_steps": info.get("max_steps"),
        "training_minutes": training["seconds"] / 60 if training.get("seconds") else None,
        "training_threads": training.get("threads", "?"),
        "soup": training.get("soup"),
        "wise_ft": training.get("wise_ft"),
        "norm_power": training.get("norm_power"),
        "citations": {
            "P-SP": PSP_CITATION,
            **({"Model soups": SOUP_CITATION} if training.get("soup") else {}),
            **({"WiSE-FT": WISE_FT_CITATION} if training.get("wise_ft") else {}),
            **(info.get("citations") or {}),
        },
    }


def render_model_card(
    model: SentenceTransformer, info: dict[str, Any], model_id: str | None = None, form: str = "static"
) -> str:
    """The README.md of a psp-st model folder, from the template and the build record ``info`` (``{}`` without one).

    ``model_id``: what the usage snippets load (default: the record's short name); ``form``: ``"static"`` (a release
    root) or ``"trainable"`` (a ``PSPEmbedding`` folder: a release's ``trainable/``, or a training run's output).
    """
    from huggingface_hub import ModelCard

    if form not in FORMS:
        raise ValueError(f"form must be one of {FORMS}, got {form!r}")
    dimension = model.get_embedding_dimension()
    if dimension is None:  # ST's answer when no module reports an output dimension; a P-SP model always has one
        raise ValueError(
            "render_model_card: the model reports no embedding dimension; use a P-SP model folder (PSPEmbedding or "
            "StaticEmbedding)"
        )
    name = info.get("name")
    model_id = model_id or name
    if not model_id:
        raise ValueError("render_model_card: pass model_id (the folder has no build record naming the model)")
    data = model.model_card_data
    data.local_files_only = True  # no Hub lookups while building cards (and the Hub may be unreachable)
    data.generate_widget_examples = False
    trained = [row["lang"] for row in language_rows(info)[0] if row["distinct"] and len(row["lang"]) <= 3]
    data.language = data.language or sorted({"en", *trained})
    stated = ((info.get("recipe") or {}).get("release") or {}).get("license")  # the recipe's release.license
    data.license = stated or data.license or "apache-2.0"
    data.model_id = model_id
    data.model_name = f"{name or model_id} ({'static' if form == 'static' else 'trainable PSPEmbedding'})"
    for tag in ("psp-st", "paraphrase", "static-embeddings" if form == "static" else "psp-embedding"):
        if tag not in data.tags:
            data.tags.append(tag)
    max_length = model.get_max_seq_length()
    if max_length is not None and not math.isfinite(max_length):  # ST's static models report inf: the tokenizer cuts
        max_length = (getattr(getattr(model[0], "tokenizer", None), "truncation", None) or {}).get("max_length")
    card = ModelCard.from_template(
        data,  # type: ignore[arg-type]  # ST's card data is a CardData, as in ST's own generate_model_card
        template_path=str(template_path()),
        title=data.model_name,
        form=form,
        dimension=dimension,
        max_length=f"{max_length} pieces" if max_length else "no limit (all pieces are averaged)",
        languages=list(data.language),
        trainable_subfolder=TRAINABLE_SUBFOLDER,
        **card_fields(info),
    )
    return str(card.content).rstrip() + "\n"


def write_model_cards(
    folder: str | os.PathLike, model_id: str | None = None, citations: dict[str, str] | None = None
) -> list[Path]:
    """Write README.md for every form in ``folder`` and return the cards written: a release gets the static card at
    its root and the trainable card in ``trainable/``, any other folder of psp-st modules the trainable card.
    ``model_id`` defaults to the record's short name, else the folder; ``citations`` (name -> BibTeX) adds papers
    to a folder without a record."""
    folder = Path(folder)
    info = read_build_record(folder) or {}
    if not info and citations:
        info = {"citations": citations}
    model_id = model_id or info.get("name") or str(folder)
    written = []
    trainable = folder / TRAINABLE_SUBFOLDER
    forms = [(folder, "static"), (trainable, "trainable")] if info.get("name") else [(folder, "trainable")]
    for path, form in forms:
        if path.is_dir():
            card = render_model_card(load_trusted(path), info, model_id=model_id, form=form)
            (path / "README.md").write_text(card, encoding="utf-8", errors="backslashreplace")  # a non-UTF-8 name
            written.append(path / "README.md")
    return written
