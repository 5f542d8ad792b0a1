"""Box: the shape, bounds and dtype of an observation or action (Gymnasium's Box interface,
without depending on Gymnasium); ``Box.to_gymnasium()`` gives the ``gymnasium.spaces.Box``."""
import importlib

import numpy as np


def gymnasium_module():
    """The ``gymnasium`` module when it is importable, else None (looked up at each call, so a
    module inserted in ``sys.modules`` later is seen)."""
    try:
        return importlib.import_module("gymnasium")
    except ImportError:
        return None


class Box:
    """A box in R^n: ``shape``, ``low``, ``high`` (arrays of that shape), ``dtype``.

    Attributes and methods follow ``gymnasium.spaces.Box``: ``sample()`` draws uniformly where
    both bounds are finite and from a standard normal where a bound is infinite (clipped to the
    finite one); ``contains(x)`` checks shape and bounds.
    """

    def __init__(self, low, high, shape=None, dtype=np.float32, seed=None):
        self.dtype = np.dtype(dtype)
        low = np.asarray(low, dtype=self.dtype)
        high = np.asarray(high, dtype=self.dtype)
        if shape is None:
            shape = np.broadcast(low, high).shape
        self.shape = tuple(int(s) for s in shape)
        self.low = np.broadcast_to(low, self.shape).copy()
        self.high = np.broadcast_to(high, self.shape).copy()
        if np.any(self.low > self.high):
            raise ValueError("Box: low > high somewhere")
        self._rng = np.random.default_rng(seed)

    def seed(self, seed=None):
        """Reseed the sampler (NumPy's default_rng)."""
        self._rng = np.random.default_rng(seed)

    def sample(self):
        """A random element of the box (dtype, shape)."""
        lo, hi = self.low.astype(np.float64), self.high.astype(np.float64)
        x = self._rng.standard_normal(self.shape)
        bounded = np.isfinite(lo) & np.isfinite(hi)
        u = self._rng.uniform(np.where(bounded, lo, 0.0), np.where(bounded, hi, 1.0))
        x = np.where(bounded, u, x)
        x = np.where(np.isfinite(lo) & ~bounded, lo + np.abs(x), x)
        x = np.where(np.isfinite(hi) & ~bounded, hi - np.abs(x), x)
        return x.astype(self.dtype)

    def contains(self, x):
        """True if x has this shape and lies within the bounds."""
        x = np.asarray(x)
        return x.shape == self.shape and bool(np.all(x >= self.low) and np.all(x <= self.high))

    def __contains__(self, x):
        return self.contains(x)

    def to_gymnasium(self):
        """This box as a ``gymnasium.spaces.Box`` (same low, high, shape and dtype; seed its sampler
        with ``.seed(s)`` as any Gymnasium space). Raises ImportError when Gymnasium is not
        installed."""
        gym = gymnasium_module()
        if gym is None:
            raise ImportError("Box.to_gymnasium(): the gymnasium package is not installed (pip install gymnasium)")
        return gym.spaces.Box(low=self.low.copy(), high=self.high.copy(), shape=self.shape, dtype=self.dtype)

    def __repr__(self):
        return f"Box({self.low.min()}, {self.high.max()}, {self.shape}, {self.dtype})"

    def __eq__(self, other):
        return (isinstance(other, Box) and self.shape == other.shape and self.dtype == other.dtype
                and np.array_equal(self.low, other.low) and np.array_equal(self.high, other.high))
