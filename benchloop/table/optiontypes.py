"""The types an option of the table can have, and everything each consumer needs of one.

An option's ``type:`` in the table (``str``, ``int``, ``float``, ``flag``, ``bool``,
``choice``, ``ids``, ``list``, ``ints``, ``jmespath``, ``regex``) names one :class:`OptionType`.  It is the
only place that says how a type is parsed on the command line, what a Python caller
passes, its JSON Schema (MCP tools, ``bl describe``), its placeholder on a help page
and what a shell completes for it.  The command builder, the built-in commands, the
Python client and its stubs, the MCP server, ``bl describe``, help pages and shell
completion all ask the type instead of comparing type names.

A ``jmespath`` option is text that must be a JMESPath expression (``--metric``): it is
compiled before any request (``engine.arguments.bind``; a usage error otherwise) and its
default is checked when the table is compiled (``table.lint``); a ``regex`` option
(``--cluster``) is a Python regular expression, checked the same way.

Two distinctions matter:

* ``flag`` is given without a value and has no negative form (``--all``); ``bool``
  has one (``--pretty/--no-pretty``).  Both are ``is_flag``.
* ``ids``, ``list`` and ``ints`` are repeatable and comma-separated (``many``);
  ``ids`` and ``ints`` also read ``-`` as "values from stdin" (``stdin``).  The
  command line hands them over as strings (``-`` and commas are resolved by
  ``engine.arguments.bind``), so their ``parse`` type is ``str``.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING

from msgspec import Struct

if TYPE_CHECKING:
    from typing import Any


class OptionType(Struct, frozen=True):
    name: str
    json_type: str  # JSON type of one value: string, integer, number or boolean
    parse: type = str  # what the command-line parser produces for one value
    item: type = str  # the Python type of one value once checked (int for ``ints``)
    metavar: str = "TEXT"  # the value's placeholder on help pages
    is_flag: bool = False  # given without a value
    many: bool = False  # repeatable, comma-separated: a list of values
    stdin: bool = False  # ``-`` reads the values from stdin
    choices: bool = False  # the values are the option's ``choices``

    def schema(self, choices: tuple[str, ...] = ()) -> dict[str, Any]:
        """The JSON Schema of the option's value (a list of items when ``many``)."""
        one: dict[str, Any] = {"type": self.json_type}
        if choices:
            one["enum"] = list(choices)
        return {"type": "array", "items": one} if self.many else one

    def annotation(self, choices: tuple[str, ...] = (), *, optional: bool = False) -> str:
        """The Python annotation of the option as a keyword of the Python client (source text)."""
        one = "Literal[" + ", ".join(repr(c) for c in choices) + "]" if choices else self.item.__name__
        text = f"{one} | Sequence[{one}]" if self.many else one
        return f"{text} | None" if optional or self.many else text

    def hint(self, choices: tuple[str, ...] = (), *, optional: bool = False) -> Any:
        """The runtime annotation for a parser that validates ``choices`` itself (the global and
        built-in options; the table's actions validate choices in ``bind``, in the contract's order)."""
        from typing import Literal

        one: Any = Literal[tuple(choices)] if choices else self.parse
        if self.many:
            return list[one] | None
        return one | None if optional else one

    @property
    def value_name(self) -> str | None:
        """The JSON type a value is written as (``bl describe``), None for a flag."""
        return None if self.is_flag else self.json_type

    @property
    def completes(self) -> str:
        """What a shell completes after the option: nothing (a flag), its choices, or any word."""
        return "none" if self.is_flag else "choices" if self.choices else "word"


_TYPES = {
    "str": OptionType("str", "string"),
    "int": OptionType("int", "integer", parse=int, item=int, metavar="INT"),
    "float": OptionType("float", "number", parse=float, item=float, metavar="NUMBER"),
    "flag": OptionType("flag", "boolean", parse=bool, item=bool, metavar="", is_flag=True),
    "bool": OptionType("bool", "boolean", parse=bool, item=bool, metavar="", is_flag=True),
    "choice": OptionType("choice", "string", choices=True),
    "ids": OptionType("ids", "string", metavar="ID...", many=True, stdin=True),
    "list": OptionType("list", "string", metavar="NAME...", many=True, choices=True),
    "ints": OptionType("ints", "integer", item=int, metavar="N...", many=True, stdin=True),
    "jmespath": OptionType("jmespath", "string", metavar="EXPR"),
    "regex": OptionType("regex", "string", metavar="REGEX"),
}
TYPES = MappingProxyType(_TYPES)


def option_type(name: str) -> OptionType:
    return TYPES[name]
