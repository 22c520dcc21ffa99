//! The gate cannot be loosened unseen: a branch that lowers `[policy]` settings or adds
//! an acknowledgement is refused against the base (EL110, on the changed line), until a
//! commit's `Evalock-Approved:` trailer lands it; tightening passes.

mod common;
mod skills_common;

use common::TestRepo;

fn branch() -> TestRepo {
    let repo = TestRepo::with_fixture("demo");
    repo.git(&["switch", "-q", "-c", "loosen"]);
    repo
}

#[test]
fn lowering_agreement_min_is_refused_on_its_line_until_approved() {
    let repo = branch();
    repo.replace("evalock.toml", "agreement_min = 1.0", "agreement_min = 0.2");
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("relax agreement");
    let refused = repo.evalock(&["check", "--base", "main"]);
    refused
        .assert_code(2)
        .assert_contains("evalock.toml:5: EL110 policy-loosened (refuse): evalock.toml loosens `[policy] agreement_min` from 1 to 0.2");
    repo.approve(
        "Evalock-Approved: EL110 evalock.toml: sampling at temperature 1 for this suite, reviewed",
    );
    repo.evalock(&["check", "--base", "main"])
        .assert_code(0)
        .assert_contains("EL110 policy-loosened (note)");
}

#[test]
fn tightening_passes_and_each_loosened_setting_is_named() {
    let repo = branch();
    repo.replace("evalock.toml", "timeout_secs = 20", "timeout_secs = 10");
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("tighten");
    repo.evalock(&["check", "--base", "main"]).assert_code(0);
    repo.replace("evalock.toml", "timeout_secs = 10", "timeout_secs = 600");
    repo.replace(
        "evalock.toml",
        "fail_on_diff = false",
        "fail_on_diff = false\nmax_output_bytes = 99999999",
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("loosen two");
    let refused = repo.evalock(&["check", "--base", "main"]);
    refused
        .assert_code(2)
        .assert_contains("loosens `[policy] timeout_secs` from 20 to 600")
        .assert_contains("loosens `[policy] max_output_bytes` from 1048576 to 99999999");
}

/// A new acknowledgement silences a warning: refused against the base until approved.
#[test]
fn a_new_acknowledgement_is_refused_against_the_base_until_approved() {
    let repo = skills_common::project();
    repo.git(&["switch", "-q", "-c", "acknowledge"]);
    let digest = format!(
        "sha256:{}",
        evalock::digest::sha256_hex(repo.read("skills/notes/references/style.md").as_bytes())
    );
    repo.write(
        "evalock.toml",
        format!(
            "{}\n[[skills.acknowledge]]\nrule = \"EL206\"\nfile = \"skills/notes/references/style.md\"\ndigest = \"{digest}\"\nreason = \"reviewed by the docs team\"\n",
            skills_common::CONFIG
        ),
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("acknowledge a file");
    repo.evalock(&["check"]).assert_code(0);
    repo.evalock(&["check", "--base", "main"])
        .assert_code(2)
        .assert_contains("EL110 policy-loosened (refuse): evalock.toml acknowledges EL206 on skills/notes/references/style.md");
    repo.approve("Evalock-Approved: EL110 evalock.toml: the docs team reviewed the file");
    repo.evalock(&["check", "--base", "main"]).assert_code(0);
}

/// A suite's envelope slack widened over the base (absent is the default) is refused on
/// the suite's `envelope` line; narrowed passes.
#[test]
fn a_widened_envelope_slack_is_refused_and_a_narrowed_one_passes() {
    let repo = branch();
    repo.replace(
        "evalock.toml",
        "normalizer = \"ws-v1\"\n\n[[suite]]\nname = \"escalation\"",
        "normalizer = \"ws-v1\"\nenvelope = { size = 0.05 }\n\n[[suite]]\nname = \"escalation\"",
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("tighten the support envelope");
    repo.evalock(&["check", "--base", "main"]).assert_code(0);
    repo.replace(
        "evalock.toml",
        "envelope = { size = 0.05 }",
        "envelope = { size = 0.5, time = 2.0 }",
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("widen it");
    repo.evalock(&["check", "--base", "main"])
        .assert_code(2)
        .assert_contains("evalock.toml:19: EL110 policy-loosened (refuse): evalock.toml loosens suite `support`'s `envelope.size` from 0.1 to 0.5")
        .assert_contains("loosens suite `support`'s `envelope.time` from 0.15 to 2");
}

#[test]
fn raising_flaky_max_is_a_loosening() {
    let repo = branch();
    repo.replace(
        "evalock.toml",
        "fail_on_diff = false",
        "fail_on_diff = false\nflaky_max = 0.4",
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("tolerate flips");
    repo.evalock(&["check", "--base", "main"])
        .assert_code(2)
        .assert_contains("loosens `[policy] flaky_max` from 0 to 0.4");
}

/// A case bumped to a new version that asks its grader less: a negative control dropped,
/// `max_chars` raised. Tightening it stays quiet.
#[test]
fn a_case_that_drops_its_negative_control_or_raises_max_chars_is_a_loosening() {
    let repo = branch();
    let text = repo.read("evals/support.jsonl");
    let loosened = text
        .replace(
            "\"version\": 3, \"stratum\": \"refund\"",
            "\"version\": 4, \"stratum\": \"refund\"",
        )
        .replace(
            ", \"mutate\": {\"completion\": {\"status\": \"refunded\", \"reply\": \"Your refund has been issued.\", \"tool_calls\": [{\"name\": \"create_refund\", \"arguments\": {\"order_id\": \"last-order\"}}]}}}",
            "}",
        )
        .replace(
            "\"id\": \"warranty-question\", \"version\": 1",
            "\"id\": \"warranty-question\", \"version\": 2",
        )
        .replace("\"max_chars\": 400}", "\"max_chars\": 4000}");
    assert_ne!(loosened, text);
    repo.write("evals/support.jsonl", &loosened);
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("loosen two cases");
    let refused = repo.evalock(&["check", "--base", "main"]);
    refused
        .assert_contains("evals/support.jsonl:2: EL110 policy-loosened (refuse): case `refund-no-order-id` (evals/support.jsonl:2) has 0 negative controls (`mutate`) where it had 1 at version 4")
        .assert_contains("evals/support.jsonl:9: EL110 policy-loosened (refuse): case `warranty-question` (evals/support.jsonl:9) raises `expect.max_chars` from 400 to 4000");
    repo.approve(
        "Evalock-Approved: EL110 evals/support.jsonl: the refund flow moved to a tool, reviewed",
    );
    let approved = repo.evalock(&["check", "--base", "main"]);
    assert!(
        !approved.stdout.contains("EL110 policy-loosened (refuse)"),
        "{}",
        approved.stdout
    );
    // A tighter limit at a new version is no loosening.
    repo.write(
        "evals/support.jsonl",
        text.replace(
            "\"id\": \"warranty-question\", \"version\": 1",
            "\"id\": \"warranty-question\", \"version\": 2",
        )
        .replace("\"max_chars\": 400}", "\"max_chars\": 200}"),
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("tighten");
    let tightened = repo.evalock(&["check", "--base", "main"]);
    assert!(!tightened.stdout.contains("EL110"), "{}", tightened.stdout);
}
