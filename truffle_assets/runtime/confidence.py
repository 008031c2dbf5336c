"""How sure the model was of its claim: its own token probabilities, asked of the endpoint.

Both embedded models answer a question nothing in memory answers with a value copied from a shown
line on the same topic ("Your favourite colour is Pani puri [msg:…]"), and retrieval's scores
cannot tell those prompts from answerable ones (docs/history/qa_eval.md, twenty-eighth session).
The model's probability of the words it chose is another signal: `claim_confidence` reads it over
the claim (the reply up to its first citation or line break, where the value is named), and
`answer.finalize` says "not in memory" instead when the weakest claim token is under
`RuntimeConfig.abstain_below`. No dagster import.
"""

from __future__ import annotations

import math

# the claim ends where the reply starts citing, explaining or listing
_CLAIM_END = ("[msg", "\n")


def claim_tokens(tokens: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """The (token, logprob) pairs of the reply's claim: up to the first citation or line break,
    blank tokens left out (their probability says nothing about the value)."""
    out, text = [], ""
    for tok, lp in tokens:
        text += tok
        if any(m in text for m in _CLAIM_END):
            while out and "[" in out[-1][0]:  # the citation's opening bracket came as its own token
                out.pop()
            break
        if tok.strip() and lp is not None and math.isfinite(lp):
            out.append((tok, lp))
    return out


def claim_confidence(tokens: list[tuple[str, float]]) -> dict | None:
    """{min_p, mean_p, weakest, tokens} of the claim (mean_p is the geometric mean); None without tokens."""
    claim = claim_tokens(tokens)
    if not claim:
        return None
    weakest = min(claim, key=lambda t: t[1])
    return {"min_p": round(math.exp(weakest[1]), 4),
            "mean_p": round(math.exp(sum(lp for _, lp in claim) / len(claim)), 4),
            "weakest": weakest[0], "tokens": len(claim)}
