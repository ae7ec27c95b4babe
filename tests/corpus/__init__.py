"""A corpus of deliberately broken kernels, each with a corrected twin.

Every ``case_*.py`` module in this package defines:

* ``EXPECT = (ErrorClass, "text")`` - the error the broken kernel must raise
  (an ``npuemu.errors`` class) and a substring of its message naming the rule;
* ``LEVELS`` - the check levels at which the broken kernel must be caught
  (e.g. ``("default", "full")``, or ``("full",)`` for races);
* ``run(fixed: bool, **launch)`` - launches the broken kernel, or its
  corrected twin, with the given launch options (``check=``, ``debug=``);
  for the twin it also asserts the result against NumPy.

``tests/test_corpus.py`` runs every case at each of its levels, compiled and
in debug mode: the broken kernel must raise ``EXPECT``, the twin must run
clean at every level.
"""
