"""Check the blind profile set: structure, ids, dates, citations, and word overlap of probes.

Run: python3 check.py   (exit status 1 on any error)
"""

import datetime
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OBVIOUS = [
    "always",
    "never",
    "from now on",
    "whenever",
    "please",
    "prefer",
    "i like",
    "i'd like",
    "rather",
    "make sure",
    "i want",
    "don't",
]
STOP = {
    "a",
    "an",
    "the",
    "and",
    "or",
    "but",
    "if",
    "of",
    "to",
    "in",
    "on",
    "at",
    "for",
    "with",
    "by",
    "from",
    "as",
    "is",
    "are",
    "was",
    "were",
    "be",
    "been",
    "it",
    "its",
    "this",
    "that",
    "these",
    "those",
    "i",
    "me",
    "my",
    "we",
    "our",
    "you",
    "your",
    "he",
    "she",
    "they",
    "them",
    "their",
    "what",
    "which",
    "who",
    "how",
    "do",
    "does",
    "did",
    "can",
    "could",
    "would",
    "should",
    "will",
    "shall",
    "may",
    "might",
    "have",
    "has",
    "had",
    "not",
    "no",
    "so",
    "any",
    "some",
    "all",
    "more",
    "most",
    "than",
    "then",
    "there",
    "here",
    "just",
    "about",
    "into",
    "out",
    "up",
    "down",
    "over",
    "under",
    "again",
    "when",
    "give",
    "write",
    "very",
    "too",
    "also",
    "each",
    "every",
    "get",
    "got",
    "make",
    "like",
    "need",
    "want",
    "one",
    "two",
    "three",
    "let",
    "us",
    "am",
}


def content_words(text):
    return {w for w in re.findall(r"[a-záéíóúñü']+", text.lower()) if w not in STOP and len(w) > 2}


def main():
    errors, totals = (
        [],
        {
            "conversations": 0,
            "messages": 0,
            "user": 0,
            "instruction_following": 0,
            "preference_following": 0,
            "no_obvious_word": 0,
            "no_shared_content_word": 0,
        },
    )
    words_out = 0
    for d in sorted(
        (p for p in HERE.iterdir() if p.is_dir() and p.name.isdigit()), key=lambda p: int(p.name)
    ):
        n = d.name
        try:
            chat = json.loads((d / "chat.json").read_text())
            probes = json.loads((d / "probing_questions.json").read_text())
        except (OSError, json.JSONDecodeError) as e:
            errors.append(f"{n}: {e}")
            continue
        totals["conversations"] += 1
        msgs, last_id, last_date = {}, -1, None
        if not 3 <= len(chat) <= 5:
            errors.append(f"{n}: {len(chat)} batches")
        for bi, batch in enumerate(chat, start=1):
            if batch.get("batch_number") != bi or "turns" not in batch:
                errors.append(f"{n}: bad batch header {bi}")
            for turn in batch["turns"]:
                if [m["role"] for m in turn] != ["user", "assistant"]:
                    errors.append(f"{n}: turn roles {[m['role'] for m in turn]}")
                for m in turn:
                    if not isinstance(m["id"], int) or m["id"] <= last_id:
                        errors.append(f"{n}: id {m['id']} not increasing")
                    last_id = m["id"]
                    msgs[m["id"]] = (m, bi)
                    if m["role"] == "user":
                        day = datetime.datetime.strptime(m["time_anchor"], "%B-%d-%Y").date()
                        if last_date and day < last_date:
                            errors.append(f"{n}: date goes back at id {m['id']}")
                        last_date = day
                    elif not 100 <= len(m["content"].split()) <= 300:
                        words_out += 1
        nb = len(chat)
        totals["messages"] += len(msgs)
        totals["user"] += sum(1 for m, _ in msgs.values() if m["role"] == "user")
        if not 80 <= len(msgs) <= 160:
            errors.append(f"{n}: {len(msgs)} messages")
        for cat, key in (
            ("instruction_following", "instruction_being_tested"),
            ("preference_following", "preference_being_tested"),
        ):
            for item in probes.get(cat, []):
                totals[cat] += 1
                for k in ("question", key, "source_chat_ids", "expected_compliance", "difficulty"):
                    if k not in item:
                        errors.append(f"{n}: {cat} item lacks {k}")
                ids = item["source_chat_ids"]
                if not ids or any(i not in msgs or msgs[i][0]["role"] != "user" for i in ids):
                    errors.append(f"{n}: cited ids {ids} missing or not user messages")
                    continue
                stmt = item[key]
                if stmt not in msgs[ids[0]][0]["content"]:
                    errors.append(f"{n}: statement not found in message {ids[0]}")
                if ids != sorted(ids):
                    errors.append(f"{n}: follow-up cited before the statement {ids}")
                if msgs[ids[0]][1] >= nb:
                    errors.append(
                        f"{n}: statement in the last batch, no later batch for the question"
                    )
                low = stmt.lower()
                if not any(re.search(r"\b" + re.escape(w) + r"\b", low) for w in OBVIOUS):
                    totals["no_obvious_word"] += 1
                shared = content_words(stmt) & content_words(item["question"])
                if not shared:
                    totals["no_shared_content_word"] += 1
                elif len(shared) > 1:
                    print(f"  note {n}: question shares {sorted(shared)} with its statement")
    for k, v in totals.items():
        print(f"{k}: {v}")
    print(f"assistant replies outside 100-300 words: {words_out}")
    for e in errors:
        print("ERROR", e)
    print("OK" if not errors else f"{len(errors)} errors")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
