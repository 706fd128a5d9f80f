from setuptools import Extension, find_packages, setup

# olympus's hottest call paths in C (olympus/backends/xla/_fastpath.c: an
# Array's fields and host read, a jitted call's cache hit). Optional: where
# it cannot be built (no C compiler), olympus runs the same paths in Python
# (olympus/backends/xla/fastpath.py), only slower.
FASTPATH = Extension(
    "olympus.backends.xla._fastpath",
    ["olympus/backends/xla/_fastpath.c"],
    optional=True,
)

setup(
    name="olympus",
    version="0.1.0",
    description="A tracing JIT compiler for numerical Python, on XLA through jaxlib",
    packages=find_packages(include=["olympus", "olympus.*"]),
    ext_modules=[FASTPATH],
    python_requires=">=3.11",
    install_requires=["numpy", "jaxlib==0.10.2", "ml_dtypes", "absl-py"],
    extras_require={
        # ruff: tests/test_style.py; nbclient, nbformat, ipykernel:
        # tests/test_tutorial.py runs docs/tutorial.ipynb in a Jupyter kernel;
        # pytest-xdist: the suite runs on both of CI's cores (`-n 2`), since
        # nearly all of its time is XLA compiling on one thread
        "test": [
            "pytest",
            "pytest-xdist",
            "ruff==0.17.6",
            "nbclient",
            "nbformat",
            "ipykernel",
            # the oracle: JAX's behaviour is the spec (tests/jax_oracle.py); the
            # olympus package itself never imports jax
            "jax==0.10.2",
        ],
        # The JAX ecosystem libraries' own non-JAX dependencies (the libraries
        # themselves are pinned in requirements-ecosystem.txt and installed with
        # --no-deps, so that they never pull a second jax in): tests/test_ecosystem.py
        "ecosystem": [
            "toolz",
            "typing_extensions",
            "msgpack",
            "rich",
            "PyYAML",
            "treescope",
            "wadler-lindig",
            "multipledispatch",
            "tqdm",
            "six",
            "decorator",
            "cloudpickle",
            "gast",
            "dm-tree",
            "beartype",
        ],
    },
)
