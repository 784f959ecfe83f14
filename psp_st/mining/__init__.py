"""Mining training pairs from unlabelled text.

* :mod:`~psp_st.mining.pairs` - the ``psp-st mine`` job: embed, FAISS search, ratio margin, filters, Parquet.
* :mod:`~psp_st.mining.embed_shards` / :mod:`~psp_st.mining.knn_shards` - the sharded, resumable stages.
* :mod:`~psp_st.mining.shards` (shard plans, outputs, manifests), :mod:`~psp_st.mining.executor` (local or Ray
  Data), :mod:`~psp_st.mining.ann` (FAISS), :mod:`~psp_st.mining.margin` (scoring),
  :mod:`~psp_st.mining.embedder` (the one place a model is opened).
* :mod:`~psp_st.mining.teacher` - the teacher encoder, corpus sentences and evaluation text (decontamination).
"""

from __future__ import annotations

from psp_st.mining.teacher import load_teacher, read_sentences

__all__ = ["load_teacher", "read_sentences"]
