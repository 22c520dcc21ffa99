//! `evalock changelog A..B` on the demo between two tagged releases: what each release
//! committed, per suite and stratum, as Markdown and JSON, and the release gate.

mod common;

use common::TestRepo;
use serde_json::Value;

/// `v1`: the demo as shipped, locked and accepted. `v2`: another model that lost a rule,
/// one case added, one retired, one bumped, the escalation grader at version 2 with an
/// edited source, everything re-accepted with a reason (the two failures as known ones).
fn two_releases() -> TestRepo {
    let repo = TestRepo::with_fixture("demo");
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["run"]).assert_code(0);
    repo.evalock(&["accept", "--reason", "first baselines"])
        .assert_code(0);
    repo.commit_all("v1");
    repo.git(&["tag", "v1"]);

    repo.swap_demo_model();
    repo.replace(
        "evalock.toml",
        "[grader.escalation]\nversion = 1",
        "[grader.escalation]\nversion = 2",
    );
    let grader = repo.read("graders/escalation.py");
    repo.write(
        "graders/escalation.py",
        format!("{grader}\n# v2: same verdicts\n"),
    );
    let cases = repo.read("evals/support.jsonl");
    let mut lines: Vec<String> = cases.lines().map(str::to_owned).collect();
    let first = lines[0].clone();
    lines[0] = first.replacen(
        "{\"id\": \"order-status-known-id\", ",
        "{\"id\": \"order-status-known-id\", \"retired\": true, ",
        1,
    );
    let bumped = lines
        .iter_mut()
        .find(|line| line.contains("\"id\": \"refund-with-order-id\""))
        .unwrap();
    *bumped = bumped
        .replace("\"version\": 1,", "\"version\": 2,")
        .replace("it arrived broken.", "it arrived broken, thanks.");
    lines.push(first.replace("order-status-known-id", "order-status-new"));
    repo.write("evals/support.jsonl", lines.join("\n") + "\n");
    repo.evalock(&["lock"]);
    repo.evalock(&["run"]);
    repo.evalock(&[
        "accept",
        "--include-failing",
        "--reason",
        "swap to acme-support-next",
    ])
    .assert_code(0);
    repo.commit_all("v2");
    repo.git(&["tag", "v2"]);
    repo
}

#[test]
fn a_release_lists_what_changed_in_behaviour_per_suite_and_stratum() {
    let repo = two_releases();
    let notes = repo.evalock(&["changelog", "v1..v2"]);
    notes
        .assert_code(0)
        .assert_contains("# Behaviour changelog: v1 (")
        .assert_contains("| `support` | 1 | 1 | 1 | 11 | +2 / −0 | 2 | 0 | 100.0 % → 81.8 % |")
        .assert_contains("- model: `acme-support-stub` → `acme-support-next`")
        .assert_contains("- grader: `escalation@1` → `escalation@2`")
        .assert_contains("- `lookup`: `order-status-new`")
        .assert_contains("- `refund`: `refund-with-order-id` (1 → 2)")
        .assert_contains("- `tone`: `no-ai-disclaimer` (forbidden:as an AI)")
        .assert_contains("“swap to acme-support-next” (10 re-accepted, 1 first accepted)")
        .assert_contains("- `escalation`: version `1` → `2`; sources changed");
    let retired = notes.stdout.split("**Retired**").nth(1).unwrap();
    assert!(
        retired
            .trim_start()
            .starts_with("- `lookup`: `order-status-known-id`"),
        "{retired}"
    );
    let regressed = notes.stdout.split("**Regressed").nth(1).unwrap();
    let regressed = regressed
        .split("**Gained")
        .next()
        .unwrap()
        .split("**Added")
        .next()
        .unwrap();
    assert!(
        regressed.contains("- `refund`: `refund-no-order-id`"),
        "{regressed}"
    );
    assert!(
        regressed.contains("- `tone`: `no-ai-disclaimer`"),
        "{regressed}"
    );
    // The order matters: read backwards, the same releases gain what v2 lost.
    repo.evalock(&["changelog", "v2..v1"])
        .assert_code(0)
        .assert_contains("**Gained**")
        .assert_contains("**Known failures cleared**")
        .assert_not_contains("**Regressed");
}

#[test]
fn the_changelog_reads_as_json() {
    let repo = two_releases();
    let run = repo.evalock(&["changelog", "v1..v2", "--format", "json"]);
    run.assert_code(0);
    let document: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(document["schema"], "evalock.changelog/v1");
    let support = document["suites"]
        .as_array()
        .unwrap()
        .iter()
        .find(|suite| suite["suite"] == "support")
        .unwrap();
    assert_eq!(support["presence"], "kept");
    assert_eq!(support["model"]["to"], "acme-support-next");
    let refund = support["strata"]
        .as_array()
        .unwrap()
        .iter()
        .find(|stratum| stratum["stratum"] == "refund")
        .unwrap();
    assert_eq!(
        refund["regressed"],
        serde_json::json!(["refund-no-order-id"])
    );
    assert_eq!(refund["bumped"][0]["case_id"], "refund-with-order-id");
    assert_eq!(refund["bumped"][0]["from"], 1);
    assert_eq!(refund["bumped"][0]["to"], 2);
    assert_eq!(refund["verdicts"]["REGRESS"], 1);
    let accepted = refund["accepted"].as_array().unwrap();
    assert!(accepted
        .iter()
        .all(|entry| entry["reason"] == "swap to acme-support-next" && entry["first"] == false));
    let grader = &document["graders"][0];
    assert_eq!(grader["grader"], "escalation");
    assert_eq!(grader["version"]["from"], "1");
    assert_eq!(grader["sources_changed"], true);
}

#[test]
fn fail_on_gates_a_release_and_stays_quiet_when_nothing_it_names_changed() {
    let repo = two_releases();
    for gate in [
        "regress",
        "known-failure",
        "retired",
        "bumped",
        "reaccepted",
        "context",
    ] {
        repo.evalock(&["changelog", "v1..v2", "--fail-on", gate])
            .assert_code(1)
            .assert_contains(&format!("release gate: {gate} (--fail-on)"));
    }
    // Read backwards nothing regresses and no failure is accepted.
    repo.evalock(&["changelog", "v2..v1", "--fail-on", "regress,known-failure"])
        .assert_code(0);
    // A release that changed nothing.
    repo.git(&["tag", "v2.0.1"]);
    repo.evalock(&[
        "changelog",
        "v2..v2.0.1",
        "--fail-on",
        "regress,known-failure,retired,bumped,reaccepted,context",
    ])
    .assert_code(0)
    .assert_contains("No suite, case, baseline or grader changed.");
    repo.evalock(&["changelog", "v1..v2", "--fail-on", "sometimes"])
        .assert_code(64)
        .assert_contains("--fail-on `sometimes` is not one of: regress, known-failure");
}

#[test]
fn a_range_that_cannot_be_read_is_a_usage_error() {
    let repo = two_releases();
    repo.evalock(&["changelog", "v1...v2"])
        .assert_code(64)
        .assert_contains("symmetric difference");
    repo.evalock(&["changelog", "..v2"])
        .assert_code(64)
        .assert_contains("names no earlier revision");
    repo.evalock(&["changelog", "v0..v2"])
        .assert_code(64)
        .assert_contains("cannot resolve revision `v0`");
    // `A` alone runs to HEAD.
    repo.evalock(&["changelog", "v1"])
        .assert_code(0)
        .assert_contains(" → HEAD (");
}

#[test]
fn a_release_from_before_evalock_was_adopted_adds_every_suite() {
    let repo = TestRepo::new();
    repo.write("README.md", "before evalock\n");
    repo.commit_all("before");
    repo.git(&["tag", "v0"]);
    common::copy_tree(&common::fixture("demo"), repo.path());
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["run"]).assert_code(0);
    repo.evalock(&["accept", "--reason", "first baselines"])
        .assert_code(0);
    repo.commit_all("adopt evalock");
    repo.evalock(&["changelog", "v0..HEAD"])
        .assert_code(0)
        .assert_contains("| `support` (new) | 11 | 1 | 0 | 11 |")
        .assert_not_contains("- model:")
        .assert_contains("“first baselines” (11 first accepted)");
}

/// A grader whose pinned calibration moves between two releases: people's labels were
/// added to, and `evalock lock` measured the grader against them again.
#[test]
fn a_grader_s_calibration_that_moved_is_in_the_changelog_and_its_gate() {
    let repo = TestRepo::new();
    repo.write(
        "evalock.toml",
        "version = 1\n\n[grader.judge]\nversion = 1\nlabels = \"labels.jsonl\"\n\n[[suite]]\nname = \"support\"\ncases = [\"evals/support.jsonl\"]\ngrader = \"judge\"\n",
    );
    repo.write(
        "evals/support.jsonl",
        "{\"id\": \"warranty\", \"input\": \"How long is the warranty?\", \"expect\": {\"must_include\": [\"2 years\"]}}\n",
    );
    let label = |completion: &str, verdict: &str, times: usize| {
        format!("{{\"case_id\": \"warranty\", \"completion\": \"{completion}\", \"verdict\": \"{verdict}\"}}\n").repeat(times)
    };
    let labels = |wrong_passed: usize, wrong_failed: usize| {
        label("The kettle has a 2 years warranty.", "pass", 12)
            + &label(
                "2 years, if you pay for the extended plan.",
                "fail",
                wrong_passed,
            )
            + &label("I am not sure.", "fail", wrong_failed)
    };
    repo.write("labels.jsonl", labels(1, 11));
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("r1");
    repo.git(&["tag", "r1"]);
    repo.write("labels.jsonl", labels(3, 11));
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("r2");
    repo.git(&["tag", "r2"]);
    repo.evalock(&["changelog", "r1..r2", "--fail-on", "context"])
        .assert_code(1)
        .assert_contains("- `judge`: calibration 24 labels, 95.8 % agreement at version `1` → 26 labels, 88.5 % agreement at version `1`")
        .assert_contains("release gate: context (--fail-on)");
    let json = repo.evalock(&["changelog", "r1..r2", "--format", "json"]);
    let document: Value = serde_json::from_str(&json.stdout).unwrap();
    let grader = &document["graders"][0];
    assert_eq!(grader["calibration"]["from"]["labels"], 24);
    assert_eq!(grader["calibration"]["to"]["labels"], 26);
    assert_eq!(grader["sources_changed"], false);
    assert!(grader.get("version").is_none(), "{grader}");
}
