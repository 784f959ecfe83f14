"""Sjöblom et al.'s GRU and the LSTM over packed tokens, with hand-written backward passes. Why our own: ``nn.GRU``
computes another function (reset gate after ``U_h``, extra biases, tanh only), and ``nn.LSTM``'s backward on packed
CPU input is slower (``benchmarks/results/zoo_speed.json``)."""

from __future__ import annotations

import itertools
from typing import Any

import torch
import torch.nn.functional as F

LEAKY_SLOPE = 0.01


def _starts(sizes: list[int]) -> list[int]:
    """First packed position of every step."""
    return [0, *itertools.accumulate(sizes)][:-1]


def _needs_graph(*tensors: torch.Tensor) -> bool:
    return torch.is_grad_enabled() and any(t.requires_grad for t in tensors)


# -- Sjöblom et al. (2018), section 3.1 ---------------------------------------------------------------------------
def _activation(pre: torch.Tensor, activation: str) -> torch.Tensor:
    return F.leaky_relu(pre, LEAKY_SLOPE) if activation == "leaky_relu" else torch.tanh(pre)


def _activation_slope(pre: torch.Tensor, value: torch.Tensor, activation: str) -> torch.Tensor:
    if activation == "leaky_relu":
        return torch.where(pre > 0, 1.0, LEAKY_SLOPE).to(pre.dtype)
    return 1 - value * value


def _gru_forward(
    projected: torch.Tensor,
    recurrent_rz: torch.Tensor,
    recurrent_h: torch.Tensor,
    bias: torch.Tensor,
    keep: torch.Tensor | None,
    sizes: list[int],
    activation: str,
    save: bool,
) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """Packed states, plus (when ``save``) the gates, pre-activations and dropped inputs."""
    hidden, tokens = recurrent_h.shape[0], projected.shape[0]
    states = projected.new_empty(tokens, hidden)
    kept = [projected.new_empty(tokens, width) for width in (2 * hidden, hidden, hidden)] if save else []
    state = projected.new_zeros(sizes[0] if sizes else 0, hidden)
    for size, start in zip(sizes, _starts(sizes), strict=True):
        span = slice(start, start + size)
        x = projected[span]
        state = state[:size]
        previous = state if keep is None else state * keep[:size]
        rz = torch.sigmoid(torch.addmm(x[:, : 2 * hidden], previous, recurrent_rz.t()))
        r, z = rz[:, :hidden], rz[:, hidden:]
        pre = torch.addmm(x[:, 2 * hidden :], r * previous, recurrent_h.t()).add_(bias)
        state = torch.addcmul(state, z, _activation(pre, activation) - state)
        states[span] = state
        if save:
            kept[0][span], kept[1][span], kept[2][span] = rz, pre, previous
    return states, kept


class SjoblomGRU(torch.autograd.Function):
    """See :func:`sjoblom_gru`."""

    @staticmethod
    def forward(
        ctx: Any,
        projected: torch.Tensor,
        recurrent_rz: torch.Tensor,
        recurrent_h: torch.Tensor,
        bias: torch.Tensor,
        keep: torch.Tensor | None,
        sizes: list[int],
        activation: str,
    ) -> torch.Tensor:
        states, (gates, pre, previous) = _gru_forward(
            projected, recurrent_rz, recurrent_h, bias, keep, sizes, activation, save=True
        )
        ctx.save_for_backward(states, gates, pre, previous, recurrent_rz, recurrent_h, keep)
        ctx.sizes = sizes
        ctx.activation = activation
        return states

    @staticmethod
    def backward(ctx: Any, grad_states: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        states, gates, pre_all, previous_all, recurrent_rz, recurrent_h, keep = ctx.saved_tensors
        hidden = recurrent_h.shape[0]
        sizes: list[int] = ctx.sizes
        starts = _starts(sizes)
        grad_projected = grad_states.new_empty(grad_states.shape[0], 3 * hidden)
        carried = grad_states.new_zeros(0, hidden)  # dL/dh_t flowing back from step t + 1
        for step in range(len(sizes) - 1, -1, -1):
            size, start = sizes[step], starts[step]
            span = slice(start, start + size)
            grad_h = grad_states[span].clone()
            grad_h[: carried.shape[0]] += carried
            rz, pre, previous = gates[span], pre_all[span], previous_all[span]
            r, z = rz[:, :hidden], rz[:, hidden:]
            before = states[starts[step - 1] : starts[step - 1] + size] if step else torch.zeros_like(grad_h)
            candidate = _activation(pre, ctx.activation)
            grad_pre = grad_h * z * _activation_slope(pre, candidate, ctx.activation)
            grad_reset_input = grad_pre @ recurrent_h  # dL/d(r * previous)
            grad_rz_pre = torch.cat(
                [grad_reset_input * previous * r * (1 - r), grad_h * (candidate - before) * z * (1 - z)], dim=1
            )
            grad_previous = torch.addmm(grad_reset_input * r, grad_rz_pre, recurrent_rz)
            if keep is not None:
                grad_previous = grad_previous * keep[:size]
            carried = torch.addcmul(grad_previous, grad_h, 1 - z)
            grad_projected[span, : 2 * hidden] = grad_rz_pre
            grad_projected[span, 2 * hidden :] = grad_pre
        grad_rz_all, grad_pre_all = grad_projected[:, : 2 * hidden], grad_projected[:, 2 * hidden :]
        grad_recurrent_rz = grad_rz_all.t() @ previous_all if ctx.needs_input_grad[1] else None
        grad_recurrent_h = grad_pre_all.t() @ (gates[:, :hidden] * previous_all) if ctx.needs_input_grad[2] else None
        grad_bias = grad_pre_all.sum(0) if ctx.needs_input_grad[3] else None
        return grad_projected, grad_recurrent_rz, grad_recurrent_h, grad_bias, None, None, None


def sjoblom_gru(
    projected: torch.Tensor,
    recurrent_rz: torch.Tensor,
    recurrent_h: torch.Tensor,
    bias: torch.Tensor,
    batch_sizes: list[int],
    keep: torch.Tensor | None = None,
    activation: str = "leaky_relu",
) -> torch.Tensor:
    """The packed states ``(tokens, hidden)`` of the GRU of Sjöblom et al. (2018, section 3.1)::

        r_t = sigmoid(W_r x_t + U_r h_{t-1})
        z_t = sigmoid(W_z x_t + U_z h_{t-1})
        h_t = (1 - z_t) * h_{t-1} + z_t * f(W_h x_t + U_h (r_t * h_{t-1}) + b_h)      f = leaky ReLU (or tanh)

    Args:
        projected: ``(tokens, 3 * hidden)``: ``[W_r; W_z; W_h] x_t`` of every packed token.
        recurrent_rz: ``[U_r; U_z]`` ``(2 * hidden, hidden)``; ``recurrent_h``: ``U_h``; ``bias``: ``b_h``.
        batch_sizes: rows running at each step (non-increasing; zeros are skipped).
        keep: variational dropout mask ``(rows, hidden)`` in packed slot order, or ``None``: it multiplies
            ``h_{t-1}`` inside the recurrent products; the carried ``(1 - z_t) * h_{t-1}`` is never dropped.
    """
    sizes = [int(size) for size in batch_sizes if size > 0]
    if not _needs_graph(projected, recurrent_rz, recurrent_h, bias):
        return _gru_forward(projected, recurrent_rz, recurrent_h, bias, keep, sizes, activation, save=False)[0]
    return SjoblomGRU.apply(projected, recurrent_rz, recurrent_h, bias, keep, sizes, activation)


# -- LSTM (Hochreiter & Schmidhuber; torch's gate order i, f, g, o) ------------------------------------------------
def _lstm_forward(
    projected: torch.Tensor, recurrent: torch.Tensor, sizes: list[int], save: bool
) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """Packed states, plus (when ``save``) the activated gates and the cells."""
    hidden, tokens = recurrent.shape[1], projected.shape[0]
    states = projected.new_empty(tokens, hidden)
    kept = [projected.new_empty(tokens, width) for width in (4 * hidden, hidden)] if save else []
    state = projected.new_zeros(sizes[0] if sizes else 0, hidden)
    cell = torch.zeros_like(state)
    for size, start in zip(sizes, _starts(sizes), strict=True):
        span = slice(start, start + size)
        gates = torch.addmm(projected[span], state[:size], recurrent.t())
        gates[:, : 2 * hidden].sigmoid_()
        gates[:, 2 * hidden : 3 * hidden].tanh_()
        gates[:, 3 * hidden :].sigmoid_()
        i, f, g, o = gates.split(hidden, dim=1)
        cell = torch.addcmul(f * cell[:size], i, g)
        state = o * torch.tanh(cell)
        states[span] = state
        if save:
            kept[0][span], kept[1][span] = gates, cell
    return states, kept


class FusedLSTM(torch.autograd.Function):
    """See :func:`lstm_layer`."""

    @staticmethod
    def forward(ctx: Any, projected: torch.Tensor, recurrent: torch.Tensor, sizes: list[int]) -> torch.Tensor:
        states, (gates, cells) = _lstm_forward(projected, recurrent, sizes, save=True)
        ctx.save_for_backward(states, gates, cells, recurrent)
        ctx.sizes = sizes
        return states

    @staticmethod
    def backward(ctx: Any, grad_states: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        states, gates_all, cells, recurrent = ctx.saved_tensors
        hidden = recurrent.shape[1]
        sizes: list[int] = ctx.sizes
        starts = _starts(sizes)
        grad_gates_all = grad_states.new_empty(grad_states.shape[0], 4 * hidden)
        previous_all = torch.zeros_like(states)  # h_{t-1} of every packed token, for the weight gradient
        carried_h = carried_c = grad_states.new_zeros(0, hidden)
        for step in range(len(sizes) - 1, -1, -1):
            size, start = sizes[step], starts[step]
            span = slice(start, start + size)
            grad_h = grad_states[span].clone()
            grad_h[: carried_h.shape[0]] += carried_h
            i, f, g, o = gates_all[span].split(hidden, dim=1)
            cell = cells[span]
            if step:
                before = slice(starts[step - 1], starts[step - 1] + size)
                cell_before = cells[before]
                previous_all[span] = states[before]
            else:
                cell_before = torch.zeros_like(cell)
            tanh_cell = torch.tanh(cell)
            grad_c = grad_h * o * (1 - tanh_cell * tanh_cell)
            grad_c[: carried_c.shape[0]] += carried_c
            grad_gates = grad_gates_all[span]
            torch.mul(grad_c * g, i * (1 - i), out=grad_gates[:, :hidden])
            torch.mul(grad_c * cell_before, f * (1 - f), out=grad_gates[:, hidden : 2 * hidden])
            torch.mul(grad_c * i, 1 - g * g, out=grad_gates[:, 2 * hidden : 3 * hidden])
            torch.mul(grad_h * tanh_cell, o * (1 - o), out=grad_gates[:, 3 * hidden :])
            carried_h = grad_gates @ recurrent
            carried_c = grad_c * f
        grad_recurrent = grad_gates_all.t() @ previous_all if ctx.needs_input_grad[1] else None
        return grad_gates_all, grad_recurrent, None


def lstm_layer(
    inputs: torch.Tensor, weights: tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor], batch_sizes: list[int]
) -> torch.Tensor:
    """Packed states ``(tokens, hidden)`` of one LSTM direction over packed ``inputs`` ``(tokens, dim)``, with
    ``nn.LSTM``'s equations, zero initial state and its ``weights`` ``(W_ih, W_hh, b_ih, b_hh)``."""
    weight_ih, weight_hh, bias_ih, bias_hh = weights
    sizes = [int(size) for size in batch_sizes if size > 0]
    projected = F.linear(inputs, weight_ih, bias_ih) + bias_hh
    if not _needs_graph(projected, weight_hh):
        return _lstm_forward(projected, weight_hh, sizes, save=False)[0]
    return FusedLSTM.apply(projected, weight_hh, sizes)
