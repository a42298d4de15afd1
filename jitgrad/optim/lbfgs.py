"""L-BFGS, with an optional strong-Wolfe line search (PyTorch's algorithm, after minFunc).

L-BFGS is sequential host logic: every iteration's direction, step length and stopping
test depend on numbers read from the last one, so it runs on the parameters' flat vector
in numpy, with the numbers PyTorch keeps as 0-d tensors held as scalars of the parameters'
dtype (float32 parameters round as PyTorch's do). The closure, where the model runs, is
ordinary jitgrad code and may itself be a ``jg.jit`` function.
"""

from __future__ import annotations

import numpy as np

from .._config import config
from ..autograd.grad_mode import enable_grad
from ..autograd.tensor import Tensor
from ..tensor import TensorBase, wrap_numpy
from .optimizer import Optimizer


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), clamped to
    ``bounds`` (default: between the two points); their midpoint when the cubic has none."""
    xmin_bound, xmax_bound = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if d2_square >= 0:
        d2 = np.sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """A step length along ``d`` satisfying the strong Wolfe conditions: bracket one, then
    zoom in by cubic interpolation. Returns (loss, flat gradient, step, evaluations)."""
    d_norm = np.abs(d).max()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = g_new.dot(d)

    # bracket an interval containing a point satisfying the Wolfe criteria
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new], [gtd_prev, gtd_new]
            break
        # extrapolate
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        previous = t
        t = _cubic_interpolate(
            t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step)
        )
        t_prev, f_prev, g_prev, gtd_prev = previous, f_new, g_new, gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1

    if ls_iter == max_ls:  # out of evaluations: the bracket runs from the start
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # zoom: shrink the bracket until a point in it satisfies the criteria
    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(
            bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1]
        )
        # A trial too close to an end of the bracket (twice running, or outside it) moves
        # to a tenth of the bracket's length from that end, so the bracket keeps shrinking.
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False

        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1

        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            # not a sufficient decrease, or above the lowest point: the new high end
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new, gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                # the old low end becomes the high one
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos] = bracket_g[low_pos]
                bracket_gtd[high_pos] = bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new, gtd_new

    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals


# State kept between steps: flat vectors (tensors), lists of them, and numbers.
_VECTORS = ("d", "prev_flat_grad")
_VECTOR_LISTS = ("old_dirs", "old_stps")
_NUMBERS = ("t", "H_diag", "prev_loss")
_NUMBER_LISTS = ("ro", "al")


class LBFGS(Optimizer):
    """``LBFGS(params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
    tolerance_change=1e-9, history_size=100, line_search_fn=None)``: one parameter group;
    ``step(closure)`` runs up to ``max_iter`` iterations, re-evaluating the loss through
    ``closure`` (which zeroes the gradients, computes the loss, calls ``backward`` and
    returns it). ``max_eval`` defaults to ``max_iter * 5 // 4``; ``line_search_fn`` is
    None (fixed steps of ``lr``) or ``"strong_wolfe"``.

    >>> import jitgrad as jg
    >>> from jitgrad import optim
    >>> p = jg.nn.Parameter(jg.tensor([3.0, -2.0]))
    >>> opt = optim.LBFGS([p], line_search_fn="strong_wolfe")
    >>> def closure():
    ...     opt.zero_grad()
    ...     loss = ((p - 1.0) ** 2).sum()
    ...     loss.backward()
    ...     return loss
    >>> _ = opt.step(closure)
    >>> [round(v, 6) for v in p.tolist()]
    [1.0, 1.0]
    """

    _state_shaped_like_params = False  # its vectors are over all parameters, flattened

    def __init__(
        self,
        params,
        lr: float = 1,
        max_iter: int = 20,
        max_eval: int | None = None,
        tolerance_grad: float = 1e-7,
        tolerance_change: float = 1e-9,
        history_size: int = 100,
        line_search_fn: str | None = None,
    ):
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(
            lr=lr,
            max_iter=max_iter,
            max_eval=max_eval,
            tolerance_grad=tolerance_grad,
            tolerance_change=tolerance_change,
            history_size=history_size,
            line_search_fn=line_search_fn,
        )
        super().__init__(params, defaults)
        self._params = self.param_groups[0]["params"]

    def _check_group(self, group: dict) -> None:
        self._check_numbers(group, ("tolerance_grad", "tolerance_change"))
        super()._check_group(group)
        for name in ("max_iter", "max_eval", "history_size"):
            value = group[name]
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"LBFGS: {name} must be a positive integer, got {value!r}")
        if group["line_search_fn"] not in (None, "strong_wolfe"):
            raise ValueError(
                "LBFGS: line_search_fn must be None or 'strong_wolfe', got "
                f"{group['line_search_fn']!r}"
            )

    def add_param_group(self, group: dict) -> None:
        if self.param_groups:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        super().add_param_group(group)

    # -- the flat vector -----------------------------------------------------------------

    def _gather_flat_grad(self) -> np.ndarray:
        return np.concatenate(
            [
                np.zeros(p.numel(), p.dtype.numpy) if p.grad is None else p.grad.numpy().ravel()
                for p in self._params
            ]
        )

    def _add_grad(self, step_size, update: np.ndarray) -> None:
        offset = 0
        for p in self._params:
            n = p.numel()
            piece = update[offset : offset + n].reshape(p.shape)
            TensorBase.copy_(p, p.numpy() + step_size * piece)
            offset += n

    def _clone_param(self) -> list[np.ndarray]:
        return [p.numpy().copy() for p in self._params]

    def _set_param(self, values: list[np.ndarray]) -> None:
        for p, value in zip(self._params, values, strict=True):
            TensorBase.copy_(p, value)

    def _directional_evaluate(self, closure, x, t, d):
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    # -- the step ------------------------------------------------------------------------

    def step(self, closure):
        """Minimise the loss ``closure`` returns; returns its first value."""
        if closure is None:
            raise RuntimeError("LBFGS.step needs a closure that recomputes the loss")
        if config.thread.tape is not None:
            raise RuntimeError(
                "LBFGS.step decides its iterations from the values it reads, which a jg.jit "
                "trace would fix: call it outside the jitted function (the closure may be "
                "jitted)"
            )

        def evaluate():
            with enable_grad():
                return closure()

        group = self.param_groups[0]
        lr = float(group["lr"])
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        # The state is global; it lives under the first parameter, as in PyTorch.
        state = self.state.setdefault(self._params[0], {})
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = evaluate()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1

        flat_grad = self._gather_flat_grad()
        if np.abs(flat_grad).max() <= tolerance_grad:
            return orig_loss

        number = flat_grad.dtype.type  # PyTorch's 0-d tensors: rounded to the dtype
        d, prev_flat_grad = (None if state.get(k) is None else state[k].numpy() for k in _VECTORS)
        old_dirs, old_stps = ([v.numpy() for v in state.get(k, ())] for k in _VECTOR_LISTS)
        t, H_diag, prev_loss = (
            None if state.get(k) is None else number(state[k]) for k in _NUMBERS
        )
        ro = [number(v) for v in state.get("ro", ())]
        al = [None if v is None else number(v) for v in state.get("al", ())]

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1

            # the descent direction
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = y.dot(s)
                if ys > 1e-10:
                    if len(old_dirs) == history_size:  # the memory is full: forget the oldest
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / y.dot(y)  # scale of the initial inverse Hessian

                # two-loop recursion: the approximate inverse Hessian times -gradient
                if not al:
                    al = [None] * history_size
                q = -flat_grad
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q = q + (-al[i]) * old_dirs[i]
                r = q * H_diag
                for i in range(len(old_dirs)):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    r = r + (al[i] - be_i) * old_stps[i]
                d = r

            prev_flat_grad = flat_grad
            prev_loss = loss

            # the step length: the first iteration ever is scaled by the gradient's size
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / np.abs(flat_grad).sum()) * lr
            else:
                t = lr

            gtd = flat_grad.dot(d)  # the directional derivative
            if gtd > -tolerance_change:
                break

            ls_func_evals = 0
            if line_search_fn is not None:
                x_init = self._clone_param()

                def obj_func(x, t, d):
                    return self._directional_evaluate(evaluate, x, t, d)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    obj_func, x_init, t, d, loss, flat_grad, gtd, max_ls=max_eval - current_evals
                )
                self._add_grad(t, d)
                opt_cond = np.abs(flat_grad).max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                opt_cond = False
                # the last iteration's loss would go unused: it is not evaluated
                if n_iter != max_iter:
                    loss = float(evaluate())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = np.abs(flat_grad).max() <= tolerance_grad
                    ls_func_evals = 1

            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if np.abs(d * t).max() <= tolerance_change:  # no progress in the parameters
                break
            if abs(loss - prev_loss) < tolerance_change:  # no progress in the loss
                break

        state.update(
            d=_vector(d),
            t=float(t),
            old_dirs=[_vector(v) for v in old_dirs],
            old_stps=[_vector(v) for v in old_stps],
            ro=[float(v) for v in ro],
            H_diag=float(H_diag),
            prev_flat_grad=_vector(prev_flat_grad),
            prev_loss=float(prev_loss),
        )
        if al:  # the two-loop recursion's scratch, made by the first iteration that runs it
            state["al"] = [None if v is None else float(v) for v in al]
        return orig_loss

    def load_state_dict(self, state_dict: dict) -> None:
        super().load_state_dict(state_dict)
        for state in self.state.values():  # lists the checkpoint shares: this run's own
            for name in (*_VECTOR_LISTS, *_NUMBER_LISTS):
                if name in state:
                    state[name] = list(state[name])


def _vector(a: np.ndarray) -> Tensor:
    return wrap_numpy(np.ascontiguousarray(a), Tensor)
