//! The README is a user's document, but two parts of it are facts the code owns: the
//! rule reference (generated from the rule table) and the test command CI runs.

use std::path::Path;

const START: &str = "<!-- rules:start (generated from src/rules.rs: EVALOCK_BLESS=1 cargo test --test readme) -->\n";
const END: &str = "<!-- rules:end -->";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn readme_rule_reference_matches_the_rule_table() {
    let path = root().join("README.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let start = readme
        .find(START)
        .expect("README has the rules:start marker")
        + START.len();
    let end = readme[start..]
        .find(END)
        .expect("README has the rules:end marker")
        + start;
    let generated = evalock::rules::markdown_table();
    if std::env::var_os("EVALOCK_BLESS").is_some() {
        let updated = format!("{}{}{}", &readme[..start], generated, &readme[end..]);
        std::fs::write(&path, updated).unwrap();
        return;
    }
    assert!(
        readme[start..end] == generated,
        "the README's rule reference is stale: run `EVALOCK_BLESS=1 cargo test --test readme`"
    );
}

#[test]
fn ci_runs_exactly_the_readme_test_command() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    let command = ci
        .lines()
        .rev()
        .find(|line| !line.trim().is_empty() && !line.starts_with('#'))
        .expect(".ci/run has a command")
        .trim();
    assert!(
        readme.contains(command),
        "README must give the command .ci/run runs: `{command}`"
    );
}
