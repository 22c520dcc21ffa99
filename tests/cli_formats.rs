//! End to end: `evalock check --format sarif|junit|markdown|github` on a real git
//! repository with a case edited in place, the same on a clean one, and `evalock report`
//! re-rendering (and merging) saved JSON reports.

mod common;
mod external_tools;

use common::{Run, TestRepo};

const EDITED_LINE: &str = "evals/support.jsonl:2";

/// The demo project on `main`, and a branch `pr` that edits case `refund-no-order-id`
/// (line 2) in place without bumping its version.
fn repo_with_edited_case() -> TestRepo {
    let repo = TestRepo::with_fixture("demo");
    repo.git(&["checkout", "-q", "-b", "pr"]);
    repo.replace(
        "evals/support.jsonl",
        "I want my money back.",
        "I want my money back, now.",
    );
    repo.commit_all("edit a shipped case in place");
    repo
}

fn check(repo: &TestRepo, format: &str) -> Run {
    repo.evalock(&["check", "--base", "main", "--format", format])
}

#[test]
fn github_format_annotates_the_edited_line() {
    let repo = repo_with_edited_case();
    let run = check(&repo, "github");
    run.assert_code(2);
    assert!(
        run.stdout.contains("::error file=evals/support.jsonl,line=2,title=EL102 case-edited-in-place::case `refund-no-order-id`"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.lines().all(|line| line.starts_with("::")),
        "only workflow commands:\n{}",
        run.stdout
    );
}

#[test]
fn markdown_format_is_a_job_summary_with_the_verdict_and_the_line() {
    let repo = repo_with_edited_case();
    let run = check(&repo, "markdown");
    run.assert_code(2);
    run.assert_contains("## ❌ evalock check: BLOCK")
        .assert_contains("**exit code:** 2")
        .assert_contains("| ⛔ refuse | 2 |")
        .assert_contains("#### `support`: 1 of 12 with findings")
        .assert_contains(&format!(
            "- ⛔ **EL102 case-edited-in-place** `{EDITED_LINE}`"
        ));
}

/// Two cases deleted since the lock have findings, but they are not among the cases
/// judged: the suite's share counts the judged cases only and names the others apart.
#[test]
fn markdown_counts_deleted_cases_apart_from_the_judged_ones() {
    let repo = TestRepo::with_fixture("demo");
    let kept: String = repo
        .read("evals/support.jsonl")
        .lines()
        .filter(|line| !line.contains("address-change") && !line.contains("cancel-subscription"))
        .map(|line| format!("{line}\n"))
        .collect();
    repo.write("evals/support.jsonl", kept);
    let run = repo.evalock(&["check", "--format", "markdown"]);
    run.assert_code(2)
        .assert_contains("#### `support`: 0 of 10 with findings, plus 2 subjects not judged\n")
        .assert_contains("| `address-change` | ⛔ refuse | EL101 case-unlocked |")
        .assert_not_contains("2 of 10");
}

#[test]
fn sarif_format_is_valid_and_points_at_the_edited_line() {
    let repo = repo_with_edited_case();
    let run = check(&repo, "sarif");
    run.assert_code(2);
    let log: serde_json::Value = serde_json::from_str(&run.stdout).expect("SARIF is JSON");
    let results = log["runs"][0]["results"].as_array().expect("results");
    let edited = results
        .iter()
        .find(|result| result["ruleId"] == "EL102")
        .expect("an EL102 result");
    let location = &edited["locations"][0]["physicalLocation"];
    assert_eq!(location["artifactLocation"]["uri"], "evals/support.jsonl");
    assert_eq!(location["region"]["startLine"], 2);
    external_tools::assert_valid_sarif(run.stdout.as_bytes());
}

#[test]
fn junit_format_lists_every_case_and_fails_the_edited_one() {
    let repo = repo_with_edited_case();
    let run = repo.evalock(&[
        "check",
        "--base",
        "main",
        "--format",
        "junit",
        "--output",
        "junit.xml",
    ]);
    run.assert_code(2);
    assert!(run.stdout.is_empty(), "--output writes the file only");
    let parsed = external_tools::parse_xml(&repo.join("junit.xml"));
    assert!(
        parsed.status.success(),
        "{}",
        String::from_utf8_lossy(&parsed.stderr)
    );
    let structure = String::from_utf8_lossy(&parsed.stdout);
    assert!(
        structure.starts_with(
            "testsuites errors='0' failures='1' name='evalock check: BLOCK' skipped='0' tests='15'"
        ),
        "{structure}"
    );
    assert!(
        structure.contains("testcase classname='evalock.support' file='evals/support.jsonl' line='2' name='refund-no-order-id'\nfailure "),
        "{structure}"
    );
    assert_eq!(structure.matches("type='EL102'").count(), 1, "{structure}");
}

#[test]
fn a_clean_project_stays_quiet_in_every_format() {
    let repo = TestRepo::with_fixture("demo");
    check(&repo, "github").assert_code(0);
    assert!(check(&repo, "github").stdout.is_empty());
    check(&repo, "markdown")
        .assert_code(0)
        .assert_contains("## ✅ evalock check: PASS")
        .assert_not_contains("### Findings");
    let sarif: serde_json::Value =
        serde_json::from_str(&check(&repo, "sarif").stdout).expect("json");
    assert_eq!(
        sarif["runs"][0]["results"].as_array().map(Vec::len),
        Some(0)
    );
    check(&repo, "junit")
        .assert_code(0)
        .assert_contains("failures=\"0\" errors=\"0\" skipped=\"0\">")
        .assert_not_contains("<failure");
}

#[test]
fn report_re_renders_a_saved_json_report_exactly() {
    let repo = repo_with_edited_case();
    repo.evalock(&[
        "check",
        "--base",
        "main",
        "--format",
        "json",
        "--output",
        "findings.json",
    ])
    .assert_code(2);
    for format in ["human", "json", "sarif", "junit", "markdown", "github"] {
        let direct = check(&repo, format);
        let rendered = repo.evalock(&["report", "--from", "findings.json", "--format", format]);
        rendered.assert_code(0);
        assert_eq!(rendered.stdout, direct.stdout, "format {format}");
    }
}

#[test]
fn report_merges_several_files_and_prefixes_paths() {
    let repo = repo_with_edited_case();
    repo.evalock(&[
        "check",
        "--base",
        "main",
        "--format",
        "json",
        "--output",
        "with-base.json",
    ])
    .assert_code(2);
    repo.evalock(&["check", "--format", "json", "--output", "without-base.json"])
        .assert_code(2);
    let merged = repo.evalock(&[
        "report",
        "--from",
        "with-base.json",
        "--from",
        "without-base.json",
        "--format",
        "json",
    ]);
    merged.assert_code(0);
    let report: serde_json::Value = serde_json::from_str(&merged.stdout).expect("json");
    let rules: Vec<_> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|finding| finding["rule"].clone())
        .collect();
    assert_eq!(
        rules,
        ["EL101", "EL102"],
        "the EL101 both runs found is reported once"
    );
    assert_eq!(report["exit_code"], 2);
    let prefixed = repo.evalock(&[
        "report",
        "--from",
        "with-base.json",
        "--format",
        "github",
        "--path-prefix",
        "evals-project/",
    ]);
    prefixed
        .assert_code(0)
        .assert_contains("::error file=evals-project/evals/support.jsonl,line=2,");
}

/// GitHub reads annotation and SARIF paths from the repository root: `check` prefixes
/// them with the project's folder itself. JSON stays project-relative, as `report
/// --path-prefix` (which the action runs) expects it.
#[test]
fn check_of_a_project_in_a_subfolder_gives_github_and_sarif_paths_from_the_repository_root() {
    let repo = repo_with_edited_case();
    std::fs::create_dir(repo.join("eval suite")).expect("subfolder");
    repo.git(&[
        "mv",
        "evalock.toml",
        "evalock.lock",
        "evals",
        "prompts",
        "eval suite/",
    ]);
    repo.commit_all("move the project");
    let check = |format: &str| {
        repo.evalock(&[
            "-C",
            "eval suite",
            "check",
            "--base",
            "main",
            "--format",
            format,
        ])
    };
    check("github")
        .assert_code(2)
        .assert_contains("::error file=eval suite/evals/support.jsonl,line=2,");
    let sarif: serde_json::Value =
        serde_json::from_str(&check("sarif").stdout).expect("sarif is JSON");
    let uris: Vec<&str> = sarif["runs"][0]["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter_map(|result| {
            result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].as_str()
        })
        .collect();
    assert!(!uris.is_empty(), "{sarif}");
    assert!(
        uris.contains(&"eval%20suite/evals/support.jsonl"),
        "{uris:?}"
    );
    assert!(
        uris.iter().all(|uri| uri.starts_with("eval%20suite/")),
        "{uris:?}"
    );
    let json: serde_json::Value = serde_json::from_str(&check("json").stdout).expect("json");
    let paths: Vec<&str> = json["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter_map(|finding| finding["location"]["path"].as_str())
        .collect();
    assert!(paths.contains(&"evals/support.jsonl"), "{paths:?}");
    assert!(
        !paths.iter().any(|path| path.starts_with("eval suite")),
        "{paths:?}"
    );
    assert!(json.get("path_prefix").is_none(), "{json}");
}

#[test]
fn report_explains_files_it_cannot_read() {
    let repo = TestRepo::with_fixture("demo");
    repo.evalock(&["report", "--from", "missing.json"])
        .assert_code(64)
        .assert_contains("missing.json: no such file; write one with `evalock check --format json --output missing.json`");
    repo.write(
        "broken.json",
        "{\n  \"schema\": \"evalock.findings/v1\",\n  \"findings\": [\n",
    );
    repo.evalock(&["report", "--from", "broken.json"])
        .assert_code(65)
        .assert_contains("broken.json:4:");
    repo.write("other.json", "{\"schema\": \"someone.else/v2\"}");
    repo.evalock(&["report", "--from", "other.json", "--format", "sarif"])
        .assert_code(65)
        .assert_contains(
            "other.json: schema `someone.else/v2`: `evalock report` reads evalock.findings/v1",
        );
    repo.evalock(&["report", "--format", "sarif"])
        .assert_code(64)
        .assert_contains("--from");
    repo.evalock(&["check", "--format", "pdf"]).assert_code(64);
}

#[test]
fn lock_check_speaks_every_format_too() {
    let repo = TestRepo::with_fixture("demo");
    repo.replace(
        "evals/support.jsonl",
        "I want my money back.",
        "I want my money back, now.",
    );
    let run = repo.evalock(&["lock", "--check", "--format", "github"]);
    run.assert_code(2)
        .assert_contains("::error file=evals/support.jsonl,line=2,title=EL101 case-unlocked::");
    repo.evalock(&["lock", "--check", "--format", "junit"])
        .assert_code(2)
        .assert_contains("<failure type=\"EL101\"");
}
