#!/usr/bin/env python3
"""evalock benchmark: the same golden cases laid out several ways, each measured against
reference tools on the same bytes in the same run, as ratios (the machines are shared and
noisy: absolute times only explain the ratios).

    cargo build --release
    python3 bench/bench.py                 # full size: ~200,000 cases, ~150 MiB
    python3 bench/bench.py --scale 0.1     # a quick run

Layouts written by hand (docs/performance.md has the figures and the machine):

    benchmark       8 suites, each a glob over 50 files
    400 suites      one suite per case file, each named literally
    one suite       every case file under one glob
    one file        every case in one JSONL file
    20,000 files    ten cases a file, 8 suites
    400 glob suites the 20,000 files in one folder, 400 suites each a glob over 50 of them
                    (`evals/billing-07-*.jsonl`), against the 20,000 files in 8 suites

Layouts configured by `evalock init` itself, as a new user's repository is, each measured
at three stages of its life: `fresh` (init + lock, no baseline yet), `accepted` (after
`run` + `accept`, every baseline present) and `results` (after one more run, its results
in `.evalock/`):

    init 400 files       400 case files with unique names in one folder: 400 suites
    init suite folders   a folder per suite of `part-NNN.jsonl` files, as generated
    8,000-file collection  the skill and plugin collection of fixtures/collection, adopted
                         by `init` (one suite), then with a suite (and baseline) per plugin

and what a pull-request job does on the first of them: `check --base` on a fresh clone,
and `run` of the one suite of 400 that changed.

Each timing is the minimum wall time over --repeat rounds in which the contenders of a
ratio take turns (a burst of load lands on both sides).
"""

import argparse
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
from generate import SUITES, generate  # noqa: E402

REPO = Path(__file__).resolve().parent.parent

# The seeds' case-hash recipe, run by a separate interpreter over the same case files.
PYTHON_RECIPE = r"""
import hashlib, json, sys
for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                case = json.loads(line)
                payload = json.dumps(case, sort_keys=True, separators=(",", ":"))
                hashlib.sha256(payload.encode("utf-8")).hexdigest()
"""

# A completer that answers instantly: the cost measured is evalock's, not a model's.
TRIVIAL_COMPLETER = "#!/bin/sh\ncat >/dev/null\necho ok\n"
TAIL = '\n[skills]\nroots = ["skills/*"]\nallowed_permissions = ["Read", "Grep"]\n\n[grader.struct]\nversion = "struct-3"\n'


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=float, default=1.0, help="corpus size relative to 200,000 cases")
    parser.add_argument("--repeat", type=int, default=5, help="rounds per measurement; the minimum counts")
    parser.add_argument("--binary", type=Path, default=REPO / "target" / "release" / "evalock")
    parser.add_argument("--workdir", type=Path, help="where to generate (default: a temporary folder)")
    parser.add_argument("--layouts", default="all", help="comma-separated layouts by slug (benchmark, 400-suites, one-suite, one-file, 20000-files, 400-glob-suites, init-400-files, init-suite-folders, 8000-file-collection), or all")
    parser.add_argument("--run-cases", type=int, default=2000, help="cases for the run vs xargs comparison")
    parser.add_argument("--json", type=Path, help="also write the results as JSON to this file")
    return parser.parse_args()


def git(root, *args):
    """git in a generated project. Automatic garbage collection is off: a commit of
    thousands of new files would otherwise start `git gc` in the background, which takes
    one of the two cores for half a minute while the measurements run (halving evalock's
    parallel speed, and leaving the single-threaded `sha256sum` alone)."""
    env = {**os.environ, "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}
    settings = ["-c", "user.name=bench", "-c", "user.email=bench@example.com", "-c", "gc.auto=0", "-c", "maintenance.auto=false"]
    subprocess.run(["git", *settings, *args], cwd=root, check=True, env=env, stdout=subprocess.DEVNULL)


def once(command, cwd, expect=(0,)):
    started = time.perf_counter()
    result = subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - started
    if result.returncode not in expect:
        sys.exit(f"{' '.join(map(str, command))} exited {result.returncode}: {result.stderr.decode()[-2000:]}")
    return elapsed


def walls(commands, cwd, repeat):
    """Minimum wall time of each command (name -> (argv, prepare or None)) over `repeat`
    rounds, taking turns in a rotating order."""
    best = {name: float("inf") for name in commands}
    names = list(commands)
    for round_ in range(repeat):
        turn = round_ % len(names)
        for name in names[turn:] + names[:turn]:
            command, prepare = commands[name]
            if prepare:
                prepare()
            best[name] = min(best[name], once(command, cwd))
    return best


def peak_rss_mib(command, cwd):
    if Path("/usr/bin/time").exists():
        result = subprocess.run(["/usr/bin/time", "-v", *command], cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        match = re.search(r"Maximum resident set size \(kbytes\): (\d+)", result.stderr)
        if match:
            return int(match.group(1)) / 1024
    import resource

    subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def machine():
    model, flags = "unknown", ""
    with open("/proc/cpuinfo") as cpuinfo:
        for line in cpuinfo:
            if line.startswith("model name") and model == "unknown":
                model = line.split(":", 1)[1].strip()
            if line.startswith("flags") and not flags:
                flags = line
    with open("/proc/meminfo") as meminfo:
        memory_kib = next(int(line.split()[1]) for line in meminfo if line.startswith("MemTotal"))
    return {"cpus": os.cpu_count(), "cpu": model, "sha_ni": " sha_ni" in flags,
            "memory_gib": round(memory_kib / 1024 / 1024, 1), "os": f"{platform.system()} {platform.release()}"}


def read_cases(base):
    """Every case line of the generated corpus, by suite, in file order."""
    by_suite = {}
    for suite in SUITES:
        lines = []
        for path in sorted((base / "evals" / suite).glob("*.jsonl")):
            lines.extend(line for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
        by_suite[suite] = lines
    return by_suite


def lay_out(base, root, name, cases):
    """The generated project, its case files rearranged as `name` lays them out, locked and
    committed; returns the case files."""
    shutil.copytree(base, root, symlinks=True, ignore=shutil.ignore_patterns("evals", ".evalock"))
    evals = root / "evals"
    files, suites = [], []
    if name in ("benchmark", "400 suites", "one suite"):
        shutil.copytree(base / "evals", evals)
        files = sorted(evals.rglob("*.jsonl"))
        if name == "benchmark":
            suites = [(suite, f"evals/{suite}/*.jsonl", suite) for suite in SUITES]
        elif name == "one suite":
            suites = [("all", "evals/*/*.jsonl", SUITES[0])]
        else:
            suites = [(f"{path.parent.name}-{path.stem}", str(path.relative_to(root)), path.parent.name) for path in files]
    elif name == "one file":
        evals.mkdir()
        path = evals / "all.jsonl"
        with path.open("w", encoding="utf-8") as handle:
            for suite in SUITES:
                handle.write("\n".join(cases[suite]) + "\n")
        files, suites = [path], [("all", "evals/all.jsonl", SUITES[0])]
    elif name == "20,000 files":
        per_file = max(1, sum(len(lines) for lines in cases.values()) // 20_000)
        for suite in SUITES:
            folder = evals / suite
            folder.mkdir(parents=True)
            lines = cases[suite]
            for number, start in enumerate(range(0, len(lines), per_file)):
                path = folder / f"part-{number:05d}.jsonl"
                path.write_text("\n".join(lines[start:start + per_file]) + "\n", encoding="utf-8")
                files.append(path)
        suites = [(suite, f"evals/{suite}/*.jsonl", suite) for suite in SUITES]
    elif name == "400 glob suites":
        evals.mkdir()
        per_file = max(1, sum(len(lines) for lines in cases.values()) // 20_000)
        groups = 400 // len(SUITES)
        for suite in SUITES:
            lines = cases[suite]
            starts = list(range(0, len(lines), per_file))
            for number, start in enumerate(starts):
                group = number * groups // len(starts)
                path = evals / f"{suite}-{group:02d}-{number:05d}.jsonl"
                path.write_text("\n".join(lines[start:start + per_file]) + "\n", encoding="utf-8")
                files.append(path)
            suites += [(f"{suite}-{group:02d}", f"evals/{suite}-{group:02d}-*.jsonl", suite) for group in range(groups)]
    config = "version = 1\n" + "".join(
        f'\n[[suite]]\nname = "{suite}"\ncases = ["{glob}"]\nprompt = "prompts/{prompt}.txt"\ngrader = "struct"\n'
        for suite, glob, prompt in suites
    )
    (root / "evalock.toml").write_text(config + TAIL)
    subprocess.run([str(BINARY), "lock"], cwd=root, check=True, stdout=subprocess.DEVNULL)
    git(root, "add", "-A")
    git(root, "commit", "-qm", f"the {name} layout")
    return files


def measure_layout(root, files, repeat, python=True, baselines=()):
    """The rows of one layout. `sha256sum` hashes what a cold check reads: the case files
    and the baselines, once there are any; the Python recipe reads the cases alone."""
    binary = str(BINARY)
    cache = root / ".evalock" / "cache"
    cases = [str(path.relative_to(root)) for path in files]
    relative = cases + [str(path.relative_to(root)) for path in baselines]

    def drop_cache():
        shutil.rmtree(cache, ignore_errors=True)

    subprocess.run(["cat", *relative, "evalock.lock"], cwd=root, stdout=subprocess.DEVNULL, check=True)
    results = walls({"sha256sum": (["sha256sum", *relative], None), "check_cold": ([binary, "check"], drop_cache)}, root, repeat)
    if python:
        results["python_recipe"] = once([sys.executable, "-c", PYTHON_RECIPE, *cases], root)
    # A check that read files changed in the last 2 seconds is not remembered.
    time.sleep(2.2)
    once([binary, "check"], root)
    results["check_warm"] = walls({"warm": ([binary, "check"], None)}, root, repeat)["warm"]
    # The pre-commit hook with one unrelated file staged; milliseconds each, so ten times
    # as many rounds.
    unrelated = next((root / "src").rglob("*.py"), root / "UNRELATED.md")
    with unrelated.open("a") as handle:
        handle.write("# touched\n")
    git(root, "add", str(unrelated.relative_to(root)))
    hook = walls({"git_diff_cached": (["git", "diff", "--cached", "--name-only"], None),
                  "check_staged": ([binary, "check", "--staged"], None)}, root, 10 * repeat)
    results.update(hook)
    git(root, "reset", "-q")
    drop_cache()
    results["rss_mib"] = peak_rss_mib([binary, "check"], root)
    results["largest_file_mib"] = max(path.stat().st_size for path in [*files, *baselines, root / "evalock.lock"]) / 1024 / 1024
    results["case_mib"] = sum(path.stat().st_size for path in files) / 1024 / 1024
    results["baseline_mib"] = sum(path.stat().st_size for path in baselines) / 1024 / 1024
    results["case_files"] = len(files) + len(baselines)
    return results


INIT_LAYOUTS = ["init 400 files", "init suite folders"]
COLLECTION = "8,000-file collection"


def adopt(root):
    """`evalock init` and `lock` on a committed project, committed: what a new user does."""
    git(root, "add", "-A")
    git(root, "commit", "-qm", "before evalock")
    subprocess.run([str(BINARY), "init"], cwd=root, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    subprocess.run([str(BINARY), "lock"], cwd=root, check=True, stdout=subprocess.DEVNULL)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "adopt evalock")


def lay_out_by_init(base, root, name):
    """The generated project as a user has it, configured by `evalock init` and locked;
    returns the case files."""
    shutil.copytree(base, root, symlinks=True, ignore=shutil.ignore_patterns("evals", ".evalock", "evalock.toml", "evalock.lock"))
    evals = root / "evals"
    if name == "init 400 files":
        evals.mkdir()
        for path in sorted((base / "evals").rglob("*.jsonl")):
            number = path.stem.removeprefix("part-")
            shutil.copy2(path, evals / f"{path.parent.name}-{number}.jsonl")
    else:
        shutil.copytree(base / "evals", evals)
    adopt(root)
    return sorted(evals.rglob("*.jsonl"))


def lay_out_collection(root):
    """The 8,000-file skill and plugin collection, adopted; returns every tracked file."""
    generator = REPO / "fixtures" / "collection" / "generate.py"
    subprocess.run([sys.executable, str(generator), str(root), "--plugins", "100", "--filler", "4200"], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    adopt(root)
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=root, check=True, capture_output=True).stdout
    return [root / name for name in listed.decode().split("\0") if name and (root / name).is_file() and not (root / name).is_symlink()]


def split_suite_by_plugin(root):
    """The collection's one suite split into one per plugin, each with the baseline `init`
    would name beside its cases (none accepted yet), locked and committed: the config of a
    collection whose plugins are evaluated apart, as the skills roots already are."""
    config = (root / "evalock.toml").read_text(encoding="utf-8")
    start, end = config.index("[[suite]]"), config.index("[skills]")
    plugins = sorted(set(re.findall(r"plugins/([^/\"]+)/evals/cases\.jsonl", config[start:end])))
    suites = "".join(
        f'[[suite]]\nname = "{plugin}"\ncases = ["plugins/{plugin}/evals/cases.jsonl"]\n'
        f'baseline = "plugins/{plugin}/evals/cases.baseline.json"\n\n'
        for plugin in plugins
    )
    (root / "evalock.toml").write_text(config[:start] + suites + config[end:], encoding="utf-8")
    subprocess.run([str(BINARY), "lock"], cwd=root, check=True, stdout=subprocess.DEVNULL)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "a suite per plugin")


def write_completions(files, path):
    """A completion for every sample of every case in `files`: what `run --completions`
    grades (the cost measured is evalock's, not a model's)."""
    with path.open("w", encoding="utf-8") as out:
        for case_file in files:
            with case_file.open(encoding="utf-8") as handle:
                for line in handle:
                    if not line.strip():
                        continue
                    case = json.loads(line)
                    words = case.get("expect", {}).get("must_include", [])
                    completion = json.dumps({"answer": " ".join(words), "confidence": 0.9})
                    for _ in range(case.get("n", 1)):
                        out.write(json.dumps({"case_id": case["id"], "completion": completion}) + "\n")


def run_and_accept(root, completions):
    """The first `run` and `accept` of every suite (failing cases as known failures),
    committed: every configured baseline now exists."""
    results = root.parent / f"{root.name}-results.json"
    once([str(BINARY), "run", "--completions", str(completions), "--out", str(results)], root, expect=(0, 1, 2, 3))
    once([str(BINARY), "accept", "--include-failing", "--from", str(results), "--reason", "first baselines"], root)
    results.unlink()
    git(root, "add", "-A")
    git(root, "commit", "-qm", "first baselines")


def suite_of(root, case_file):
    """The suite `evalock init` made of `case_file` (its name is the file's stem)."""
    return case_file.stem


def measure_one_suite_run(root, case_file, workdir, repeat):
    """`run --suite S` of the one suite of 400 a pull request changed, against the same
    run in a project that holds that suite alone: only what changed should cost."""
    suite = suite_of(root, case_file)
    completions = workdir / "one-suite-completions.jsonl"
    write_completions([case_file], completions)
    alone = workdir / "one-of-400"
    (alone / "evals").mkdir(parents=True)
    shutil.copy2(case_file, alone / "evals" / case_file.name)
    (alone / "evalock.toml").write_text(
        f'version = 1\n\n[[suite]]\nname = "{suite}"\ncases = ["evals/{case_file.name}"]\n'
        f'baseline = "evals/{suite}.baseline.json"\ngrader = "struct"\n\n[grader.struct]\nversion = "struct-3"\n'
    )
    subprocess.run(["git", "init", "-q"], cwd=alone, check=True)
    subprocess.run([str(BINARY), "lock"], cwd=alone, check=True, stdout=subprocess.DEVNULL)
    run_and_accept(alone, completions)
    out = workdir / "one-suite-results.json"
    command = [str(BINARY), "run", "--suite", suite, "--completions", str(completions), "--out", str(out)]
    best = {"run_one_of_400": float("inf"), "run_one_alone": float("inf")}
    for round_ in range(repeat):
        order = [("run_one_of_400", root), ("run_one_alone", alone)]
        for key, cwd in order[round_ % 2:] + order[:round_ % 2]:
            best[key] = min(best[key], once(command, cwd, expect=(0, 1, 2, 3)))
    shutil.rmtree(alone, ignore_errors=True)
    return best


def measure_stages(base, workdir, name, repeat, layouts, extra):
    """An init-configured layout at its three stages: fresh, accepted, with results."""
    root = workdir / slug(name)
    files = lay_out_collection(root) if name == COLLECTION else lay_out_by_init(base, root, name)
    python = name != COLLECTION
    print(f"measuring the {name} layout, fresh", file=sys.stderr)
    layouts[f"{name} · fresh"] = measure_layout(root, files, repeat, python)
    if name == COLLECTION:
        split_suite_by_plugin(root)
        print(f"measuring the {name} layout, a suite per plugin", file=sys.stderr)
        layouts[f"{name} · a suite per plugin"] = measure_layout(root, files, repeat, python)
        shutil.rmtree(root, ignore_errors=True)
        return
    completions = workdir / "completions.jsonl"
    write_completions(files, completions)
    run_and_accept(root, completions)
    baselines = sorted(root.rglob("*.baseline.json"))
    print(f"measuring the {name} layout, accepted", file=sys.stderr)
    layouts[f"{name} · accepted"] = measure_layout(root, files, repeat, python, baselines)
    if name == INIT_LAYOUTS[0]:
        found = measure_pull_request(root, files[0], repeat)
        extra.update({f"init_{key}": value for key, value in found.items()})
        extra.update(measure_one_suite_run(root, files[0], workdir, repeat))
    once([str(BINARY), "run", "--completions", str(completions)], root, expect=(0, 1, 2, 3))
    print(f"measuring the {name} layout, results in .evalock/", file=sys.stderr)
    layouts[f"{name} · results"] = measure_layout(root, files, repeat, python, baselines)
    completions.unlink()
    shutil.rmtree(root, ignore_errors=True)


def measure_pull_request(root, case_file, repeat):
    """`check --base` on a pull request that adds a case and updates the lock, in a fresh
    clone made with `--no-local` (every object packed, the older lock a delta of the newer,
    as a CI checkout receives them)."""
    binary = str(BINARY)
    work, clone = root.parent / "pr-work", root.parent / "pr-clone"
    subprocess.run(["git", "clone", "-q", str(root), str(work)], check=True)
    path = work / case_file.relative_to(root)
    first = json.loads(path.open(encoding="utf-8").readline())
    first["id"] += "-added"
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(first) + "\n")
    subprocess.run([binary, "lock"], cwd=work, check=True, stdout=subprocess.DEVNULL)
    git(work, "commit", "-qam", "add a case")
    subprocess.run(["git", "clone", "-q", "--no-local", str(work), str(clone)], check=True)
    command = [binary, "check", "--no-cache", "--base", "HEAD~1"]
    found = walls({"pr_cold_check": ([binary, "check", "--no-cache"], None), "pr_check_base": (command, None)}, clone, repeat)
    found["pr_rss_mib"] = peak_rss_mib(command, clone)
    found["pr_lock_mib"] = (clone / "evalock.lock").stat().st_size / 1024 / 1024
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(clone, ignore_errors=True)
    return found


def measure_run(workdir, cases, repeat):
    """`evalock run` with a trivial completer against `xargs -P N` starting it once a case."""
    binary = str(BINARY)
    root = workdir / "run"
    (root / "inputs").mkdir(parents=True)
    completer = root / "complete.sh"
    completer.write_text(TRIVIAL_COMPLETER)
    completer.chmod(0o755)
    jobs = os.cpu_count() or 2
    lines = []
    with (root / "evals.jsonl").open("w") as handle:
        for number in range(cases):
            case = {"id": f"case-{number:05d}", "input": f"question {number}", "expect": {"must_include": ["ok"]}}
            handle.write(json.dumps(case) + "\n")
            request = root / "inputs" / f"{number:05d}.json"
            request.write_text(json.dumps({"suite": "bench", "case_id": case["id"], "sample": 0, "input": case["input"]}))
            lines.append(str(request))
    (root / "list.txt").write_text("\n".join(lines) + "\n")
    (root / "evalock.toml").write_text(f'version = 1\n\n[[suite]]\nname = "bench"\ncases = ["evals.jsonl"]\ncompleter = ["{completer}"]\n')
    subprocess.run([binary, "lock"], cwd=root, check=True, stdout=subprocess.DEVNULL)
    xargs = ["sh", "-c", f"xargs -P {jobs} -I{{}} sh -c '{completer} < {{}} > /dev/null' < list.txt"]
    out = root / "results.json"
    result = {"run_cases": cases, "jobs": jobs, "xargs": float("inf"), "run": float("inf")}
    for _ in range(repeat):
        result["xargs"] = min(result["xargs"], once(xargs, root))
        result["run"] = min(result["run"], once([binary, "run", "--jobs", str(jobs), "--out", str(out)], root, expect=(0, 1, 2, 3)))
    return result


def table(layouts, extra, info):
    lines = [
        f"machine: {info['cpus']} CPUs ({info['cpu']}, SHA extensions: {'yes' if info['sha_ni'] else 'no'}), {info['memory_gib']} GiB, {info['os']}",
        "",
        "| layout · stage | cases | files hashed | cold check / `sha256sum` (≤ 1.0) | cold check / Python recipe (≤ 0.2) | warm / cold (≤ 0.1) | hook no-op / `git diff --cached --name-only` (≤ 1.5) | peak RSS / (64 MiB + 2 × largest file) (≤ 1.0) | cold check |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, result in layouts.items():
        python = f"{result['check_cold'] / result['python_recipe']:.3f}" if "python_recipe" in result else "-"
        lines.append(
            f"| {name} | {result.get('cases', '-')} | {result['case_files']} | {result['check_cold'] / result['sha256sum']:.3f} | {python} | "
            f"{result['check_warm'] / result['check_cold']:.3f} | {result['check_staged'] / result['git_diff_cached']:.3f} | "
            f"{result['rss_mib'] / (64 + 2 * result['largest_file_mib']):.3f} | {result['check_cold']:.2f} s |"
        )
    lines.append("")
    # One suite has no baselines: only layouts without any compare with it.
    for many in ("400 suites", "init 400 files · fresh"):
        if many in layouts and "one suite" in layouts:
            ratio = layouts[many]["check_cold"] / layouts["one suite"]["check_cold"]
            lines.append(f"- {many} / one suite, the same cases, cold check: {ratio:.3f} (≤ 1.3)")
    if "400 glob suites" in layouts and "20,000 files" in layouts:
        ratio = layouts["400 glob suites"]["check_cold"] / layouts["20,000 files"]["check_cold"]
        lines.append(f"- 400 glob suites / 20,000 files in 8 suites, the same case files, cold check: {ratio:.3f} (≤ 1.3)")
    for stage in ("fresh", "a suite per plugin"):
        collection = f"{COLLECTION} · {stage}"
        if collection in layouts:
            lines.append(f"- {collection}: cold check {layouts[collection]['check_cold']:.3f} s (< 0.5 s), warm {layouts[collection]['check_warm']:.3f} s")
    for prefix, label in (("", "benchmark layout"), ("init_", "init 400 files, accepted")):
        if f"{prefix}pr_check_base" in extra:
            limit = 64 + 3 * extra[f"{prefix}pr_lock_mib"]
            lines.append(
                f"- `check --base`, {label}: a pull request that adds a case and updates the lock, fresh `--no-local` clone: "
                f"peak RSS / (64 MiB + 3 × the lock) {extra[f'{prefix}pr_rss_mib'] / limit:.3f} (≤ 1.0); "
                f"time / cold check {extra[f'{prefix}pr_check_base'] / extra[f'{prefix}pr_cold_check']:.3f} (≤ 1.5)"
            )
    if "run_one_of_400" in extra:
        lines.append(
            f"- `run --suite` of the one suite of 400 that changed / the same run in a project of that suite alone: "
            f"{extra['run_one_of_400'] / extra['run_one_alone']:.3f} (≤ 1.5; {extra['run_one_of_400']:.3f} s vs {extra['run_one_alone']:.3f} s)"
        )
    if "run" in extra:
        lines.append(f"- `run --jobs {extra['jobs']}` / `xargs -P {extra['jobs']}`, {extra['run_cases']} cases: {extra['run'] / extra['xargs']:.3f} (≤ 1.3)")
    lines.append("")
    for name, result in layouts.items():
        lines.append(f"- {name}: " + ", ".join(f"{key} {value:.3f}" for key, value in result.items() if isinstance(value, float)))
    return "\n".join(lines)


def slug(name):
    """A layout's name as a folder and a `--layouts` value: `20,000 files` is `20000-files`."""
    return name.replace(" ", "-").replace(",", "")


def main():
    global BINARY
    args = parse_args()
    BINARY = args.binary.resolve()
    if not BINARY.exists():
        sys.exit(f"{BINARY} not found: run `cargo build --release` first")
    temporary = None
    if args.workdir:
        workdir = args.workdir
        shutil.rmtree(workdir, ignore_errors=True)
        workdir.mkdir(parents=True)
    else:
        temporary = tempfile.mkdtemp(prefix="evalock-bench-")
        workdir = Path(temporary)
    try:
        base = workdir / "generated"
        generate(base, args.scale, skills_supported=True)
        cases = read_cases(base)
        count = sum(len(lines) for lines in cases.values())
        names = ["benchmark", "400 suites", "one suite", "one file", "20,000 files", "400 glob suites"]
        adopted = [*INIT_LAYOUTS, COLLECTION]
        if args.layouts != "all":
            wanted = args.layouts.split(",")
            names = [name for name in names if slug(name) in wanted]
            adopted = [name for name in adopted if slug(name) in wanted]
        layouts, extra = {}, {}
        for name in adopted:
            before = len(layouts)
            measure_stages(base, workdir, name, args.repeat, layouts, extra)
            for stage in list(layouts)[before:]:
                if name != COLLECTION:
                    layouts[stage] = {"cases": count, **layouts[stage]}
        for name in names:
            root = workdir / slug(name)
            files = lay_out(base, root, name, cases)
            print(f"measuring the {name} layout", file=sys.stderr)
            layouts[name] = {"cases": count, **measure_layout(root, files, args.repeat, python=True)}
            if name == "benchmark":
                extra.update(measure_pull_request(root, files[0], args.repeat))
            shutil.rmtree(root, ignore_errors=True)
        extra.update(measure_run(workdir, args.run_cases, args.repeat))
        info = machine()
        print(table(layouts, extra, info))
        if args.json:
            args.json.write_text(json.dumps({"machine": info, "layouts": layouts, "other": extra}, indent=2) + "\n")
    finally:
        if temporary:
            shutil.rmtree(temporary, ignore_errors=True)


if __name__ == "__main__":
    main()
