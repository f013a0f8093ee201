"""The one compiled piece, optional: the event spine's per-event helpers (dyngraph/_speedups.c).

Everything else is in pyproject.toml. Without a C compiler the build goes on without it and
dyngraph uses the Python definitions in dyngraph/events.py (see NOTE [speedups] there).
"""

import numpy
from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "dyngraph._speedups",
            ["dyngraph/_speedups.c"],
            include_dirs=[numpy.get_include()],
            optional=True,
        )
    ]
)
