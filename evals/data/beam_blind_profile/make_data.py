"""Generate the blind profile set (10 synthetic conversations in BEAM's folder format).

Deterministic (seeded). Written by the helper `blindprof` without reading sagewai's profile code,
docs, tests or its BEAM evaluation script. Run: python3 make_data.py (writes ./1 .. ./10).
"""

import datetime
import json
import random
from pathlib import Path

from specs import SPECS

HERE = Path(__file__).resolve().parent

ASK = [
    "What's the best way to approach {t}?",
    "Can you walk me through {t}?",
    "I'm a bit stuck on {t}. Where would you start?",
    "What are the common mistakes people make with {t}?",
    "How much time should I realistically set aside for {t}?",
    "Quick question about {t}: is there anything I'm likely to overlook?",
    "Could you give me a rough plan for {t} over the next couple of weeks?",
    "Update: I've made some progress on {t}. What should come next?",
    "I keep going back and forth on {t}. How would you think it through?",
    "Can you help me get organised around {t}?",
]
OPEN = [
    "Good question. For {t}, a few things matter most.",
    "Here is how I would think about {t}.",
    "Let's break {t} down into something manageable.",
    "{T} is easier once you separate the decisions from the busywork.",
    "A sensible way into {t} is to start from what you already have.",
    "There is no single right answer for {t}, but some patterns work well.",
]
CLOSE = [
    "If you tell me more about where you are with {t}, I can make this more specific.",
    "Start with the first of these this week and see how it feels before changing more.",
    "None of this has to happen at once; pick the step that removes the most uncertainty.",
    "Let me know what you decide and we can adjust the plan from there.",
    "Happy to go deeper on any of these points.",
]


def words(s):
    return len(s.split())


def stems(text):
    return {w[:5] for w in text.lower().replace(",", " ").replace(".", " ").split() if len(w) > 3}


def gen_reply(rng, spec, topic, lead=""):
    # Tips sharing a word stem with the topic come first, the rest in random order.
    pool = rng.sample(spec["tips"], len(spec["tips"]))
    tips = sorted(pool, key=lambda tip: -len(stems(tip) & stems(topic)))[:8]
    parts = [lead] if lead else [rng.choice(OPEN).format(t=topic, T=topic[:1].upper() + topic[1:])]
    if topic in spec["topic_tips"]:
        parts.append(spec["topic_tips"][topic])
    for tip in tips:
        parts.append(tip)
        if words(" ".join(parts)) > 130:
            break
    parts.append(rng.choice(CLOSE).format(t=topic))
    return "\n\n".join(p for p in parts if p)


def gen_question(rng, spec, topic):
    q = rng.choice(ASK).format(t=topic)
    if rng.random() < 0.4:
        spec["_ctx"] = (spec.get("_ctx", -1) + 1) % len(spec["context"])
        q = spec["context"][spec["_ctx"]] + " " + q
    return q


def build(n, spec):
    rng = random.Random(1000 + n)
    start = datetime.date.fromisoformat(spec["start"])
    nb = spec["batches"]
    per = spec["turns_per_batch"]
    # events[(batch, turn)] -> list of (user_text, assistant_text, label)
    events = {}
    for key, p in spec["plants"].items():
        user = " ".join(x for x in (p.get("pre", ""), p["stmt"], p.get("post", "")) if x)
        lead = p["ack"]
        events.setdefault((p["batch"], p["at"]), []).append(
            (
                user,
                gen_reply(rng, spec, p["topic"], lead=lead) if p.get("pad", True) else lead,
                ("stmt", key),
            )
        )
        f = p.get("followup")
        if f:
            events.setdefault((f["batch"], f["at"]), []).append((f["trigger"], f["reply"], None))
            events.setdefault((f["batch"], f["at"]), []).append(
                (f["user"], gen_reply(rng, spec, f["topic"]), ("fu", key))
            )
    chat, cites, mid = [], {}, 0
    topics = list(spec["topics"])
    for b in range(1, nb + 1):
        bdate = start + datetime.timedelta(days=(b - 1) * spec["gap_days"])
        turns, t_index = [], 0
        for t in range(per):
            items = list(events.get((b, t), []))
            for _ in range(1 if not items else 0):
                topic = topics[(b * 7 + t) % len(topics)]
                items.append((gen_question(rng, spec, topic), gen_reply(rng, spec, topic), None))
            for user, reply, label in items:
                t_index += 1
                day = bdate + datetime.timedelta(days=t_index // 9)
                u = {
                    "role": "user",
                    "id": mid,
                    "time_anchor": day.strftime("%B-%d-%Y"),
                    "index": f"{b},{t_index}",
                    "question_type": "main_question",
                    "content": user,
                }
                a = {
                    "role": "assistant",
                    "id": mid + 1,
                    "index": f"{b},{t_index}",
                    "content": reply,
                }
                if label:
                    cites.setdefault(label[1], {})[label[0]] = (mid, b)
                mid += 2
                turns.append([u, a])
        chat.append({"batch_number": b, "time_anchor": None, "turns": turns})
    probes = {"instruction_following": [], "preference_following": []}
    for key, p in spec["plants"].items():
        ids = [cites[key]["stmt"][0]]
        if "fu" in cites[key]:
            ids.append(cites[key]["fu"][0])
        kind = "instruction" if p["cat"] == "I" else "preference"
        item = {
            "question": p["q"],
            f"{kind}_being_tested": p["tested"],
            "expected_compliance": p["expected"],
            "compliance_indicators": p["ind"],
            "non_compliance_signs": p["non"],
            "difficulty": p.get("difficulty", "medium"),
            f"{kind}_type": p["type"],
            "source_chat_ids": ids,
            "rubric": ["LLM response should contain: " + x for x in p["ind"][:2]],
        }
        probes[f"{kind}_following"].append(item)
    out = HERE / str(n)
    out.mkdir(exist_ok=True)
    (out / "chat.json").write_text(json.dumps(chat, indent=2, ensure_ascii=False) + "\n")
    (out / "probing_questions.json").write_text(
        json.dumps(probes, indent=2, ensure_ascii=False) + "\n"
    )


if __name__ == "__main__":
    for i, s in enumerate(SPECS, start=1):
        build(i, s)
    print("wrote", len(SPECS), "conversations")
