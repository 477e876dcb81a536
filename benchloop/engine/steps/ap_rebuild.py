"""``ap-cmd``'s command-line reconstruction, as pure functions (docs/contract.md 1.5, ap-cmd).

Everything here works on plain values - the AgentPlatform group, profile,
template and sample-job environment already fetched - and makes no request;
``ap_command.py`` fetches them.  Each rule of the contract is one small
function, tested one by one in ``tests/unit/engine/test_ap_rebuild.py``:

* quoting: what a shell can paste (``quote``, ``json_word``, ``option``,
  ``positional``, ``whole_number``, ``check_size``): every server value is one
  word, a value starting with ``-`` never becomes an option of ``ap``, numbers
  are numbers, only printable characters and newlines are printed, and the
  text stays under ``MAX_COMMAND_BYTES``;
* secrets: the ``-p`` and ``--overrides`` values masked at any depth (``mask_tree``),
  by the one policy of ``base/masking.py`` (``is_sensitive``; shown as its ``AP_CMD``
  variant, the official client's ``hu***er22``); ``$VAR`` values are printed as
  written, never expanded (``env_references``);
* diffs: what differs from the profile or from the template (``loosely_equal``,
  ``overrides_vs_profile``, ``overrides_vs_template`` with its sidecar split);
* params inferred from a sample job's environment (``infer_params``);
* the user's changes applied to the group (``Changes``, ``apply_changes``);
* segment order for profile and non-profile groups (``profile_segments``,
  ``plain_segments``);
* extra arguments replacing or merging into segments (``merge_extras``).
"""

from __future__ import annotations

import itertools
import json
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...base.hiding import json_escaped
from ...base.masking import AP_CMD, MASK, is_env_ref, is_sensitive, shown_key, shown_url

JOIN = " \\\n  "  # between segments: a backslash, a newline, two spaces
# The longest text ap-cmd prints.  Linux refuses any single argument of 128 KiB or more
# (MAX_ARG_STRLEN, "Argument list too long"), so a longer command could never run; the
# bound counts the whole text, exports and quotes included, so every argument is below it.
MAX_COMMAND_BYTES = 128 * 1024
_CLUSTER = re.compile(r"[\x21-\x7e]{1,200}")  # visible ASCII, no space: fits the X-CLUSTER header as is
# ap-cmd's own options that `ap` does not have.  Spelt with `_` (``--ap_api_key KEY``) they
# reach the extra arguments, which are printed: refused instead, so a key is never printed.
OWN_OPTIONS = ("ap-base-url", "ap-api-key", "ap-cluster")


class BuildError(ValueError):
    """The group cannot be turned into a command (exit 1, ``failed to build command: ...``)."""


def shown(value: Any, limit: int = 60) -> str:
    """A value in an error message: ``repr`` (control characters escaped), cut to ``limit``."""
    text = repr(str(value))
    return text if len(text) <= limit else text[:limit] + "...'"


# ------------------------------------------------------------------ target
def split_target(raw: str) -> tuple[str, str | None]:
    """``GROUP_ID[@CLUSTER]`` -> (group id, cluster or None); the last ``@`` splits, an empty
    cluster counts as none."""
    head, at, tail = raw.rpartition("@")
    if not at:
        return raw, None
    return head, tail or None


def valid_cluster(name: str) -> bool:
    """A cluster name goes into the ``X-CLUSTER`` header and ``export AP_CLUSTER=``: visible
    ASCII only (no space, CR, LF or other control character)."""
    return bool(_CLUSTER.fullmatch(name))


# ----------------------------------------------------------------- quoting
def _visible(char: str) -> bool:
    return char == "\n" or char.isprintable()


def quote(value: Any) -> str:
    """One shell word for ``value``, the same for bash, dash, zsh and ksh.

    Printable text gets POSIX quoting only when it needs it (``shlex.quote``: ``prof:v2``
    stays bare, ``$(...)``, ``;``, ``|`` and newlines end up inside single quotes, where no
    shell acts on them).  Characters a terminal would act on - ESC, CR, C1 controls, bidi
    marks: whatever ``str.isprintable`` refuses, except the newline - are written as
    ``"$(printf '\\ooo')"`` pieces of their UTF-8 bytes: the screen shows them for what they
    are and the shell still passes the exact value.  (ANSI-C ``$'...'`` would be shorter, but
    dash, the ``sh`` of Debian and Ubuntu before 0.5.13, reads it as ``$`` and a quoted
    string.)  A NUL cannot be part of an argument, and text that is not Unicode cannot be
    printed: both refused."""
    text = str(value)
    if "\x00" in text:
        raise BuildError(f"{shown(text)} contains a NUL character, which no command argument can carry")
    if text.replace("\n", "").isprintable():  # the usual case, at C speed
        return shlex.quote(text)
    pieces = []
    for visible, run in itertools.groupby(text, _visible):
        chunk = "".join(run)
        if visible:
            pieces.append(shlex.quote(chunk))
            continue
        try:
            raw = chunk.encode("utf-8")
        except UnicodeEncodeError:
            raise BuildError(f"{shown(text)} is not valid Unicode") from None
        pieces.append("\"$(printf '" + "".join(f"\\{byte:03o}" for byte in raw) + "')\"")
    return "".join(pieces)


def json_word(value: Any) -> str:
    """A JSON value as one shell word: ``json.dumps`` (``", "`` and ``": "``, non-ASCII kept),
    every character that is not printable written as its ``\\uXXXX`` escape (the same JSON
    value; ``json.dumps`` already escapes C0 controls, not DEL, C1 or bidi marks), quoted."""
    text = json.dumps(value, ensure_ascii=False)
    if not text.isprintable():
        text = "".join(c if c.isprintable() else json_escaped(c) for c in text)
    return quote(text)


def option(flag: str, value: Any) -> str:
    """``--flag value``, the value one word; a value starting with ``-`` is joined as
    ``--flag=value``, so ``ap`` can never read it as an option of its own."""
    text = str(value)
    return f"{flag}={quote(text)}" if text.startswith("-") else f"{flag} {quote(text)}"


def positional(value: Any, what: str) -> str:
    """A word ``ap`` reads by position (the template) or the value of a short option (``-q``):
    one that starts with ``-`` would be an option of ``ap`` and has no ``=`` form, so it is
    refused."""
    text = str(value)
    if text.startswith("-"):
        raise BuildError(f"{what} {shown(text)} starts with '-': ap would read it as an option")
    return quote(text)


def whole_number(value: Any, what: str) -> int:
    """A count from the group (trials, concurrency, batch size): an integer >= 0 (``4.0``
    included), or a string of ASCII digits; anything else (``"2&&..."``, ``"$(...)"``, -1,
    2.5, true) is refused."""
    if isinstance(value, float) and value.is_integer() and value >= 0:
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str) and value.isascii() and value.isdigit():
        return int(value)
    raise BuildError(f"{what} {shown(value)} is not a whole number (0 or more)")


def check_size(text: str) -> str:
    """``text`` when a shell can run it; longer than ``MAX_COMMAND_BYTES`` (UTF-8): refused."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_COMMAND_BYTES:
        raise BuildError(f"the command would be {size:,} bytes, more than the {MAX_COMMAND_BYTES:,} a shell can "
                         f"run (Linux refuses an argument of 128 KiB); not printed")
    return text


# ----------------------------------------------------------------- secrets
def mask_tree(value: Any, given: Any = None) -> Any:
    """``value`` with its secrets masked, at any depth: the value of a sensitive key, the
    ``value`` of a ``{"name": SENSITIVE, "value": ...}`` entry (a container's environment), the
    password of a URL.  ``given`` is what the user typed (``--params``, ``--overrides``): a key
    of it whose value is no object is shown as typed."""
    if isinstance(value, list):
        return [mask_tree(item) for item in value]
    if isinstance(value, str):
        return shown_url(value, AP_CMD)
    if not isinstance(value, dict):
        return value
    named = value.get("name") if isinstance(value.get("name"), str) else None
    out: dict[str, Any] = {}
    for key, item in value.items():
        typed = given.get(key) if isinstance(given, dict) else None
        if isinstance(given, dict) and key in given and not isinstance(typed, dict):
            out[key] = item
        elif not is_env_ref(item) and (is_sensitive(str(key), item)
                                       or (key == "value" and named is not None and is_sensitive(named, item))):
            out[key] = shown_key(str(item), AP_CMD) or MASK
        else:
            out[key] = mask_tree(item, typed)
    return out


def env_references(params: Mapping[str, Any]) -> list[str]:
    """``[warn]`` lines for the ``$VAR``/``${VAR}`` values of ``-p``: printed as written.  The
    official client expanded them from the local environment, so a group whose author wrote
    ``"$AP_API_KEY"`` made it print (and a paste send) the user's key."""
    return [f"-p {key}: {value} is left as written (bl does not expand variables from your environment)"
            for key, value in params.items() if is_env_ref(value)]


def show_params(params: Mapping[str, Any], user_keys: set[str] | frozenset[str] = frozenset()) -> str:
    """The ``-p`` value: JSON, secrets masked (``mask_tree``), one shell word.  Keys the user
    gave (``--params``, ``-p`` extras) are never masked."""
    return json_word(mask_tree(dict(params), dict.fromkeys(user_keys)))


# ------------------------------------------------------------------- diffs
def coerce(text: str) -> Any:
    """An environment string as the value it spells: true/false, an int, a float, or itself."""
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def differs_from_default(value: str, default: Any) -> bool:
    """Whether a sample job's value differs from the schema's default (no default: it does)."""
    if default is None:
        return True
    if isinstance(default, bool):
        return coerce(value) != default
    if isinstance(default, (int, float)):
        try:
            return float(coerce(value)) != float(default)
        except (TypeError, ValueError):
            return True
    return str(value) != str(default)


def loosely_equal(a: Any, b: Any) -> bool:
    """A group param against a profile param: equal, or equal once a string side is read as
    the other side's type (``"0.5"`` == 0.5, ``'{"a": 1}'`` == {"a": 1})."""
    if a == b:
        return True
    for text, other in ((a, b), (b, a)):
        if isinstance(text, str) and not isinstance(other, str):
            if coerce(text) == other:
                return True
            if isinstance(other, (dict, list)):
                try:
                    return json.loads(text) == other
                except ValueError:
                    pass
    return False


def params_vs_profile(params: Mapping[str, Any], profile_params: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in params.items() if k not in profile_params or not loosely_equal(v, profile_params[k])}


def overrides_vs_profile(overrides: Mapping[str, Any] | None, profile: Mapping[str, Any] | None) -> dict | None:
    """The override keys whose value differs from the profile's (None when none does)."""
    profile = profile or {}
    diff = {k: v for k, v in (overrides or {}).items() if v != profile.get(k)}
    return diff or None


def overrides_vs_template(overrides: Mapping[str, Any] | None, template: Mapping[str, Any]) -> dict | None:
    """The overrides that differ from the template's defaults; ``sidecars`` is split into
    ``sidecar_resources`` (each sidecar's changed resources) and ``sidecars`` (its other
    changed settings)."""
    if not overrides:
        return None
    diff = {k: v for k, v in overrides.items() if k != "sidecars" and v != template.get(k)}
    defaults = template.get("sidecars") or {}
    resources: dict[str, Any] = {}
    others: dict[str, Any] = {}
    for name, config in (overrides.get("sidecars") or {}).items():
        default = defaults.get(name) or {}
        wanted = {k: v for k, v in (config.get("resources") or {}).items()
                  if v != (default.get("resources") or {}).get(k)}
        if wanted:
            resources[name] = wanted
        rest = {k: v for k, v in config.items() if k != "resources" and v != default.get(k)}
        if rest:
            others[name] = rest
    if resources:
        diff["sidecar_resources"] = resources
    if others:
        diff["sidecars"] = others
    return diff or None


# ----------------------------------------------------- params of a sample job
def infer_params(env: Mapping[str, Any], schema: Mapping[str, Any], per_instance: tuple[str, ...]) -> dict:
    """``-p`` of a group without stored params, from its sample job's environment.

    With a template schema: the schema's keys (their lower-case spelling matched against the
    environment's names), kept when required or different from the default; keys with a
    ``mapping`` and per-instance keys are left out.  Without one: every variable except the
    per-instance ones, under its own name."""
    params: dict[str, Any] = {}
    if not schema:
        return {k: v for k, v in env.items() if k.lower() not in per_instance}
    names = {k.lower(): k for k in env}
    for key, meta in schema.items():
        meta = meta if isinstance(meta, dict) else {}
        if key in per_instance or key not in names or "mapping" in meta:
            continue
        value = env[names[key]]
        if meta.get("required") or differs_from_default(value, meta.get("default")):
            params[key] = value
    return params


# ----------------------------------------------------------------- changes
@dataclass(frozen=True)
class Changes:
    """What the user asked to change (the options of ``ap-cmd``); None: keep the group's."""

    trials: int | None = None
    concurrency: int | None = None
    batch_size: int | None = None
    agenthub_ref: str | None = None
    dataset: str | None = None
    suite_name: str | None = None
    queue: str | None = None
    params: Any = None  # parsed --params
    overrides: Any = None  # parsed --overrides

    @property
    def user_keys(self) -> set[str]:
        return set(self.params) if isinstance(self.params, dict) else set()


def parse_json_option(raw: str | None) -> Any:
    """``--params``/``--overrides``: parsed JSON; ``ValueError`` (a usage error) when invalid."""
    if raw is None:
        return None
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"invalid JSON: {exc}") from None


def _object(value: Any, flag: str) -> dict | None:
    """A --params/--overrides value: empty ones are no change; anything else must be an object."""
    if not value:
        return None
    if not isinstance(value, dict):
        raise BuildError(f"{flag} must be a JSON object, not {type(value).__name__}")
    return value


def _deep_merge(base: dict, extra: Mapping[str, Any]) -> dict:
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            base[key] = _deep_merge(dict(base[key]), value)
        else:
            base[key] = value
    return base


def apply_changes(group: Mapping[str, Any], changes: Changes, base_params: Mapping[str, Any] | None = None) -> dict:
    """A copy of the group with the changes applied (params merged, overrides deep-merged)."""
    out = dict(group)
    ctx = out["submission_context"] = dict(out.get("submission_context") or {})
    for value, key, target in ((changes.agenthub_ref, "agenthub_revision", out),
                               (changes.concurrency, "max_concurrency", out), (changes.suite_name, "name", out),
                               (changes.queue, "queue_id", out), (changes.dataset, "dataset", out),
                               (changes.trials, "trials", ctx), (changes.batch_size, "batch_size", ctx)):
        if value is not None:
            target[key] = value
    params = _object(changes.params, "--params")
    if params:
        ctx["params"] = {**(ctx.get("params") or base_params or {}), **params}
    overrides = _object(changes.overrides, "--overrides")
    if overrides:
        ctx["overrides"] = _deep_merge(dict(ctx.get("overrides") or {}), overrides)
    return out


# ---------------------------------------------------------------- segments
# Every value below comes from a server (or from the user's options) and goes through
# ``option``, ``positional``, ``whole_number`` or ``json_word``: nothing reaches the text bare.
def _overrides(overrides: Mapping[str, Any], changes: Changes) -> str:
    return f"--overrides {json_word(mask_tree(dict(overrides), changes.overrides))}"


def _params(params: Mapping[str, Any], changes: Changes, notes: list[str] | None) -> str:
    if notes is not None:
        notes.extend(env_references(params))
    return f"-p {show_params(params, changes.user_keys)}"


def profile_segments(group: Mapping[str, Any], profile: Mapping[str, Any], changes: Changes,
                     default_batch: int, notes: list[str] | None = None) -> list[str]:
    """The segments of a group submitted with a profile: what differs from the profile.
    ``notes`` collects the warnings (``$VAR`` values left as written)."""
    group = apply_changes(group, changes)
    spec = profile.get("spec") or {}
    ctx = group.get("submission_context") or {}
    name = profile.get("name") or profile.get("profile_id")
    version = profile.get("version")
    out = [f"ap job create {positional(group.get('template') or spec.get('template'), 'template')}",
           option("--profile", f"{name}:v{version}")]
    if group.get("agenthub_revision") and group["agenthub_revision"] != spec.get("agenthub_revision"):
        out.append(option("--agenthub-ref", group["agenthub_revision"]))
    if ctx.get("trials") is not None and ctx["trials"] != spec.get("trials"):
        out.append(f"--trials {whole_number(ctx['trials'], 'trials')}")
    if group.get("name"):
        out.append(option("--suite-name", group["name"]))
    if group.get("max_concurrency") is not None and group["max_concurrency"] != spec.get("concurrency"):
        out.append(f"--concurrency {whole_number(group['max_concurrency'], 'max_concurrency')}")
    if group.get("queue_id"):
        out.append(f"-q {positional(group['queue_id'], 'queue_id')}")
    if ctx.get("batch_size") is not None and ctx["batch_size"] != default_batch:
        out.append(f"--batch-size {whole_number(ctx['batch_size'], 'batch_size')}")
    profile_dataset = spec.get("dataset") or (spec.get("params") or {}).get("dataset")
    if group.get("dataset") and group["dataset"] != profile_dataset:
        out.append(option("--dataset", group["dataset"]))
    params = params_vs_profile(ctx.get("params") or {}, spec.get("params") or {})
    if params:
        out.append(_params(params, changes, notes))
    overrides = overrides_vs_profile(ctx.get("overrides"), spec.get("overrides"))
    if overrides:
        out.append(_overrides(overrides, changes))
    return out


def plain_segments(group: Mapping[str, Any], params: Mapping[str, Any], dataset: str, changes: Changes,
                   default_batch: int, overrides: Mapping[str, Any] | None,
                   notes: list[str] | None = None) -> list[str]:
    """The segments of a group without a profile; ``group`` has the changes applied already,
    ``params`` and ``dataset`` too, ``overrides`` is the diff against the template."""
    ctx = group.get("submission_context") or {}
    out = [f"ap job create {positional(group['template'], 'template')}"]
    if dataset:
        out.append(option("--dataset", dataset))
    if group.get("agenthub_revision"):
        out.append(option("--agenthub-ref", group["agenthub_revision"]))
    if group.get("max_concurrency") is not None:
        out.append(f"--concurrency {whole_number(group['max_concurrency'], 'max_concurrency')}")
    if group.get("name"):
        out.append(option("--suite-name", group["name"]))
    if group.get("queue_id"):
        out.append(f"-q {positional(group['queue_id'], 'queue_id')}")
    if ctx.get("batch_size") is not None and ctx["batch_size"] != default_batch:
        out.append(f"--batch-size {whole_number(ctx['batch_size'], 'batch_size')}")
    if params:
        out.append(_params(params, changes, notes))
    if overrides:
        out.append(_overrides(overrides, changes))
    return out


# ----------------------------------------------------------- extra arguments
def option_key(token: str) -> str | None:
    """The normalised name of an option token (dashes stripped, ``=value`` dropped, ``_`` ->
    ``-``); None otherwise."""
    if not token.startswith("-") or token == "-":
        return None
    return token.lstrip("-").split("=", 1)[0].replace("_", "-")


def group_extras(args: list[str]) -> list[list[str]]:
    """Extra arguments as ``[option, value]`` pairs (a value is a token that is no option),
    or single tokens."""
    out: list[list[str]] = []
    index = 0
    while index < len(args):
        item = [args[index]]
        if option_key(args[index]) and index + 1 < len(args) and not option_key(args[index + 1]):
            item.append(args[index + 1])
            index += 1
        out.append(item)
        index += 1
    return out


def segment_key(segment: str) -> str | None:
    """The option a segment sets: its first word (``--dataset=-x`` included); None for
    ``ap job create ...`` and other words."""
    return option_key(segment.split(" ", 1)[0])


def words(tokens: list[str]) -> str:
    """Tokens the user typed, as shell words (``quote`` each)."""
    return " ".join(quote(token) for token in tokens)


def merge_params(segment: str, extra: list[str]) -> str:
    """``-p`` extra merged into the existing ``-p`` object (the extra's keys shown unmasked);
    anything that is not two JSON objects replaces the segment instead."""
    try:
        tokens = shlex.split(segment)
    except ValueError:
        return words(extra)
    if len(tokens) < 2 or len(extra) < 2:
        return words(extra)
    try:
        old, new = json.loads(tokens[1]), json.loads(extra[1])
    except ValueError:
        return words(extra)
    if not isinstance(old, dict) or not isinstance(new, dict):
        return words(extra)
    return f"{tokens[0]} {show_params({**old, **new}, set(new))}"


def check_extras(args: list[str]) -> None:
    """``ValueError`` (a usage error) for an extra argument naming one of ``OWN_OPTIONS``."""
    for token in args:
        key = option_key(token)
        if key in OWN_OPTIONS:
            raise ValueError(f"{token.split('=', 1)[0]} is not passed to ap (it would be printed): write --{key}")


def merge_extras(segments: list[str], args: list[str]) -> list[str]:
    """Extra arguments: one naming a segment's option replaces it (spelt as the user typed it),
    ``-p``/``--params`` merges into ``-p``, ``--show-secrets`` is ignored, others are appended."""
    segments = list(segments)
    for extra in group_extras(args):
        key = option_key(extra[0])
        if key == "show-secrets":
            continue
        index = next((i for i, s in enumerate(segments) if key is not None and segment_key(s) == key), None)
        if index is None:
            segments.append(words(extra))
        elif key in ("p", "params"):
            segments[index] = merge_params(segments[index], extra)
        else:
            segments[index] = words(extra)
    return segments


def render(cluster: str, segments: list[str]) -> str:
    """The printed text (without the final newline): the two exports, an empty line, the
    command; refused when longer than a shell can run (``check_size``)."""
    return check_size(f"export AP_CLUSTER={quote(cluster)}\nexport AP_API_KEY={MASK}\n\n" + JOIN.join(segments))
