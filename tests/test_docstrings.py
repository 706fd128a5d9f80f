"""Every `>>>` example in olympus's docstrings runs and prints what it shows.

Modules are found by walking the package, so a new module's examples are
tested without listing it here. Examples see only `olympus`, `jnp`, `np` and
`lax` (not their module's globals), so each runs as written in a user's session.
"""

import doctest
import importlib
import inspect
import pkgutil

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import lax


def _modules_with_examples() -> list[str]:
    names = ["olympus"] + [
        info.name
        for info in pkgutil.walk_packages(olympus.__path__, "olympus.")
        if info.name != "olympus.__main__"  # importing it runs the command line
    ]
    return [
        name
        for name in names
        if any(
            t.examples
            for t in doctest.DocTestFinder().find(importlib.import_module(name))
        )
    ]


MODULES = _modules_with_examples()


def test_examples_are_found():
    assert "olympus.api" in MODULES and len(MODULES) >= 5


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    globs = {"olympus": olympus, "jnp": jnp, "np": np, "lax": lax}
    flags = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS
    failed, attempted = doctest.testmod(
        module, globs=globs, optionflags=flags, report=True, verbose=False
    )
    assert attempted and not failed, (
        f"{failed} of {attempted} examples failed in {name}"
    )


# The public API whose docstrings follow the full format (issue 29): a summary
# line, a paragraph, Args (when it takes parameters), Returns and an example.
# Raises is not required: some functions raise nothing of their own.
DOCUMENTED = {
    "olympus": """jit grad value_and_grad vjp jvp linearize vmap jacfwd jacrev
        jacobian hessian make_olympuspr eval_shape checkpoint remat device_put
        device_get devices local_devices device_count local_device_count
        process_count process_index block_until_ready pure_callback named_call
        named_scope ensure_compile_time_eval disable_jit enable_x64 debug_nans
        linear_transpose custom_gradient closure_convert numpy_dtype_promotion
        clear_caches pmap default_matmul_precision default_backend typeof
        custom_jvp custom_vjp shard_map hint make_mesh set_mesh
        make_array_from_single_device_arrays""",
    "olympus.lax": """cond switch while_loop fori_loop scan map dot_general dot
        dynamic_slice dynamic_update_slice dynamic_slice_in_dim
        dynamic_update_slice_in_dim slice select select_n argmax argmin
        broadcast_in_dim broadcast reshape transpose concatenate pad squeeze
        expand_dims rev convert_element_type iota full clamp integer_pow
        stop_gradient sort top_k gather conv_general_dilated conv reduce
        reduce_window cumsum associative_scan sort_key_val dynamic_index_in_dim
        slice_in_dim index_in_dim full_like batch_matmul psum pmean all_gather
        add sub mul div max min exp log sqrt tanh reduce_sum reduce_prod
        reduce_max reduce_min scatter scatter_add""",
    "olympus.numpy": """where sum mean prod std var dot matmul einsum reshape
        transpose concatenate stack take take_along_axis sort argsort zeros ones
        full zeros_like ones_like arange linspace array asarray eye clip
        expand_dims squeeze split add subtract multiply divide maximum minimum
        arctan2 equal not_equal less greater exp log log1p expm1 sqrt sin cos
        tanh negative absolute sign round floor power isnan isfinite allclose
        array_equal tile repeat flip roll diag trace outer nonzero argwhere unique
        meshgrid pad swapaxes moveaxis ravel broadcast_to vstack hstack diff
        searchsorted median quantile max min all any argmax argmin cumsum
        cumprod""",
    "olympus.numpy.linalg": "norm inv solve det",
    "olympus.random": """key PRNGKey split fold_in key_data uniform normal
        randint bernoulli categorical choice permutation gamma beta exponential
        truncated_normal multivariate_normal poisson dirichlet""",
    "olympus.nn": """relu relu6 sigmoid log_sigmoid silu gelu elu celu selu
        leaky_relu softplus hard_tanh glu softmax log_softmax logsumexp one_hot
        standardize dot_product_attention""",
}
DOCUMENTED_NAMES = [
    f"{module}.{name}" for module, names in DOCUMENTED.items() for name in names.split()
]


def _resolve(path: str):
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


def _takes_parameters(fn) -> bool:
    try:
        return bool(inspect.signature(fn).parameters)
    except (TypeError, ValueError):  # a builtin or C callable: assume it does
        return True


@pytest.mark.parametrize("path", DOCUMENTED_NAMES)
def test_docstring_has_the_full_format(path):
    fn = _resolve(path)
    doc = inspect.getdoc(fn) or ""
    lines = doc.splitlines()
    assert len(lines) > 2 and lines[0].strip() and not lines[1].strip(), (
        f"{path}: the docstring must open with a one-line summary and a blank line"
    )
    if _takes_parameters(fn):
        assert "\nArgs:\n" in doc, f"{path}: no Args: section"
    assert "\nReturns:\n" in doc, f"{path}: no Returns: section"
    assert "\nExample:\n" in doc and ">>> " in doc, f"{path}: no Example: section"


# Tables are keyed by the primitive's name; these four are public under another.
_PUBLIC_NAMES = {f: f"bitwise_{f}" for f in ("not", "and", "or", "xor")}


@pytest.mark.parametrize(
    "namespace, table",
    [
        ("olympus.numpy", "olympus.numpy.ufunc_docs"),
        ("olympus.numpy", "olympus.numpy.reduction_docs"),
        ("olympus.lax", "olympus.lax.op_docs"),
    ],
)
def test_factory_made_examples_run(namespace, table):
    """Functions made by factories (jnp's ufuncs and reductions, lax's
    elementwise ops, reducers and scatters) take their docstrings from a table;
    doctest's module walk does not find those in dispatch wrappers, so their
    examples run here."""
    module = importlib.import_module(namespace)
    docs = importlib.import_module(table).DOCS
    globs = {"olympus": olympus, "jnp": jnp, "np": np, "lax": lax}
    flags = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS
    runner = doctest.DocTestRunner(optionflags=flags)
    parser = doctest.DocTestParser()
    for name, text in docs.items():
        doc = getattr(module, _PUBLIC_NAMES.get(name, name)).__doc__
        assert doc == text, f"{namespace}.{name} does not carry its table docstring"
        runner.run(parser.get_doctest(doc, dict(globs), name, None, 0))
    failed, attempted = runner.summarize(verbose=False)
    assert attempted >= len(docs) and not failed
