//! A promptfoo configuration locked as it is (`fixtures/promptfoo`): `init` makes it a
//! suite, its inline tests and the CSV its `tests:` names are cases at their lines, and
//! edits are judged as for native cases: in place (the assertions, `defaultTest`),
//! removed (the vars that identify a test), reordered (nothing), through the hook too.

mod common;
mod skills_common;

use common::TestRepo;

/// The fixture after `init` and `lock`, committed on main.
fn adopted() -> TestRepo {
    let repo = TestRepo::with_fixture("promptfoo");
    repo.evalock(&["init"]).assert_code(0);
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("adopt evalock");
    repo
}

fn found(repo: &TestRepo, extra: &[&str]) -> Vec<(String, String, String)> {
    skills_common::check(repo, extra)
        .into_iter()
        .map(|(rule, _, place, message)| (rule, place, message))
        .collect()
}

#[test]
fn init_makes_the_configuration_a_suite_of_its_inline_and_named_tests() {
    let repo = adopted();
    let config = repo.read("evalock.toml");
    assert!(
        config.contains("cases = [\"promptfooconfig.yaml\"]"),
        "{config}"
    );
    assert!(config.contains("id = { content = [\"vars\"] }"), "{config}");
    assert!(config.contains("grader = \"promptfoo\""), "{config}");
    assert!(
        !config.contains("tests/cases.csv"),
        "the named CSV made a suite of its own:\n{config}"
    );
    let lock = repo.read("evalock.lock");
    assert_eq!(
        lock.matches("file = \"promptfooconfig.yaml\"").count(),
        2,
        "{lock}"
    );
    assert_eq!(
        lock.matches("file = \"tests/cases.csv\"").count(),
        2,
        "{lock}"
    );
    repo.evalock(&["check"]).assert_code(0);
}

#[test]
fn an_inline_assertion_edited_is_refused_on_the_test_lines_and_in_place_against_the_base() {
    let repo = adopted();
    repo.git(&["switch", "-q", "-c", "edit"]);
    repo.replace(
        "promptfooconfig.yaml",
        "value: order\n",
        "value: shipment\n",
    );
    let refused = found(&repo, &[]);
    assert!(
        refused
            .iter()
            .any(|(rule, place, _)| rule == "EL101" && place == "promptfooconfig.yaml:15"),
        "{refused:?}"
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("loosen the order test");
    let against_base = found(&repo, &["--base", "main"]);
    assert!(
        against_base
            .iter()
            .any(|(rule, place, message)| rule == "EL102"
                && place == "promptfooconfig.yaml:15"
                && message.contains("identifies cases by the content of `vars`")),
        "{against_base:?}"
    );
}

#[test]
fn the_default_test_is_part_of_every_test_inline_and_in_named_files() {
    let repo = adopted();
    repo.replace(
        "promptfooconfig.yaml",
        "value: as an AI\n",
        "value: as a language model\n",
    );
    let refused = found(&repo, &[]);
    let edited: Vec<&str> = refused
        .iter()
        .filter(|(rule, _, _)| rule == "EL101")
        .map(|(_, place, _)| place.as_str())
        .collect();
    assert_eq!(
        edited,
        [
            "promptfooconfig.yaml:15",
            "promptfooconfig.yaml:21",
            "tests/cases.csv:2",
            "tests/cases.csv:3"
        ],
        "{refused:?}"
    );
}

#[test]
fn a_test_whose_vars_change_is_removed_and_reordering_changes_nothing() {
    let repo = adopted();
    repo.git(&["switch", "-q", "-c", "reorder"]);
    let text = repo.read("promptfooconfig.yaml");
    let (head, tests) = text.split_at(
        text.find("  - description: order status")
            .expect("first test"),
    );
    let (first, second) = tests.split_at(
        tests
            .find("  - description: refund window")
            .expect("second test"),
    );
    repo.write("promptfooconfig.yaml", format!("{head}{second}{first}"));
    repo.write(
        "tests/cases.csv",
        "question,context,__expected,__description\nHow do I reset my password?,,contains: password,account\nDo you ship to Canada?,file://docs/shipping.md,icontains: canada,shipping\n",
    );
    repo.evalock(&["check"]).assert_code(0);
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("reorder");
    repo.evalock(&["check", "--base", "main"]).assert_code(0);
    repo.replace(
        "promptfooconfig.yaml",
        "Where is my order 1234?",
        "Where is my parcel 1234?",
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("reword a question");
    let removed = found(&repo, &["--base", "main"]);
    assert!(
        removed.iter().any(|(rule, _, _)| rule == "EL103"),
        "{removed:?}"
    );
}

#[test]
fn a_named_test_file_is_judged_row_by_row_and_a_missing_one_is_refused_where_it_is_named() {
    let repo = adopted();
    repo.replace("tests/cases.csv", "contains: password", "contains: reset");
    let refused = found(&repo, &[]);
    assert!(
        refused
            .iter()
            .any(|(rule, place, _)| rule == "EL101" && place == "tests/cases.csv:3"),
        "{refused:?}"
    );
    repo.git(&["checkout", "--", "tests/cases.csv"]);
    repo.replace(
        "promptfooconfig.yaml",
        "file://tests/cases.csv",
        "file://tests/missing.csv",
    );
    let missing = found(&repo, &[]);
    assert!(
        missing.iter().any(|(rule, place, message)| rule == "EL105"
            && place == "promptfooconfig.yaml:14"
            && message.contains("no case file matches `tests/missing.csv`")),
        "{missing:?}"
    );
}

/// Through the installed hook: a commit of `path` edited (`from` -> `to`) alone is refused
/// with `expected`, and passes once relocked.
fn hook_refuses_until_relocked(path: &str, from: &str, to: &str, expected: &str) {
    let repo = adopted();
    repo.evalock(&["hook", "install"]).assert_code(0);
    repo.replace(path, from, to);
    repo.git(&["add", "-A"]);
    let refused = repo.git_run(&["commit", "-q", "-m", "edit"]);
    assert_ne!(refused.code, 0, "{}", refused.all());
    refused.assert_contains(expected);
    repo.evalock(&["lock"]).assert_code(0);
    repo.git(&["add", "-A"]);
    let passed = repo.git_run(&["commit", "-q", "-m", "edit, relocked"]);
    assert_eq!(passed.code, 0, "{}", passed.all());
}

#[test]
fn the_hook_judges_a_commit_that_touches_only_a_named_test_file() {
    hook_refuses_until_relocked(
        "tests/cases.csv",
        "icontains: canada",
        "icontains: usa",
        "tests/cases.csv:2: EL101 case-unlocked (refuse)",
    );
}

#[test]
fn a_file_a_tests_vars_name_is_pinned_with_the_test_inline_and_in_a_named_file() {
    let repo = adopted();
    repo.git(&["switch", "-q", "-c", "policy"]);
    repo.replace("docs/returns.md", "30 days", "90 days");
    repo.replace("docs/shipping.md", "and Canada", "only");
    let refused = found(&repo, &[]);
    let edited: Vec<&str> = refused
        .iter()
        .filter(|(rule, _, _)| rule == "EL101")
        .map(|(_, place, _)| place.as_str())
        .collect();
    assert_eq!(
        edited,
        ["promptfooconfig.yaml:21", "tests/cases.csv:2"],
        "{refused:?}"
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("longer return window");
    let against_base = found(&repo, &["--base", "main"]);
    let in_place: Vec<&(String, String, String)> = against_base
        .iter()
        .filter(|(rule, _, _)| rule == "EL102")
        .collect();
    assert_eq!(in_place.len(), 2, "{against_base:?}");
    assert!(
        in_place
            .iter()
            .any(|(_, place, message)| place == "promptfooconfig.yaml:21"
                && message.contains("file://docs/returns.md")),
        "{against_base:?}"
    );
    // A document no test names is not the suite's.
    repo.git(&["switch", "-q", "main"]);
    repo.write("docs/unrelated.md", "not read by any test\n");
    repo.evalock(&["check"]).assert_code(0);
}

#[test]
fn a_vars_file_that_is_missing_or_outside_the_project_is_refused_at_its_test() {
    let repo = adopted();
    repo.remove("docs/returns.md");
    let missing = found(&repo, &[]);
    assert!(
        missing.iter().any(|(rule, place, message)| rule == "EL105"
            && place == "promptfooconfig.yaml:21"
            && message.contains("there is no file `docs/returns.md`")),
        "{missing:?}"
    );
    repo.write("docs/returns.md", "# Returns\n");
    repo.replace(
        "promptfooconfig.yaml",
        "file://docs/returns.md",
        "file://../../etc/passwd",
    );
    let outside = found(&repo, &[]);
    assert!(
        outside.iter().any(|(rule, place, message)| rule == "EL105"
            && place == "promptfooconfig.yaml:21"
            && message.contains("outside the project")),
        "{outside:?}"
    );
}

#[test]
fn the_hook_refuses_a_commit_that_edits_only_a_vars_file() {
    hook_refuses_until_relocked(
        "docs/shipping.md",
        "two days",
        "a week",
        "tests/cases.csv:2: EL101 case-unlocked (refuse)",
    );
}

/// `promptfoo eval -c support-eval.yaml`: a configuration is known by what it holds, not
/// only by promptfoo's default name; a test file named by an absolute path is refused as
/// one machine's.
#[test]
fn a_configuration_under_another_name_is_read_as_one() {
    let repo = common::TestRepo::new();
    repo.write(
        "evals/support-eval.yaml",
        "prompts:\n  - 'Answer: {{question}}'\nproviders:\n  - openai:gpt-4o-mini\ntests:\n  - vars:\n      question: Where is my order?\n    assert:\n      - type: icontains\n        value: order\n",
    );
    repo.write(
        "evals/cases.yaml",
        "- id: plain\n  input: a native case beside it\n  expect:\n    must_include: [x]\n",
    );
    repo.evalock(&["init"]).assert_code(0);
    let config = repo.read("evalock.toml");
    assert!(
        config.contains("cases = [\"evals/support-eval.yaml\"]")
            && config.contains("grader = \"promptfoo\""),
        "{config}"
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["check"]).assert_code(0);
    repo.replace("evals/support-eval.yaml", "value: order", "value: parcel");
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains("evals/support-eval.yaml:6: EL101");
    repo.replace(
        "evals/support-eval.yaml",
        "tests:\n",
        "tests:\n  - file:///Users/me/more-tests.csv\n",
    );
    repo.evalock(&["check"])
        .assert_contains("EL105 malformed-case (refuse): suite `support-eval`: `evals/support-eval.yaml` names the absolute path `/Users/me/more-tests.csv`, which only one machine has");
}
