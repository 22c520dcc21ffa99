#!/usr/bin/env python3
"""evalock benchmark: generates a large project and measures evalock against reference
tools on the same bytes, in the same run, reporting ratios (the machines are shared and
noisy; absolute times only explain the ratios).

    cargo build --release && cargo build --release --example recipe_floor
    python3 bench/bench.py                 # full size: ~200k cases, ~150 MB
    python3 bench/bench.py --scale 0.1     # quick run

Each timing is the minimum wall time over --repeat runs (the contenders of the hashing
ratios take turns within each round); the two pre-commit commands,
which take milliseconds, alternate over ten times as many.
"""

import argparse
import hashlib
import itertools
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate import generate  # noqa: E402

REPO = Path(__file__).resolve().parent.parent

# The seeds' case-hash recipe, run by a separate interpreter over the same case files.
PYTHON_RECIPE = r"""
import hashlib, json, sys
count = 0
for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                case = json.loads(line)
                payload = json.dumps(case, sort_keys=True, separators=(",", ":"))
                hashlib.sha256(payload.encode("utf-8")).hexdigest()
                count += 1
print(count)
"""

# A completer that answers instantly: the cost measured is evalock's, not a model's.
TRIVIAL_COMPLETER = "#!/bin/sh\ncat >/dev/null\necho ok\n"


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=float, default=1.0, help="corpus size relative to 200k cases (default 1.0)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement; the minimum counts")
    parser.add_argument("--binary", type=Path, default=REPO / "target" / "release" / "evalock")
    parser.add_argument(
        "--floor",
        type=Path,
        default=REPO / "target" / "release" / "examples" / "recipe_floor",
        help="bench/recipe_floor.rs built (`cargo build --release --example recipe_floor`): "
        "the case-v1 recipe alone, timed beside the cold check; left out when missing",
    )
    parser.add_argument("--workdir", type=Path, help="where to generate (default: a temporary directory)")
    parser.add_argument("--keep", action="store_true", help="keep the generated project")
    parser.add_argument("--run-cases", type=int, default=2000, help="cases for the run vs xargs comparison")
    parser.add_argument("--json", type=Path, help="also write the results as JSON to this file")
    return parser.parse_args()


def wall(command, cwd, repeat, env=None, prepare=None, expect=(0,)):
    """Minimum wall time of `command` over `repeat` runs; `prepare` runs before each one."""
    best = float("inf")
    for _ in range(repeat):
        if prepare:
            prepare()
        started = time.perf_counter()
        result = subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        elapsed = time.perf_counter() - started
        if result.returncode not in expect:
            sys.exit(f"{' '.join(map(str, command))} exited {result.returncode}: {result.stderr.decode()[-2000:]}")
        best = min(best, elapsed)
    return best


def walls(commands, cwd, repeat):
    """Minimum wall time of each of `commands` (name -> (command, prepare)) over `repeat`
    rounds in which they take turns, in a rotating order: a burst of load on the shared
    host falls on every contender of a ratio, not on one of them."""
    best = {name: float("inf") for name in commands}
    names = list(commands)
    for round_ in range(repeat):
        turn = round_ % len(names)
        for name in names[turn:] + names[:turn]:
            command, prepare = commands[name]
            best[name] = min(best[name], wall(command, cwd, 1, prepare=prepare))
    return best


def ensure_gnu_time():
    if Path("/usr/bin/time").exists():
        return True
    if shutil.which("apt-get"):
        subprocess.run(["apt-get", "install", "-y", "-qq", "time"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return Path("/usr/bin/time").exists()


def peak_rss_mib(command, cwd):
    """Peak resident set size of one run, in MiB (GNU time, else getrusage of the child)."""
    if ensure_gnu_time():
        result = subprocess.run(["/usr/bin/time", "-v", *command], cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        match = re.search(r"Maximum resident set size \(kbytes\): (\d+)", result.stderr)
        if match:
            return int(match.group(1)) / 1024
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024


def machine():
    model = "unknown"
    flags = ""
    with open("/proc/cpuinfo") as cpuinfo:
        for line in cpuinfo:
            if line.startswith("model name") and model == "unknown":
                model = line.split(":", 1)[1].strip()
            if line.startswith("flags") and not flags:
                flags = line
    memory_kib = 0
    with open("/proc/meminfo") as meminfo:
        for line in meminfo:
            if line.startswith("MemTotal"):
                memory_kib = int(line.split()[1])
    return {
        "cpus": os.cpu_count(),
        "cpu": model,
        "sha_ni": " sha_ni" in flags,
        "memory_gib": round(memory_kib / 1024 / 1024, 1),
        "os": f"{platform.system()} {platform.release()}",
    }


def supports_run(binary):
    result = subprocess.run([str(binary), "run", "--help"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return result.returncode == 0


def prepare_project(root, binary, scale):
    """Generates the corpus and commits its lock; skills are configured only if accepted."""
    case_files = generate(root, scale, skills_supported=True)
    locked = subprocess.run([str(binary), "lock"], cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if locked.returncode != 0 and "skills" in locked.stderr:
        generate_config_without_skills(root)
        locked = subprocess.run([str(binary), "lock"], cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if locked.returncode != 0:
        sys.exit(f"evalock lock failed: {locked.stderr}")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "lock the golden cases"], cwd=root, check=True)
    return case_files


def generate_config_without_skills(root):
    config = (root / "evalock.toml").read_text()
    (root / "evalock.toml").write_text(config.split("\n[skills]")[0])


def files_a_check_reads(root):
    """Every file a cold `check` of the generated project reads: the configuration, the
    lock, the case files, the prompts and every file of every skill (`tree-v1` hashes them
    all). Unrelated files (`src/`) are not read."""
    files = [root / "evalock.toml", root / "evalock.lock"]
    for folder in ("evals", "prompts", "skills"):
        files += sorted(path for path in (root / folder).rglob("*") if path.is_file() and not path.is_symlink())
    return files


# As the cache counts it: a file changed within this many seconds is not remembered yet.
SETTLE_SECONDS = 2.0


def wait_until_settled(paths, root):
    """Sleeps until the newest of `paths` changed more than SETTLE_SECONDS ago."""
    newest = max(max(os.stat(root / path).st_mtime, os.stat(root / path).st_ctime) for path in paths)
    remaining = newest + SETTLE_SECONDS + 0.1 - time.time()
    if remaining > 0:
        time.sleep(remaining)


def measure(args, root, case_files):
    binary = str(args.binary.resolve())
    repeat = args.repeat
    cache = root / ".evalock"
    relative = [str(path.relative_to(root)) for path in case_files]
    results = {}

    def drop_cache():
        shutil.rmtree(cache, ignore_errors=True)

    # Read everything once so every contender starts from the same warm page cache.
    read_by_check = [str(path.relative_to(root)) for path in files_a_check_reads(root)]
    wall(["cat", *read_by_check], root, 1)
    contenders = {
        "sha256sum": (["sha256sum", *relative], None),
        "sha256sum_all_read": (["sha256sum", *read_by_check], None),
        "openssl": (["openssl", "dgst", "-sha256", *relative], None),
        "check_cold": ([binary, "check"], drop_cache),
    }
    # What the case-v1 recipe alone demands (canonicalize and SHA-256 every case, both
    # cores): the floor under the cold check, timed in the same rounds.
    if args.floor.exists():
        contenders["recipe_floor"] = ([str(args.floor.resolve()), *relative], None)
    else:
        print(f"{args.floor} not found: the recipe's floor is left out "
              "(`cargo build --release --example recipe_floor`)", file=sys.stderr)
    results.update(walls(contenders, root, repeat))
    # The cache leaves out files changed in the last 2 seconds (their timestamps may not
    # show a change yet); a small corpus is generated and timed within that.
    wait_until_settled(read_by_check, root)
    wall([binary, "check"], root, 1)
    results["check_warm"] = wall([binary, "check"], root, repeat)
    # One case file edited before each run (a blank line added, then taken away): the
    # other case files and the skill files come from the cache; that file and the lock
    # are read again.
    edited = case_files[0]
    original = edited.read_bytes()
    versions = itertools.cycle([original + b"\n", original])
    results["check_one_edit"] = wall([binary, "check"], root, repeat, prepare=lambda: edited.write_bytes(next(versions)))
    edited.write_bytes(original)
    results["python_recipe"] = wall([sys.executable, "-c", PYTHON_RECIPE, *relative], root, repeat)

    # The pre-commit hook: an unrelated file is staged; evalock has run once before.
    unrelated = next((root / "src").rglob("*.py"))
    with unrelated.open("a") as handle:
        handle.write("# touched\n")
    subprocess.run(["git", "add", str(unrelated)], cwd=root, check=True)
    wall([binary, "check", "--staged"], root, 1)
    # Milliseconds each: alternated, and ten times as many runs, so a moment of load on
    # this shared machine does not land on one side only.
    git_diff, staged = float("inf"), float("inf")
    for _ in range(10 * repeat):
        git_diff = min(git_diff, wall(["git", "diff", "--cached", "--name-only"], root, 1))
        staged = min(staged, wall([binary, "check", "--staged"], root, 1))
    results["git_diff_cached"] = git_diff
    results["check_staged"] = staged

    results["rss_cold_mib"] = peak_rss_mib([binary, "check"], root) if drop_cache() is None else 0
    results["largest_file_mib"] = max(path.stat().st_size for path in case_files) / 1024 / 1024
    lock_mib = (root / "evalock.lock").stat().st_size / 1024 / 1024
    results["largest_input_mib"] = max(results["largest_file_mib"], lock_mib)
    results["case_bytes_mib"] = sum(path.stat().st_size for path in case_files) / 1024 / 1024
    results["read_bytes_mib"] = sum((root / path).stat().st_size for path in read_by_check) / 1024 / 1024
    results["cases"] = int(subprocess.run([sys.executable, "-c", "import sys; print(sum(1 for p in sys.argv[1:] for l in open(p) if l.strip()))", *relative], cwd=root, capture_output=True, text=True).stdout)
    if "recipe_floor" in results:
        # The floor must have hashed every case, or its time means nothing.
        floor = subprocess.run(contenders["recipe_floor"][0], cwd=root, capture_output=True, text=True, check=True)
        floor_cases, floor_xor = int(floor.stdout.split()[0]), floor.stdout.split()[-1]
        if floor_cases != results["cases"] or floor_xor != locked_case_digests_xor(root / "evalock.lock"):
            sys.exit(f"recipe_floor did not compute the locked digests: {floor.stdout.strip()}")

    if supports_run(binary):
        results.update(measure_run(args, root, binary))
    return results


def locked_case_digests_xor(lock):
    """The XOR of every case digest in `lock`, as `recipe_floor` prints it for the cases it
    hashed: the same value shows it computed exactly what `evalock lock` recorded."""
    total = 0
    in_case = False
    for line in lock.read_text(encoding="utf-8").splitlines():
        if line.startswith("["):
            in_case = line.startswith("[case.")
        elif in_case and line.startswith('digest = "sha256:'):
            total ^= int(line[len('digest = "sha256:'):-1], 16)
    return f"{total:064x}"


def measure_run(args, root, binary):
    """`evalock run` with a trivial completer vs `xargs -P N` running it once per case."""
    run_root = root / "run-bench"
    run_root.mkdir(exist_ok=True)
    completer = run_root / "complete.sh"
    completer.write_text(TRIVIAL_COMPLETER)
    completer.chmod(0o755)
    jobs = os.cpu_count() or 2
    lines = []
    inputs = run_root / "inputs"
    inputs.mkdir(exist_ok=True)
    with (run_root / "evals.jsonl").open("w") as cases:
        for number in range(args.run_cases):
            case = {"id": f"case-{number:05d}", "input": f"question {number}", "expect": {"must_include": ["ok"]}}
            cases.write(json.dumps(case) + "\n")
            (inputs / f"{number:05d}.json").write_text(json.dumps({"suite": "bench", "case_id": case["id"], "sample": 0, "input": case["input"]}))
            lines.append(str(inputs / f"{number:05d}.json"))
    (run_root / "evalock.toml").write_text(
        f'version = 1\n\n[[suite]]\nname = "bench"\ncases = ["evals.jsonl"]\ncompleter = ["{completer}"]\n'
    )
    (run_root / "list.txt").write_text("\n".join(lines) + "\n")
    subprocess.run([binary, "lock"], cwd=run_root, check=True, stdout=subprocess.DEVNULL)
    xargs = ["sh", "-c", f"xargs -P {jobs} -I{{}} sh -c '{completer} < {{}} > /dev/null' < list.txt"]
    result = {"run_cases": args.run_cases, "jobs": jobs}
    result["xargs"] = wall(xargs, run_root, args.repeat)
    out = run_root / "results.json"
    result["run"] = wall([binary, "run", "--jobs", str(jobs), "--out", str(out)], run_root, args.repeat, expect=(0, 1, 2, 3))
    return result


def measure_one_file(args, root, case_files):
    """The same cases as one JSONL file: parallel hashing within a file, and memory bounded
    by that file, not by the suite (it is read in blocks, never held whole)."""
    binary = str(args.binary.resolve())
    one_root = root / "one-file"
    (one_root / "evals").mkdir(parents=True, exist_ok=True)
    (one_root / "prompts").mkdir(exist_ok=True)
    with (one_root / "evals" / "all.jsonl").open("wb") as joined:
        for path in case_files:
            text = path.read_bytes()
            joined.write(text if text.endswith(b"\n") else text + b"\n")
    shutil.copy(root / "prompts" / "support.txt", one_root / "prompts" / "support.txt")
    graders = (root / "evalock.toml").read_text().split("\n[grader.", 1)[1]
    (one_root / "evalock.toml").write_text(
        'version = 1\n\n[[suite]]\nname = "all"\ncases = ["evals/all.jsonl"]\n'
        f'prompt = "prompts/support.txt"\ngrader = "struct"\n\n[grader.{graders}'
    )
    subprocess.run([binary, "lock"], cwd=one_root, check=True, stdout=subprocess.DEVNULL)
    cache = one_root / ".evalock"

    def drop_cache():
        shutil.rmtree(cache, ignore_errors=True)

    result = {"one_file_mib": (one_root / "evals" / "all.jsonl").stat().st_size / 1024 / 1024}
    # What its check reads: the configuration, the lock, the prompt and the case file.
    read_by_check = ["evalock.toml", "evalock.lock", "prompts/support.txt", "evals/all.jsonl"]
    wall(["cat", *read_by_check], one_root, 1)
    result.update(walls({
        "one_file_sha256sum": (["sha256sum", "evals/all.jsonl"], None),
        "one_file_sha256sum_all_read": (["sha256sum", *read_by_check], None),
        "one_file_check_cold": ([binary, "check"], drop_cache),
    }, one_root, args.repeat))
    drop_cache()
    result["one_file_rss_mib"] = peak_rss_mib([binary, "check"], one_root)
    return result


def measure_pull_request(args, root, case_files):
    """`check --base` as the Action runs it on a pull request: one that changes application
    code only; one that adds a case to one file and updates the lock; the same once the main
    line has moved on with cases of its own. Each is measured in a fresh clone made with
    `--no-local`, so every object (the pull request's commits too) is in one pack, with older
    locks stored as deltas of the newest one, as a CI checkout receives them. Each against a
    cold `check` of the same clone, taking turns."""
    binary = str(args.binary.resolve())
    work = root / "pull-request-work"
    clone = root / "pull-request"
    shutil.rmtree(work, ignore_errors=True)
    subprocess.run(["git", "clone", "-q", str(root), str(work)], check=True)
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com"]

    def commit(message):
        subprocess.run([*git, "commit", "-qam", message], cwd=work, check=True)

    def timed(name, base):
        shutil.rmtree(clone, ignore_errors=True)
        subprocess.run(["git", "clone", "-q", "--no-local", str(work), str(clone)], check=True)
        command = [binary, "check", "--no-cache", "--base", base]
        found = walls({"check_cold": ([binary, "check", "--no-cache"], None), name: (command, None)}, clone, args.repeat)
        return {f"{name}_cold": found["check_cold"], name: found[name], f"{name}_rss_mib": peak_rss_mib(command, clone)}

    result = {"pr_lock_mib": (work / "evalock.lock").stat().st_size / 1024 / 1024}
    with next((work / "src").rglob("*.py")).open("a") as handle:
        handle.write("# changed by the pull request\n")
    commit("application change")
    result.update(timed("pr_code_only", "HEAD~1"))
    changed = work / case_files[0].relative_to(root)
    with changed.open("rb") as handle:
        first = json.loads(handle.readline())
    first["id"] += "-added"
    with changed.open("a") as handle:
        handle.write(json.dumps(first) + "\n")
    subprocess.run([binary, "lock"], cwd=work, check=True, stdout=subprocess.DEVNULL)
    commit("add a case")
    result.update(timed("pr_one_case", "HEAD~1"))
    # The main line moves on past the merge base with cases of its own: its newer lock is
    # then the one the pack stores whole, and both the base's lock and the pull request's
    # are deltas of it, as in a repository GitHub serves.
    subprocess.run(["git", "checkout", "-q", "-b", "pull-request"], cwd=work, check=True)
    subprocess.run(["git", "checkout", "-q", "-b", "main-moved-on", "HEAD~1"], cwd=work, check=True)
    for number, path in enumerate(case_files[1:3]):
        moved = work / path.relative_to(root)
        with moved.open("a") as handle:
            handle.write(json.dumps({**first, "id": f"{first['id']}-main-{number}"}) + "\n")
    subprocess.run([binary, "lock"], cwd=work, check=True, stdout=subprocess.DEVNULL)
    commit("main moves on")
    subprocess.run(["git", "checkout", "-q", "pull-request"], cwd=work, check=True)
    result.update(timed("pr_main_moved", "HEAD~1"))
    shutil.rmtree(clone, ignore_errors=True)
    shutil.rmtree(work, ignore_errors=True)
    return result


def table(results, info):
    rows = [
        ("full cold `check` / `sha256sum` over the case files", results["check_cold"] / results["sha256sum"], "<= 0.5"),
        ("full cold `check` / `sha256sum` over every file the check reads", results["check_cold"] / results["sha256sum_all_read"], "<= 0.5"),
        ("full cold `check` / `openssl dgst -sha256`", results["check_cold"] / results["openssl"], "(reference)"),
    ]
    if "recipe_floor" in results:
        rows.append(("the case-v1 recipe alone (canonicalize + SHA-256 every case, both cores) / `sha256sum` over the case files", results["recipe_floor"] / results["sha256sum"], "(floor)"))
        rows.append(("full cold `check` / the case-v1 recipe alone", results["check_cold"] / results["recipe_floor"], "(reference)"))
    rows += [
        ("warm re-check / cold check", results["check_warm"] / results["check_cold"], "<= 0.1"),
        ("re-check after one case file edited / cold check", results["check_one_edit"] / results["check_cold"], "(reference)"),
        ("`check --staged`, nothing relevant staged / `git diff --cached --name-only`", results["check_staged"] / results["git_diff_cached"], "<= 1.5"),
        ("cold `check` / seed Python recipe (json.dumps sort_keys + sha256)", results["check_cold"] / results["python_recipe"], "<= 0.1"),
        ("peak RSS of cold `check` / (64 MiB + largest input file)", results["rss_cold_mib"] / (64 + results["largest_input_mib"]), "<= 1.0"),
    ]
    if "one_file_check_cold" in results:
        size = f"{results['one_file_mib']:.0f} MiB"
        rows.append((f"the cases as one {size} file: cold `check` / `sha256sum` over it", results["one_file_check_cold"] / results["one_file_sha256sum"], "<= 0.5"))
        rows.append((f"the cases as one {size} file: cold `check` / `sha256sum` over every file its check reads", results["one_file_check_cold"] / results["one_file_sha256sum_all_read"], "<= 0.5"))
        rows.append((f"the cases as one {size} file: peak RSS of cold `check` / (64 MiB + that file)", results["one_file_rss_mib"] / (64 + results["one_file_mib"]), "<= 1.0"))
    if "pr_code_only" in results:
        limit = 64 + results["pr_lock_mib"]
        rows.append(("`check --base`, pull request changing application code only / cold `check` (fresh packed clone)", results["pr_code_only"] / results["pr_code_only_cold"], "(reference)"))
        rows.append(("`check --base`, pull request adding a case (lock updated) / cold `check` (fresh packed clone)", results["pr_one_case"] / results["pr_one_case_cold"], "(reference)"))
        rows.append(("peak RSS of `check --base`, application code only / (64 MiB + largest input file)", results["pr_code_only_rss_mib"] / limit, "<= 1.0"))
        rows.append(("peak RSS of `check --base`, a case added / (64 MiB + largest input file)", results["pr_one_case_rss_mib"] / limit, "<= 1.0"))
        if "pr_main_moved_rss_mib" in results:
            rows.append(("peak RSS of `check --base`, a case added, the main line moved on / (64 MiB + largest input file)", results["pr_main_moved_rss_mib"] / limit, "<= 1.0"))
    if "run" in results:
        rows.append((f"`run --jobs {results['jobs']}` / `xargs -P {results['jobs']}` ({results['run_cases']} cases)", results["run"] / results["xargs"], "<= 1.3"))
    lines = [
        f"machine: {info['cpus']} CPUs ({info['cpu']}, sha_ni: {'yes' if info['sha_ni'] else 'no'}), {info['memory_gib']} GiB RAM, {info['os']}",
        f"corpus: {results['cases']} cases, {results['case_bytes_mib']:.0f} MiB of JSONL; largest case file {results['largest_file_mib']:.2f} MiB; "
        f"evalock.lock {results['largest_input_mib']:.1f} MiB; a check reads {results['read_bytes_mib']:.0f} MiB in all",
        "",
        "| measurement | ratio | target |",
        "| --- | --- | --- |",
    ]
    lines += [f"| {name} | {ratio:.3f} | {target} |" for name, ratio, target in rows]
    lines.append("")
    lines.append("absolute (s): " + ", ".join(f"{key} {value:.3f}" for key, value in results.items() if isinstance(value, float) and not key.endswith("mib")))
    lines.append(f"peak RSS cold check: {results['rss_cold_mib']:.1f} MiB")
    if "one_file_rss_mib" in results:
        lines.append(f"peak RSS cold check of the one-file project: {results['one_file_rss_mib']:.1f} MiB")
    if "pr_code_only_rss_mib" in results:
        lines.append(f"peak RSS `check --base`: {results['pr_code_only_rss_mib']:.1f} MiB (application code only), {results['pr_one_case_rss_mib']:.1f} MiB (a case added), {results.get('pr_main_moved_rss_mib', 0):.1f} MiB (the main line moved on)")
    return "\n".join(lines)


def main():
    args = parse_args()
    if not args.binary.exists():
        sys.exit(f"{args.binary} not found: run `cargo build --release` first")
    temporary = None
    if args.workdir:
        root = args.workdir
        if root.exists():
            shutil.rmtree(root)
    else:
        temporary = tempfile.mkdtemp(prefix="evalock-bench-")
        root = Path(temporary) / "project"
    try:
        started = time.perf_counter()
        case_files = prepare_project(root, args.binary.resolve(), args.scale)
        print(f"generated {root} in {time.perf_counter() - started:.0f}s", file=sys.stderr)
        results = measure(args, root, case_files)
        results.update(measure_one_file(args, root, case_files))
        results.update(measure_pull_request(args, root, case_files))
        info = machine()
        print(table(results, info))
        if args.json:
            args.json.write_text(json.dumps({"machine": info, "results": results}, indent=2) + "\n")
    finally:
        if temporary and not args.keep:
            shutil.rmtree(temporary, ignore_errors=True)


if __name__ == "__main__":
    main()
