"""Collectives over groups of devices (`axis_index_groups=`): psum, pmean,
pmax, pmin, all_gather, psum_scatter, all_to_all (and pswapaxes) run within
each group under pmap and shard_map, as JAX 0.10.2's; groups that miss or
repeat an index raise ValueError, and groups over vmap's own axis raise
NotImplementedError, as JAX's do. The device programs run under olympus and
JAX on 4 CPU devices in a subprocess (tests/test_sharding_api.py's
`run_with_jax`), compared by tests/jax_oracle.py."""

import numpy as np
import pytest

import olympus
from olympus import lax
from jax_oracle import agree
from test_sharding_api import run_with_jax

PAIRS, EVENS, ODD_ONE = [[0, 1], [2, 3]], [[0, 2], [1, 3]], [[0], [1, 2, 3]]


def test_grouped_collectives_under_pmap_agree_with_jax():
    out = run_with_jax(
        f"""
        x = np.arange(8.0, dtype=np.float32).reshape(4, 2)
        y = np.arange(16.0, dtype=np.float32).reshape(4, 2, 2)
        PAIRS, EVENS, ODD_ONE = {PAIRS}, {EVENS}, {ODD_ONE}
        programs = [
            lambda L, v: L.psum(v, "i", axis_index_groups=PAIRS),
            lambda L, v: L.psum(v, "i", axis_index_groups=np.array(EVENS)),
            lambda L, v: L.psum(v, "i", axis_index_groups=ODD_ONE),  # uneven
            lambda L, v: L.psum(1, "i", axis_index_groups=PAIRS),  # a constant
            lambda L, v: L.pmean(v, "i", axis_index_groups=EVENS),
            lambda L, v: L.pmean(v, "i", axis_index_groups=ODD_ONE),  # first's size
            lambda L, v: L.pmax(v, "i", axis_index_groups=[[0, 3], [2, 1]]),
            lambda L, v: L.pmin(v.astype(np.int32), "i", axis_index_groups=PAIRS),
            lambda L, v: L.all_gather(v, "i", axis_index_groups=EVENS),
            lambda L, v: L.all_gather(v, "i", axis_index_groups=EVENS, axis=1),
            lambda L, v: L.all_gather(v, "i", axis_index_groups=PAIRS, tiled=True),
            lambda L, v: L.psum_scatter(v, "i", axis_index_groups=EVENS),
            lambda L, v: L.psum_scatter(v, "i", axis_index_groups=PAIRS, tiled=True),
            lambda L, v: L.all_to_all(v, "i", 0, 0, axis_index_groups=EVENS),
            lambda L, v: L.pswapaxes(v, "i", 0, axis_index_groups=PAIRS),
            lambda L, v: L.psum(v, "i", axis_index_groups=[[0, 1], [1, 2]]),  # raises
            lambda L, v: L.all_gather(v, "i", axis_index_groups=ODD_ONE),  # raises
        ]
        for f in programs:
            agree(lambda ox: ox.pmap(lambda v: f(ox.lax, v), "i")(x))
        agree(lambda ox: ox.pmap(lambda v: ox.lax.all_to_all(
            v, "i", 1, 0, axis_index_groups=PAIRS, tiled=True), "i")(y))
        agree(lambda ox: ox.jit(ox.pmap(
            lambda v: ox.lax.psum(v * v, "i", axis_index_groups=EVENS), "i"))(x))

        # derivatives: psum's transpose is itself, all_gather's psum_scatter's
        weights = np.arange(16.0, dtype=np.float32).reshape(4, 2, 2)
        def loss(ox, gather):
            def f(x):
                def body(v):
                    if gather:
                        return ox.lax.all_gather(v * v, "i", axis_index_groups=EVENS)
                    return ox.lax.psum(v * v, "i", axis_index_groups=PAIRS)
                return (ox.pmap(body, "i")(x) * weights[..., : 2 - (not gather)]).sum()
            return ox.grad(f)(x)
        agree(loss, True)
        agree(loss, False)
        print("done")
        """
    )
    assert out.split()[-1] == "done"


def test_grouped_collectives_under_shard_map_agree_with_jax():
    out = run_with_jax(
        """
        x = np.arange(16.0, dtype=np.float32).reshape(4, 4)
        programs = [
            lambda L, v: L.pmax(v, "y", axis_index_groups=[[1], [0]]),
            lambda L, v: L.psum(v, "x", axis_index_groups=[[0], [1]]),
            lambda L, v: L.all_gather(v, "y", axis_index_groups=[[0, 1]], tiled=True),
            # over two axes the index is the first axis' major, as axis_index's
            lambda L, v: L.pmax(v, ("x", "y"), axis_index_groups=[[0, 1], [2, 3]]),
            lambda L, v: L.psum(v, ("x", "y"), axis_index_groups=[[0, 3], [2, 1]]),
            lambda L, v: L.psum(v, ("y", "x"), axis_index_groups=[[0, 1], [2, 3]]),
            lambda L, v: L.pmin(v, ("x", "y"), axis_index_groups=[[0, 1], [2]]),
        ]
        def prog(ox, f, check):
            kinds = (ox.sharding.AxisType.Auto,) * 2
            mesh = ox.make_mesh((2, 2), ("x", "y"), axis_types=kinds)
            P = ox.sharding.PartitionSpec
            g = ox.shard_map(lambda v: f(ox.lax, v), mesh=mesh, in_specs=P("x", "y"),
                             out_specs=P("x", "y"), check_vma=check)
            return g(x)
        for f in programs:
            agree(prog, f, False)
        agree(prog, programs[0], True)  # pmax's check passes in both
        print("done")
        """
    )
    assert out.split()[-1] == "done"


@pytest.mark.parametrize(
    "collective",
    [
        lambda L, v: L.psum(v, "i", axis_index_groups=[[0], [1]]),
        lambda L, v: L.pmean(v, "i", axis_index_groups=[[0], [1]]),
        lambda L, v: L.pmax(v, "i", axis_index_groups=[[1], [0]]),
        lambda L, v: L.all_gather(v, "i", axis_index_groups=[[0], [1]]),
        lambda L, v: L.psum_scatter(v, "i", axis_index_groups=[[0], [1]], tiled=True),
        lambda L, v: L.all_to_all(v, "i", 0, 0, axis_index_groups=[[0], [1]]),
    ],
)
def test_groups_over_vmaps_axis_are_refused_as_in_jax(collective):
    x = np.ones((2, 1), np.float32)
    with pytest.raises(lax.AxisIndexGroupsError, match="vmap") as caught:
        olympus.vmap(lambda v: collective(lax, v), axis_name="i")(x)
    assert isinstance(caught.value, NotImplementedError)
    agree(lambda ox: ox.vmap(lambda v: collective(ox.lax, v), axis_name="i")(x))


def test_groups_must_cover_the_axis_once():
    for groups in ([[0, 1], [1, 2]], [[0, 1], [2, 4]], [[0, 1]]):
        with pytest.raises(lax.AxisIndexGroupsCoverError, match="exactly once"):
            olympus.vmap(
                lambda v: lax.psum(v, "i", axis_index_groups=groups), axis_name="i"
            )(np.ones(4))
    assert issubclass(lax.AxisIndexGroupsCoverError, ValueError)
    agree(
        lambda ox: ox.vmap(
            lambda v: ox.lax.psum(v, "i", axis_index_groups=[[0], [0]]), axis_name="i"
        )(np.ones(2))
    )
    # a constant is summed statically by the group's size, under vmap too (JAX's)
    agree(
        lambda ox: ox.vmap(
            lambda v: ox.lax.psum(1, "i", axis_index_groups=PAIRS), axis_name="i"
        )(np.ones(4))
    )


@pytest.mark.parametrize(
    "to, groups", [("varying", None), ("invarying", None), ("varying", [[0]])]
)
def test_all_gather_to_gives_the_same_values(to, groups):
    def program(ox, check):
        mesh = ox.make_mesh((1,), ("i",), axis_types=(ox.sharding.AxisType.Auto,))
        P = ox.sharding.PartitionSpec
        gather = lambda v: ox.lax.all_gather(  # noqa: E731
            v, "i", to=to, axis_index_groups=groups, tiled=True
        )
        spec = P("i")
        f = ox.shard_map(
            gather, mesh=mesh, in_specs=spec, out_specs=spec, check_vma=check
        )
        return f(np.arange(6.0, dtype=np.float32).reshape(2, 3))

    agree(program, False)
    agree(program, True)


@pytest.mark.parametrize(
    "to, groups, error",
    [
        ("reduced", None, lax.AllGatherToUnsupportedError),
        ("invarying", [[0]], lax.AllGatherToUnsupportedError),
        ("bogus", None, lax.AllGatherToError),
    ],
)
def test_all_gather_to_refusals_are_jaxs(to, groups, error):
    def program(ox):
        mesh = ox.make_mesh((1,), ("i",), axis_types=(ox.sharding.AxisType.Auto,))
        P = ox.sharding.PartitionSpec
        gather = lambda v: ox.lax.all_gather(v, "i", to=to, axis_index_groups=groups)  # noqa: E731
        return ox.shard_map(gather, mesh=mesh, in_specs=P("i"), out_specs=P("i"))(
            np.ones((1, 2), np.float32)
        )

    agree(program)  # JAX raises too: ValueError / NotImplementedError
    with pytest.raises(error, match="to="):
        program(olympus)
    jax_kind = ValueError if to == "bogus" else NotImplementedError
    assert issubclass(error, jax_kind)
