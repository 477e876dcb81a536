"""What ``bl view`` shows of a job's trajectory: pure functions, no network.

* :mod:`.trajectory` reads a trajectory answer, whatever its shape, into steps
  (number, role, tool, tokens, content, and every other field kept as it came),
  aligns two trials by step number and finds the first step where they differ;
* :mod:`.trials` says what a trial is (its outcome, its fail reason) and which trial of
  an instance stands for a group;
* :mod:`.media` turns fetched media bytes into data URIs (only real PNG, JPEG, GIF and
  WebP images, each capped);
* :mod:`.page` writes the self-contained HTML page of one trial or two side by side,
  piece by piece;
* :mod:`.listing` makes the step rows (``--output json``, ``table``...; the MCP tool
  ``trajectory_steps``) and the readable listing of ``--output text``.

The engine's step ``trial`` fetches what a page needs and the combine ``view`` calls
these; ``bl compare --report-dir`` links a side-by-side page per changed instance.
"""
