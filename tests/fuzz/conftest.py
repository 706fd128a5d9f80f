"""The fuzzer's seeds: a few in CI, many with `pytest --fuzz-long`."""

CI_PROGRAMS = 8
LONG_PROGRAMS = 300


def pytest_generate_tests(metafunc):
    if "fuzz_seed" in metafunc.fixturenames:
        long = metafunc.config.getoption("fuzz_long", default=False)
        metafunc.parametrize("fuzz_seed", range(LONG_PROGRAMS if long else CI_PROGRAMS))
