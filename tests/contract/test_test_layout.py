"""The tests' own layout holds to tests/README.md: by layer, named after behaviour, findable.

* every test module sits in a layer folder (``unit/<package>``, ``cli``, ``contract``,
  ``browser``), none at ``tests/`` itself, where only the shared helpers are;
* a ``unit/`` folder is named after a subpackage of ``benchloop/`` (read from the package);
* basenames are unique across the tree (no ``__init__.py``: pytest's import mode needs it);
* no module is named after a review round, an issue or a persona;
* every snapshot file or folder has its module beside it (a module moved without its
  snapshots would make syrupy write new ones, unreviewed).
"""

from __future__ import annotations

import re
from collections import Counter

from support import ROOT, TESTS

LAYERS = ("unit", "cli", "contract", "browser")
PACKAGES = sorted(p.name for p in (ROOT / "benchloop").iterdir() if (p / "__init__.py").exists())
NOT_BEHAVIOUR = re.compile(r"round|hostile|newcomer|issue|persona|review|attack", re.I)


def modules():
    return sorted(p for p in TESTS.rglob("test_*.py") if "__snapshots__" not in p.parts)


def test_every_test_module_is_in_a_layer_folder():
    misplaced = [p.relative_to(TESTS).as_posix() for p in modules()
                 if p.parent == TESTS or p.relative_to(TESTS).parts[0] not in LAYERS]
    assert modules() and misplaced == []


def test_unit_folders_are_the_packages_of_benchloop():
    folders = {p.relative_to(TESTS / "unit").parts[0] for p in modules() if p.relative_to(TESTS).parts[0] == "unit"}
    assert folders and folders <= set(PACKAGES), sorted(folders - set(PACKAGES))
    nested = [p for p in modules() if p.relative_to(TESTS).parts[0] == "unit" and len(p.relative_to(TESTS).parts) != 3]
    assert nested == []


def test_basenames_are_unique_and_no_package_is_made_of_the_tests():
    counts = Counter(p.name for p in modules())
    assert [name for name, n in counts.items() if n > 1] == []
    assert list(TESTS.rglob("__init__.py")) == []


def test_no_module_is_named_after_a_round_an_issue_or_a_persona():
    assert [p.name for p in modules() if NOT_BEHAVIOUR.search(p.stem)] == []


def test_every_snapshot_sits_beside_its_module():
    orphans = []
    for folder in TESTS.rglob("__snapshots__"):
        for entry in folder.iterdir():
            stem = entry.name.removesuffix(".ambr")
            if not (folder.parent / f"{stem}.py").exists():
                orphans.append(entry.relative_to(TESTS).as_posix())
    assert orphans == []
