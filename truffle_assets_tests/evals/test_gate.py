import copy

from truffle_assets.evals.gate import GATE, evaluate_gate, find_regressions
from truffle_assets.evals.scoring import summarize


def rows(category, points, n, flags=(), checks=None):
    return [{"id": f"{category}/{i:03d}", "category": category, "output": "x", "points": points, "verdict": "v",
             "flags": list(flags), "checks": checks or {}} for i in range(n)]


def results(tool=1.0, md=1.0, type_ok=True, horizon_ok=True, leaks=0, adversarial=0, html=0):
    tc = rows("happy", tool, 20) + rows("adversarial", 1, 10 - adversarial) + \
        [r | {"id": f"adv-fail/{i}", "points": 0, "flags": ["adversarial_failure"]} for i, r in
         enumerate(rows("adversarial", 0, adversarial))]
    mdr = rows("direct", md, 10) + [r | {"id": f"html/{i}", "points": 0, "flags": ["raw_html"]}
                                    for i, r in enumerate(rows("direct", 0, html))]
    cls = rows("semantic/core", 1, 10, checks={"type_ok": type_ok, "horizon_ok": horizon_ok})
    pr = rows("direct", 1, 5) + [r | {"id": f"leak/{i}", "points": 0, "flags": ["leak"]}
                                 for i, r in enumerate(rows("direct", 0, leaks))]
    return {"toolcall": tc, "markdown": mdr, "classification": cls, "privacy": pr}


def report(res_by_temp, suite_version=1):
    return {"meta": {"suite_version": suite_version}, "results": res_by_temp,
            "scores": {t: summarize(r) for t, r in res_by_temp.items()}}


def test_passes_when_every_threshold_holds():
    g = evaluate_gate(report({"0.0": results(), "0.7": results(tool=0.9)}))
    assert g.passed and g.reasons == [] and g.regressions == []


def test_each_threshold_fails_on_its_own():
    cases = {
        "toolcall score": results(tool=0.5),
        "adversarial failures": results(adversarial=1),
        "markdown score": results(md=0.5),
        "raw html failures": results(html=1),
        "type_accuracy": results(type_ok=False),
        "horizon_accuracy": results(horizon_ok=False),
        "leaks": results(leaks=1),
    }
    for needle, res in cases.items():
        g = evaluate_gate(report({"0.0": results(), "0.7": res}))
        assert not g.passed and any(needle in r and r.startswith("t=0.7") for r in g.reasons), (needle, g.reasons)
    assert GATE["toolcall"]["min_score"] == 0.85 and GATE["regressions"]["max"] == 5


def test_missing_objective_or_scores_fail():
    res = results()
    del res["privacy"]
    assert "t=0.0: no privacy results" in evaluate_gate(report({"0.0": res})).reasons
    assert not evaluate_gate({"meta": {}, "scores": {}, "results": {}}).passed


def test_regressions_are_counted_against_the_active_model():
    active = report({"0.0": results()})
    candidate = copy.deepcopy(active)
    happy = candidate["results"]["0.0"]["toolcall"]
    for r in happy[:5]:
        r["points"] = 0.5
    happy[5]["points"] = 1.0  # unchanged
    candidate["scores"] = {t: summarize(r) for t, r in candidate["results"].items()}
    g = evaluate_gate(candidate, active)
    assert len(g.regressions) == 5 and g.passed  # five is allowed
    assert g.regressions[0] == {"temperature": "0.0", "objective": "toolcall", "id": "happy/000",
                                "before": 1.0, "after": 0.5}
    happy[6]["points"] = 0.3
    g = evaluate_gate(candidate, active)
    assert not g.passed and len(g.regressions) == 6 and "6 regressions" in g.reasons[-1]
    assert g.regressions[0]["id"] == "happy/006"  # worst drop first
    # improvements and cases the active model never saw are not regressions
    assert find_regressions(active, candidate) == []
    # a different suite version makes case ids incomparable
    assert evaluate_gate(candidate, report({"0.0": results()}, suite_version=0)).regressions == []
