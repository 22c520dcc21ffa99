//! Pass rates per stratum and the ceiling detector (the seeds' "A Perfect Pass Rate Is a
//! Blind Harness"): a thin stratum cannot be green, stretch cases that all pass are too
//! easy, an easy case that fails is an error, and strata by topic are only counted.

mod common;

use common::TestRepo;

/// A banded suite answered by a completer that always says "hello world".
fn banded(cases: &[(&str, &str, &str)]) -> TestRepo {
    let repo = TestRepo::new();
    repo.write(
        "tools/answer.sh",
        "#!/bin/sh\ncat > /dev/null\necho 'hello world'\n",
    );
    let lines: String = cases
        .iter()
        .map(|(id, stratum, word)| {
            format!("{{\"id\": \"{id}\", \"stratum\": \"{stratum}\", \"input\": \"say it\", \"expect\": {{\"must_include\": [\"{word}\"]}}}}\n")
        })
        .collect();
    repo.write("evals/bands.jsonl", lines);
    repo.write(
        "evalock.toml",
        "version = 1\n\n[[suite]]\nname = \"bands\"\ncases = [\"evals/bands.jsonl\"]\ncompleter = [\"sh\", \"tools/answer.sh\"]\n",
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo
}

#[test]
fn stretch_cases_that_all_pass_are_too_easy() {
    let repo = banded(&[
        ("e1", "easy", "hello"),
        ("e2", "easy", "world"),
        ("m1", "medium", "hello"),
        ("m2", "medium", "nope"),
        ("s1", "stretch", "hello"),
        ("s2", "stretch", "world"),
    ]);
    let run = repo.evalock(&["run"]);
    run.assert_contains("EL508 stretch-too-easy (warn)")
        .assert_contains("stretch_too_easy: 2/2 stretch cases pass")
        .assert_contains("strata (passing/judged): easy 2/2, medium 1/2, stretch 2/2");
    let results: serde_json::Value =
        serde_json::from_str(&repo.read(".evalock/results.json")).unwrap();
    assert_eq!(results["strata"]["medium"]["fail"], 1);
    assert_eq!(results["strata"]["medium"]["rate"], 0.5);
    assert!(
        !run.stdout.contains("EL507") && !run.stdout.contains("EL509"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_thin_stratum_cannot_be_green_and_a_failing_easy_case_is_an_error() {
    let repo = banded(&[
        ("e1", "easy", "hello"),
        ("e2", "easy", "absent"),
        ("s1", "stretch", "absent"),
    ]);
    repo.evalock(&["run"])
        .assert_code(1)
        .assert_contains(
            "EL507 stratum-too-small (warn): suite `bands`: stratum `stretch` holds 1 case",
        )
        .assert_contains("EL509 easy-failed (error): suite `bands`: 1 of 2 easy cases fail")
        .assert_not_contains("EL508");
}

#[test]
fn strata_by_topic_are_counted_not_judged() {
    let repo = banded(&[("r1", "refund", "hello"), ("t1", "tone", "world")]);
    let run = repo.evalock(&["run"]);
    run.assert_code(0)
        .assert_contains("strata (passing/judged): refund 1/1, tone 1/1")
        .assert_not_contains("EL507")
        .assert_not_contains("EL508");
}

/// The job summary and the reports re-rendered from a run show the rates per stratum;
/// a run without strata shows no table.
#[test]
fn markdown_reports_carry_the_rates_per_stratum() {
    let repo = banded(&[
        ("e1", "easy", "hello"),
        ("e2", "easy", "world"),
        ("s1", "stretch", "nope"),
        ("s2", "stretch", "absent"),
    ]);
    let run = repo.evalock(&["run", "--format", "markdown"]);
    run.assert_contains("| stratum | cases | pass | fail | rate |")
        .assert_contains("| easy | 2 | 2 | 0 | 100 % |")
        .assert_contains("| stretch | 2 | 0 | 2 | 0 % |");
    repo.evalock(&[
        "report",
        "--from",
        ".evalock/results.json",
        "--format",
        "markdown",
    ])
    .assert_contains("| easy | 2 | 2 | 0 | 100 % |");
    repo.evalock(&[
        "report",
        "--from",
        ".evalock/results.json",
        "--format",
        "json",
    ])
    .assert_contains("\"strata\"");
    let flat = TestRepo::new();
    flat.write(
        "tools/answer.sh",
        "#!/bin/sh\ncat > /dev/null\necho 'hello world'\n",
    );
    flat.write(
        "evals/a.jsonl",
        "{\"id\": \"a\", \"input\": \"x\", \"expect\": {\"must_include\": [\"hello\"]}}\n",
    );
    flat.write(
        "evalock.toml",
        "version = 1\n\n[[suite]]\nname = \"a\"\ncases = [\"evals/a.jsonl\"]\ncompleter = [\"sh\", \"tools/answer.sh\"]\n",
    );
    flat.evalock(&["lock"]).assert_code(0);
    flat.evalock(&["run", "--format", "markdown"])
        .assert_not_contains("| stratum |");
}

/// The seed's `--self-check` with its `--stretch-high 0.50`: half the stretch cases pass,
/// which the default watermark (0.80) lets through and 0.50 calls `stretch_too_easy`.
/// Raising the watermark against the base is a loosening.
#[test]
fn the_stretch_watermark_is_a_policy_and_raising_it_is_a_loosening() {
    let repo = banded(&[
        ("e1", "easy", "hello"),
        ("e2", "easy", "world"),
        ("m1", "medium", "hello"),
        ("m2", "medium", "world"),
        ("s1", "stretch", "hello"),
        ("s2", "stretch", "absent"),
    ]);
    // s2 fails (EL502: not accepted as a known failure), and the stretch band is quiet.
    repo.evalock(&["run"]).assert_not_contains("EL508");
    let config = repo.read("evalock.toml");
    repo.write(
        "evalock.toml",
        config.replacen(
            "version = 1\n",
            "version = 1\n\n[policy]\nstretch_high = 0.5\n",
            1,
        ),
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["run"])
        .assert_contains("EL508 stretch-too-easy (warn): suite `bands`: stretch_too_easy: 1/2 stretch cases pass (50 %, at least 50 % means they no longer stretch)");
    repo.commit_all("a watermark of 0.5");
    repo.git(&["switch", "-q", "-c", "blessed"]);
    repo.replace("evalock.toml", "stretch_high = 0.5", "stretch_high = 0.9");
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("bless a saturated set");
    repo.evalock(&["check", "--base", "main"])
        .assert_code(2)
        .assert_contains("EL110 policy-loosened (refuse): evalock.toml loosens `[policy] stretch_high` from 0.5 to 0.9");
    repo.replace("evalock.toml", "stretch_high = 0.9", "stretch_high = 1.5");
    repo.evalock(&["check"])
        .assert_code(65)
        .assert_contains("policy.stretch_high must be between 0.0 and 1.0");
}
