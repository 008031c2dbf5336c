"""The runtime's privacy guard: secret questions, the memory-safety refusal, and the answer scrubber.

Three layers, outermost first:
1. the memory itself holds only redacted text (the pipeline's `pii` stage replaces secret values by
   typed placeholders before anything is summarised, extracted or indexed), and the runtime
   re-redacts every line it puts in a prompt (a no-op on placeholders; defence in depth);
2. `secret_request(question)` catches questions that ask for a secret value (password, OTP, PIN,
   card, CVV, account, IFSC, UPI, Aadhaar, PAN) and the runtime answers `refusal(kind)` without
   calling the model, unless `policy.allow_secrets`;
3. `scrub(answer)` replaces any secret-shaped value that still reaches an answer (made up by the
   model, or echoed from the user's own question) by its typed placeholder.

A question about a secret *event* ("When did I change my password?") is not a request for its
value and goes through; anything that asks for the value, in full, in part or in a role-play, is
refused.
"""

from __future__ import annotations

import re

from truffle_assets.pii import PLACEHOLDERS, SECRET_TYPES, detect
from truffle_assets.runtime.prompts import text

# kinds the runtime refuses (the pii stage grades ifsc/upi as pii, but a chat answer never needs them)
SCRUB_TYPES = frozenset(SECRET_TYPES | {"ifsc", "upi"})

KINDS: dict[str, tuple[str, str]] = {  # kind -> (noun, tip)
    "password": ("password", "A password manager or the service's reset link is the safe way to get it back."),
    "otp": ("OTP", "OTPs expire within minutes anyway, so request a fresh one from the service."),
    "pin": ("PIN", "If you've forgotten it, your bank can reset the PIN."),
    "card": ("card number", "Your banking app or the card itself will have the number."),
    "cvv": ("CVV", "The CVV is printed on the back of the card."),
    "account": ("bank account number", "Your bank's app or a statement shows the account number."),
    "ifsc": ("IFSC code", "Your bank's app or cheque book shows the IFSC."),
    "upi": ("UPI ID", "Your UPI app shows your UPI ID."),
    "aadhaar": ("Aadhaar number", "The mAadhaar app or your Aadhaar card has it."),
    "pan": ("PAN", "Your PAN card or the income-tax portal shows it."),
}

# Order matters: the first kind whose pattern matches names the refusal (CVV before card, UPI PIN
# as a PIN, OTP before password so "one-time password" is an OTP).
_KIND_PATTERNS: list[tuple[str, re.Pattern[str]]] = [(k, re.compile(p, re.I)) for k, p in (
    ("otp", r"\b(?:otp|o\.t\.p\.?|one[\s-]*time\s*(?:password|pass ?code|code|pin)|verification\s+code|"
            r"2fa\s+code|auth(?:entication)?\s+code|login\s+code|security\s+code\s+(?:sent|from|by))s?\b|ओटीपी"),
    ("cvv", r"\b(?:cvv2?|cvc2?|card\s+security\s+code|(?:three|3)[\s-]*digit\s+code)\b"),
    ("pin", r"\b(?:(?:upi|atm|debit|credit|card|bank|sim|phone|my|the|your|his|her|their|our)[\s-]?m?pins?|mpins?|"
            r"pin\s+(?:number|no\.?))\b(?![\s-]*code)|\b(?-i:PINs?)\b(?![\s-]*code)"),
    ("card", r"\b(?:(?:credit|debit|atm|visa|master\s*card|mastercard|rupay|amex|bank)\s+card|"
             r"card\s+(?:number|no\.?|num|details|digits))s?\b"),
    ("account", r"\b(?:(?:bank\s+)?account\s+(?:number|no\.?|num|details|digits)|a/c(?:\s+(?:no\.?|number))?|"
                r"acct\.?(?:\s+(?:no\.?|number))?)\b"),
    ("ifsc", r"\bifsc\b"),
    ("upi", r"\b(?:upi\s+(?:id|handle|address)|vpa)s?\b"),
    ("aadhaar", r"\b(?:aadhaa?r|adhaa?r|aadhar)\b"),
    ("pan", r"\bpan\s+(?:card|number|no\.?|details)\b"),
    ("password", r"\b(?:pass\s*words?|passcodes?|passphrases?|pwd|wi-?fi\s+(?:key|code)|login\s+(?:details|credentials)|"
                 r"credentials)\b|पासवर्ड"),
)]
_PAN_UPPER = re.compile(r"\bPAN\b")  # "pan" in lower case is cooking; only the acronym counts bare

# A question that starts like this is about an event, not the value...
_META = re.compile(r"^\s*(?:when|why|how\s+(?:many|often|long|do|can|should|did)|did|do|does|was|were|has|have|"
                   r"had|is\s+there|are\s+there|should|who)\b", re.I)
# ...unless it also asks for the value itself.
_VALUE_CUE = re.compile(
    r"\b(?:what(?:'s|\s+is|\s+was|\s+were|\s+are)|tell\s+me|give\s+me|read\s+(?:it|me|out|back)|repeat|spell|"
    r"digits?|characters?|letters?|starts?\s+with|ends?\s+with|first\s+\w+|last\s+\w+\s+digits|"
    r"in\s+full|exact(?:ly)?|again|copy|paste|print|type\s+(?:it|out))\b", re.I)


def secret_request(question: str) -> str | None:
    """The secret kind `question` asks for (see KINDS), or None."""
    q = question or ""
    kind = None
    for k, pat in _KIND_PATTERNS:
        if pat.search(q) or (k == "pan" and _PAN_UPPER.search(q)):
            kind = k
            break
    if kind is None:
        return None
    if _META.search(q) and not _VALUE_CUE.search(q):
        return None
    return kind


def refusal(kind: str) -> str:
    """The memory-safety refusal for a secret `kind` (never contains a value)."""
    noun, tip = KINDS.get(kind, ("secret", "The service that issued it is the safe place to get it back."))
    return text("refusal", noun=noun, tip=tip)


_PROTECTED = re.compile(r"\[msg:[^\]\s]{1,64}\]|" + "|".join(re.escape(p) for p in PLACEHOLDERS.values()))


def _replace(text_: str, types: frozenset[str] | None) -> tuple[str, list[str]]:
    """Detected values of `types` (None = all) -> placeholders. Citation markers and existing
    placeholders are protected: a span touching one is left alone, so redaction is idempotent and a
    numeric-looking message id is never mistaken for a card or account number."""
    if not text_:
        return text_ or "", []
    protected = [m.span() for m in _PROTECTED.finditer(text_)]
    spans = [s for s in detect(text_) if (types is None or s.type in types)
             and not any(s.start < e and b < s.end for b, e in protected)]
    if not spans:
        return text_, []
    out, pos = [], 0
    for s in sorted(spans, key=lambda s: s.start):
        if s.start < pos:
            continue
        out += [text_[pos:s.start], PLACEHOLDERS[s.type]]
        pos = s.end
    out.append(text_[pos:])
    return "".join(out), sorted({s.type for s in spans})


def scrub(answer: str, types: frozenset[str] = SCRUB_TYPES) -> tuple[str, list[str]]:
    """Replace secret-shaped values in `answer` by typed placeholders -> (text, sorted types found)."""
    return _replace(answer, types)


def redact_data(text_: str) -> str:
    """Defence in depth for text entering a prompt or the store: every detected type, as the pii
    stage does (already-redacted text comes back unchanged)."""
    return _replace(text_, None)[0]
