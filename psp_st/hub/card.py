"""Model cards for released psp-st models: Sentence-Transformers' generated card, corrected and completed.

ST's card (``generate_model_card``) gets the metadata, architecture and framework versions right, but for a
static model it says "Maximum Sequence Length: inf tokens", has no training-data, evaluation, speed or
limitation sections for a model built outside its trainer, and its usage snippet does not know that the
trainable form needs ``pip install psp-st`` and ``trust_remote_code=True``. :func:`render_model_card` keeps
ST's card and patches those parts from the build record (``psp_build.json``) written by ``psp-st build``:
every number in it was measured by that build.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

#: BibTeX of the papers psp-st implements (see the project's paper list).
CITATIONS: dict[str, str] = {
    "P-SP": """@inproceedings{wieting-etal-2022-paraphrastic,
    title = "Paraphrastic Representations at Scale",
    author = "Wieting, John and Gimpel, Kevin and Neubig, Graham and Berg-Kirkpatrick, Taylor",
    booktitle = "Proceedings of the 2022 Conference on Empirical Methods in Natural Language Processing: System Demonstrations",
    year = "2022",
    publisher = "Association for Computational Linguistics",
}""",
    "ParaNMT-50M": """@inproceedings{wieting-gimpel-2018-paranmt,
    title = "{P}ara{NMT}-50{M}: Pushing the Limits of Paraphrastic Sentence Embeddings with Millions of Machine Translations",
    author = "Wieting, John and Gimpel, Kevin",
    booktitle = "Proceedings of the 56th Annual Meeting of the Association for Computational Linguistics (Volume 1: Long Papers)",
    year = "2018",
    address = "Melbourne, Australia",
    publisher = "Association for Computational Linguistics",
    pages = "451--462",
}""",
    "Back-translated bitext": """@inproceedings{wieting-etal-2017-learning,
    title = "Learning Paraphrastic Sentence Embeddings from Back-Translated Bitext",
    author = "Wieting, John and Mallinson, Jonathan and Gimpel, Kevin",
    booktitle = "Proceedings of the 2017 Conference on Empirical Methods in Natural Language Processing",
    year = "2017",
    address = "Copenhagen, Denmark",
    publisher = "Association for Computational Linguistics",
}""",
    "Opusparcus paraphrase detection": """@inproceedings{sjoblom-etal-2018-paraphrase,
    title = "Paraphrase Detection on Noisy Subtitles in Six Languages",
    author = "Sj{\\"o}blom, Eetu and Creutz, Mathias and Aulamo, Mikko",
    booktitle = "Proceedings of the 2018 EMNLP Workshop W-NUT: The 4th Workshop on Noisy User-generated Text",
    year = "2018",
    address = "Brussels, Belgium",
    publisher = "Association for Computational Linguistics",
}""",
    "Turku Paraphrase Corpus": """@article{kanerva-etal-2023-towards,
    title = "Towards diverse and contextually anchored paraphrase modeling: A dataset and baselines for {F}innish",
    author = "Kanerva, Jenna and Ginter, Filip and Chang, Li-Hsin and Rastas, Iiro and Skantsi, Valtteri and Kilpel{\\"a}inen, Jemina and Kupari, Hanna-Mari and Piirto, Aurora and Saarni, Jenna and Sev{\\'o}n, Maija and Tarkka, Otto",
    journal = "Natural Language Engineering",
    year = "2023",
    publisher = "Cambridge University Press",
}""",
    "Sentence-Transformers": """@inproceedings{reimers-2019-sentence-bert,
    title = "Sentence-BERT: Sentence Embeddings using Siamese BERT-Networks",
    author = "Reimers, Nils and Gurevych, Iryna",
    booktitle = "Proceedings of the 2019 Conference on Empirical Methods in Natural Language Processing",
    year = "2019",
    publisher = "Association for Computational Linguistics",
    url = "https://arxiv.org/abs/1908.10084",
}""",
}

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

LIMITATIONS = """## Bias, Risks and Limitations

- **Training data.** {data_note} The model is strongest on short descriptive English sentences and weaker on
  dialogue, negation-sensitive pairs and domain-specific text.
- **A bag of subwords.** The embedding is the average of sentencepiece piece vectors: word order is ignored
  ("the dog bit the man" = "the man bit the dog"), and negation is a small shift of the average.
- **English only**, lower-cased; pieces unseen in training contribute their `<unk>` vector (static form) or are
  dropped (trainable form), so the two forms differ slightly on such text.
- Scores are cosine similarities of paraphrastic embeddings: they measure meaning overlap, not entailment,
  factuality or topic relevance, and are not calibrated probabilities.
- The training data licences are mostly research-only or non-commercial (see the table under Training Data):
  check them before commercial use.
"""

#: Caption files of the shared data (for the share of caption pairs in the limitations).
CAPTION_FILES = ("flickr30k_captions_multi30k", "flickr8k_captions", "coco_captions_val2017")


def limitations_section(info: dict[str, Any]) -> str:
    """``## Bias, Risks and Limitations`` with the caption share of this build's pairs."""
    training = info.get("training") or {}
    per_source = training.get("pairs_per_source") or {}
    counts = per_source or {name: rows for name, rows in (training.get("files") or {}).items() if rows}
    total = sum(counts.values())
    captions = sum(n for name, n in counts.items() if any(stem in name for stem in CAPTION_FILES))
    if total:
        note = (
            f"{captions / total:.0%} of the {total:,} training pairs per epoch are image captions "
            "(Flickr30k, Flickr8k, COCO); the rest are the other sources listed under Training Data."
        )
    else:
        note = "See Training Data for the sources."
    return LIMITATIONS.replace("{data_note}", note)


def evaluation_section(info: dict[str, Any]) -> str:
    """``## Evaluation``: the metrics and the speed recorded in the build record, with how they were measured."""
    lines = ["## Evaluation", ""]
    evaluation = info.get("evaluation") or {}
    metrics: dict[str, Any] = evaluation.get("metrics") or {}
    if metrics:
        lines += [
            f'Measured by `psp_st.evaluation.run_suite(model, suite="{evaluation.get("suite", "quick")}")` when this '
            f"model was built (psp-st {info.get('psp_st_version', '?')}); correlations and accuracies x100.",
            "",
            "| Task | Metric | Value |",
            "|:-----|:-------|------:|",
        ]
        for key, value in metrics.items():
            task, _, metric = key.partition(" / ")
            lines.append(f"| {TASK_NAMES.get(task, task)} | {metric or '-'} | {value:.2f} |")
        lines.append("")
    else:
        lines += ["No evaluation was recorded for this build.", ""]
    speed = info.get("speed")
    if speed:
        lines += [
            "### Speed",
            "",
            f"- **{speed['sentences_per_second']:,.0f} sentences/s** with `SentenceTransformer.encode` on "
            f"{speed.get('threads', 1)} CPU thread ({speed.get('sentences', '?')} sentences of "
            f"`{speed.get('corpus', 'English news')}`, batch size {speed.get('batch_size', '?')}, "
            f"{speed.get('cpu', 'CPU')}).",
        ]
        if speed.get("fast_path_sentences_per_second"):
            lines.append(
                f"- **{speed['fast_path_sentences_per_second']:,.0f} sentences/s** with the trainable "
                "form's `PSPEmbedding.embed` fast path (same thread count and sentences)."
            )
        lines.append("")
    return "\n".join(lines)


def training_section(info: dict[str, Any]) -> str:
    """``### Training Data`` and ``### Training Recipe`` from the build record."""
    training = info.get("training") or {}
    lines = ["### Training Data", ""]
    from psp_st.data.licenses import data_license

    files = training.get("files") or {}
    datasets = training.get("datasets") or []
    per_source = training.get("pairs_per_source") or {}
    if files:
        lines += ["| File | Rows | Genre | Licence (as stated by the source) |", "|:--|--:|:--|:--|"]
        for name, rows in files.items():
            genre, licence = data_license(name)
            lines.append(
                f"| `{name}` | {rows:,} | {genre} | {licence} |" if rows else f"| `{name}` | - | {genre} | {licence} |"
            )
    elif datasets:
        lines += [f"- {item}" for item in datasets]
    else:
        lines.append("See the recipe below.")
    if per_source:
        lines += ["", "Pairs per epoch, per recipe source (after validation, filters, weights and caps):", ""]
        lines += [f"- `{name}`: {count:,}" for name, count in per_source.items()]
    if training.get("pairs"):
        lines += ["", f"{training['pairs']:,} training pairs per epoch after validation and filtering."]
    distillation = training.get("distillation") or {}
    if distillation.get("files"):
        lines += [
            "",
            f"Sentence distillation from `{distillation.get('teacher')}` on "
            f"{distillation.get('sentences', 0):,} unlabelled sentences sampled from:",
            "",
            "| File | Genre | Licence (as stated by the source) |",
            "|:--|:--|:--|",
        ]
        for name in distillation["files"]:
            genre, licence = data_license(name)
            lines.append(f"| `{name}` | {genre} | {licence} |")
    stages = info.get("stage_seconds") or {}
    if stages:
        lines += [
            "",
            "Build time per stage (seconds): "
            + ", ".join(f"{stage} {seconds:,.0f}" for stage, seconds in stages.items())
            + ".",
        ]
    lines += ["", "### Training Recipe", ""]
    lines.append(
        f"Built with `psp-st build {info.get('name', '?')}` (seed {info.get('seed')}"
        + (f", max_steps {info['max_steps']}" if info.get("max_steps") else "")
        + (
            f", {training['seconds'] / 60:.1f} min on {training.get('threads', '?')} CPU threads"
            if training.get("seconds")
            else ""
        )
        + "), which runs this recipe end to end:"
    )
    recipe = info.get("recipe")
    if recipe is not None:
        try:
            import yaml

            recipe_text = yaml.safe_dump(recipe, sort_keys=False).rstrip()
            language = "yaml"
        except ImportError:  # pragma: no cover - pyyaml is a core dependency
            recipe_text, language = json.dumps(recipe, indent=2), "json"
        lines += ["", f"```{language}", recipe_text, "```"]
    lines.append("")
    return "\n".join(lines)


def usage_section(model_id: str, form: str, dimension: int | str) -> str:
    """``## Usage`` with the right install line and loading flags for the static or trainable form."""
    if form == "static":
        return f"""## Usage

### Direct Usage (Sentence Transformers)

This folder is a plain Sentence-Transformers `StaticEmbedding` model: no `trust_remote_code`, no psp-st needed.

```bash
pip install -U sentence-transformers
```

```python
from sentence_transformers import SentenceTransformer

model = SentenceTransformer("{model_id}")
sentences = [
    "The weather is lovely today.",
    "It's so sunny outside!",
    "He drove to the stadium.",
]
embeddings = model.encode(sentences)
print(embeddings.shape)
# [3, {dimension}]
print(model.similarity(embeddings, embeddings))
```

### Fine-tuning (psp-st)

The same weights as a trainable psp-st `PSPEmbedding` (sentencepiece tokenizer, paraphrastic losses, mega-batching)
are in the `{_trainable()}/` subfolder:

```bash
pip install psp-st
```

```python
import psp_st

model = psp_st.load("{model_id}", trainable=True)  # a SentenceTransformer around PSPEmbedding
```
"""
    return f"""## Usage

This is the trainable psp-st form (a `PSPEmbedding` module). It needs psp-st installed, and
`trust_remote_code=True` because the module class is psp-st code (the installed package, not code downloaded with
the model). For inference only, use the parent folder's static form instead: it needs neither.

```bash
pip install psp-st
```

```python
import psp_st

model = psp_st.load("{model_id}", trainable=True)
# equivalently, from a local build: SentenceTransformer("psp-en/{_trainable()}", trust_remote_code=True)
embeddings = model.encode(["The weather is lovely today.", "It's so sunny outside!"])
print(embeddings.shape)
# [2, {dimension}]
```
"""


def _trainable() -> str:
    from psp_st.hub.load import TRAINABLE_SUBFOLDER

    return TRAINABLE_SUBFOLDER


def citation_section() -> str:
    blocks = [f"#### {name}\n\n```bibtex\n{bibtex}\n```" for name, bibtex in CITATIONS.items()]
    return "## Citation\n\n### BibTeX\n\n" + "\n\n".join(blocks) + "\n"


def _blocks(card: str) -> list[list[str]]:
    """Split a markdown card into blocks, each starting at a heading outside code fences.

    A ``<!--`` line directly before a heading belongs to that heading's block (ST comments out unused sections).
    """
    lines = card.split("\n")
    blocks: list[list[str]] = [[]]
    in_fence = False
    for index, line in enumerate(lines):
        if line.startswith("```"):
            in_fence = not in_fence
        starts_comment = line.strip() == "<!--" and index + 1 < len(lines) and lines[index + 1].startswith("#")
        is_heading = (
            line.startswith("#")
            and not in_fence
            and not (blocks[-1] and blocks[-1][-1].strip() == "<!--" and len(blocks[-1]) == 1)
        )
        if not in_fence and (starts_comment or is_heading):
            blocks.append([])
        blocks[-1].append(line)
    return [block for block in blocks if block]


def _heading(block: list[str]) -> str:
    return block[1] if block[0].strip() == "<!--" and len(block) > 1 else block[0]


def _level(heading: str) -> int:
    return len(heading) - len(heading.lstrip("#"))


def _replace_section(card: str, heading: str, new: str) -> str:
    """Replace the ``heading`` section (with its subsections) by ``new``, or append ``new`` if there is none."""
    blocks = _blocks(card)
    for index, block in enumerate(blocks):
        if _heading(block).strip() == heading:
            level = _level(heading)
            end = index + 1
            while end < len(blocks) and (
                not _heading(blocks[end]).startswith("#") or _level(_heading(blocks[end])) > level
            ):
                end += 1
            blocks[index:end] = [new.rstrip("\n").split("\n") + [""]]
            return "\n".join(line for block in blocks for line in block)
    return card.rstrip() + "\n\n" + new


def _insert_before(card: str, anchor: str, section: str, replace: str) -> str:
    """Replace the ``replace`` section if the card has one, else insert ``section`` before ``anchor``."""
    blocks = _blocks(card)
    if any(_heading(block).strip() == replace for block in blocks):
        return _replace_section(card, replace, section)
    for index, block in enumerate(blocks):
        if _heading(block).strip() == anchor:
            blocks.insert(index, section.rstrip("\n").split("\n") + [""])
            return "\n".join(line for block in blocks for line in block)
    return card.rstrip() + "\n\n" + section


def render_model_card(
    model: SentenceTransformer, info: dict[str, Any], model_id: str | None = None, form: str = "static"
) -> str:
    """The README.md of a released model: ST's generated card, corrected (see the module docstring).

    Args:
        model: the model the card describes (its architecture and dimension go in the card).
        info: the build record (``psp_build.json``).
        model_id: Hub id used in the usage snippet (default: the short name, which loads the local build).
        form: ``"static"`` (the published root folder) or ``"trainable"`` (the ``trainable/`` subfolder).
    """
    from sentence_transformers.base.model_card import generate_model_card

    if form not in ("static", "trainable"):
        raise ValueError(f"form must be 'static' or 'trainable', got {form!r}")
    name = info.get("name", "psp-en")
    model_id = model_id or name
    data = model.model_card_data
    data.local_files_only = True  # no Hub lookups while building cards (and the Hub may be unreachable)
    data.generate_widget_examples = False
    data.language = data.language or ["en"]
    data.license = data.license or "apache-2.0"
    data.model_name = f"{name} ({'static' if form == 'static' else 'trainable PSPEmbedding'})"
    data.model_id = model_id
    for tag in ("psp-st", "paraphrase", "static-embeddings" if form == "static" else "psp-embedding"):
        if tag not in data.tags:
            data.tags.append(tag)
    card = generate_model_card(model).replace(ST_PLACEHOLDER, model_id)
    dimension = model.get_embedding_dimension()
    if dimension is None:  # ST's answer when no module reports an output dimension; a P-SP release always has one
        raise ValueError(
            "render_model_card: the model reports no embedding dimension (get_embedding_dimension() "
            "is None); build the card from a P-SP model folder (PSPEmbedding or StaticEmbedding)"
        )

    speed = (info.get("speed") or {}).get("sentences_per_second")
    speed_note = f" ({speed:,.0f} sentences/s on one thread, measured at build time)" if speed else ""
    description = (
        f'This is a P-SP paraphrastic sentence embedding model (Wieting et al., "Paraphrastic Representations at '
        f'Scale") built with [psp-st](https://github.com/psp-st/psp-st): the embedding of a sentence is the average '
        f"of the vectors of its sentencepiece pieces, so it maps English text to a {dimension}-dimensional vector "
        f"on CPU{speed_note}. Use it for semantic textual similarity, paraphrase mining and semantic search."
    )
    card = re.sub(r"^This is a \[sentence-transformers\].*$", lambda _: description, card, count=1, flags=re.M)
    card = re.sub(
        r"\*\*Maximum Sequence Length:\*\* inf tokens",
        "**Maximum Sequence Length:** no limit (all pieces are averaged)",
        card,
    )
    card = _replace_section(card, "## Usage", usage_section(model_id, form, dimension))
    card = _insert_before(
        card, "## Training Details", limitations_section(info), replace="## Bias, Risks and Limitations"
    )
    card = _insert_before(card, "## Bias, Risks and Limitations", evaluation_section(info), replace="## Evaluation")
    card = card.replace("## Training Details\n", "## Training Details\n\n" + training_section(info), 1)
    card = _replace_section(card, "## Citation", citation_section())
    return card
