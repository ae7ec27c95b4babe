"""The kernel language's high-level API: pyasc's ``asc.language.adv`` (``asc.adv``).

``import npuemu.asc as asc`` makes it ``asc.adv``; pyasc scripts run through
:mod:`npuemu.compat.pyasc` reach the same names as ``asc.language.adv``.
Like :mod:`npuemu.asc`, this module only gathers names: each family lives in
its own ``npuemu/language/adv_*.py``.
"""
from .language.adv_tiling import *
from .language.adv_math import *
from .language.adv_norm import *
from .language.adv_softmax import *
from .language.adv_quant import *
from .language.adv_sort import *
from .language.adv_matmul import *
