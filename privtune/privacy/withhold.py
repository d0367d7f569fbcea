"""Exceptions that leave a private computation: what they may say.

With privacy on, a library error raised once scoring has begun may quote a raw score (a scorer's
return value in scikit-learn's message, every fold's score in the frames of its traceback).
Every adapter that runs private scoring handles its exceptions here:

- :func:`clean` marks an exception whose message privtune wrote and which holds no score; it
  propagates with that message, stripped of context and traceback (:func:`bare`);
- any other exception is replaced by :func:`withheld`: the same type, a message that says what
  was withheld, no context, no traceback;
- where a failure is only reported (a party's failed fit in a federation), it is described by
  its type alone (:func:`describe`).

Examples
--------
>>> from privtune.privacy.withhold import clean, is_clean, withheld, describe
>>> exc = withheld(ValueError("score was 0.93"))
>>> "0.93" in str(exc), type(exc).__name__
(False, 'ValueError')
>>> is_clean(clean(ValueError("value_range is required"))), describe(KeyError("x"))
(True, 'KeyError')
"""

from __future__ import annotations

from .errors import PrivacyError

__all__ = ["bare", "clean", "describe", "is_clean", "outgoing", "withheld"]


def clean(exc: BaseException) -> BaseException:
    """Mark ``exc`` as one whose message holds no score (it may propagate as it is)."""
    exc._privtune_clean = True  # type: ignore[attr-defined]
    return exc


def is_clean(exc: BaseException) -> bool:
    """Whether ``exc`` was marked by :func:`clean`."""
    return getattr(exc, "_privtune_clean", False)


def bare(exc: BaseException) -> BaseException:
    """``exc`` without traceback, context or cause (its message is privtune's own)."""
    exc.__context__ = exc.__cause__ = None
    return exc.with_traceback(None)


def withheld(exc: BaseException, setting: str = "epsilon") -> BaseException:
    """A new exception of ``exc``'s type without its message, context or traceback; its
    message tells to rerun without ``setting``, the privacy setting the user gave
    (``"epsilon"`` or ``"privacy_budget"``)."""
    if isinstance(exc, KeyboardInterrupt):
        return KeyboardInterrupt()
    message = (
        f"{type(exc).__name__} during private scoring (a search or a privatized objective); "
        "its message and traceback are withheld because they can hold raw scores (a scorer's "
        f"return value, every fold's score). Rerun without {setting}, on data "
        "you may inspect, to see it."
    )
    try:
        return type(exc)(message)
    except Exception:
        return PrivacyError(message)


def outgoing(exc: BaseException, setting: str = "epsilon") -> BaseException:
    """What may leave a private computation in place of ``exc``: :func:`bare` for a
    :func:`clean` exception, :func:`withheld` (naming ``setting``) for any other."""
    return bare(exc) if is_clean(exc) else withheld(exc, setting)


def describe(exc: BaseException) -> str:
    """A failure as it may be reported: the exception's type, never its message."""
    return type(exc).__name__
