"""The package version, defined once (pyproject reads it from here).

A module of its own so that the modules which print or send the version
(``--version``, the User-Agent, ``bl describe``, the spec cache key) do not
import the package's ``__init__``, which loads the Python client on demand.
"""

__version__ = "0.3.0"
