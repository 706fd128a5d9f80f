"""The samplers' shared docstring text (random/sampler_docs.py, issue 30):
written once, it appears in every sampler's docstring, in signature order."""

import inspect

import pytest

import olympus.random as random
from olympus.random import sampler_docs

SAMPLERS = sorted(
    name
    for name in random.__all__
    if "key" in getattr(getattr(random, name), "__doc__", "")
    and "\nArgs:\n  key: " in (inspect.getdoc(getattr(random, name)) or "")
)


def _arg_names(doc: str) -> list:
    section = doc.partition("\nArgs:\n")[2].partition("\n\n")[0]
    return [
        line.strip().partition(":")[0]
        for line in section.splitlines()
        if line.startswith("  ") and not line.startswith("   ")
    ]


def test_most_samplers_share_the_key_text():
    assert len(SAMPLERS) >= 30
    key = sampler_docs.KEY.partition("\n")[0]
    shared = [n for n in SAMPLERS if key in inspect.getdoc(getattr(random, n))]
    assert len(shared) >= 30, sorted(set(SAMPLERS) - set(shared))


@pytest.mark.parametrize("name", SAMPLERS)
def test_args_follow_the_signature(name):
    fn = getattr(random, name)
    names = [p for p in inspect.signature(fn).parameters]
    assert _arg_names(inspect.getdoc(fn)) == names


def test_documented_sampler_fills_in_only_what_is_missing():
    @sampler_docs.documented_sampler(shape=sampler_docs.BROADCAST_SHAPE)
    def law(key, scale, shape=None, dtype=None):
        """Samples of a law.

        Args:
          scale: the scale.

        Raises:
          ValueError: scale is negative.

        Example:
          >>> 1
          1
        """

    doc = law.__doc__
    assert _arg_names(doc) == ["key", "scale", "shape", "dtype"]
    assert sampler_docs.BROADCAST_SHAPE in doc and sampler_docs.SAMPLES in doc
    raises = doc.partition("\nRaises:\n")[2].partition("\n\n")[0]
    assert raises.index("InvalidKeyError") < raises.index("TypeError: dtype")
    assert raises.index("TypeError: dtype") < raises.index("ValueError")
    assert doc.index("Returns:") < doc.index("Raises:") < doc.index("Example:")


def test_the_three_draws_example_opens_the_samplers_own():
    @sampler_docs.documented_sampler(dtype=sampler_docs.INT_DTYPE, example="0.5")
    def _law(key, p, shape=(), dtype=None):
        """Samples of a law.

        Args:
          p: a probability.

        Example:
          >>> bool((x >= 0).all())
          True
        """

    example = _law.__doc__.partition("\nExample:\n")[2]
    assert example.splitlines() == [
        "  >>> k = olympus.random.key(0)",
        "  >>> x = olympus.random.law(k, 0.5, (3,))",
        "  >>> x.shape, x.dtype",
        "  ((3,), dtype('int32'))",
        "  >>> bool((x >= 0).all())",
        "  True",
    ]
