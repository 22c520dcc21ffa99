#!/usr/bin/env python3
"""Random bad input for the whole CLI: a sweep that complements the fuzz targets and the
bad-input corpus (README, "Hardening").

Each round copies a bundled fixture project (a real git repository, committed, the demo
with its baselines recorded), damages one of its tracked files with a few random edits
(bytes deleted, replaced or inserted, JSON/YAML/TOML tokens, conflict markers, BOM, CRLF,
NUL, lines swapped, duplicated or cut), sometimes stages the damage, and runs three
commands picked from `check` (every source), `lock --check`, `run`, `skills audit`. Any
exit code other than 0-3, 64 or 65, or a panic, is a failure: its project is kept for
replay. Nothing else is asserted; run it after touching a parser.

    cargo build
    python3 scripts/mutate_inputs.py --fixture demo --rounds 300 --seed 1
    python3 scripts/mutate_inputs.py --fixture skills --rounds 300 --seed 2
"""

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EXPECTED_EXITS = {0, 1, 2, 3, 64, 65}
TOKENS = [
    b"{", b"}", b"[", b"]", b'"', b"\\", b"\\u", b"\\ud800", b",", b":", b"\n", b"\r\n",
    b"\x00", b"\xff", b"\xef\xbb\xbf", b"1e400", b"-0", b"NaN", b"true", b"null",
    b"99999999999999999999999", b"<<<<<<< HEAD\n", b"=======\n", b">>>>>>> branch\n",
    b"- ", b"  ", b"\t", b"&a", b"*a", b"!!binary", b"---\n", b"[suite]", b"[[suite]]\n",
    b"= ", b"'", b"..", b"/etc/passwd", b"../../x", b"version", b"id", b"expect",
    b"must_include", b"retired", b"n", b"mutate", b"grader_version",
    "é".encode(), "😀".encode(),
]
COMMANDS = {
    "demo": [
        ["check", "--format", "json"],
        ["check", "--staged"],
        ["check", "--base", "main", "--format", "sarif"],
        ["lock", "--check"],
        ["run", "--jobs", "2", "--out", "results.json"],
    ],
    "skills": [
        ["check", "--format", "json"],
        ["check", "--staged"],
        ["check", "--base", "main", "--format", "sarif"],
        ["lock", "--check"],
        ["skills", "audit"],
    ],
}


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fixture", choices=sorted(COMMANDS), default="demo")
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--binary", type=Path, default=REPO / "target" / "debug" / "evalock")
    parser.add_argument("--keep", type=Path, default=Path("mutate-failures"), help="where failing projects are kept")
    return parser.parse_args()


def git(cwd, *arguments):
    subprocess.run(["git", *arguments], cwd=cwd, check=True, capture_output=True)


def evalock(binary, cwd, arguments):
    environment = {key: value for key, value in os.environ.items() if key != "CI"}
    return subprocess.run([str(binary), *arguments], cwd=cwd, capture_output=True, env=environment, timeout=120)


def prepare(binary, fixture, base):
    shutil.copytree(REPO / "fixtures" / fixture, base, symlinks=True)
    git(base, "init", "-q", "-b", "main")
    git(base, "config", "user.email", "mutate@example.com")
    git(base, "config", "user.name", "mutate")
    git(base, "add", "-A")
    git(base, "commit", "-qm", "fixture")
    if fixture == "demo":
        # Baselines too, so that their readers are damaged as well.
        evalock(binary, base, ["run", "--jobs", "2"])
        accepted = evalock(binary, base, ["accept", "--reason", "first recording"])
        if accepted.returncode != 0:
            sys.exit(f"recording the demo's baselines failed: {accepted.stderr.decode()[-1000:]}")
        git(base, "add", "-A")
        git(base, "commit", "-qm", "baselines")
    listed = subprocess.run(["git", "ls-files"], cwd=base, capture_output=True, text=True, check=True).stdout
    return [path for path in listed.split("\n") if path and not path.startswith("completers/")]


def damage(data, rng):
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        choice = rng.random()
        position = rng.randint(0, len(data))
        if choice < 0.25 and data:
            del data[position:position + rng.randint(1, 20)]
        elif choice < 0.5:
            data[position:position] = rng.choice(TOKENS)
        elif choice < 0.65 and data:
            data[min(position, len(data) - 1)] = rng.randrange(256)
        elif choice < 0.8:
            lines = bytes(data).split(b"\n")
            first, second = rng.randrange(len(lines)), rng.randrange(len(lines))
            if rng.random() < 0.5:
                lines[first], lines[second] = lines[second], lines[first]
            else:
                lines.insert(first, lines[second])
            data = bytearray(b"\n".join(lines))
        elif choice < 0.9:
            del data[position:]
        else:
            end = min(len(data), position + rng.randint(1, 200))
            data[position:position] = data[position:end] * rng.randint(1, 3)
    return bytes(data)


def main():
    args = parse_args()
    # The commands run inside scratch projects: a relative path must not depend on them.
    args.binary = args.binary.resolve()
    if not args.binary.exists():
        sys.exit(f"{args.binary} not found: run `cargo build` first")
    rng = random.Random(args.seed)
    failures = 0
    with tempfile.TemporaryDirectory(prefix="evalock-mutate-") as scratch:
        base = Path(scratch) / "base"
        tracked = prepare(args.binary, args.fixture, base)
        for number in range(args.rounds):
            work = Path(scratch) / "work"
            shutil.rmtree(work, ignore_errors=True)
            shutil.copytree(base, work, symlinks=True)
            path = rng.choice(tracked)
            target = work / path
            target.write_bytes(damage(target.read_bytes(), rng))
            if rng.random() < 0.3:
                git(work, "add", "-A")
            for command in rng.sample(COMMANDS[args.fixture], 3):
                result = evalock(args.binary, work, command)
                stderr = result.stderr.decode("utf-8", "replace")
                if result.returncode in EXPECTED_EXITS and "panicked" not in stderr:
                    continue
                failures += 1
                kept = args.keep / f"{args.fixture}-seed{args.seed}-round{number}"
                shutil.rmtree(kept, ignore_errors=True)
                shutil.copytree(work, kept, symlinks=True)
                print(f"FAIL exit {result.returncode}: evalock {' '.join(command)} after damaging {path}; kept in {kept}")
                print(stderr[-1500:])
    print(f"{args.rounds} rounds of {args.fixture} (seed {args.seed}): {failures} failures")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
