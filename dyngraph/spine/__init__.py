"""The event spine, at the bottom of the house: what every engine tells the outside world, and
the one way it tells it (DESIGN.md, "Events: the spine").

- ``events``: the event records and their constructors (each event type is built here and
  nowhere else), subscribe / emit, scopes, previews and the learner's line (``where``).
- ``reporter``: ``EventSource``, the public API through which any engine reports - dyngraph's
  own, PyTorch, micrograd, a learner's.
- ``walk``: the one walk of a graph (``walk_back``), whichever engine's graph it is.
- ``thread_state``, ``handle``, ``arrays``: what each thread has of its own, the handles that
  ``subscribe`` returns, and what the spine needs to know about an array.

The spine imports nothing of dyngraph outside this folder (numpy and the standard library
only): tests/test_layering.py holds that rule.
"""
