"""Adam for a mix of sparse (embedding tables) and dense gradients, and gradient-norm clipping that reads both."""

from __future__ import annotations

import math
from collections.abc import Iterable

import torch

from psp_st.arguments import check_number, check_probability


def check_adam(betas: tuple[float, float], eps: float) -> None:
    """Adam's ``betas`` in ``[0, 1)`` and ``eps >= 0``, as ``torch.optim.Adam`` checks (names: the trainer's keys):
    ``adam_beta2`` 1 never moves a weight, ``adam_beta1`` 1 divides by zero at the first step (N8-3, audit_round8)."""
    for index, beta in enumerate(betas):
        check_probability(f"adam_beta{index + 1}", beta)
    check_number("adam_epsilon", eps, 0.0)


class SparseDenseAdam(torch.optim.Optimizer):
    """Adam that updates only the touched rows of sparse-gradient parameters ("lazy Adam"), AdamW for dense ones;
    ``weight_decay`` is AdamW's decoupled decay, on the touched rows of sparse parameters.

    Why our own: ``torch.optim.SparseAdam`` rejects dense gradients and ``torch.optim.Adam`` sparse ones, while a
    model may hold both (an embedding table plus LSTM weights). No clipping: see :func:`clip_grad_norm_sparse`.

    Bias correction uses the global step (as ``torch.optim.SparseAdam``), so a row first touched late moves by about
    ``lr * (1 - beta1) / sqrt(1 - beta2)`` (3.16 ``lr`` at the defaults): rare rows take the largest steps.
    ``row_bias_correction=True`` corrects each row by its own number of updates instead (dense Adam on the row's
    own steps); psp-en's recipe keeps the default, which won on dev (``benchmarks/results/psp_en_v3_ablation.md``,
    round 21).
    """

    def __init__(
        self,
        params: Iterable[torch.Tensor] | Iterable[dict],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        row_bias_correction: bool = False,
    ) -> None:
        if lr < 0:
            raise ValueError(f"learning rate must be >= 0, got {lr}")
        check_adam(betas, eps)
        defaults = {
            "lr": lr,
            "betas": tuple(betas),
            "eps": eps,
            "weight_decay": weight_decay,
            "row_bias_correction": row_bias_correction,
        }
        super().__init__(params, defaults)
        if not any(group["params"] for group in self.param_groups):
            raise ValueError("nothing to train: no parameter requires a gradient (is every module frozen?)")

    def __setstate__(self, state: dict) -> None:
        """Also on ``load_state_dict``: a checkpoint saved before ``row_bias_correction`` existed used the global
        step (torch's idiom for an option added later)."""
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("row_bias_correction", False)

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["step"] = torch.tensor(0.0)
                    state["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                    state["exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                state["step"] += 1
                step = float(state["step"])
                step_size = group["lr"] * math.sqrt(1 - beta2**step) / (1 - beta1**step)
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                if grad.is_sparse:
                    grad = grad.coalesce()
                    if grad.sparse_dim() != 1:
                        raise ValueError("SparseDenseAdam supports row-sparse gradients (embedding tables) only")
                    rows, values = grad.indices()[0], grad.values()
                    if group["weight_decay"]:  # AdamW's decoupled decay, lazily: on the touched rows only
                        decayed = p.index_select(0, rows).mul_(1 - group["lr"] * group["weight_decay"])
                        p.index_copy_(0, rows, decayed)
                    m = exp_avg.index_select(0, rows).mul_(beta1).add_(values, alpha=1 - beta1)
                    v = exp_avg_sq.index_select(0, rows).mul_(beta2).addcmul_(values, values, value=1 - beta2)
                    exp_avg.index_copy_(0, rows, m)
                    exp_avg_sq.index_copy_(0, rows, v)
                    if group["row_bias_correction"]:
                        if "row_steps" not in state:
                            state["row_steps"] = torch.zeros(p.shape[0], dtype=torch.float64)
                        touched = state["row_steps"].index_select(0, rows).add_(1)
                        state["row_steps"].index_copy_(0, rows, touched)
                        m.div_((1 - beta1**touched).to(m.dtype).unsqueeze(1))
                        v.div_((1 - beta2**touched).to(v.dtype).unsqueeze(1))
                        p.index_add_(0, rows, m.div_(v.sqrt_().add_(group["eps"])), alpha=-group["lr"])
                    else:
                        p.index_add_(0, rows, m.div_(v.sqrt_().add_(group["eps"])), alpha=-step_size)
                else:
                    if group["weight_decay"]:
                        p.mul_(1 - group["lr"] * group["weight_decay"])
                    exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
                    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                    p.addcdiv_(exp_avg, exp_avg_sq.sqrt().add_(group["eps"]), value=-step_size)
        return loss


@torch.no_grad()
def clip_grad_norm_sparse(parameters: Iterable[torch.Tensor], max_norm: float) -> torch.Tensor:
    """Global L2 norm of all gradients, sparse or dense (``torch.nn.utils.clip_grad_norm_`` fails on sparse ones);
    scales them to ``max_norm`` when above it (> 0). Returns the norm before clipping."""
    grads = []
    for p in parameters:
        if p.grad is not None and p.grad.is_sparse:
            p.grad = p.grad.coalesce()
        if p.grad is not None:
            grads.append(p.grad)
    if not grads:
        return torch.tensor(0.0)
    squares = [(grad.values() if grad.is_sparse else grad).float().pow(2).sum() for grad in grads]
    norm = torch.stack(squares).sum().sqrt()
    if max_norm > 0 and float(norm) > max_norm:
        scale = max_norm / (float(norm) + 1e-6)
        for grad in grads:
            grad.mul_(scale)
    return norm
