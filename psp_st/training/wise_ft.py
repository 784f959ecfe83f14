"""WiSE-FT (Wortsman et al., 2022, "Robust fine-tuning of zero-shot models"): the released weights are
``initial + alpha * (trained - initial)``, a point on the line from the initial model (for psp-en, piece vectors
distilled from the teacher) to the trained one (a run, or a soup of runs). Below 1 it keeps more of what the initial
model knew and less of what the training pairs taught. Sentence-Transformers and transformers have no weight-space
interpolation, hence this module."""

from __future__ import annotations

from torch import nn

WISE_FT_CITATION = """@inproceedings{wortsman2022robust,
    title = {Robust fine-tuning of zero-shot models},
    author = {Wortsman, Mitchell and Ilharco, Gabriel and Kim, Jong Wook and Li, Mike and Kornblith, Simon and Roelofs, Rebecca and Lopes, Raphael Gontijo and Hajishirzi, Hannaneh and Farhadi, Ali and Namkoong, Hongseok and Schmidt, Ludwig},
    booktitle = {Proceedings of the IEEE/CVF Conference on Computer Vision and Pattern Recognition},
    year = {2022},
}"""


def interpolate_from_initial(model: nn.Module, initial: nn.Module, alpha: float) -> None:
    """Set ``model``'s floating-point weights to ``initial + alpha * (model - initial)`` in place (computed in
    float64); other tensors (e.g. integer buffers) stay ``model``'s. The two must have the same weights' names and
    shapes (one architecture: ``initial`` is the model the training started from)."""
    start = initial.state_dict()
    mixed = {}
    for name, tensor in model.state_dict().items():
        if tensor.is_floating_point():
            if name not in start or start[name].shape != tensor.shape:
                raise ValueError(f"wise_ft: the initial model has no {name!r} of shape {tuple(tensor.shape)}")
            origin = start[name].double()
            mixed[name] = (origin + alpha * (tensor.double() - origin)).to(tensor.dtype)
    model.load_state_dict(mixed, strict=False)
