"""The one compiled piece, optional: the engine's common path and the event spine's per-event
helpers in C (dyngraph/_speedups.c, installed by dyngraph/_accelerated.py).

Everything else is in pyproject.toml. Without a C compiler the build goes on without it and
dyngraph uses the Python definitions (NOTE [speedups] in dyngraph/_accelerated.py).
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
