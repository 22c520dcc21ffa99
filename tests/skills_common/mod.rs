//! Small real projects for the skill rule tests: one clean skill, locked and committed.

#![allow(dead_code)]

use crate::common::{Run, TestRepo};
use serde_json::Value;

pub const CONFIG: &str = "[skills]\nroots = [\"skills/*\"]\nallowed_permissions = [\"Read\", \"Grep\", \"Bash(git:*)\", \"fs:read:workspace\", \"net:none\"]\n";

/// A SKILL.md with the given extra front matter lines and body.
pub fn skill_md(name: &str, front: &str, body: &str) -> String {
    format!("---\nname: {name}\ndescription: Does {name} things. Use when asked for {name}.\n{front}---\n\n{body}")
}

pub const OK_FRONT: &str = "metadata:\n  version: \"1.0.0\"\nallowed-tools: Read Grep\n";

/// A project with one clean skill `notes`, locked and committed on main.
pub fn project() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("evalock.toml", CONFIG);
    repo.write(
        "skills/notes/SKILL.md",
        skill_md("notes", OK_FRONT, "# Notes\n\nKeep notes short.\n"),
    );
    repo.write(
        "skills/notes/references/style.md",
        "# Style\n\nOne idea per line.\n",
    );
    lock_and_commit(&repo, "initial");
    repo
}

pub fn lock_and_commit(repo: &TestRepo, message: &str) {
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all(message);
}

/// (rule, severity, location "path:line", message) of every finding.
pub fn findings(run: &Run) -> Vec<(String, String, String, String)> {
    let document: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|error| panic!("{error}\n{}\n{}", run.stdout, run.stderr));
    document["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|finding| {
            let location = &finding["location"];
            let place = match location["line"].as_u64() {
                Some(line) => format!("{}:{line}", location["path"].as_str().unwrap_or("")),
                None => location["path"].as_str().unwrap_or("").to_owned(),
            };
            let text = |key: &str| finding[key].as_str().unwrap_or_default().to_owned();
            (text("rule"), text("severity"), place, text("message"))
        })
        .collect()
}

pub fn check(repo: &TestRepo, extra: &[&str]) -> Vec<(String, String, String, String)> {
    let mut args = vec!["check", "--format", "json"];
    args.extend_from_slice(extra);
    findings(&repo.evalock(&args))
}

#[track_caller]
pub fn only(
    found: &[(String, String, String, String)],
    rule: &str,
) -> Vec<(String, String, String, String)> {
    let (of_rule, others): (Vec<_>, Vec<_>) =
        found.iter().cloned().partition(|finding| finding.0 == rule);
    assert!(others.is_empty(), "expected only {rule}: {found:#?}");
    assert!(!of_rule.is_empty(), "expected {rule}: {found:#?}");
    of_rule
}

/// Asserts that the message of `found[index]` contains `fragment`.
#[track_caller]
pub fn assert_says(found: &[(String, String, String, String)], index: usize, fragment: &str) {
    assert!(found[index].3.contains(fragment), "{found:#?}");
}
