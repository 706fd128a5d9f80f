"""Reads the printed form of an olympuspr back into a program.

The text is exactly what `print(closed)` (or `closed.pretty(source_info=True)`)
shows, so a dump from a log, a test's golden file or a bug report can be
loaded, checked and run again:

    >>> closed = olympus.ir.parse('''{ lambda ; a:f32[3]. let
    ...     b:f32[3] = sin a
    ...     c:f32[3] = mul b 3.0:f32[]
    ...   in (c,) }''')
    >>> olympus.stages.Traced.from_olympuspr(closed).lower().compile()(jnp.ones(3))
    [Array([2.5244129, 2.5244129, 2.5244129], dtype=float32)]

What the text does not carry, the caller supplies or loses: constvar values
come from `consts` (a list for the top-level constvars, in order, or a dict
keyed by printed name for constvars anywhere); weak types come back from
`{weak}` marks (`closed.pretty(weak_types=True)`), and a type printed without
one is strong, so parse the default `print(closed)` only when weak types do
not matter (they decide the dtype of a weak output mixed with, say, bf16);
source lines come back from `# file:line (function) [scope]` comments when present,
and an optimizer rule's note (`rewritten by stable: ...`) as the line's
`rewrite` record (a `RewriteRecord`: the rule's text; the replaced equations
are not in the text, `olympus.ir.load` brings them back from its manifest).
Parameters that hold Python functions (the `bwd` of `custom_lin`, the
`callback` of `debug_callback`) print as the function's name and come back
as that string: such programs parse and print, but cannot run.

Grammar (whitespace-insensitive, so one-line and indented forms both parse):

    program := '{' 'lambda' binder* ';' binder* '.' 'let' eqn* 'in' '(' outs ')' '}'
    binder  := name ':' type            type := dtype '[' dims ']' ['{weak}']
    eqn     := binder* '=' prim ['[' (key '=' value)* ']'] atom* ['# source']
    atom    := name | literal           literal := value ':' type
    value   := program | '(' values ')' | '[' values ']' | int | float | None
             | True | False | dtype name | 'quoted string'
             | DimensionNumbers '(' (field '=' value ',')* ')'
             | bare word (a string, e.g. a jitted function's name)

Primitives are looked up by name in `olympus.ir.core.all_primitives` and
parameter types in `param_types`, which olympus.lax fills when it is imported.
"""

from __future__ import annotations

import ast
import re
from typing import Mapping, Sequence

import numpy as np

from olympus.ir import dtypes
from olympus.ir.core import (
    AvalSharding,
    ClosedOlympuspr,
    Eqn,
    Literal,
    Olympuspr,
    ShapedArray,
    RewriteRecord,
    SourceInfo,
    Var,
    all_primitives,
    param_types,
)
from olympus.ir.printer import (
    DROPPED,
    REWRITE_MARK,
    WEAK_MARK,
    quoted_string_params,
)


class OlympusprParseError(ValueError):
    """The text is not a well-formed olympuspr; the message shows where."""


_DTYPES_BY_SHORT_NAME = {name: dtype for dtype, name in dtypes._SHORT_NAMES.items()}
_DTYPES_BY_NAME = {
    **{str(dtype): dtype for dtype in dtypes._SHORT_NAMES if dtype != dtypes.float0},
    "float0": dtypes.float0,
}
# Always strings, even if they read like numbers (primitives that quote their
# string params, such as `hint`, are read as written).
_STRING_PARAMS = frozenset({"name"})
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PRIM_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?|inf|nan)")
_SOURCE = re.compile(
    r"(?P<file>.*?):(?P<line>\d+) \((?P<function>.*?)\)(?: \[(?P<scope>[^\]]*)\])?"
    rf"(?: {re.escape(REWRITE_MARK)}(?P<rewrite>.*))?"  # an optimizer rule's note
)
_DTYPE_NAME = re.compile(r"[A-Za-z0-9_]+(?=\[)")
_DIMS = re.compile(r"(?:[0-9,\s]|@\w+|@\([\w,]+\))*")  # `8@x`: explicit sharding
_QUOTED = re.compile(r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"")
_LITERAL_WORDS = ("True", "False", "nan", "inf", "-inf", "+inf", "-nan")


class _Reader:
    """A cursor over the text with the few lexical steps the grammar needs."""

    def __init__(self, text: str):
        self.text = text
        self.pos = 0

    def error(self, problem: str) -> OlympusprParseError:
        line_no = self.text.count("\n", 0, self.pos) + 1
        start = self.text.rfind("\n", 0, self.pos) + 1
        end = self.text.find("\n", self.pos)
        line = self.text[start : end if end >= 0 else len(self.text)]
        caret = " " * (self.pos - start) + "^"
        return OlympusprParseError(f"line {line_no}: {problem}\n  {line}\n  {caret}")

    def skip_space(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self, s: str) -> bool:
        self.skip_space()
        return self.text.startswith(s, self.pos)

    def peek_keyword(self, word: str) -> bool:
        """`word` as a whole token (so a variable named `in` is not the keyword)."""
        if not self.peek(word):
            return False
        after = self.pos + len(word)
        if after == len(self.text):
            return True
        return not (self.text[after].isalnum() or self.text[after] in "_:")

    def expect(self, s: str) -> None:
        if not self.peek(s):
            raise self.error(f"expected {s!r}")
        self.pos += len(s)

    def match(self, pattern: re.Pattern, what: str) -> str:
        self.skip_space()
        m = pattern.match(self.text, self.pos)
        if m is None:
            raise self.error(f"expected {what}")
        self.pos = m.end()
        return m.group(0)

    def at_end(self) -> bool:
        self.skip_space()
        return self.pos >= len(self.text)


class _Program:
    """The names one (sub-)program defines: each program is its own scope."""

    def __init__(self):
        self.vars: dict[str, Var] = {}


class _Parser:
    def __init__(self, text: str, named_consts: Mapping[str, object]):
        self.r = _Reader(text)
        self.named_consts = named_consts
        self.memo: dict[
            str, ClosedOlympuspr
        ] = {}  # a program printed twice is one object

    # ---- types and binders ---------------------------------------------------
    def aval(self) -> ShapedArray:
        r = self.r
        name = r.match(_DTYPE_NAME, "a type such as f32[3]")
        dtype = _DTYPES_BY_SHORT_NAME.get(name)
        if dtype is None:
            r.pos -= len(name)
            raise r.error(f"unknown dtype {name!r}")
        r.expect("[")
        dims = r.match(_DIMS, "dimensions")
        r.expect("]")
        shape, sharding = _dims_and_sharding(dims.replace(" ", ""))
        weak = r.text.startswith(WEAK_MARK, r.pos)  # only right after the ']'
        if weak:
            r.pos += len(WEAK_MARK)
        return ShapedArray(shape, dtype, weak_type=weak, sharding=sharding)

    def binder(self, scope: _Program) -> Var:
        r = self.r
        start = r.pos
        name = r.match(_NAME, "a variable name")
        r.expect(":")
        if name == DROPPED:  # a result nothing reads: bound to no name
            return Var(self.aval())
        if name in scope.vars:
            r.pos = start
            r.skip_space()
            raise r.error(f"variable {name} is defined twice")
        var = scope.vars[name] = Var(self.aval())
        return var

    def looks_like_binder(self) -> bool:
        r = self.r
        r.skip_space()
        m = _NAME.match(r.text, r.pos)
        return m is not None and r.text.startswith(":", m.end())

    def binders_until(self, stop: str, scope: _Program) -> list[Var]:
        out = []
        while not self.r.peek(stop):
            out.append(self.binder(scope))
        self.r.expect(stop)
        return out

    # ---- atoms ---------------------------------------------------------------
    def literal(self) -> Literal:
        r = self.r
        r.skip_space()
        end = r.text.find(":", r.pos)
        token = r.text[r.pos : end] if end >= 0 else ""
        if not token or any(c.isspace() for c in token):
            raise r.error("expected a literal such as 3.0:f32[]")
        r.pos = end + 1
        aval = self.aval()
        if aval.dtype == dtypes.float0 and token == "0":  # grad's integer zeros
            return Literal(np.zeros(aval.shape, dtypes.float0), aval)
        if aval.shape != ():
            raise r.error("literals are scalars")
        return Literal(_scalar(token, aval.dtype, r), aval)

    def is_literal_start(self) -> bool:
        r = self.r
        r.skip_space()
        c = r.text[r.pos : r.pos + 1]
        if c and (c.isdigit() or c in "+-.("):
            return True
        return any(r.text.startswith(w + ":", r.pos) for w in _LITERAL_WORDS)

    def atom(self, scope: _Program):
        if self.is_literal_start():
            return self.literal()
        r = self.r
        start = r.pos
        name = r.match(_NAME, "a variable or literal")
        var = scope.vars.get(name)
        if var is None:
            r.pos = start
            raise r.error(f"variable {name} is used but never defined")
        return var

    def operands_end(self) -> bool:
        """Whether the operand list of an equation ends here."""
        r = self.r
        if r.at_end() or r.peek("#") or r.peek("=") or r.peek("}"):
            return True
        if r.peek_keyword("in") and self._in_keyword():
            return True
        if self.looks_like_binder() and not self.is_literal_start():
            return self.next_is_equation()
        return False

    def next_is_equation(self) -> bool:
        """A run of `name:type` followed by `=` starts the next equation."""
        r = self.r
        save = r.pos
        try:
            while self.looks_like_binder() and not self.is_literal_start():
                r.match(_NAME, "name")
                r.expect(":")
                self.aval()
            return r.peek("=")
        except OlympusprParseError:
            return False
        finally:
            r.pos = save

    # ---- params --------------------------------------------------------------
    def params(self, primitive) -> dict:
        r = self.r
        params = {}
        if not r.text.startswith("[", r.pos):
            return params
        r.pos += 1
        strings = () if primitive in quoted_string_params else _STRING_PARAMS
        while not r.peek("]"):
            key = r.match(_NAME, "a parameter name")
            r.expect("=")
            params[key] = self.value(as_string=key in strings)
        r.expect("]")
        return params

    def value(self, as_string: bool = False):
        r = self.r
        r.skip_space()
        if r.peek("'") or r.peek('"'):
            return ast.literal_eval(r.match(_QUOTED, "a quoted string"))
        if as_string:
            return self.bare_word()
        if r.peek("{"):
            return self.closed_program()
        if r.peek("("):
            return tuple(self.sequence("(", ")"))
        if r.peek("["):
            return list(self.sequence("[", "]"))
        name = _NAME.match(r.text, r.pos)
        if name and r.text.startswith("(", name.end()) and name[0] in param_types:
            r.pos = name.end()
            return self.named_tuple(param_types[name[0]])
        word = self.bare_word()
        return _param_scalar(word)

    def named_tuple(self, cls):
        """`(field=value, ...)` after a NamedTuple param's class name."""
        r = self.r
        r.expect("(")
        fields = {}
        while not r.peek(")"):
            key = r.match(_NAME, f"a {cls.__name__} field name")
            r.expect("=")
            fields[key] = self.value()
            if r.peek(","):
                r.pos += 1
        r.expect(")")
        try:
            return cls(**fields)
        except TypeError as err:
            raise r.error(f"bad {cls.__name__}: {err}") from None

    def sequence(self, open_: str, close: str) -> list:
        r = self.r
        r.expect(open_)
        items = []
        while not r.peek(close):
            items.append(self.value())
            if r.peek(","):
                r.pos += 1
        r.expect(close)
        return items

    def bare_word(self) -> str:
        """A token up to whitespace or a closing bracket, keeping nested (), <>."""
        r = self.r
        r.skip_space()
        start, depth = r.pos, 0
        while r.pos < len(r.text):
            c = r.text[r.pos]
            if c in "(<":
                depth += 1
            elif c in ")>" and depth > 0:
                depth -= 1
            elif depth == 0 and (c.isspace() or c in ")],"):
                break
            r.pos += 1
        if r.pos == start:
            raise r.error("expected a parameter value")
        return r.text[start : r.pos]

    # ---- equations and programs ------------------------------------------------
    def source_comment(self) -> SourceInfo | None:
        r = self.r
        if not r.peek("#"):
            return None
        r.pos += 1
        end = r.text.find("\n", r.pos)
        end = len(r.text) if end < 0 else end
        comment = r.text[r.pos : end].strip()
        r.pos = end
        m = _SOURCE.fullmatch(comment)
        if m is None:
            return None
        info = SourceInfo(m["file"], int(m["line"]), m["function"], m["scope"] or "")
        if m["rewrite"] is not None:  # the rule, not the replaced equations
            info = info.with_rewrite(RewriteRecord(m["rewrite"]))
        return info

    def equation(self, scope: _Program) -> Eqn:
        r = self.r
        outvars = []
        while not r.peek("="):
            outvars.append(self.binder(scope))
        r.expect("=")
        start = r.pos
        name = r.match(_PRIM_NAME, "a primitive name")
        primitive = all_primitives.get(name)
        if primitive is None:
            r.pos = start
            r.skip_space()
            raise r.error(
                f"unknown primitive {name!r} (not in olympus.ir.core.all_primitives)"
            )
        params = self.params(primitive)
        invars = []
        while not self.operands_end():
            invars.append(self.atom(scope))
        return Eqn(primitive, params, invars, outvars, self.source_comment())

    def program(self) -> tuple[Olympuspr, _Program]:
        r, scope = self.r, _Program()
        r.expect("{")
        if not r.peek_keyword("lambda"):
            raise r.error("expected 'lambda'")
        r.pos += len("lambda")
        constvars = self.binders_until(";", scope)
        invars = self.binders_until(".", scope)
        if not r.peek_keyword("let"):
            raise r.error("expected 'let'")
        r.pos += len("let")
        eqns = []
        while not (r.peek_keyword("in") and self._in_keyword()):
            eqns.append(self.equation(scope))
        r.pos += len("in")
        r.expect("(")
        outvars = []
        while not r.peek(")"):
            outvars.append(self.atom(scope))
            if r.peek(","):
                r.pos += 1
        r.expect(")")
        r.expect("}")
        return Olympuspr(constvars, invars, eqns, outvars), scope

    def _in_keyword(self) -> bool:
        r = self.r
        save = r.pos
        r.pos += 2
        found = r.peek("(")
        r.pos = save
        return found

    def closed_program(self) -> ClosedOlympuspr:
        r = self.r
        r.skip_space()
        start = r.pos
        olympuspr, scope = self.program()
        # The printer shows one shared program the same each time, up to layout
        # (indentation, and one-line vs indented form depend on nesting depth).
        text = " ".join(r.text[start : r.pos].split())
        if text in self.memo:
            return self.memo[text]
        closed = ClosedOlympuspr(olympuspr, self.named_values(olympuspr, scope))
        self.memo[text] = closed
        return closed

    def named_values(self, olympuspr: Olympuspr, scope: _Program) -> list:
        """Constvar values from the caller's dict, by printed name."""
        names = {v: k for k, v in scope.vars.items()}
        values = []
        for v in olympuspr.constvars:
            name = names[v]
            if name not in self.named_consts:
                raise OlympusprParseError(
                    f"no value for constvar {name}:{v.aval.str_short()}; pass "
                    f"consts=[...] (top level, in order) or consts={{'{name}': value}}"
                )
            values.append(self.named_consts[name])
        return values


def _scalar(token: str, dtype: np.dtype, r: _Reader):
    """The value of a literal token in `dtype`, as the tracer stores it."""
    try:
        if dtype == np.bool_:
            if token not in ("True", "False"):
                raise ValueError(token)
            return np.bool_(token == "True")
        if dtype.kind in "iu":
            return np.asarray(int(token), dtype=dtype)[()]
        if dtype.kind == "c":
            return np.asarray(complex(token), dtype=dtype)[()]
        return np.asarray(float(token), dtype=dtype)[()]
    except (ValueError, OverflowError):
        raise r.error(f"{token!r} is not a {dtypes.short_name(dtype)} value") from None


def _dims_and_sharding(dims: str) -> tuple:
    """`8@x,4` -> ((8, 4), AvalSharding(None, ("x", None))); no `@`: no sharding."""
    if "@" not in dims:
        return tuple(int(d) for d in dims.split(",") if d), None
    parts = re.findall(r"(\d+)(?:@(\w+|\([\w,]+\)))?", dims)
    shape = tuple(int(d) for d, _ in parts)
    spec = tuple(
        None if not a else tuple(a[1:-1].split(",")) if a[0] == "(" else a
        for _, a in parts
    )
    return shape, AvalSharding(None, spec)


_SHAPED_ARRAY = re.compile(r"ShapedArray\((\w+)\[([0-9,]*)\](, weak_type=True)?\)")


def _param_scalar(word: str):
    m = _SHAPED_ARRAY.fullmatch(word)
    if (
        m and m[1] in _DTYPES_BY_SHORT_NAME
    ):  # an aval held by a param, as repr() shows it
        shape = tuple(int(d) for d in m[2].split(",") if d)
        return ShapedArray(shape, _DTYPES_BY_SHORT_NAME[m[1]], weak_type=bool(m[3]))
    if word == "None":
        return None
    if word in ("True", "False"):
        return word == "True"
    if word in _DTYPES_BY_NAME:
        return _DTYPES_BY_NAME[word]
    if re.fullmatch(r"[+-]?\d+", word):
        return int(word)
    if _NUMBER.fullmatch(word):
        return float(word)
    return word


def parse(
    text: str, consts: Sequence | Mapping[str, object] | None = None
) -> ClosedOlympuspr:
    """The ClosedOlympuspr that `text` (a printed olympuspr) describes.

    `consts` gives the constvars' values: a sequence for the top-level
    constvars in order, or a dict from printed name (`"a"`) to value, which
    also reaches constvars of sub-programs.

    >>> print(olympus.ir.parse("{ lambda ; a:f32[]. let b:f32[] = mul a 2.0:f32[] in (b,) }"))
    { lambda ; a:f32[]. let b:f32[] = mul a 2.0:f32[] in (b,) }
    """
    named = dict(consts) if isinstance(consts, Mapping) else {}
    parser = _Parser(text, named)
    parser.r.skip_space()
    olympuspr, scope = parser.program()
    if not parser.r.at_end():
        raise parser.r.error("unexpected text after the program")
    if consts is not None and not isinstance(consts, Mapping):
        if len(consts) != len(olympuspr.constvars):
            raise OlympusprParseError(
                f"the program has {len(olympuspr.constvars)} constvars but "
                f"{len(consts)} consts were given"
            )
        return ClosedOlympuspr(olympuspr, list(consts))
    return ClosedOlympuspr(olympuspr, parser.named_values(olympuspr, scope))
