"""The global options (given before the resource), as data.

One definition feeds the CLI's meta app, `bl describe` and the reference docs.
Defaults here are the built-in ones; configuration and environment variables
are resolved in ``config.py``.
"""

from __future__ import annotations

from typing import Any

GLOBAL_OPTIONS: list[dict[str, Any]] = [
    {"name": "api_key", "flags": ["--api-key"], "type": "str", "default": None,
     "help": "Personal API key (sent as X-API-Key to the configured host only). Env: BENCHLOOP_API_KEY."},
    {"name": "host", "flags": ["--host"], "type": "str", "default": None,
     "help": "Backend base URL. Env: BENCHLOOP_HOST. Default: the production backend."},
    {"name": "output_dir", "flags": ["--output-dir", "-o"], "type": "str", "default": None,
     "help": "Download root. Env: BENCHLOOP_OUTPUT_DIR. Default: the current directory."},
    {"name": "pretty", "flags": ["--pretty"], "negative": "--no-pretty", "type": "bool", "default": True,
     "help": "Indent JSON output (stdout, JSON files); --no-pretty prints compact JSON."},
    {"name": "timeout", "flags": ["--timeout"], "type": "float", "default": 300.0,
     "help": "Seconds each HTTP request may take as a whole (a cut download resumes at its next attempt)."},
    {"name": "retry", "flags": ["--retry"], "type": "int", "default": 4,
     "help": "Retries after the first attempt for network errors, 5xx and 429 (negative counts as 0)."},
    {"name": "concurrency", "flags": ["--concurrency"], "type": "int", "default": 5, "min": 1,
     "help": "Requests in flight at once."},
    {"name": "ca_bundle", "flags": ["--ca-bundle"], "type": "str", "default": None,
     "help": "CA certificates (PEM) to verify the backend's TLS certificate. Env: SSL_CERT_FILE."},
    {"name": "verbose", "flags": ["--verbose", "-v"], "type": "flag", "default": False,
     "help": "Print [debug] lines on stderr."},
    {"name": "quiet", "flags": ["--quiet", "-q"], "type": "flag", "default": False,
     "help": "Print only [error] lines on stderr (wins over -v)."},
    {"name": "config", "flags": ["--config"], "type": "str", "default": None,
     "help": "Configuration file. Env: BENCHLOOP_CONFIG. Default: ~/.benchloop/config.toml."},
    {"name": "profile", "flags": ["--profile"], "type": "str", "default": None,
     "help": "Use [profiles.NAME] of the config file over [profile]. Env: BENCHLOOP_PROFILE."},
    {"name": "error_format", "flags": ["--error-format"], "type": "choice", "choices": ["text", "json"],
     "default": "text", "help": "How errors are printed on stderr: text lines, or one JSON object for scripts."},
]

# A command may define its own -o/--output-dir: it overrides the global one.
SHADOWABLE_FLAGS = {"--output-dir", "-o"}
