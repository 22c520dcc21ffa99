//! `evalock run --shard K/N` and `evalock merge` end to end, in real git repositories with a
//! real completer process: four shards merged are the unsharded run (results file, exit
//! code and findings), cases keep their shard when others are added, and merge refuses
//! every set of files that is not one complete run.

mod common;

use common::TestRepo;
use serde_json::Value;
use std::collections::BTreeMap;

/// Answers "hello there" unless the case id is listed in broken.txt ("sorry") or
/// moved.txt (another passing answer).
const COMPLETER: &str = r#"req=$(cat)
for id in $(cat broken.txt 2>/dev/null); do
  case "$req" in *"\"case_id\":\"$id\""*) echo "sorry, no"; exit 0 ;; esac
done
for id in $(cat moved.txt 2>/dev/null); do
  case "$req" in *"\"case_id\":\"$id\""*) echo "hello there, friend"; exit 0 ;; esac
done
echo "hello there"
"#;

fn case_line(id: &str) -> String {
    format!(
        "{{\"id\": \"{id}\", \"input\": {{\"text\": \"hi {id}\"}}, \"expect\": {{\"must_include\": [\"hello\"]}}}}\n"
    )
}

fn case_file(ids: &[String]) -> String {
    ids.iter().map(|id| case_line(id)).collect()
}

fn ids(prefix: &str, range: std::ops::RangeInclusive<u32>) -> Vec<String> {
    range.map(|n| format!("{prefix}{n:02}")).collect()
}

/// Two suites (alpha: a01..a10, beta: b01..b06) with baselines accepted and committed.
fn project() -> TestRepo {
    let repo = TestRepo::new();
    repo.write(".gitignore", ".evalock/\n");
    repo.write("complete.sh", COMPLETER);
    let mut config = String::from("version = 1\n\n[policy]\ntimeout_secs = 30\n");
    for suite in ["alpha", "beta"] {
        config.push_str(&format!(
            "\n[[suite]]\nname = \"{suite}\"\ncases = [\"evals/{suite}.jsonl\"]\nbaseline = \"evals/{suite}.baseline.json\"\ncompleter = [\"sh\", \"complete.sh\"]\n"
        ));
    }
    repo.write("evalock.toml", config);
    repo.write("evals/alpha.jsonl", case_file(&ids("a", 1..=10)));
    repo.write("evals/beta.jsonl", case_file(&ids("b", 1..=6)));
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["run"]).assert_code(0);
    repo.evalock(&["accept", "--reason", "first baselines"])
        .assert_code(0);
    repo.commit_all("two suites with baselines");
    repo
}

fn shard_path(k: u32) -> String {
    format!(".evalock/shard-{k}.json")
}

/// Runs every shard of `n`; returns their exit codes.
fn run_shards(repo: &TestRepo, n: u32, extra: &[&str]) -> Vec<i32> {
    (1..=n)
        .map(|k| {
            let shard = format!("{k}/{n}");
            let out = shard_path(k);
            let mut args = vec!["run", "--shard", shard.as_str(), "--out", out.as_str()];
            args.extend_from_slice(extra);
            let run = repo.evalock(&args);
            assert!(
                [0, 1, 2, 3].contains(&run.code),
                "shard {shard} did not run:\n{}",
                run.all()
            );
            run.code
        })
        .collect()
}

fn merge(repo: &TestRepo, files: &[String], extra: &[&str]) -> common::Run {
    let mut args = vec!["merge"];
    args.extend(files.iter().map(String::as_str));
    args.extend_from_slice(&["--out", ".evalock/merged.json"]);
    args.extend_from_slice(extra);
    repo.evalock(&args)
}

fn all_shards(n: u32) -> Vec<String> {
    (1..=n).map(shard_path).collect()
}

/// The file's text with every `"duration_ms": N` set to 0: wall-clock timings are the
/// only bytes two runs of the same content may differ in.
fn without_timings(text: &str) -> String {
    const KEY: &str = "\"duration_ms\": ";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(KEY) {
        out.push_str(&rest[..at + KEY.len()]);
        out.push('0');
        rest = rest[at + KEY.len()..].trim_start_matches(|c: char| c.is_ascii_digit());
    }
    out.push_str(rest);
    out
}

/// Runs unsharded and as 4 merged shards; asserts the same results bytes, exit code and
/// printed findings; returns the exit code.
fn assert_merge_equals_unsharded(repo: &TestRepo, extra: &[&str]) -> i32 {
    let mut args = vec!["run", "--out", ".evalock/unsharded.json"];
    args.extend_from_slice(extra);
    let unsharded = repo.evalock(&args);
    run_shards(repo, 4, extra);
    let merged = merge(repo, &all_shards(4), &[]);
    assert_eq!(
        merged.code,
        unsharded.code,
        "merge exits as the unsharded run:\n{}\n---\n{}",
        merged.all(),
        unsharded.all()
    );
    assert_eq!(
        merged.stdout, unsharded.stdout,
        "merge prints the unsharded run's findings"
    );
    let expected = repo.read(".evalock/unsharded.json");
    let actual = repo.read(".evalock/merged.json");
    assert_ne!(without_timings(&expected), expected, "timings were found");
    assert_eq!(
        without_timings(&actual),
        without_timings(&expected),
        "merged results are the unsharded results"
    );
    unsharded.code
}

fn json(repo: &TestRepo, path: &str) -> Value {
    serde_json::from_str(&repo.read(path)).expect("results are JSON")
}

/// suite/case -> the shard whose results list it.
fn membership(repo: &TestRepo, n: u32) -> BTreeMap<String, u32> {
    let mut owners = BTreeMap::new();
    for k in 1..=n {
        let results = json(repo, &shard_path(k));
        assert_eq!(results["shard"]["index"], k);
        assert_eq!(results["shard"]["count"], n);
        for case in results["cases"].as_array().expect("cases") {
            let key = format!(
                "{}/{}",
                case["suite"].as_str().unwrap_or(""),
                case["case_id"].as_str().unwrap_or("")
            );
            assert!(
                owners.insert(key.clone(), k).is_none(),
                "{key} in two shards"
            );
        }
    }
    owners
}

#[test]
fn four_merged_shards_are_the_unsharded_run_and_cases_keep_their_shard() {
    let repo = project();
    // A clean run: merge is quiet and exits 0.
    assert_eq!(assert_merge_equals_unsharded(&repo, &[]), 0);
    let before = membership(&repo, 4);
    assert_eq!(before.len(), 16, "every case ran in exactly one shard");
    let used: std::collections::BTreeSet<u32> = before.values().copied().collect();
    assert_eq!(
        used.len(),
        4,
        "16 cases spread over all 4 shards: {before:?}"
    );
    let quiet = merge(&repo, &all_shards(4), &[]);
    quiet.assert_code(0).assert_not_contains("EL");

    // Regressed, moved and orphaned (a04 dropped from alpha, its baseline entry stays).
    repo.write("broken.txt", "a02\n");
    repo.write("moved.txt", "b03\n");
    let mut alpha = ids("a", 1..=10);
    alpha.retain(|id| id != "a04");
    repo.write("evals/alpha.jsonl", case_file(&alpha));
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("drop a04, break a02, move b03");
    assert_eq!(assert_merge_equals_unsharded(&repo, &[]), 1);
    // Merged shards compare as the unsharded run does, against each other and the base.
    repo.evalock(&["compare", ".evalock/unsharded.json", ".evalock/merged.json"])
        .assert_code(0)
        .assert_not_contains("REGRESS");
    let against_base = |file: &str| {
        let run = repo.evalock(&["compare", "--base", "HEAD~1", file, "--format", "json"]);
        let mut comparison: Value = serde_json::from_str(&run.stdout).expect("comparison");
        comparison["new"] = Value::Null;
        for case in comparison["cases"].as_array_mut().unwrap() {
            case.as_object_mut().unwrap().remove("breaches");
        }
        comparison.as_object_mut().unwrap().remove("stable");
        (run.code, comparison)
    };
    let (code, unsharded) = against_base(".evalock/unsharded.json");
    assert_eq!(code, 1, "{unsharded}");
    assert_eq!(against_base(".evalock/merged.json"), (code, unsharded));
    let merged = json(&repo, ".evalock/merged.json");
    let rules: Vec<&str> = merged["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter_map(|finding| finding["rule"].as_str())
        .collect();
    for rule in ["EL501", "EL503", "EL405"] {
        assert_eq!(
            rules.iter().filter(|found| **found == rule).count(),
            1,
            "{rule} exactly once in {rules:?}"
        );
    }
    // Only the shard that owns a02 fails; the gate still fails after the merge.
    let codes = run_shards(&repo, 4, &[]);
    let a02 = before["alpha/a02"];
    assert_eq!(
        codes[(a02 - 1) as usize],
        1,
        "shard {a02} holds the regression"
    );
    merge(&repo, &all_shards(4), &[])
        .assert_code(1)
        .assert_contains("EL501")
        .assert_contains("a02");
    // --fail-on-diff at run time or at merge time gates the moved completion alone.
    repo.remove("broken.txt");
    assert_eq!(assert_merge_equals_unsharded(&repo, &["--fail-on-diff"]), 3);
    run_shards(&repo, 4, &[]);
    merge(&repo, &all_shards(4), &[]).assert_code(0);
    merge(&repo, &all_shards(4), &["--fail-on-diff"]).assert_code(3);

    // Add cases to both suites and lock them: no existing case changes shard.
    alpha.extend(ids("a", 11..=30));
    repo.write("evals/alpha.jsonl", case_file(&alpha));
    repo.write("evals/beta.jsonl", case_file(&ids("b", 0..=12)));
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("more cases");
    assert_eq!(assert_merge_equals_unsharded(&repo, &[]), 0);
    let after = membership(&repo, 4);
    assert_eq!(after.len(), 9 + 20 + 13);
    for (case, shard) in &before {
        if case != "alpha/a04" {
            assert_eq!(after.get(case), Some(shard), "{case} kept its shard");
        }
    }
}

fn refused(run: &common::Run, file: &str, needle: &str) {
    run.assert_code(65)
        .assert_contains(file)
        .assert_contains(needle);
}

/// Rewrites a results file through serde_json.
fn edit(repo: &TestRepo, path: &str, change: impl FnOnce(&mut Value)) {
    let mut value = json(repo, path);
    change(&mut value);
    repo.write(path, serde_json::to_string_pretty(&value).expect("json"));
}

#[test]
fn merge_refuses_anything_but_one_complete_run() {
    let repo = project();
    run_shards(&repo, 4, &[]);
    let shards = all_shards(4);
    let merged_path = repo.join(".evalock/merged.json");

    // A shard missing, or given twice.
    refused(
        &merge(&repo, &shards[..3], &[]),
        &shards[0],
        "shard 4/4 is missing",
    );
    let twice = [shards.clone(), vec![shards[1].clone()]].concat();
    refused(&merge(&repo, &twice, &[]), &shards[1], "shard 2/4 again");

    // Shards of another N.
    repo.evalock(&["run", "--shard", "3/3", "--out", ".evalock/other-n.json"])
        .assert_code(0);
    let mixed = [shards[..3].to_vec(), vec![".evalock/other-n.json".into()]].concat();
    refused(
        &merge(&repo, &mixed, &[]),
        "other-n.json",
        "one of 3 shards",
    );

    // Not a shard's results at all, a truncated file, a file that is not there.
    repo.evalock(&["run", "--out", ".evalock/unsharded.json"])
        .assert_code(0);
    let plain = [shards[..3].to_vec(), vec![".evalock/unsharded.json".into()]].concat();
    refused(
        &merge(&repo, &plain, &[]),
        "unsharded.json:1",
        "not the results of a shard",
    );
    let text = repo.read(&shards[2]);
    repo.write(".evalock/truncated.json", &text[..text.len() / 2]);
    let truncated = [
        shards[..2].to_vec(),
        vec![".evalock/truncated.json".into(), shards[3].clone()],
    ]
    .concat();
    let run = merge(&repo, &truncated, &[]);
    refused(&run, ".evalock/truncated.json:", "EOF");
    merge(&repo, &[".evalock/none.json".to_string()], &[])
        .assert_code(64)
        .assert_contains(".evalock/none.json: no such file");

    // A case in two shards (counts kept consistent, so only the duplicate is wrong).
    let first = json(&repo, &shards[0]);
    let stolen = first["cases"][0].clone();
    repo.write(".evalock/dup.json", repo.read(&shards[1]));
    edit(&repo, ".evalock/dup.json", |results| {
        let status = stolen["status"].as_str().unwrap_or("PASS").to_owned();
        results["cases"]
            .as_array_mut()
            .expect("cases")
            .push(stolen.clone());
        let count = results["counts"][&status].as_u64().unwrap_or(0);
        results["counts"][&status] = (count + 1).into();
    });
    let dup = vec![
        shards[0].clone(),
        ".evalock/dup.json".into(),
        shards[2].clone(),
        shards[3].clone(),
    ];
    refused(&merge(&repo, &dup, &[]), ".evalock/dup.json", "is also in");

    // A case moved to a shard that does not own it (taken out of its own).
    repo.write(".evalock/moved-from.json", repo.read(&shards[0]));
    repo.write(".evalock/moved-to.json", repo.read(&shards[1]));
    edit(&repo, ".evalock/moved-from.json", |results| {
        results["cases"].as_array_mut().expect("cases").remove(0);
        let count = results["counts"]["PASS"].as_u64().unwrap_or(0);
        results["counts"]["PASS"] = (count - 1).into();
    });
    edit(&repo, ".evalock/moved-to.json", |results| {
        results["cases"]
            .as_array_mut()
            .expect("cases")
            .push(stolen.clone());
        let count = results["counts"]["PASS"].as_u64().unwrap_or(0);
        results["counts"]["PASS"] = (count + 1).into();
    });
    let moved = vec![
        ".evalock/moved-from.json".to_string(),
        ".evalock/moved-to.json".into(),
        shards[2].clone(),
        shards[3].clone(),
    ];
    refused(
        &merge(&repo, &moved, &[]),
        ".evalock/moved-to.json",
        "belongs to shard 1/4, not 2/4",
    );
    // Counts that do not match the cases: edited or truncated by hand.
    repo.write(".evalock/miscounted.json", repo.read(&shards[0]));
    edit(&repo, ".evalock/miscounted.json", |results| {
        results["counts"]["PASS"] = 99.into();
    });
    let miscounted = [
        vec![".evalock/miscounted.json".to_string()],
        shards[1..].to_vec(),
    ]
    .concat();
    refused(
        &merge(&repo, &miscounted, &[]),
        "miscounted.json:1",
        "`counts` does not match",
    );

    // A shard run at another commit, or with other evalock.toml / lock / content.
    repo.write("notes.txt", "unrelated\n");
    repo.commit_all("another commit");
    repo.evalock(&["run", "--shard", "4/4", "--out", ".evalock/later.json"])
        .assert_code(0);
    let later = [shards[..3].to_vec(), vec![".evalock/later.json".into()]].concat();
    refused(
        &merge(&repo, &later, &[]),
        ".evalock/later.json",
        "commit is",
    );
    repo.git(&["reset", "-q", "--hard", "HEAD~1"]);
    repo.replace("evalock.toml", "timeout_secs = 30", "timeout_secs = 31");
    repo.evalock(&["run", "--shard", "4/4", "--out", ".evalock/edited.json"])
        .assert_code(0);
    let edited = [shards[..3].to_vec(), vec![".evalock/edited.json".into()]].concat();
    refused(
        &merge(&repo, &edited, &[]),
        ".evalock/edited.json",
        "input identity",
    );
    repo.replace("evalock.toml", "timeout_secs = 31", "timeout_secs = 30");
    // The completer's script edited (not committed) between shards.
    repo.write("complete.sh", format!("{COMPLETER}# edited\n"));
    repo.evalock(&["run", "--shard", "4/4", "--out", ".evalock/rescripted.json"])
        .assert_code(0);
    let rescripted = [
        shards[..3].to_vec(),
        vec![".evalock/rescripted.json".into()],
    ]
    .concat();
    refused(
        &merge(&repo, &rescripted, &[]),
        ".evalock/rescripted.json",
        "what produced the completions (the `completer`, the script files its argv names, `model` and `samples`) is alpha=sha256:",
    );
    repo.write("complete.sh", COMPLETER);

    // Nothing was written by any refusal; the valid set still merges quietly.
    assert!(!merged_path.exists(), "a refused merge writes nothing");
    merge(&repo, &shards, &[])
        .assert_code(0)
        .assert_not_contains("EL")
        .assert_not_contains("error");
    assert!(merged_path.exists());
}

#[test]
fn merged_results_feed_report_and_github() {
    let repo = project();
    repo.write("broken.txt", "b02\n");
    run_shards(&repo, 4, &[]);
    merge(&repo, &all_shards(4), &[]).assert_code(1);
    repo.evalock(&[
        "report",
        "--from",
        ".evalock/merged.json",
        "--format",
        "github",
    ])
    .assert_code(0)
    .assert_contains("::error file=evals/beta.jsonl")
    .assert_contains("EL501");
    repo.evalock_with(
        &[
            "github",
            "--from",
            ".evalock/merged.json",
            "--mode",
            "annotations",
        ],
        &[("GITHUB_TOKEN", "")],
    )
    .assert_code(0)
    .assert_contains("::error file=evals/beta.jsonl");
    // review reads the merged file like a run's.
    repo.evalock(&["review", "--from", ".evalock/merged.json"])
        .assert_code(0)
        .assert_contains("b02");
}

#[test]
fn shard_usage_errors_exit_64() {
    let repo = project();
    for bad in ["0/4", "5/4", "1/0", "x", "1/", "2/4/8"] {
        repo.evalock(&["run", "--shard", bad])
            .assert_code(64)
            .assert_contains("K/N");
    }
    repo.evalock(&["merge", "--out", "x.json"]).assert_code(64);
    repo.evalock(&["merge", ".evalock/results.json"])
        .assert_code(64)
        .assert_contains("--out");
}

#[test]
fn shards_of_every_suite_and_of_each_suite_named_say_how_they_differ() {
    let repo = project();
    run_shards(&repo, 2, &[]);
    let named = [
        "run",
        "--suite",
        "alpha",
        "--suite",
        "beta",
        "--shard",
        "2/2",
        "--out",
        ".evalock/named.json",
    ];
    repo.evalock(&named).assert_code(0);

    // Naming every suite is not a full run (orphaned entries are not judged): refused,
    // and the message shows the two selections apart rather than one list twice.
    let mixed = vec![shard_path(1), ".evalock/named.json".into()];
    let run = merge(&repo, &mixed, &[]);
    refused(
        &run,
        ".evalock/named.json",
        "the suite selection is --suite `alpha`, `beta`",
    );
    run.assert_contains("every suite (`alpha`, `beta`, no --suite)");

    // The same selection in every shard merges quietly.
    let first_named = [
        "run",
        "--suite",
        "alpha",
        "--suite",
        "beta",
        "--shard",
        "1/2",
        "--out",
        ".evalock/named-1.json",
    ];
    repo.evalock(&first_named).assert_code(0);
    merge(
        &repo,
        &[".evalock/named-1.json".into(), ".evalock/named.json".into()],
        &[],
    )
    .assert_code(0)
    .assert_not_contains("error");
}
