//! Day one on a repository that already has skills: `init` adopts what is there as debt,
//! the first check passes with one warning, and after that every new problem is judged
//! in full. Each refusal that guards a legitimate change has a landing path, tested
//! through `check --base` and through the installed hook with real commits.

mod common;

use common::{copy_tree, fixture, Run, TestRepo};
use serde_json::Value;

/// The fixture collection, adopted: `init`, `lock`, the hook installed, one commit on main.
fn adopted() -> TestRepo {
    let repo = TestRepo::new();
    copy_tree(&fixture("skills-collection"), repo.path());
    repo.evalock(&["init"])
        .assert_code(0)
        .assert_contains("as debt in [debt]")
        .assert_contains("`evalock debt` lists them");
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["hook", "install"]).assert_code(0);
    repo.git(&["add", "-A"]);
    commit(&repo, "adopt evalock").assert_code(0);
    repo
}

/// A real `git commit` through the installed hook.
fn commit(repo: &TestRepo, message: &str) -> Run {
    repo.git_run(&["commit", "-q", "-m", message])
}

fn findings(run: &Run) -> Vec<(String, String, String)> {
    let document: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|error| panic!("{error}\n{}\n{}", run.stdout, run.stderr));
    document["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|finding| {
            let text = |key: &str| finding[key].as_str().unwrap_or_default().to_owned();
            (text("rule"), text("severity"), text("message"))
        })
        .collect()
}

fn rules_of(run: &Run) -> Vec<String> {
    let mut rules: Vec<String> = findings(run).into_iter().map(|(rule, _, _)| rule).collect();
    rules.dedup();
    rules
}

#[test]
fn a_collection_adopts_cleanly_and_the_first_check_warns_once() {
    let repo = adopted();
    let config = repo.read("evalock.toml");
    assert!(config.contains("[debt]"), "{config}");
    assert!(
        !config.contains("rule = \"EL201\""),
        "integrity is never adopted"
    );
    let check = repo.evalock(&["check"]);
    check
        .assert_code(0)
        .assert_contains("EL109 adopted-debt (warn)")
        .assert_contains("adopted findings, see `evalock debt`")
        .assert_contains("WARN (1 warning");
    assert!(
        !check.stdout.contains("(refuse)") && !check.stdout.contains("(error)"),
        "{}",
        check.stdout
    );
    // The agentskills specification's own example (`version: "1.0"`) is read, not refused.
    let json = repo.evalock(&["check", "--format", "json"]);
    assert!(
        findings(&json)
            .iter()
            .any(|(rule, severity, message)| rule == "EL203"
                && severity == "note"
                && message.contains("'1.0' is read as 1.0.0")),
        "{}",
        json.stdout
    );
    // `evalock debt` lists the adopted findings by rule and skill.
    repo.evalock(&["debt"])
        .assert_code(0)
        .assert_contains("EL204 skill-permissions (")
        .assert_contains("  skills/pdf-forms\n")
        .assert_contains("skills/report-helper/SKILL.md:")
        .assert_not_contains("cover no finding");
    let listed: Value =
        serde_json::from_str(&repo.evalock(&["debt", "--format", "json"]).stdout).unwrap();
    assert!(
        listed["adopted"].as_array().unwrap().len() >= 17,
        "{listed}"
    );
    // Nothing of evalock's own state is committed by `git add -A`.
    repo.evalock(&["check", "--staged"]).assert_code(0);
    repo.git(&["add", "-A"]);
    let staged = repo.git(&["diff", "--cached", "--name-only"]);
    assert!(!staged.contains(".evalock"), "{staged}");
    assert!(repo.join(".evalock/.gitignore").exists());
}

/// Debt is matched by rule, subject and the finding's own fingerprint, not by the file's
/// bytes: an unrelated one-line edit to an adopted file re-raises nothing once relocked,
/// and a changed violation in the same file is judged in full.
#[test]
fn an_unrelated_edit_to_an_adopted_file_re_raises_nothing_but_a_changed_violation_does() {
    let repo = adopted();
    repo.replace("skills/pdf-forms/SKILL.md", "# Pdf Forms", "# PDF forms");
    let unlocked = repo.evalock(&["check", "--format", "json"]);
    unlocked.assert_code(2);
    let refused: Vec<String> = findings(&unlocked)
        .into_iter()
        .filter(|(_, severity, _)| severity == "refuse" || severity == "error")
        .map(|(rule, _, message)| format!("{rule} {message}"))
        .collect();
    assert_eq!(refused.len(), 1, "the edit itself is EL201: {refused:#?}");
    assert!(
        refused[0].starts_with("EL201 skills/pdf-forms/SKILL.md changed"),
        "{refused:#?}"
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["check"])
        .assert_code(0)
        .assert_contains("WARN (1 warning");
    repo.evalock(&["debt"])
        .assert_not_contains("cover no finding");
    // A permission outside the allowlist added to the same skill is a new violation.
    repo.replace(
        "skills/pdf-forms/SKILL.md",
        "name: pdf-forms",
        "name: pdf-forms\nallowed-tools: Bash(rm:*)",
    );
    repo.evalock(&["lock"]).assert_code(0);
    let changed = repo.evalock(&["check"]);
    changed
        .assert_code(2)
        .assert_contains("skills/pdf-forms/SKILL.md:3: EL204");
    repo.evalock(&["debt"])
        .assert_contains("cover no finding any more")
        .assert_contains("back: skills/pdf-forms/SKILL.md:3: EL204");
    // The hook refuses to commit it.
    repo.git(&["add", "-A"]);
    commit(&repo, "widen").assert_code(1);
}

#[test]
fn a_new_skill_without_metadata_is_refused_with_and_without_a_lock() {
    let repo = adopted();
    repo.git(&["switch", "-q", "-c", "new-skill"]);
    repo.write(
        "skills/new-helper/SKILL.md",
        "---\nname: new-helper\ndescription: Does new things.\n---\n\n# New helper\n",
    );
    let unlocked = repo.evalock(&["check", "--format", "json"]);
    unlocked.assert_code(2);
    assert!(rules_of(&unlocked).contains(&"EL201".to_owned()));
    repo.evalock(&["lock"]).assert_code(0);
    let locked = repo.evalock(&["check", "--format", "json"]);
    locked.assert_code(2);
    let rules = rules_of(&locked);
    assert!(
        rules.contains(&"EL203".to_owned()) && rules.contains(&"EL204".to_owned()),
        "{rules:?}"
    );
    repo.git(&["add", "-A"]);
    commit(&repo, "add a skill").assert_code(1);
    repo.git(&["commit", "-q", "--no-verify", "-m", "add a skill"]);
    let against_main = repo.evalock(&["check", "--base", "main", "--format", "json"]);
    against_main.assert_code(2);
    assert!(rules_of(&against_main).contains(&"EL204".to_owned()));
}

#[test]
fn adopting_more_debt_is_refused_against_the_base_until_a_trailer_approves_it() {
    let repo = adopted();
    repo.git(&["switch", "-q", "-c", "more-debt"]);
    repo.write(
        "skills/new-helper/SKILL.md",
        "---\nname: new-helper\ndescription: Does new things.\n---\n\n# New helper\n",
    );
    // Re-running init adopts the new skill's findings too: the debt grew.
    repo.evalock(&["init", "--force"]).assert_code(0);
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["check"]).assert_code(0);
    repo.git(&["add", "-A"]);
    commit(&repo, "adopt the new skill as it is").assert_code(0);
    let refused = repo.evalock(&["check", "--base", "main"]);
    refused
        .assert_code(2)
        .assert_contains("EL110 policy-loosened (refuse)")
        .assert_contains("as debt, which main (")
        .assert_contains("Evalock-Approved: EL110 evalock.toml: <why>");
    repo.approve("Evalock-Approved: EL110 evalock.toml: new-helper is vendored as it is, tracked in TICKET-12");
    repo.evalock(&["check", "--base", "main"])
        .assert_code(0)
        .assert_contains("EL110 policy-loosened (note)")
        .assert_contains("new-helper is vendored as it is, tracked in TICKET-12");
}

#[test]
fn paying_debt_down_is_progress() {
    let repo = adopted();
    repo.git(&["switch", "-q", "-c", "pay"]);
    repo.replace(
        "skills/pdf-processing/SKILL.md",
        "version: \"1.0\"\n",
        "version: \"1.1\"\nallowed-tools: Read\n",
    );
    let config = repo.read("evalock.toml");
    let kept: Vec<&str> = config
        .lines()
        .filter(|line| !(line.contains("skills/pdf-processing/") && line.contains("EL204")))
        .collect();
    assert_ne!(
        kept.len(),
        config.lines().count(),
        "pdf-processing had EL204 adopted"
    );
    repo.write("evalock.toml", kept.join("\n") + "\n");
    repo.replace(
        "evalock.toml",
        "allowed_permissions = [",
        "allowed_permissions = [\"Read\", ",
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.git(&["add", "-A"]);
    commit(&repo, "declare the tools pdf-processing needs").assert_code(0);
    // Declaring tools grants them, compared with a base that granted none: the security
    // review approves that in the pull request, with the trailers the findings name.
    repo.evalock(&["check", "--base", "main"])
        .assert_code(2)
        .assert_contains("EL209");
    repo.approve("Evalock-Approved: EL209 evalock.toml: skills may read files\nEvalock-Approved: EL209 skills/pdf-processing/SKILL.md: it reads the PDF it is given");
    repo.evalock(&["check", "--base", "main"])
        .assert_code(0)
        .assert_contains("1 entry paid down since main (")
        .assert_not_contains("EL110");
}

#[test]
fn widened_allowed_tools_are_refused_against_the_base_until_approved() {
    let repo = adopted();
    repo.git(&["switch", "-q", "-c", "widen"]);
    repo.replace(
        "skills/pdf-processing/SKILL.md",
        "version: \"1.0\"\n",
        "version: \"1.0\"\nallowed-tools: Read Bash\n",
    );
    repo.replace(
        "evalock.toml",
        "allowed_permissions = [",
        "allowed_permissions = [\"Read\", \"Bash\", ",
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.git(&["add", "-A"]);
    commit(&repo, "let pdf-processing run commands").assert_code(0);
    let refused = repo.evalock(&["check", "--base", "main"]);
    refused
        .assert_code(2)
        .assert_contains("EL209 skill-permission-escalation (refuse)")
        .assert_contains("Evalock-Approved: EL209 evalock.toml: <why>");
    // A trailer that names no reason approves nothing, and says so.
    repo.approve("Evalock-Approved: EL209");
    repo.evalock(&["check", "--base", "main"])
        .assert_code(2)
        .assert_contains("approves nothing");
    // The skill changed and kept version 1.0 (EL212): its trailer lands that as well.
    refused.assert_contains("EL212 skill-changed-unversioned (refuse)");
    repo.approve("Evalock-Approved: EL209 evalock.toml: skills may run commands, reviewed by security\nEvalock-Approved: EL209 skills/pdf-processing/SKILL.md: it converts files with a CLI\nEvalock-Approved: EL212 skills/pdf-processing/SKILL.md: only its tools changed");
    let approved = repo.evalock(&["check", "--base", "main", "--format", "json"]);
    approved.assert_code(0);
    let escalations: Vec<_> = findings(&approved)
        .into_iter()
        .filter(|(rule, _, _)| rule == "EL209")
        .collect();
    assert_eq!(escalations.len(), 2, "{escalations:?}");
    assert!(escalations
        .iter()
        .all(|(_, severity, message)| severity == "note" && message.contains("approved in ")));
}

#[test]
fn rule_severities_are_set_in_the_config_and_integrity_rules_cannot_be_lowered() {
    let repo = adopted();
    repo.git(&["switch", "-q", "-c", "rules"]);
    let config = repo.read("evalock.toml");
    repo.write(
        "evalock.toml",
        config.replace("[debt]", "[rules]\nEL201 = \"warn\"\n\n[debt]"),
    );
    repo.evalock(&["check"])
        .assert_code(65)
        .assert_contains("evalock.toml:")
        .assert_contains("EL201 skill-tampered guards what evalock pins and cannot be lowered");
    repo.write(
        "evalock.toml",
        config.replace("[debt]", "[rules]\nEL999 = \"warn\"\n\n[debt]"),
    );
    repo.evalock(&["check"])
        .assert_code(65)
        .assert_contains("`[rules]` names no rule `EL999`");
    // A new skill without metadata, with its rules lowered: warned, not refused.
    repo.write(
        "evalock.toml",
        config.replace(
            "[debt]",
            "[rules]\nEL203 = \"warn\"\nskill-permissions = \"off\"\n\n[debt]",
        ),
    );
    repo.write(
        "skills/new-helper/SKILL.md",
        "---\nname: new-helper\ndescription: Does new things.\n---\n\n# New helper\n",
    );
    repo.evalock(&["lock"]).assert_code(0);
    let lowered = repo.evalock(&["check", "--format", "json"]);
    lowered.assert_code(0);
    let found = findings(&lowered);
    assert!(
        found
            .iter()
            .any(|(rule, severity, _)| rule == "EL203" && severity == "warn"),
        "{found:?}"
    );
    assert!(
        !found.iter().any(|(rule, _, _)| rule == "EL204"),
        "{found:?}"
    );
    repo.git(&["add", "-A"]);
    commit(&repo, "lower two rules").assert_code(0);
    let against_main = repo.evalock(&["check", "--base", "main"]);
    against_main
        .assert_code(2)
        .assert_contains("EL110 policy-loosened (refuse): evalock.toml lowers EL203 skill-version from refuse to warn")
        .assert_contains("lowers EL204 skill-permissions from refuse to off");
    assert!(
        against_main.stdout.contains("evalock.toml:"),
        "anchored on the config"
    );
}

/// EL407's advice, followed end to end through the installed hook: the contract change
/// in one commit, the re-recording in the next; both commits pass the hook and the range
/// passes `check --base`. The same two changes in one commit still get EL407.
#[test]
fn a_contract_change_and_its_rerecording_land_as_two_commits() {
    let repo = TestRepo::with_fixture("demo");
    repo.evalock(&["run"]).assert_code(0);
    repo.evalock(&["accept", "--reason", "first recording"])
        .assert_code(0);
    repo.evalock(&["hook", "install"]).assert_code(0);
    repo.commit_all("record baselines");
    repo.git(&["switch", "-q", "-c", "contract"]);
    let cases = repo.read("evals/support.jsonl");
    let mut lines: Vec<Value> = cases
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let case = lines
        .iter_mut()
        .find(|case| case["id"] == "refund-no-order-id")
        .unwrap();
    case["version"] = Value::from(case["version"].as_u64().unwrap() + 1);
    case["expect"]["forbidden"]
        .as_array_mut()
        .unwrap()
        .push(Value::from("refund is on its way"));
    let text: String = lines.iter().map(|case| format!("{case}\n")).collect();
    repo.write("evals/support.jsonl", text);
    repo.evalock(&["lock"]).assert_code(0);
    repo.git(&["add", "-A"]);
    let contract = commit(&repo, "forbid another phrasing");
    contract
        .assert_code(0)
        .assert_contains("EL401 baseline-drifted (warn)")
        .assert_contains("re-record it in a commit of its own");
    // The pull request is refused until the re-recording lands.
    repo.evalock(&["check", "--base", "main"])
        .assert_code(2)
        .assert_contains("EL401 baseline-drifted (refuse)");
    // The run still refuses to compare the drifted entry (exit 2), and grades it afresh.
    repo.evalock(&["run", "--suite", "support"])
        .assert_code(2)
        .assert_contains("11 cases: 11 PASS");
    repo.evalock(&[
        "accept",
        "--suite",
        "support",
        "--reason",
        "the contract changed",
    ])
    .assert_code(0);
    repo.git(&["add", "-A"]);
    commit(&repo, "re-record support").assert_code(0);
    repo.evalock(&["check", "--base", "main"])
        .assert_code(0)
        .assert_not_contains("EL407");
    // Squashed into one commit, the change is mixed again.
    repo.git(&["switch", "-q", "-c", "squashed"]);
    repo.git(&["reset", "-q", "--soft", "main"]);
    repo.git(&["commit", "-q", "--no-verify", "-m", "both at once"]);
    repo.evalock(&["check", "--base", "main"])
        .assert_contains("EL407 mixed-change (warn)");
}

/// Without a contract change in the commit, a drifted baseline is still refused by the hook.
#[test]
fn the_hook_still_refuses_a_baseline_edited_by_hand() {
    let repo = TestRepo::with_fixture("demo");
    repo.evalock(&["run"]).assert_code(0);
    repo.evalock(&["accept", "--reason", "first recording"])
        .assert_code(0);
    repo.evalock(&["hook", "install"]).assert_code(0);
    repo.commit_all("record baselines");
    let baseline = repo.read("evals/support.baseline.json");
    let edited = baseline.replacen("\"completion\": \"", "\"completion\": \"X", 1);
    assert_ne!(edited, baseline);
    repo.write("evals/support.baseline.json", edited);
    repo.git(&["add", "-A"]);
    commit(&repo, "edit a baseline by hand")
        .assert_code(1)
        .assert_contains("EL402 baseline-tampered (refuse)")
        .assert_contains(
            "git restore --source=HEAD --staged --worktree -- evals/support.baseline.json",
        );
}
