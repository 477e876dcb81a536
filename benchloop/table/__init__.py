"""The endpoint table: where it lives (``locate``), how it is compiled and cached
(``load``, ``compile``, ``lint``), its template syntax (``templates``) and the typed
model every consumer reads (``model``).

The model imports nothing of the loader (botocore keeps the same split between
``loaders.py`` and ``model.py``); ``load.load_model`` builds it from the compiled table.
This package imports only ``benchloop.base``.
"""
