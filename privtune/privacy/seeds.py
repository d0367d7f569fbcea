"""Where the privacy noise's randomness comes from: one policy for every caller.

By default every noise draw comes from fresh operating-system entropy. A ``noise_seed`` is for
reproducible experiments only: reusing it on the same data reuses the noise, and the difference
of two scores released under the same noise is not private. With a seed,

- each report of a study draws from its own generator, keyed by ``(noise_seed, owner,
  report number)`` (:func:`report_generator`), so a report's noise does not depend on the order
  in which workers run;
- a mechanism that adds noise to a whole stream of reports (the qff algorithms' statistics)
  uses one seed per owner, :func:`stream_seed`, which every worker that rebuilds the model
  derives alike.

Examples
--------
>>> from privtune.privacy.seeds import report_generator, stream_seed
>>> a = report_generator(7, "study", 3).random()
>>> b = report_generator(7, "study", 3).random()
>>> a == b, stream_seed(7, "study") == stream_seed(7, "study")
(True, True)
>>> report_generator(None, "study", 3) is None
True
"""

from __future__ import annotations

import zlib

import numpy as np

__all__ = ["draw_seed", "owner_key", "report_generator", "stream_seed"]


def draw_seed() -> int:
    """A fresh seed from operating-system entropy (an unsigned 32-bit integer)."""
    return int(np.random.SeedSequence().generate_state(1)[0])


def owner_key(owner: str) -> int:
    """A stable integer for a data owner's name (CRC-32 of its UTF-8 bytes)."""
    return zlib.crc32(str(owner).encode())


def report_generator(noise_seed: int | None, owner: str, number: int) -> np.random.Generator | None:
    """The generator of report ``number`` of ``owner`` under ``noise_seed``.

    ``None`` without a seed: the curator then draws from its own, freshly seeded generator.
    """
    if noise_seed is None:
        return None
    return np.random.default_rng([int(noise_seed), owner_key(owner), int(number)])


def stream_seed(noise_seed: int, owner: str) -> int:
    """The seed of a mechanism that adds noise to all of ``owner``'s reports at once."""
    seq = np.random.SeedSequence([int(noise_seed), owner_key(owner)])
    return int(seq.generate_state(1)[0])
