"""The chi-squared distribution with df degrees of freedom: the gamma
distribution with shape df/2 and scale 2."""

from __future__ import annotations

from olympus.scipy.special import _inexact
from olympus.scipy.stats import gamma

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def _as_gamma(x, df, loc, scale):
    x, df, loc, scale = _inexact(x, df, loc, scale)
    return x, df / 2, loc, 2 * scale


def _as_gamma_law(name: str):
    """chi2's `name` (logpdf, cdf, ...): the chi-squared law with df degrees
    of freedom is the gamma law of shape df / 2 and scale 2 * scale."""
    gamma_fn = getattr(gamma, name)

    def law(x, df, loc=0, scale=1):
        return gamma_fn(*_as_gamma(x, df, loc, scale))

    law.__name__ = law.__qualname__ = name
    law.__doc__ = f"gamma.{name} at shape df / 2 and scale 2 * scale."
    return law


logpdf, pdf, cdf, logcdf, sf, logsf = map(
    _as_gamma_law, ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")
)
