"""Deterministic generator of a large, realistic evalock project (the benchmark corpus).

At --scale 1.0: about 200,000 cases over 400 JSONL files (~150 MB) in 8 suites, 300
skill folders with binary assets, 10,000 unrelated source files, and a git history of a
few commits. Everything comes from one seeded PRNG, so two runs with the same scale
produce byte-identical trees.
"""

import json
import os
import random
import subprocess
from pathlib import Path

SUITES = ["support", "billing", "refunds", "escalation", "search", "summaries", "tools", "safety"]
FILES_PER_SUITE = 50
CASES_PER_FILE = 500
SKILLS = 300
UNRELATED_FILES = 10_000
WORDS = (
    "the customer order refund invoice account password shipping delay escalate agent "
    "policy within days receipt charge card billing address confirm cancel subscription "
    "premium support ticket priority urgent please thanks hello issue problem error "
    "café naïve résumé 東京 Zürich 🙂 — “quoted” tab\tnew\nline back\\slash"
).split(" ")


def scaled(count, scale):
    return max(1, round(count * scale))


def sentence(rng, words):
    return " ".join(rng.choice(WORDS) for _ in range(words))


def make_case(rng, suite, number):
    """A case shaped like the seeds' golden cases: id, version, input, expect, extras."""
    case = {
        "id": f"{suite}-{number:06d}",
        "version": rng.choice([1, 1, 1, 2, 3]),
        "input": {
            "messages": [
                {"role": "system", "content": sentence(rng, rng.randint(5, 12))},
                {"role": "user", "content": sentence(rng, rng.randint(12, 45))},
            ],
            "temperature": rng.choice([0, 0.0, 0.2, 0.7, 1e-3]),
            "max_tokens": rng.choice([128, 256, 512]),
        },
        "expect": {
            "must_include": [rng.choice(WORDS) for _ in range(rng.randint(1, 4))],
            "must_not_include": ["as an AI"],
            "max_words": rng.randint(40, 400),
            "schema": {"type": "object", "required": ["answer", "confidence"]},
        },
        "stratum": rng.choice(["easy", "medium", "hard", "adversarial"]),
        "grader_version": "struct-3",
        "tags": sorted({rng.choice(["pii", "billing", "tone", "long", "tool", "multi-turn"]) for _ in range(3)}),
        "score_threshold": round(rng.random(), 6),
        "metadata": {"author": rng.choice(["ana", "bo", "chen", "dee"]), "ticket": rng.randint(1000, 99999)},
    }
    if rng.random() < 0.1:
        case["mutate"] = {"completion": "I cannot help with that."}
    if rng.random() < 0.05:
        case["n"] = rng.randint(2, 5)
    return case


def write_cases(root, rng, scale):
    files_per_suite = scaled(FILES_PER_SUITE, scale)
    cases_per_file = CASES_PER_FILE if scale >= 0.1 else scaled(CASES_PER_FILE, scale * 10)
    paths = []
    for suite in SUITES:
        folder = root / "evals" / suite
        folder.mkdir(parents=True, exist_ok=True)
        for part in range(files_per_suite):
            # Half the files escape non-ASCII (Python's default), half keep UTF-8 as is.
            ensure_ascii = part % 2 == 0
            lines = []
            for index in range(cases_per_file):
                case = make_case(rng, suite, part * cases_per_file + index)
                lines.append(json.dumps(case, ensure_ascii=ensure_ascii))
            path = folder / f"part-{part:03d}.jsonl"
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
            paths.append(path)
        (root / "prompts").mkdir(exist_ok=True)
        (root / "prompts" / f"{suite}.txt").write_text(f"You are the {suite} assistant.\n" + sentence(rng, 200) + "\n")
    return paths


def write_skills(root, rng, scale):
    for number in range(scaled(SKILLS, scale)):
        name = f"skill-{number:03d}"
        folder = root / "skills" / name
        (folder / "scripts").mkdir(parents=True, exist_ok=True)
        (folder / "assets").mkdir(exist_ok=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: Handles {sentence(rng, 6).splitlines()[0]} tasks.\n"
            "allowed-tools: [Read, Grep]\n"
            f"metadata:\n  version: \"1.{number % 7}.0\"\n  executables: scripts/run.sh\n"
            f"---\n\n# {name}\n\n{sentence(rng, 120)}\n"
        )
        script = folder / "scripts" / "run.sh"
        script.write_text("#!/bin/sh\nset -eu\necho \"$1\" | tr a-z A-Z\n")
        script.chmod(0o755)
        for asset in range(2):
            (folder / "assets" / f"image-{asset}.png").write_bytes(rng.randbytes(rng.randint(8_000, 80_000)))


def write_unrelated(root, rng, scale):
    for number in range(scaled(UNRELATED_FILES, scale)):
        folder = root / "src" / f"package_{number // 100:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        body = "\n".join(f"def function_{line}():\n    return {rng.randint(0, 10**9)}\n" for line in range(rng.randint(5, 60)))
        (folder / f"module_{number:05d}.py").write_text(body)


def write_config(root, skills_supported):
    suites = "".join(
        f'\n[[suite]]\nname = "{suite}"\ncases = ["evals/{suite}/*.jsonl"]\nprompt = "prompts/{suite}.txt"\ngrader = "struct"\n'
        for suite in SUITES
    )
    skills = '\n[skills]\nroots = ["skills/*"]\nallowed_permissions = ["Read", "Grep"]\n' if skills_supported else ""
    grader = '\n[grader.struct]\nversion = "struct-3"\n'
    (root / "evalock.toml").write_text("version = 1\n" + suites + skills + grader)


def git(root, *args):
    subprocess.run(["git", *args], cwd=root, check=True, stdout=subprocess.DEVNULL)


def generate(root, scale, skills_supported, seed=20261129):
    """Builds the corpus in `root` with a short git history; returns the case file paths."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    env_date = {"GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}
    os.environ.update(env_date)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "bench@example.com")
    git(root, "config", "user.name", "bench")
    write_unrelated(root, rng, scale)
    (root / ".gitignore").write_text("/.evalock/\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "application code")
    write_skills(root, rng, scale)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "skills")
    case_files = write_cases(root, rng, scale)
    write_config(root, skills_supported)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "golden cases")
    return case_files
