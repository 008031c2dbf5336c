"""Check digits for planted identifiers: Luhn (payment cards) and Verhoeff (Aadhaar)."""

from __future__ import annotations

# Verhoeff: multiplication table of the dihedral group D5, permutation table, inverses.
_D = (
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9), (1, 2, 3, 4, 0, 6, 7, 8, 9, 5), (2, 3, 4, 0, 1, 7, 8, 9, 5, 6),
    (3, 4, 0, 1, 2, 8, 9, 5, 6, 7), (4, 0, 1, 2, 3, 9, 5, 6, 7, 8), (5, 9, 8, 7, 6, 0, 4, 3, 2, 1),
    (6, 5, 9, 8, 7, 1, 0, 4, 3, 2), (7, 6, 5, 9, 8, 2, 1, 0, 4, 3), (8, 7, 6, 5, 9, 3, 2, 1, 0, 4),
    (9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
)
_P = (
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9), (1, 5, 7, 6, 2, 8, 3, 0, 9, 4), (5, 8, 0, 3, 7, 9, 6, 1, 4, 2),
    (8, 9, 1, 6, 0, 4, 3, 5, 2, 7), (9, 4, 5, 3, 1, 2, 6, 8, 7, 0), (4, 2, 8, 6, 5, 7, 3, 9, 0, 1),
    (2, 7, 9, 3, 8, 0, 6, 4, 1, 5), (7, 0, 4, 6, 9, 1, 3, 2, 5, 8),
)
_INV = (0, 4, 3, 2, 1, 5, 6, 7, 8, 9)


def digits_of(s: str) -> str:
    return "".join(c for c in s if c.isdigit())


def luhn_valid(number: str) -> bool:
    ds = digits_of(number)
    if not ds:
        return False
    total = 0
    for i, c in enumerate(reversed(ds)):
        d = int(c)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def luhn_check_digit(partial: str) -> str:
    """The digit that makes `partial + digit` pass Luhn."""
    for d in "0123456789":
        if luhn_valid(partial + d):
            return d
    raise AssertionError("unreachable")


def verhoeff_valid(number: str) -> bool:
    ds = digits_of(number)
    if not ds:
        return False
    c = 0
    for i, ch in enumerate(reversed(ds)):
        c = _D[c][_P[i % 8][int(ch)]]
    return c == 0


def verhoeff_check_digit(partial: str) -> str:
    c = 0
    for i, ch in enumerate(reversed(digits_of(partial))):
        c = _D[c][_P[(i + 1) % 8][int(ch)]]
    return str(_INV[c])
