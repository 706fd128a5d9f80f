"""The interpreter tier of tiered execution (`jit(f, tiered=True)`): runs a
program with NumPy, no XLA compile, while XLA compiles it in the background.
It is an evaluator of the shared loop (olympus/ir/evaluation.py): its rule
table runs in every sub-program (scan, while and cond bodies, calls) too.

It reads the reference backend's rules (olympus/backends/reference), which
follow XLA's semantics, with faster rules where the oracle's are slow on
purpose: a `dot_general` of floats is one BLAS matmul (the oracle's einsum
does not use BLAS). Memory is reused only where the tier owns it: arrays
its rules allocated that no other live value views (`_track`), decided
from the program, never from reference counts.
Results come back as device `Array`s of the program's output avals (dtype and
weak type), as the compiled program returns them.

    >>> from olympus.backends.interpreted import interpret
    >>> closed = olympus.make_olympuspr(lambda x: jnp.sin(x) * 2.0)(np.float32(1.0))
    >>> interpret(closed, [np.float32(1.0)])
    [Array(1.682942, dtype=float32)]
"""

from __future__ import annotations

import ctypes
import functools
import math
import mmap
import os
import queue
import threading
import weakref
from collections import ChainMap

import numpy as np

from olympus import caches
from olympus.backends.reference import MissingReferenceRule, reference_rules
from olympus.backends.xla.array import Array, to_device
from olympus.backends.xla.client import host_to_device, release_dropped_host_arrays
from olympus.ir.core import ClosedOlympuspr, Literal, subolympusprs
from olympus.ir.effects import has_ordered_effect
from olympus.ir.evaluation import (
    Evaluator,
    Frame,
    Pending,
    apply_rule,
    program_rules,
    run_frame,
)
from olympus.ir.evaluation import coerce as _value

_BLAS_DTYPES = frozenset(
    np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128)
)


def run_numpy(olympuspr, consts, args) -> list[np.ndarray]:
    """Runs `olympuspr` on NumPy values with the shared evaluation loop
    (olympus/ir/evaluation.py) and the tier's rules, in sub-programs too."""
    return _run(olympuspr, consts, args)[0]


def _run(olympuspr, consts, args) -> tuple[list, Frame]:
    """`run_frame` as one interpretation: arrays allocated during it are its
    own (`_allocate`), never those of an earlier one that a caller may hold
    (a result fed back as a constant of a new program)."""
    outer = getattr(_interpreting, "run", None)
    _interpreting.run = object()
    try:
        return run_frame(_evaluator, olympuspr, consts, args)
    finally:
        _interpreting.run = outer


def _start(frame: Frame) -> None:
    """A frame's large matmuls to start early (`_early_matmuls`), by equation."""
    eqns = frame.program.eqns
    frame.extra = {id(eqns[i]) for i in _early_matmuls(frame.program)} or None


def _apply(frame: Frame, eqn, invals: list) -> list:
    """One equation with the tier's refinements: a large matmul whose
    result is read only after the next one starts on a worker (`_Later`), an
    elementwise ufunc writes into an operand the tier owns and reads for the
    last time here (`_donor`), or into aligned memory; the rest as the loop
    applies any rule. Then the outputs' ownership is recorded (`_track`)."""
    if frame.extra is not None and id(eqn) in frame.extra and not _workers.busy:
        later = _later_matmul(eqn, invals)
        if later is not None:
            frame.pending = True
            # its operands are read on the worker meanwhile: never written
            frame.owned.difference_update(eqn.invars)
            frame.owned.add(eqn.outvars[0])  # a fresh aligned array (`result`)
            return [later]
    rule = _rules.get(eqn.primitive.name)
    if type(rule) is np.ufunc and rule.nout == 1 and not eqn.params:
        aval = eqn.outvars[0].aval
        if all([v.dtype == aval.dtype for v in invals]):  # no casting into `out`
            donor = _donor(frame, eqn) if frame.done else None
            if donor is not None:
                var, out = donor
                frame.owned.discard(var)  # dying here: its memory is the result's
                frame.owned.add(eqn.outvars[0])
                return [rule(*invals, out=out)]
            if aval.size * aval.dtype.itemsize >= _SHARE_BYTES:
                out = rule(*invals, out=_aligned_empty(aval.shape, aval.dtype))
                frame.owned.add(eqn.outvars[0])
                return [out]
    outs = apply_rule(frame, eqn, invals)
    _track(frame, eqn, rule, invals, outs)
    return outs


def _track(frame: Frame, eqn, rule, invals: list, outs: list) -> None:
    """Records which outputs the tier owns: arrays it allocated (`_allocated`)
    or a ufunc's fresh result, each large, no operand and sharing memory with
    no other output. An owned operand that an output may view is owned no
    longer (writing into it would change the view)."""
    owned = frame.owned
    if owned:
        for x in eqn.invars:
            if x in owned and any(np.may_share_memory(frame.env[x], o) for o in outs):
                owned.discard(x)
    fresh_ufunc = type(rule) is np.ufunc
    for j, (var, out) in enumerate(zip(eqn.outvars, outs)):
        if out.nbytes < _DONOR_BYTES or not (fresh_ufunc or _allocated(out)):
            continue
        if any(v is out for v in invals):
            continue
        if len(outs) > 1 and any(
            np.may_share_memory(o, out) for k, o in enumerate(outs) if k != j
        ):
            continue  # another output is (a view of) it: `f(x) -> (y, y)`
        owned.add(var)


def _donor(frame: Frame, eqn):
    """An operand the elementwise ufunc `eqn` may write its result into, as
    (its variable, its value): read for the last time here, owned by the
    tier (allocated by this interpretation, viewed by no other variable, see
    `_track`), of the result's shape and dtype, writeable and C-contiguous.
    Never a caller's array or a program's constant: those are never owned.
    Writing into it saves a fresh array: its page faults were 1-2 ms of an
    MLP gradient's first call."""
    aval = eqn.outvars[0].aval
    for var in frame.done:
        if var not in frame.owned:
            continue
        value = frame.env.get(var)
        if (
            value is not None
            and value.nbytes >= _DONOR_BYTES
            and value.shape == aval.shape
            and value.flags.writeable
            and value.flags.c_contiguous
        ):
            return var, value
    return None


# id -> (weakref, interpretation) of each array the tier's rules allocated
_allocations: dict = {}
_interpreting = threading.local()  # .run: this thread's interpretation (`_run`)


def _allocate(value: np.ndarray) -> np.ndarray:
    """Marks `value` (memory the tier allocated, viewed by nothing else) as
    the current interpretation's: `_track` may then call it owned."""
    key = id(value)
    ref = weakref.ref(value, lambda _, key=key: _allocations.pop(key, None))
    _allocations[key] = ref, getattr(_interpreting, "run", None)
    return value


def _allocated(value) -> bool:
    """Whether the current interpretation allocated `value` (`_allocate`)."""
    found = _allocations.get(id(value))
    return (
        found is not None
        and found[0]() is value
        and found[1] is getattr(_interpreting, "run", None)
    )


def _early_matmuls(olympuspr) -> set:
    """The indices of large matmuls whose result is first read after the
    next matmul, which does not need it and is about as large: with one
    worker, that one computes such a matmul whole while the caller computes
    the next (an MLP gradient's weight gradient beside the layer's input
    gradient: two whole matmuls on two cores, 0.5 ms of a first call less
    than each in halves, benchmarks/README.md). Where the two differ in size,
    or more threads could share each, splitting both is faster."""
    if _workers.count != 1:
        return set()
    eqns = olympuspr.eqns
    first_read: dict = {}
    for i, eqn in enumerate(eqns):
        for x in eqn.invars:
            if type(x) is not Literal and x not in first_read:
                first_read[x] = i
    dots = [i for i, eqn in enumerate(eqns) if eqn.primitive.name == "dot_general"]
    early = set()
    for i, j in zip(dots, dots[1:]):
        if first_read.get(eqns[i].outvars[0], len(eqns)) <= j:
            continue
        this, after = _flops(eqns[i]), _flops(eqns[j])
        if this >= _SPLIT_FLOPS and 4 * this <= 5 * after and 4 * after <= 5 * this:
            early.add(i)
    return early


def _flops(eqn) -> int:
    """A dot_general's multiply-adds times two, from its types."""
    (lc, _), _ = eqn.params["dimension_numbers"]
    lhs = eqn.invars[0].aval
    k = math.prod(lhs.shape[d] for d in lc)
    return 2 * eqn.outvars[0].aval.size * k


class _Later(Pending):
    """A whole matmul a worker computes while the caller goes on; `result()`
    waits for it. It lets go of its operands when done (arena blocks they
    view become free) and of its result when handed over."""

    def __init__(self, a, b, out, shape):
        self.a, self.b, self.out, self.shape = a, b, out, shape
        self.error = None
        self.done = threading.Event()

    def work(self) -> None:
        try:
            np.matmul(self.a, self.b, out=self.out)
        except BaseException as err:  # raised by result(), in the caller
            self.error = err
        finally:
            self.a = self.b = None
            _workers.finished()
            self.done.set()

    def wait(self) -> None:
        self.done.wait()

    def result(self) -> np.ndarray:
        self.done.wait()
        if self.error is not None:
            raise self.error
        out, self.out = self.out, None
        return _allocate(out.reshape(self.shape))


def _later_matmul(eqn, invals: list):
    """`eqn` (a large dot_general) started on a worker, or None where it is
    not a float matmul (the einsum rule runs it then)."""
    found = _matmul_operands(*invals, **eqn.params)
    if found is None:
        return None
    later = _Later(*found)
    _workers.submit(later)
    return later


def interpret(closed: ClosedOlympuspr, leaves) -> list:
    """The outputs of `closed` for these argument leaves (Arrays, NumPy arrays,
    scalars) as device Arrays of its output avals."""
    olympuspr = closed.olympuspr
    consts = [np.asarray(x) for x in closed.consts]
    args = [np.asarray(x) for x in leaves]
    with _one_blas_thread:
        outs, frame = _run(olympuspr, consts, args)
    return [
        _result(
            outs[i], var.aval, var in frame.owned and olympuspr.outvars.count(var) == 1
        )
        if type(var) is not Literal
        else to_device(outs[i], var.aval)
        for i, var in enumerate(olympuspr.outvars)
    ]


def _result(value: np.ndarray, aval, owned: bool) -> Array:
    """A device Array of `value`, sharing its memory where the tier `owned`
    it (allocated it, and no other output or argument views it; see
    `_track`) and it is 64-byte aligned (a matmul's result, `_aligned_empty`),
    so it stays as immutable as an Array must be. Copying the weights'
    gradients of an MLP cost 2-3 ms of a 20 ms first call (page faults of the
    fresh device buffers); sharing costs microseconds."""
    if (
        owned
        and value.nbytes >= _SHARE_BYTES
        and value.ctypes.data % _ALIGN == 0
        and value.dtype == aval.dtype
    ):
        return Array(host_to_device(value, aval, share=True), aval)
    return to_device(value, aval)


def not_interpretable(closed: ClosedOlympuspr) -> str | None:
    """Why the interpreter tier must not run `closed` (None: it may): ordered
    effects (debug prints and callbacks must run once, in order, with the
    compiled program), arguments or results without a NumPy dtype, values
    laid out over devices, or a primitive without a NumPy rule (PRNG keys cross jit's boundary as their
    uint32 data, so they interpret)."""
    if has_ordered_effect(closed):
        return "it has ordered effects (debug callbacks)"
    olympuspr = closed.olympuspr
    for var in (*olympuspr.constvars, *olympuspr.invars, *olympuspr.outvars):
        if not isinstance(var.aval.dtype, np.dtype):
            return f"a value of type {var.aval.str_short()} has no NumPy form"
    used = _primitives(olympuspr)
    placing = sorted(used & _PLACING)
    if placing:
        return f"it lays out values over devices ({', '.join(placing)})"
    missing = sorted(used - set(_rules) - set(program_rules))
    if missing:
        return f"no NumPy rule for {', '.join(missing)}"
    return None


# Primitives whose results the compiled program lays out over several devices:
# the interpreter would return them on one device.
_PLACING = frozenset({"sharding_constraint", "shard_map"})


def _primitives(olympuspr, seen=None) -> set[str]:
    names = set() if seen is None else seen
    for eqn in olympuspr.eqns:
        names.add(eqn.primitive.name)
        for sub in subolympusprs(eqn.params):
            _primitives(sub, names)
    return names


class _OneBlasThread:
    """While any thread interprets, NumPy's OpenBLAS uses one thread (a
    process-wide setting, restored when the last interpretation ends).

    The interpreter runs beside XLA: its compiler on a background thread and
    its runtime's thread pool. Measured on 2 shared cores, OpenBLAS's own
    threads contending with those made the first result of an MLP's gradient
    8x slower (260 ms instead of 32 ms, benchmarks/tiered.py). Without an
    OpenBLAS in the process (another BLAS), nothing changes."""

    _NAMES = (
        ("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"),
        ("scipy_openblas_get_num_threads", "scipy_openblas_set_num_threads"),
        ("openblas_get_num_threads64_", "openblas_set_num_threads64_"),
        ("openblas_get_num_threads", "openblas_set_num_threads"),
    )

    def __init__(self):
        self._lock = threading.Lock()
        self._users = 0
        self._saved = 1
        self._calls = None  # (get, set) once looked up; () when there is none

    def _lookup(self) -> tuple:
        for path in self._wheel_libraries() or self._mapped_libraries():
            try:
                lib = ctypes.CDLL(path)
            except OSError:
                continue
            for get, set_ in self._NAMES:
                if hasattr(lib, get) and hasattr(lib, set_):
                    return getattr(lib, get), getattr(lib, set_)
        return ()

    @staticmethod
    def _wheel_libraries() -> list[str]:
        """The OpenBLAS a NumPy wheel bundles (numpy.libs beside numpy): a
        directory read, where /proc/self/maps took 0.4-1 ms of the first
        tiered call."""
        libs = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
        try:
            return sorted(e.path for e in os.scandir(libs) if "openblas" in e.name)
        except OSError:
            return []

    @staticmethod
    def _mapped_libraries() -> list[str]:
        """Every OpenBLAS mapped into this process (NumPy built otherwise)."""
        try:
            with open("/proc/self/maps") as maps:
                return sorted(
                    {line.split()[-1] for line in maps if "openblas" in line.lower()}
                )
        except OSError:
            return []

    def __enter__(self):
        with self._lock:
            if self._calls is None:
                self._calls = self._lookup()
            if self._calls and self._users == 0:
                get, set_ = self._calls
                self._saved = get()
                set_(1)
            self._users += 1

    def __exit__(self, *exc):
        with self._lock:
            self._users -= 1
            if self._calls and self._users == 0:
                self._calls[1](self._saved)


_one_blas_thread = _OneBlasThread()


# ---- rules faster than the oracle's ----------------------------------------------
_ALIGN = 64  # what the CPU client needs to use a host buffer as a device buffer
_SHARE_BYTES = 1 << 16  # smaller results are copied (a copy costs less than a check)
_DONOR_BYTES = 1 << 14  # smaller arrays are allocated afresh (cheap, no page faults)


def _aligned_empty(shape: tuple, dtype) -> np.ndarray:
    """An uninitialized C-contiguous array whose data is 64-byte aligned (a
    large one in memory of `_arena`'s)."""
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes >= _SHARE_BYTES:
        raw = _arena.claim(nbytes + _ALIGN)
    else:
        raw = np.empty(nbytes + _ALIGN, np.uint8)
    start = -raw.ctypes.data % _ALIGN
    return _allocate(raw[start : start + nbytes].view(dtype).reshape(shape))


class _Arena:
    """Memory for the interpreter's large matmul results, kept once written
    and handed out again when nothing views it any more. Fresh memory costs a
    page fault per 4 KiB on its first write, about 0.5 ms per MiB here (the
    weight gradients of an MLP: 2 ms of an 11 ms first call, benchmarks/
    README.md); memory a previous interpretation wrote, whose results have
    since been dropped, costs none. A block is free when no array it handed
    out views it: each claim is an array over a memoryview of the block,
    which every view of it (a result, the device buffer that shares it)
    keeps alive, and the arena holds only a weak reference to that array
    (`_take`). At most `limit` bytes are kept;
    `olympus.clear_caches()` lets them go."""

    _PAGE = 4096

    def __init__(self, limit: int):
        self.limit = limit
        self.ids: set = set()  # of the blocks kept (alive: the lists hold them)
        self._blocks: dict = {}  # size -> [uint8 arrays of that size]
        self._claims: dict = {}  # id of a block -> weakref of its claim (`_take`)
        self._bytes = 0
        self._lock = threading.Lock()

    def claim(self, nbytes: int) -> np.ndarray:
        """A block of at least `nbytes` bytes that nothing views; the caller
        must view it before letting it go (the view marks it taken)."""
        size = -(-nbytes // self._PAGE) * self._PAGE
        block = self._free_block(size)
        if block is None and self._blocks.get(size):
            # Results dropped since may still be held by jaxlib (outside the
            # lock: letting them go runs deallocators).
            release_dropped_host_arrays()
            block = self._free_block(size)
        if block is not None:
            return block[:nbytes]
        block = np.empty(size, np.uint8)
        with self._lock:
            if self._bytes + size <= self.limit:
                self._blocks.setdefault(size, []).append(block)
                self.ids.add(id(block))
                self._bytes += size
                block = self._take(block)
        return block[:nbytes]

    def _take(self, block: np.ndarray) -> np.ndarray:
        """`block` handed out: an array over a memoryview of it. NumPy makes
        every view of that array hold the array itself as its base (its own
        base is no array), so the block is free again once that array is
        gone (`_is_free`), that is, once nothing views the block. Called
        with the lock held."""
        claim = np.frombuffer(memoryview(block), np.uint8)
        self._claims[id(block)] = weakref.ref(claim)
        return claim

    def _is_free(self, block: np.ndarray) -> bool:
        """Whether no array the arena handed out views `block` any more."""
        ref = self._claims.get(id(block))
        return ref is None or ref() is None

    def _free_block(self, size: int) -> np.ndarray | None:
        """A free block of `size` bytes, marked taken (viewed) before the lock
        is let go, or None."""
        with self._lock:
            for block in self._blocks.get(size, ()):
                if self._is_free(block):
                    return self._take(block)
        return None

    def prefault(self, sizes: list, most: int):
        """Blocks for results of these byte sizes beyond the free ones kept
        already, `most` bytes of them at most, laid out in one fresh mapping
        (so one call writes them all) and kept here: (the mapping, its
        blocks, each taken: an array over it), or None; the caller writes the
        mapping once (its page faults) and then lets the blocks go."""
        wanted, free = [], {}
        with self._lock:
            total, fresh = self._bytes, 0
            for nbytes in sizes:
                size = -(-(nbytes + _ALIGN) // self._PAGE) * self._PAGE
                if free.get(size) is None:
                    blocks = self._blocks.get(size, ())
                    free[size] = sum(self._is_free(b) for b in blocks)
                if free[size]:
                    free[size] -= 1
                elif total + size <= self.limit and fresh + size <= most:
                    wanted.append(size)
                    total += size
                    fresh += size
            if not wanted:
                return None
            mapping = mmap.mmap(
                -1, sum(wanted), flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
            )
            blocks, offset = [], 0
            for size in wanted:
                block = np.frombuffer(mapping, np.uint8, size, offset)
                self._blocks.setdefault(size, []).append(block)
                self.ids.add(id(block))
                blocks.append(self._take(block))  # taken until written
                offset += size
            self._bytes = total
        return mapping, blocks

    def clear(self) -> None:
        with self._lock:
            self._blocks = {}
            self._claims = {}
            self.ids = set()
            self._bytes = 0

    def __len__(self) -> int:
        return len(self.ids)


_arena = caches.register("interpreter memory", _Arena(64 << 20))


def _matmul_operands(
    lhs, rhs, *, dimension_numbers, precision=None, preferred_element_type=None
):
    """For float and complex operands of one dtype: (a, b, out, shape), the
    operands arranged as (batch, free, contracting) and (batch, contracting,
    free) views (BLAS takes transposed operands without a copy), an aligned
    array for the result (`_result` can share it) and the result's shape;
    else None."""
    dtype = lhs.dtype
    out_type = dtype if preferred_element_type is None else preferred_element_type
    if dtype not in _BLAS_DTYPES or rhs.dtype != dtype or np.dtype(out_type) != dtype:
        return None
    (lc, rc), (lb, rb) = dimension_numbers
    lc, rc, lb, rb = tuple(lc), tuple(rc), tuple(lb), tuple(rb)
    lf = [d for d in range(lhs.ndim) if d not in lc and d not in lb]
    rf = [d for d in range(rhs.ndim) if d not in rc and d not in rb]
    batch = [lhs.shape[d] for d in lb]
    lf_shape = [lhs.shape[d] for d in lf]
    rf_shape = [rhs.shape[d] for d in rf]
    k = int(np.prod([lhs.shape[d] for d in lc], dtype=np.int64))
    nb = int(np.prod(batch, dtype=np.int64))
    m = int(np.prod(lf_shape, dtype=np.int64))
    n = int(np.prod(rf_shape, dtype=np.int64))
    a = lhs.transpose(*lb, *lf, *lc).reshape(nb, m, k)
    b = rhs.transpose(*rb, *rc, *rf).reshape(nb, k, n)
    out = _aligned_empty((nb, m, n), dtype)
    return a, b, out, tuple(batch + lf_shape + rf_shape)


def _dot_general(lhs, rhs, **params):
    """One batched matmul (BLAS) for float and complex operands of one dtype
    (`_matmul_operands`); else the oracle's einsum."""
    found = _matmul_operands(lhs, rhs, **params)
    if found is None:
        return reference_rules["dot_general"](lhs, rhs, **params)
    a, b, out, shape = found
    _matmul(a, b, out)
    return _allocate(out.reshape(shape))


# ---- a large matmul over the cores ------------------------------------------------
_SPLIT_FLOPS = 1 << 23  # smaller matmuls run whole: a hand-off costs 10-50 us
_MIN_ROWS = 32  # rows or columns per block at least
_BLOCKS_PER_THREAD = 1  # a block each: finer blocks were slower (benchmarks/README.md)


def _matmul(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """`np.matmul(a, b, out=out)` of (nb, m, k) @ (nb, k, n), a large one in
    blocks of its batch, rows or columns that the caller and `_workers` take
    in turn: OpenBLAS is kept to one thread here (`_OneBlasThread`), so
    without this a matmul would use one core of several. Each block is the
    same BLAS call on fewer rows or columns, so the result is that of one
    call. Of rows and columns, the longer side is cut (a 128x512 gradient
    times a transposed 512x512 weight: 0.38 ms per half by columns, 0.44 by
    rows, on one core)."""
    nb, m, k = a.shape
    n = b.shape[2]
    if 2 * nb * m * n * k < _SPLIT_FLOPS or not _workers.count:
        np.matmul(a, b, out=out)
        return
    if nb >= 2 * m:  # many small matrices (batched attention, say)
        axis, size, least = 0, nb, 1
    elif n >= m:
        axis, size, least = 2, n, _MIN_ROWS
    else:
        axis, size, least = 1, m, _MIN_ROWS
    parts = min((_workers.count + 1) * _BLOCKS_PER_THREAD, size // least)
    if parts <= 1:
        np.matmul(a, b, out=out)
        return
    jobs = []
    for i in range(parts):
        part = slice(size * i // parts, size * (i + 1) // parts)
        if axis == 0:
            x, y, o = a[part], b[part], out[part]
        elif axis == 1:
            x, y, o = a[:, part], b, out[:, part]
        else:
            x, y, o = a, b[:, :, part], out[:, :, part]
        jobs.append(functools.partial(np.matmul, x, y, out=o))
    del x, y, o  # the jobs' views only: a live view keeps its arena block taken
    _workers.run(jobs)


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class _Jobs:
    """One call's jobs, taken one at a time by whichever thread is free: the
    caller works through them too, so a worker that a loaded machine starts
    late takes fewer (or none), and the call never waits for a thread that
    has not begun. `done` is set when the last has finished."""

    def __init__(self, jobs: list):
        self.jobs = jobs
        self.left = len(jobs)
        self.error = None
        self.done = threading.Event()
        self._next = 0
        self._lock = threading.Lock()

    def work(self) -> None:
        while True:
            with self._lock:
                i = self._next
                if i >= len(self.jobs):
                    return
                self._next = i + 1
            try:
                self.jobs[i]()
            except BaseException as err:  # raised by the caller, after the rest
                self.error = self.error or err
            with self._lock:
                self.left -= 1
                if not self.left:
                    self.done.set()


class _Workers:
    """Threads that help with the interpreter's large matmuls; NumPy's BLAS
    call releases the GIL, so blocks run on as many cores as are free. They
    block while they wait, where OpenBLAS's own threads spin, and the caller
    takes the blocks no worker has begun (`_Jobs`): on a loaded machine a
    split matmul costs about what one thread does (benchmarks/README.md,
    tiered execution). Started on first use; a forked child starts its own."""

    def __init__(self, count: int):
        self.count = count
        self.busy = 0  # jobs submitted (not `run`'s blocks) and not finished
        self._lock = threading.Lock()
        self._reset()

    def _reset(self) -> None:
        self._tasks: queue.SimpleQueue = queue.SimpleQueue()
        self._started = 0
        self.busy = 0

    def run(self, jobs: list) -> None:
        """Runs `jobs` on this thread and the workers; returns when all have
        finished, raising the first error."""
        helpers = min(self.count, len(jobs) - 1)
        if self._started < helpers:
            self._start(helpers)
        shared = _Jobs(jobs)
        for _ in range(helpers):
            self._tasks.put(shared)
        shared.work()
        shared.done.wait()
        # A worker may still hold `shared`: its blocks' views would keep the
        # result's arena block taken after the result is gone.
        shared.jobs = []
        if shared.error is not None:
            raise shared.error

    def submit(self, job) -> None:
        """Queues `job` (an object with `work()`, which calls `finished()`
        at its end) for one worker."""
        if self._started < 1:
            self._start(1)
        with self._lock:
            self.busy += 1
        self._tasks.put(job)

    def finished(self) -> None:
        with self._lock:
            self.busy -= 1

    def _start(self, count: int) -> None:
        with self._lock:
            while self._started < count:
                threading.Thread(
                    target=self._serve,
                    args=(self._tasks,),
                    name="olympus-interpreter-matmul",
                    daemon=True,
                ).start()
                self._started += 1

    @staticmethod
    def _serve(tasks: queue.SimpleQueue) -> None:
        while True:
            shared = tasks.get()
            shared.work()
            shared = None


_workers = _Workers(min(_cores(), 8) - 1)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_workers._reset)


class _Touch:
    """A worker's job: writes a fresh mapping of arena blocks once (its page
    faults, off the caller's thread, in one ctypes call that runs without
    the GIL), then lets the blocks go. `started` is set just before."""

    def __init__(self, mapping, blocks: list):
        self.mapping, self.blocks = mapping, blocks
        self.started = threading.Event()

    def work(self) -> None:
        mapping, blocks = self.mapping, self.blocks
        self.mapping = self.blocks = None
        try:
            address = ctypes.addressof(ctypes.c_char.from_buffer(mapping))
            self.started.set()
            ctypes.memset(address, 0, len(mapping))
            del blocks
        finally:
            _workers.finished()


# Written per miss at most: a worker writing for longer holds back the matmul
# blocks it should take (a 2048x2048 argument whose result is a scalar: 16
# MiB, 8 ms of a 90 ms first call).
_PREFAULT_BYTES = 8 << 20


def prefault_like(leaves) -> None:
    """Before a tiered miss is traced: arena blocks for results the size of
    its large arguments (a gradient's, an elementwise function's) are
    written on a worker while the caller traces, so the interpretation takes
    no page faults for them (1 ms of an MLP gradient's first call, 1 ms of
    an elementwise one's, benchmarks/README.md). The caller waits only for
    the worker to begin: a thread that needs the GIL gets it from a tracing
    thread only after the switch interval (5 ms), when the trace is over."""
    if not _workers.count:
        return
    sizes = [x.nbytes for x in leaves if getattr(x, "nbytes", 0) >= _SHARE_BYTES]
    if not sizes:
        return
    found = _arena.prefault(sizes, _PREFAULT_BYTES)
    if found is not None:
        job = _Touch(*found)
        _workers.submit(job)
        job.started.wait(0.002)


def _integer_pow(x, *, y):
    """A float square into `_aligned_empty` memory (a loss's `(a - b) ** 2`),
    else the reference rule."""
    if y == 2 and x.dtype in _BLAS_DTYPES and x.nbytes >= _SHARE_BYTES:
        return np.multiply(x, x, out=_aligned_empty(x.shape, x.dtype))
    return reference_rules["integer_pow"](x, y=y)


_rules = ChainMap(
    {
        "dot_general": _dot_general,
        "integer_pow": _integer_pow,
    },
    reference_rules,
)
_evaluator = Evaluator(
    _rules, _value, _apply, _start, name="NumPy", missing=MissingReferenceRule
)
