"""Licence and genre of every shared training file (English pairs, corpus, X-English bitext), as stated by its
source (shared/data/README.md).

The one table model cards read to list "trained on X (licence Y)". Keys are file stems; a file not listed here is
shown as "not in psp_st.data.licenses: check its source".
"""

from __future__ import annotations

from pathlib import Path

#: file stem -> (genre, licence as stated by the source)
DATA_LICENSES: dict[str, tuple[str, str]] = {
    # training_pairs/
    "flickr30k_captions_multi30k": (
        "image captions (Flickr30k via Multi30k)",
        "Flickr30k/Multi30k: non-commercial research/education",
    ),
    "flickr8k_captions": ("image captions (Flickr8k)", "Flickr8k: research use"),
    "coco_captions_val2017": ("image captions (MS-COCO 2017 val)", "COCO annotations CC BY 4.0"),
    "parasci": ("scientific-paper paraphrases (ParaSCI)", "no license stated (research dataset)"),
    "wikiauto_gem_valid_simplification": ("Wikipedia simplification (GEM wiki_auto valid)", "CC BY-SA 3.0"),
    # training_pairs_extra/
    "bible_translation_verse_pairs": ("Bible verses in two English translations", "public domain"),
    "paradetox_toxic_neutral": ("toxic -> neutral rewrites (ParaDetox; offensive language)", "CC0 1.0"),
    "shakespeare_original_modern": (
        "Shakespeare <-> modern English",
        "no license stated; modern side research use only",
    ),
    "asset_simplification": ("Wikipedia simplification (ASSET)", "CC BY-NC 4.0"),
    "webnlg_multireference": ("data-to-text references (WebNLG)", "CC BY-NC-SA 4.0"),
    "wikisplit_tune_validation_test": ("sentence splitting (WikiSplit)", "CC BY-SA 4.0"),
    "disflqa_question_original_disfluent": ("questions <-> disfluent questions (Disfl-QA)", "CC BY 4.0"),
    "sgdx_schema_description_paraphrases": ("schema description paraphrases (SGD-X)", "CC BY-SA 4.0"),
    "e2e_nlg_multireference": ("restaurant descriptions (E2E NLG)", "CC BY-SA 4.0"),
    "snli_dev_test_entailment": ("NLI entailment (SNLI dev/test)", "CC BY-SA 4.0"),
    "parade_cs_definition_paraphrases": (
        "computer-science definitions (PARADE)",
        "no license stated (research dataset)",
    ),
    "onestopenglish_reading_level_pairs": ("news at reading levels (OneStopEnglish)", "CC BY-SA 4.0"),
    "wmt20_multireference_news": ("news, two reference translations (WMT20)", "WMT test sets: research use"),
    "xnli_en_dev_test_entailment": ("NLI entailment (XNLI en dev/test)", "CC BY-NC 4.0"),
    "turkcorpus_simplification": ("Wikipedia simplification (TurkCorpus)", "GPL-3.0 repo; Wikipedia text CC BY-SA"),
    "rte_entailment": ("news entailment (PASCAL RTE 1-3)", "PASCAL RTE: research use"),
    # corpus/ (unlabelled sentences for distillation)
    "english_sentences": (
        "news (WMT, TICO-19, FLORES) and Brown corpus",
        "WMT: research use; Brown: redistribution permitted",
    ),
    "wikipedia_sentences": ("Wikipedia (GAP, WikiText-2, WikiSplit)", "CC BY-SA"),
    "query_wellformedness_questions": ("search queries", "CC BY-SA 4.0"),
    "intent_queries_and_questions": ("intent queries, questions (CLINC150, Banking77, SQuAD)", "CC BY 3.0 / CC BY 4.0"),
    "sgd_dialogue_utterances": ("task-oriented dialogue (SGD)", "CC BY-SA 4.0"),
    "nltk_corpora": (
        "reviews, news, speeches, chat (NLTK corpora)",
        "mostly research/non-commercial; state_union and inaugural public domain",
    ),
    "senteval_sentences": ("reviews, questions (SentEval: SST, MR, CR, SUBJ, TREC)", "research use"),
    "bible_verses": ("Bible verses", "public domain"),
    "gutenberg_books_sample": ("books (Project Gutenberg)", "public domain in the USA"),
    # bitext/ (X-English; FLORES-200 devtest rows are the cross-lingual dev set, excluded by the recipes)
    **{
        f"{lang}-en": (
            f"{lang}-en translations (WMT news test sets, Multi30k captions, TICO-19, FLORES-200)",
            "WMT test sets: research use; Multi30k: non-commercial research; TICO-19: CC0; FLORES-200: CC BY-SA 4.0",
        )
        for lang in ("ar", "cs", "de", "es", "fi", "fr", "ru", "sv", "tr", "zh")
    },
}

UNKNOWN = ("?", "not in psp_st.data.licenses: check its source")


def data_license(path: str) -> tuple[str, str]:
    """``(genre, licence)`` of a shared data file (any path or glob whose stem is in :data:`DATA_LICENSES`)."""
    return DATA_LICENSES.get(Path(str(path)).name.removesuffix(".parquet"), UNKNOWN)
