"""Verdicts: a measurement against a rule's threshold, with its margin and doubt.

"Is the Interceptor within 6 inches?" is answered "clearly in", "clearly out"
or "too close to call", never a bare yes when the margin is inside the doubt.
"""

from __future__ import annotations

from dataclasses import dataclass

from .pose import MM_PER_IN

IN = "in"
OUT = "out"
TOO_CLOSE = "too close to call"

#: Margins within this many sigmas are too close to call (about 95 % sure either way).
CALL_SIGMAS = 2.0


@dataclass(frozen=True)
class Verdict:
    """`value` measured against `threshold`; `margin` is how far on the passing
    side (positive: passes); `sigma` is the margin's one-sigma doubt."""

    what: str
    value_mm: float
    threshold_mm: float
    margin_mm: float
    sigma_mm: float
    outcome: str

    @property
    def passes(self) -> bool | None:
        """True or False when clear, None when too close to call."""
        return {IN: True, OUT: False}.get(self.outcome)

    def describe(self, unit: str = "in") -> str:
        scale = MM_PER_IN if unit == "in" else 1.0
        v, t, s = self.value_mm / scale, self.threshold_mm / scale, self.sigma_mm / scale
        digits = 2 if unit == "in" else 1
        head = {IN: "in", OUT: "out", TOO_CLOSE: "too close to call"}[self.outcome]
        if self.threshold_mm == 0.0 and self.value_mm == self.margin_mm:
            # A depth judged against 0 (how far inside an arc or a sector): a signed number
            # against 0 reads as a double negative, so say the side in words.
            side = "inside" if self.margin_mm >= 0 else "outside"
            return f"{head}: {self.what}, {abs(v):.{digits}f} {unit} {side} ± {s:.{digits}f} {unit}"
        return (f"{head}: {self.what} {v:.{digits}f} {unit} ± {s:.{digits}f} against "
                f"{_number(t, digits)} {unit}")

    def to_json(self) -> dict:
        return {"what": self.what, "value_mm": round(self.value_mm, 3),
                "threshold_mm": round(self.threshold_mm, 3), "margin_mm": round(self.margin_mm, 3),
                "sigma_mm": round(self.sigma_mm, 3), "outcome": self.outcome}


def _number(value: float, digits: int) -> str:
    """A threshold as the book says it: "6", "0.5", not "0.0787402"."""
    return f"{value:.{digits}f}".rstrip("0").rstrip(".")


def judge(what: str, value_mm: float, threshold_mm: float, sigma_mm: float, *,
          at_most: bool = True) -> Verdict:
    """Judge `value` against `threshold`: `at_most` (within range) or at least (clear of).

    A value exactly at the threshold passes (rules say "within 6 inches");
    with doubt, that is too close to call anyway.
    """
    margin = threshold_mm - value_mm if at_most else value_mm - threshold_mm
    if abs(margin) < 1e-6:
        margin = 0.0        # exactly at the threshold, but for floating point's last digits
    sigma = max(float(sigma_mm), 0.0)
    if sigma > 0 and abs(margin) <= CALL_SIGMAS * sigma:
        outcome = TOO_CLOSE
    else:
        outcome = IN if margin >= 0 else OUT
    return Verdict(what, float(value_mm), float(threshold_mm), float(margin), sigma, outcome)
