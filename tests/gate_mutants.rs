//! Tests written to kill mutants that cargo-mutants found surviving in the gate logic
//! (see README, "Hardening"). Each names the mutant it kills.

mod common;

use common::TestRepo;

/// Kills `src/checks/mod.rs: replace drop_superseded with ()`: a case removed vs the base
/// is reported once, as EL103, not also as EL101 "missing from the lock's file".
#[test]
fn a_removed_case_is_reported_as_removed_only() {
    let repo = TestRepo::with_fixture("demo");
    let cases = repo.read("evals/support.jsonl");
    let kept: String = cases
        .lines()
        .filter(|line| !line.contains("\"refund-no-order-id\""))
        .map(|line| format!("{line}\n"))
        .collect();
    assert_ne!(kept, cases);
    repo.write("evals/support.jsonl", kept);
    let run = repo.evalock(&["check", "--base", "HEAD"]);
    run.assert_code(2).assert_contains("EL103");
    let mentions: Vec<&str> = run
        .stdout
        .lines()
        .filter(|line| line.contains("refund-no-order-id") && line.contains(": EL"))
        .collect();
    assert_eq!(mentions.len(), 1, "reported more than once: {mentions:#?}");
    assert!(mentions[0].contains("EL103"), "{mentions:#?}");
}
