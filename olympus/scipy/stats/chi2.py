"""The chi-squared distribution with df degrees of freedom: the gamma
distribution with shape df/2 and scale 2."""

from __future__ import annotations

from olympus.scipy.special import _inexact
from olympus.scipy.stats import gamma

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def _as_gamma(x, df, loc, scale):
    x, df, loc, scale = _inexact(x, df, loc, scale)
    return x, df / 2, loc, 2 * scale


def logpdf(x, df, loc=0, scale=1):
    return gamma.logpdf(*_as_gamma(x, df, loc, scale))


def pdf(x, df, loc=0, scale=1):
    return gamma.pdf(*_as_gamma(x, df, loc, scale))


def cdf(x, df, loc=0, scale=1):
    return gamma.cdf(*_as_gamma(x, df, loc, scale))


def logcdf(x, df, loc=0, scale=1):
    return gamma.logcdf(*_as_gamma(x, df, loc, scale))


def sf(x, df, loc=0, scale=1):
    return gamma.sf(*_as_gamma(x, df, loc, scale))


def logsf(x, df, loc=0, scale=1):
    return gamma.logsf(*_as_gamma(x, df, loc, scale))
