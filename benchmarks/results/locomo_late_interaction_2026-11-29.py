"""A try kept for the record (thirteenth session, not kept in the product): does a late-interaction (MaxSim over MiniLM token vectors) rerank of the fused top N help
LoCoMo turn recall@10?  Dev conversations only (26, 30, 41) unless --convs given."""
import argparse, sys, time, re
from pathlib import Path
import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT)); sys.path.insert(0, str(ROOT / "benchmarks"))
import locomo_convert as lc  # noqa
from locomo_recall import questions_for, WORK, recall  # noqa
from truffle_assets.retrieval import open_index, RetrievalWeights
from truffle_assets.retrieval.search import candidate_signals
from truffle_assets.retrieval.fusion import fuse, blend_episode_best, minmax

ap = argparse.ArgumentParser()
ap.add_argument("--convs", default="conv-26,conv-30,conv-41")
ap.add_argument("--depth", type=int, default=50)
args = ap.parse_args()

import torch; torch.set_num_threads(2)
STOP = set("""a an the and or but if of to in on at by for from with about as into over after before since until is are
was were be been being am do does did have has had will would can could should might i me my you your we our he she his
her they their them it its this that these those there here what which who whom whose when where why how not no so very
just also too now then than""".split())

emb = None
def token_vecs(texts):
    m = emb.model
    out = m.encode(texts, output_value="token_embeddings", batch_size=64, convert_to_numpy=False, show_progress_bar=False)
    tok = m.tokenizer
    res = []
    for t, e in zip(texts, out):
        ids = tok(t, truncation=True, max_length=m.max_seq_length)["input_ids"]
        toks = tok.convert_ids_to_tokens(ids)
        e = e.cpu().numpy()[: len(toks)]
        keep = [i for i, s in enumerate(toks) if s not in ("[CLS]", "[SEP]") and re.search(r"[a-z0-9]", s)]
        v = e[keep] if keep else e[1:2]
        v = v / np.linalg.norm(v, axis=1, keepdims=True).clip(1e-9)
        res.append((v, [toks[i] for i in keep]))
    return res

samples = {s["sample_id"]: s for s in lc.load_locomo(None)}
W = RetrievalWeights()
rec = {"base": [], }
store = []
t0 = time.time()
for conv in args.convs.split(","):
    sample = samples[conv]
    conversion = lc.convert(sample, WORK / ".scratch" / conv)
    index = open_index(WORK / conv / "published" / "latest.json")
    emb = index.embedder
    qs, _ = questions_for(sample, conversion)
    for q in qs:
        rows, sig = candidate_signals(q.question, index, W)
        base = fuse(sig, W)
        fused = blend_episode_best(base, [r["episode_id"] for r in rows], W.episode)
        order = list(np.argsort(-fused, kind="stable"))
        top = order[: args.depth]
        qv, qt = token_vecs([q.question])[0]
        qkeep = [i for i, s in enumerate(qt) if s not in STOP and not s.startswith("##")] or list(range(len(qt)))
        qv = qv[qkeep]
        lines = token_vecs([f"{r['author']}: {r['text']}" for r in (rows[j] for j in top)])
        R = np.array([(qv @ lv.T).max(axis=1).mean() for lv, _ in lines])      # query-token recall
        P = np.array([(lv @ qv.T).max(axis=1).mean() for lv, _ in lines])      # line-token precision
        store.append(dict(conv=conv, gold=q.gold, cat=q.category, ids=[rows[j]["message_id"] for j in order],
                          top=[rows[j]["message_id"] for j in top], fused_top=fused[top].tolist(), R=R.tolist(), P=P.tolist()))
    print(conv, len(qs), f"{time.time()-t0:.0f}s", flush=True)



def score(lam, feat):
    out = []
    for s in store:
        f = np.array(s["fused_top"])
        x = np.array(s["R"]) if feat == "R" else np.array(s["P"]) if feat == "P" else 2 * np.array(s["R"]) * np.array(s["P"]) / (np.array(s["R"]) + np.array(s["P"]))
        new = f + lam * minmax(x)
        ranked = [s["top"][j] for j in np.argsort(-new, kind="stable")] + s["ids"][len(s["top"]):]
        out.append(recall(ranked, s["gold"], 10))
    return float(np.mean(out))

print("base", round(score(0.0, "R"), 4))
for feat in ("R", "P", "F"):
    print(feat, [(lam, round(score(lam, feat), 4)) for lam in (0.05, 0.1, 0.2, 0.3, 0.5, 1.0)])
