#!/usr/bin/env python3
"""How much a pre-commit run of evalock costs when the commit touches nothing it tracks.

Builds a throwaway repository with 10,000 tracked files plus the demo project, stages a
change to one unrelated file (what `git commit` sees after `git add`), and times, in the
same run and interleaved,

    git diff --cached --name-only      (the yardstick: git's own answer to "what is staged")
    evalock check --staged             (what the hook runs)

The design's target: evalock at most 1.5x git. The same is reported for a fully clean
index, and, for scale, for a commit that does touch a case (the full check).

    cargo build --release
    python3 bench/pre_commit_noop.py [--evalock target/release/evalock] [--runs 60]

Needs only git and Python 3. Nothing outside the temporary directory is read or written
(HOME and the git configuration are private to the run).
"""

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_RATIO = 1.5


def run(args, cwd, env, check=True):
    result = subprocess.run(args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if check and result.returncode != 0:
        sys.exit(f"{' '.join(map(str, args))} failed ({result.returncode}):\n{result.stderr.decode()}")
    return result


def private_env(home):
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), GIT_CONFIG_NOSYSTEM="1", NO_COLOR="1")
    env.pop("CI", None)
    return env


def build_repository(repo, files, env):
    git = lambda *args: run(["git", *args], repo, env)
    git("init", "-q", "-b", "main")
    git("config", "user.name", "Bench")
    git("config", "user.email", "bench@example.com")
    git("config", "commit.gpgsign", "false")
    shutil.copytree(ROOT / "fixtures" / "demo", repo, dirs_exist_ok=True)
    per_folder = 100
    for number in range(files):
        folder = repo / "src" / f"module{number // per_folder:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"file{number % per_folder:03d}.txt").write_text(f"content of file {number}\n")
    git("add", "-A")
    git("commit", "-q", "-m", "10,000 files and the demo project")


def child_cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def medians(commands, cwd, env, runs, warmup=3):
    """Runs every command `runs` times, interleaved so that noise hits all alike; returns
    the median wall-clock and CPU (user + system) seconds of each."""
    wall = {name: [] for name in commands}
    cpu = {name: [] for name in commands}
    for round_number in range(warmup + runs):
        for name, args in commands.items():
            cpu_before = child_cpu_seconds()
            start = time.perf_counter()
            result = run(args, cwd, env, check=False)
            elapsed = time.perf_counter() - start
            if result.returncode not in (0, 2):
                sys.exit(f"{name} failed ({result.returncode}):\n{result.stderr.decode()}")
            if round_number >= warmup:
                wall[name].append(elapsed)
                cpu[name].append(child_cpu_seconds() - cpu_before)
    median = lambda samples: {name: statistics.median(values) for name, values in samples.items()}
    return median(wall), median(cpu)


def report(title, evalock_args, repo, env, runs):
    commands = {"git": ["git", "diff", "--cached", "--name-only"], "evalock": evalock_args}
    wall, cpu = medians(commands, repo, env, runs)
    ratio = wall["evalock"] / wall["git"]
    cpu_ratio = cpu["evalock"] / cpu["git"]
    print(
        f"{title:<40} wall: git {wall['git'] * 1000:6.2f} ms, evalock {wall['evalock'] * 1000:6.2f} ms = {ratio:4.2f}x"
        f"   cpu: git {cpu['git'] * 1000:5.2f} ms, evalock {cpu['evalock'] * 1000:5.2f} ms = {cpu_ratio:4.2f}x"
    )
    return ratio


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--evalock", default=str(ROOT / "target" / "release" / "evalock"))
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=60)
    options = parser.parse_args()
    evalock = Path(options.evalock).resolve()
    if not evalock.is_file():
        sys.exit(f"no evalock binary at {evalock}: run `cargo build --release` first")

    with tempfile.TemporaryDirectory(prefix="evalock-bench-") as scratch:
        home = Path(scratch) / "home"
        repo = Path(scratch) / "repo"
        home.mkdir()
        repo.mkdir()
        env = private_env(home)
        build_repository(repo, options.files, env)
        check = [str(evalock), "check", "--staged"]
        tracked = len(run(["git", "ls-files"], repo, env).stdout.splitlines())
        print(f"repository: {tracked} tracked files; {options.runs} interleaved runs each, medians\n")

        clean = report("nothing staged", check, repo, env, options.runs)

        unrelated = repo / "src" / "module042" / "file007.txt"
        unrelated.write_text("an unrelated change\n")
        run(["git", "add", str(unrelated)], repo, env)
        staged = report("one unrelated file staged (the target)", check, repo, env, options.runs)

        case_file = repo / "evals" / "support.jsonl"
        case_file.write_text(case_file.read_text().replace("I want my money back.", "I want it back."))
        run(["git", "add", str(case_file)], repo, env)
        report("a case staged (full check, for scale)", check, repo, env, options.runs)

    worst = max(clean, staged)
    verdict = "meets" if worst <= TARGET_RATIO else "MISSES"
    print(f"\npre-commit with nothing relevant staged: {worst:.2f}x git diff --cached --name-only "
          f"({verdict} the {TARGET_RATIO}x target)")
    return 0 if worst <= TARGET_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
