//! The seeds' AgentTwin walkthrough through the CLI (`fixtures/agent-twin`): two versions
//! of a refund agent give the same reply and both claim success, but one leaves
//! `refund_count: 2`. `expect.state` catches it as a regression of the last-good version,
//! with `claimed_not_verified`, and `review`, the finding and `compare` name where the
//! tool-call trajectories part.

mod common;

use common::TestRepo;

const CASE: &str = "refund-timeout-after-mutation";

/// The fixture run and accepted with v1.2.4, committed.
fn accepted() -> TestRepo {
    let repo = TestRepo::with_fixture("agent-twin");
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["run"]).assert_code(0);
    repo.evalock(&["accept", "--reason", "v1.2.4 refunds once"])
        .assert_code(0);
    repo.commit_all("last-good: v1.2.4");
    repo
}

#[test]
fn the_double_refund_is_a_regression_whose_review_names_the_duplicate_call() {
    let repo = accepted();
    let run = repo.evalock_with(&["run"], &[("AGENT_VERSION", "v1.3.0")]);
    run.assert_code(1)
        .assert_contains(&format!(
            "evals/refunds.jsonl:1: EL501 regressed (error): case `{CASE}` (evals/refunds.jsonl:1) passed at baseline and fails now: duplicate_call:refund_payment, state_mismatch:orders.ORD-1001.refund_count, state_mismatch:orders.ORD-1001.refunded_amount, claimed_not_verified"
        ))
        .assert_contains("trajectory: at step 2 last-good called get_refund_policy; now refund_payment, twice")
        .assert_contains("1 PASS, 1 REGRESSED");
    repo.evalock(&["review"])
        .assert_code(0)
        .assert_contains(&format!("REGRESSED refunds/{CASE} (evals/refunds.jsonl:1)"))
        .assert_contains(
            "  trajectory: at step 2 last-good called get_refund_policy; now refund_payment, twice",
        )
        .assert_contains("-        \"refund_count\": 1,")
        .assert_contains("+        \"refund_count\": 2,");
    // The review comment carries the same detail.
    let json = repo.evalock_with(&["run", "--format", "json"], &[("AGENT_VERSION", "v1.3.0")]);
    assert!(
        json.stdout
            .contains("trajectory: at step 2 last-good called get_refund_policy"),
        "{}",
        json.stdout
    );
    // The honest version stays green.
    repo.evalock(&["run"])
        .assert_code(0)
        .assert_not_contains("trajectory:");
}

#[test]
fn compare_blocks_on_the_critical_regression_and_lists_each_broken_behaviour() {
    let repo = accepted();
    repo.evalock(&["run", "--out", "old.json"]).assert_code(0);
    repo.evalock_with(
        &["run", "--out", "new.json"],
        &[("AGENT_VERSION", "v1.3.0")],
    )
    .assert_code(1);
    let compared = repo.evalock(&["compare", "old.json", "new.json"]);
    compared
        .assert_code(1)
        .assert_contains(&format!("refunds/{CASE} (critical)"))
        .assert_contains("claimed_not_verified")
        .assert_contains("state_mismatch:orders.ORD-1001.refund_count")
        .assert_contains("suite refunds: 1 REGRESS, 1 SAME");
    repo.evalock(&["compare", "old.json", "old.json"])
        .assert_code(0);
}

#[test]
fn a_case_without_state_or_with_an_honest_failure_is_no_false_claim() {
    let repo = TestRepo::with_fixture("agent-twin");
    repo.write(
        "evals/refunds.jsonl",
        "{\"id\": \"status-needs-state\", \"input\": \"Where is ORD-2002?\", \"expect\": {\"state\": {\"orders.ORD-2002.shipped\": true}}}\n",
    );
    repo.evalock(&["lock"]).assert_code(0);
    let run = repo.evalock(&["run"]);
    run.assert_code(1)
        .assert_contains("no_state")
        .assert_not_contains("claimed_not_verified");
}

#[test]
fn compare_with_the_base_reads_last_good_from_the_committed_baselines() {
    let repo = accepted();
    repo.git(&["switch", "-q", "-c", "v1.3.0"]);
    repo.evalock_with(&["run"], &[("AGENT_VERSION", "v1.3.0")])
        .assert_code(1);
    repo.evalock(&["compare", "--base", "main"])
        .assert_code(1)
        .assert_contains("evalock compare: baselines at main -> ")
        .assert_contains(&format!("refunds/{CASE} (critical)"))
        .assert_contains("duplicate_call:refund_payment")
        .assert_contains("suite refunds: 1 REGRESS, 1 SAME");
    repo.evalock(&["run", "--out", "honest.json"])
        .assert_code(0);
    repo.evalock(&["compare", "--base", "main", "honest.json"])
        .assert_code(0)
        .assert_contains("suite refunds: 2 SAME");
    repo.evalock(&["compare", "--base", "main", "a.json", "b.json"])
        .assert_code(64)
        .assert_contains("with --base, compare takes at most one results file");
    repo.evalock(&["compare", "honest.json"])
        .assert_code(64)
        .assert_contains("compare needs OLD and NEW results files");
}
