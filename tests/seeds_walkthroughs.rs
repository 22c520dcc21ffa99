//! Walkthroughs of the eval-harness seed articles that no other acceptance test replays,
//! run against the binary in real git repositories: the versioned-case migration ("Version
//! Golden Cases Like Schema Migrations"), a baseline refused after a grader version bump
//! ("Treat the Grader as Code"), the digest normalisation examples and the refusal to
//! compare against an edited case ("Diff Last-Good Completions"), and the n-sample worked
//! example ("Fail the Eval When Samples Disagree").

mod common;

use common::TestRepo;
use serde_json::{json, Value};

fn results(repo: &TestRepo) -> Value {
    serde_json::from_str(&repo.read(".evalock/results.json")).expect("results file is JSON")
}

fn statuses(repo: &TestRepo) -> Vec<(String, String)> {
    results(repo)["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .map(|case| {
            (
                case["case_id"].as_str().unwrap_or_default().to_owned(),
                case["status"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// The article's case, as evalock spells its assertions (under `expect`).
fn order_lookup(id: &str, version: u32, must_call: &[&str], retired: bool) -> String {
    let mut case = json!({
        "id": id,
        "version": version,
        "prompt_id": "support_agent_v12",
        "input": {"messages": [{"role": "user", "content": "Where is my package? Order is 1842-AX."}]},
        "tools": ["get_order", "create_refund"],
        "expect": {
            "must_call": must_call,
            "must_not_call": ["create_refund"],
            "args": {"get_order": {"order_id": {"eq": "1842-AX"}}},
            "forbid_patterns": ["I assume", "tracking number I made up"]
        }
    });
    if retired {
        case["retired"] = json!(true);
    }
    format!("{case}\n")
}

/// "When a second lookup becomes required, bump the case instead of editing the old fixture
/// quietly in place. Keep v3 in the catalog after v4 lands, and mark the older row retired."
#[test]
fn a_contract_change_lands_as_a_new_version_beside_the_retired_old_one() {
    let repo = TestRepo::new();
    repo.write("prompts/support.txt", "You are a support agent.\n");
    repo.write(
        "evalock.toml",
        "version = 1\n\n[[suite]]\nname = \"support\"\ncases = [\"evals/support.jsonl\"]\nprompt = \"prompts/support.txt\"\nbaseline = \"evals/support.baseline.json\"\n",
    );
    let v3 = "order_lookup_missing_id_v3";
    repo.write(
        "evals/support.jsonl",
        order_lookup(v3, 3, &["get_order"], false),
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("ship v3");

    // Editing the shipped row quietly is refused, locally and against the base once re-locked.
    repo.git(&["switch", "-q", "-c", "quiet-edit"]);
    repo.write(
        "evals/support.jsonl",
        order_lookup(v3, 3, &["get_order", "get_order_history"], false),
    );
    repo.evalock(&["check"]).assert_code(2).assert_contains(&format!(
        "EL101 case-unlocked (refuse): case `{v3}` (evals/support.jsonl:1) changed but is still version 3"
    ));
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("quiet edit");
    repo.evalock(&["check", "--base", "main"])
        .assert_code(2)
        .assert_contains(&format!(
            "EL102 case-edited-in-place (refuse): case `{v3}` (evals/support.jsonl:1) was edited in place: still version 3 as in main"
        ));

    // The article's migration: v4 lands as its own row, v3 stays, retired.
    repo.git(&["switch", "-q", "main"]);
    repo.git(&["switch", "-q", "-c", "v4"]);
    let v4 = "order_lookup_missing_id_v4";
    repo.write(
        "evals/support.jsonl",
        format!(
            "{}{}",
            order_lookup(v3, 3, &["get_order"], true),
            order_lookup(v4, 4, &["get_order", "get_order_history"], false)
        ),
    );
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains(&format!(
            "case `{v3}` (evals/support.jsonl:1) is retired but evalock.lock still has it active"
        ))
        .assert_contains(&format!(
            "case `{v4}` (evals/support.jsonl:2) is new and not in evalock.lock"
        ));
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("v4: a second lookup is required; v3 retired");
    repo.evalock(&["check", "--base", "main"])
        .assert_code(0)
        .assert_contains("PASS (no findings)");

    // Deleting the retired row instead of keeping it is a removal, even re-locked.
    repo.write(
        "evals/support.jsonl",
        order_lookup(v4, 4, &["get_order", "get_order_history"], false),
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("drop v3");
    repo.evalock(&["check", "--base", "main"])
        .assert_code(2)
        .assert_contains("EL103 case-removed (refuse)")
        .assert_contains(v3);
}

/// "cases/baselines pinned to another grader version are refused": a baseline recorded
/// under escalation@1 is not compared once the grader is escalation@2, until re-recorded.
#[test]
fn a_baseline_recorded_against_another_grader_version_is_refused_until_re_recorded() {
    let repo = TestRepo::with_fixture("demo");
    repo.evalock(&["run"]).assert_code(0);
    repo.evalock(&["accept", "--reason", "first recording"])
        .assert_code(0);
    repo.commit_all("record the stub's completions as last-good");

    repo.write(
        "graders/escalation.py",
        format!(
            "{}# v2: the rubric now asks for abstention\n",
            repo.read("graders/escalation.py")
        ),
    );
    repo.replace(
        "evalock.toml",
        "[grader.escalation]\nversion = 1",
        "[grader.escalation]\nversion = 2",
    );
    repo.evalock(&["lock"]);
    repo.evalock(&["check"]).assert_code(2).assert_contains(
        "was recorded against another grader (escalation@1 -> escalation@2): refusing to compare",
    );
    // The support suite (built-in grader) is untouched by the bump.
    repo.evalock(&["run", "--suite", "support"]).assert_code(0);
    let run = repo.evalock(&["run", "--suite", "escalation"]);
    run.assert_code(2).assert_contains(
        "EL401 baseline-drifted (refuse): baseline of case `angry-customer-escalates`",
    );
    assert_eq!(
        run.stdout
            .matches("another grader (escalation@1 -> escalation@2)")
            .count(),
        3,
        "{}",
        run.stdout
    );
    assert!(results(&repo)["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .all(|case| case["baseline"] == "drifted"));

    repo.evalock(&["accept", "--suite", "escalation", "--reason", "grader v2"])
        .assert_code(0)
        .assert_contains("3 recorded");
    assert!(repo
        .read("evals/escalation.baseline.json")
        .contains("\"grader\": \"escalation@2\""));
    repo.evalock(&["run", "--suite", "escalation"])
        .assert_code(0)
        .assert_contains("PASS (no findings)");
}

/// A project graded from recorded completions, as the article's stub harness does.
fn status_project(normalizer: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.write(
        "evalock.toml",
        format!("version = 1\n\n[[suite]]\nname = \"status\"\ncases = [\"evals/status.jsonl\"]\nbaseline = \"evals/status.baseline.json\"\nnormalizer = \"{normalizer}\"\n"),
    );
    repo.write(
        "evals/status.jsonl",
        concat!(
            "{\"id\": \"status-paid-en\", \"input\": {\"order_id\": \"ord_1042\", \"locale\": \"en\"}, \"expect\": {\"json\": true, \"required_keys\": [\"status\", \"order_id\"], \"forbidden\": [\"as an AI\", \"I think\"], \"status_in\": [\"paid\", \"pending\", \"failed\"]}}\n",
            "{\"id\": \"ship-note\", \"input\": {\"order_id\": \"1842\"}, \"expect\": {\"must_include\": [\"1842\"]}}\n",
        ),
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("status suite");
    repo
}

fn completions(repo: &TestRepo, status: &str, note: &str) {
    repo.write(
        "made.jsonl",
        format!(
            "{}\n{}\n",
            json!({"case_id": "status-paid-en", "completion": status}),
            json!({"case_id": "ship-note", "completion": note})
        ),
    );
}

/// The `ws-v1` status project with its first completions run, accepted and committed as
/// last-good.
fn recorded_status_project() -> TestRepo {
    let repo = status_project("ws-v1");
    completions(
        &repo,
        r#"{"status": "paid", "order_id": "ord_1042"}"#,
        "Order 1842 ships tomorrow.",
    );
    repo.evalock(&["run", "--completions", "made.jsonl"])
        .assert_code(0);
    repo.evalock(&["accept", "--reason", "first recording"])
        .assert_code(0);
    repo.commit_all("record last-good");
    repo
}

/// "Normalize before hashing or the photograph becomes a flake detector for trailing
/// newlines. [...] It does not strip hedging prefaces or reorder JSON keys [...] If key
/// order is unimportant, dump parsed objects with sort_keys=True before hashing."
#[test]
fn normalisation_ignores_whitespace_but_not_a_hedging_preface_or_key_order_unless_json_v1() {
    let repo = recorded_status_project();

    // A re-wrap and trailing newlines: the same photograph.
    completions(
        &repo,
        "{\"status\":  \"paid\",\n  \"order_id\": \"ord_1042\"}\n\n",
        "  Order 1842 ships\ntomorrow.  \n",
    );
    repo.evalock(&["run", "--completions", "made.jsonl", "--fail-on-diff"])
        .assert_code(0)
        .assert_not_contains("EL503");

    // A hedging preface and reordered keys still pass every assertion, but moved: exit 3
    // with --fail-on-diff, the previous 12-hex prefix beside the new one.
    completions(
        &repo,
        r#"{"order_id": "ord_1042", "status": "paid"}"#,
        "Sure! Order 1842 ships tomorrow.",
    );
    let moved = repo.evalock(&["run", "--completions", "made.jsonl", "--fail-on-diff"]);
    moved
        .assert_code(3)
        .assert_contains("EL503 moved (note): case `status-paid-en`")
        .assert_contains("EL503 moved (note): case `ship-note`")
        .assert_contains("+Sure!");
    assert!(
        moved.stdout.lines().any(|line| line
            .contains("still passes, but its completion moved (sha256:")
            && line.matches(" -> sha256:").count() == 1),
        "{}",
        moved.stdout
    );
    repo.evalock(&["run", "--completions", "made.jsonl"])
        .assert_code(0);
    assert_eq!(
        statuses(&repo),
        [
            ("ship-note".to_owned(), "MOVED".to_owned()),
            ("status-paid-en".to_owned(), "MOVED".to_owned())
        ]
    );

    // A hedge the contract forbids is an invariant break, not a move: exit 1.
    completions(
        &repo,
        r#"{"status": "paid", "order_id": "ord_1042", "note": "I think it shipped"}"#,
        "Order 1842 ships tomorrow.",
    );
    repo.evalock(&["run", "--completions", "made.jsonl", "--fail-on-diff"])
        .assert_code(1)
        .assert_contains("EL501 regressed")
        .assert_contains("forbidden:I think");

    // Switching to json-v1 (sorted keys) drifts every baseline: refused, never compared.
    repo.replace("evalock.toml", "ws-v1", "json-v1");
    completions(
        &repo,
        r#"{"order_id": "ord_1042", "status": "paid"}"#,
        "Order 1842 ships tomorrow.",
    );
    repo.evalock(&["run", "--completions", "made.jsonl"])
        .assert_code(2)
        .assert_contains(
            "was recorded against another normalizer (ws-v1 -> json-v1): refusing to compare",
        );
    repo.evalock(&[
        "accept",
        "--reason",
        "key order is not part of the contract",
    ])
    .assert_code(0);
    repo.commit_all("json-v1");

    // Under json-v1 the key order no longer moves the digest; the prose is kept exactly.
    completions(
        &repo,
        r#"{"status": "paid", "order_id": "ord_1042"}"#,
        "Order 1842 ships tomorrow.",
    );
    repo.evalock(&["run", "--completions", "made.jsonl", "--fail-on-diff"])
        .assert_code(0)
        .assert_not_contains("EL503");
    completions(
        &repo,
        r#"{"status": "paid", "order_id": "ord_1042"}"#,
        "Order 1842 ships  tomorrow.",
    );
    repo.evalock(&["run", "--completions", "made.jsonl", "--fail-on-diff"])
        .assert_code(3)
        .assert_contains("EL503 moved (note): case `ship-note`");
}

/// "If two score files share an id but the case_hash moved, abort the comparison instead of
/// inventing a quality trend": an edited case drifts its baseline, which is refused.
#[test]
fn a_baseline_of_an_edited_case_is_refused_not_compared() {
    let repo = recorded_status_project();

    repo.replace(
        "evals/status.jsonl",
        "{\"id\": \"ship-note\",",
        "{\"id\": \"ship-note\", \"version\": 2,",
    );
    repo.replace(
        "evals/status.jsonl",
        "\"must_include\": [\"1842\"]",
        "\"must_include\": [\"1842\", \"ships\"]",
    );
    repo.evalock(&["lock"]).assert_code(0);
    let run = repo.evalock(&["run", "--completions", "made.jsonl"]);
    run.assert_code(2).assert_contains(
        "EL401 baseline-drifted (refuse): baseline of case `ship-note` (evals/status.baseline.json:",
    );
    run.assert_contains("was recorded against another case (sha256:")
        .assert_not_contains("case `status-paid-en` (evals/status.baseline.json");
    let results = results(&repo);
    let note = results["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .find(|case| case["case_id"] == "ship-note")
        .expect("ship-note ran");
    assert_eq!(note["baseline"], "drifted");
}

/// The n-sample worked example: five draws per case, four agreeing. The invoice case
/// (`agreement_min` 0.8) passes; the abstention case pins its own 1.0 over the policy's
/// 0.8, so one draw answering `eligible` fails the whole row.
#[test]
fn a_case_pins_its_own_agreement_min_over_the_policy() {
    let repo = TestRepo::new();
    repo.write(
        "complete.py",
        concat!(
            "import json, sys\n",
            "req = json.load(sys.stdin)\n",
            "s = req[\"sample\"]\n",
            "if req[\"case_id\"] == \"invoice_extract_v3\":\n",
            "    cents = 1950 if s != 4 else 19.50\n",
            "    print(json.dumps({\"vendor\": \"Acme Tools\", \"total_cents\": cents, \"currency\": \"USD\"}))\n",
            "else:\n",
            "    print(json.dumps({\"status\": \"unknown\" if s != 2 else \"eligible\"}))\n",
        ),
    );
    repo.write(
        "evalock.toml",
        "version = 1\n\n[policy]\nagreement_min = 0.8\ntimeout_secs = 30\n\n[[suite]]\nname = \"golden\"\ncases = [\"evals/golden.jsonl\"]\nbaseline = \"evals/golden.baseline.json\"\ncompleter = [\"python3\", \"complete.py\"]\nnormalizer = \"json-v1\"\n",
    );
    repo.write(
        "evals/golden.jsonl",
        concat!(
            "{\"id\":\"invoice_extract_v3\",\"input\":{\"prompt\":\"Extract vendor, total_cents, and currency as JSON. Invoice text: Acme Tools, total $19.50 USD.\"},\"expect\":{\"json\":true,\"required_keys\":[\"vendor\",\"total_cents\",\"currency\"]},\"n\":5,\"agreement_min\":0.8}\n",
            "{\"id\":\"refund_abstain_v1\",\"input\":{\"prompt\":\"Return JSON with status=unknown when the refund policy is not in the prompt. User: can I refund order 9?\"},\"expect\":{\"json\":true,\"required_keys\":[\"status\"]},\"n\":5,\"agreement_min\":1.0}\n",
        ),
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("golden");

    repo.evalock(&["run"])
        .assert_code(1)
        .assert_contains("EL505 samples-disagree (error): case `refund_abstain_v1` (evals/golden.jsonl:2): 4 of 5 samples agree (0.80 < agreement_min 1.00)")
        .assert_not_contains("case `invoice_extract_v3` (evals/golden.jsonl:1): 4 of 5");
    assert_eq!(
        statuses(&repo),
        [
            ("invoice_extract_v3".to_owned(), "PASS".to_owned()),
            ("refund_abstain_v1".to_owned(), "FAIL".to_owned())
        ]
    );
    let results = results(&repo);
    assert!(results["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .all(
            |case| case["agreement"] == 0.8 && case["samples"].as_array().map(Vec::len) == Some(5)
        ));
}

/// "Mutate Golden Cases Before You Trust the Eval": the article's YAML case, whose mutated
/// twin is a tool-call envelope (`tool_name`, `arguments`, `content`) that drops order_id and
/// invents a tracking token. The built-in grader rejects it; once the case keeps only
/// `must_call`, the grader has gone numb and the control passing it is reported.
#[test]
fn the_articles_mutated_twin_must_fail_and_a_numb_grader_is_reported() {
    let repo = TestRepo::new();
    repo.write(
        "evalock.toml",
        "version = 1\n\n[[suite]]\nname = \"lookup\"\ncases = [\"eval/cases/*.yaml\"]\nbaseline = \"eval/lookup.baseline.json\"\n",
    );
    let assertions = "  args:\n    lookup_order: {order_id: A-1042}\n  forbidden:\n    - \"TRACK-\"\n    - \"I found tracking\"\n";
    let case = format!(
        "id: lookup_order_requires_id\ninput:\n  user: \"Where is order A-1042?\"\nexpect:\n  must_call: [lookup_order]\n{assertions}mutate:\n  completion:\n    tool_name: lookup_order\n    arguments:\n      customer_email: \"hidden@example.com\"\n    content: \"Tracking TRACK-999 is out for delivery.\"\n"
    );
    repo.write("eval/cases/lookup_order.yaml", &case);
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("lookup case with its negative control");
    repo.evalock(&["check"])
        .assert_code(0)
        .assert_not_contains("EL304");

    repo.write("eval/cases/lookup_order.yaml", case.replace(assertions, ""));
    repo.evalock(&["lock"]);
    repo.evalock(&["check"])
        .assert_code(1)
        .assert_contains("eval/cases/lookup_order.yaml:1: EL304 control-passed (error): the negative control `mutate[0]` of case `lookup_order_requires_id`");
}

/// "Diff Last-Good Completions" saves its cases as golden.json: an object holding the
/// prompt's id and digest beside a `cases` list. evalock reads an object as cases keyed by
/// id, so the file is refused; each member says why, and the list says where it belongs.
#[test]
fn the_articles_golden_json_layout_is_refused_with_where_the_list_belongs() {
    let repo = TestRepo::new();
    repo.write(
        "evalock.toml",
        "version = 1\n\n[[suite]]\nname = \"billing\"\ncases = [\"golden.json\"]\nbaseline = \"billing.baseline.json\"\n",
    );
    repo.write(
        "golden.json",
        concat!(
            "{\n",
            "  \"prompt_id\": \"billing-status-v3\",\n",
            "  \"prompt_sha256\": \"replace-with-sha256-of-the-prompt-file\",\n",
            "  \"cases\": [\n",
            "    {\"id\": \"status-paid-en\", \"input\": {\"order_id\": \"ord_1042\", \"locale\": \"en\"}, \"expect\": {\"json\": true, \"required_keys\": [\"status\", \"order_id\"]}}\n",
            "  ]\n",
            "}\n",
        ),
    );
    repo.evalock(&["lock"])
        .assert_code(2)
        .assert_contains("golden.json:2:1: EL105 malformed-case (refuse): member `prompt_id` is not a case: an object without an `id` lists cases keyed by id")
        .assert_contains("golden.json:4:1: EL105 malformed-case (refuse): member `cases` holds a list, not a case: a case file is an array of cases, an object of cases keyed by id, or one case with an `id`; make the list the top level of the file");

    // The list at the top level (the prompt's digest is evalock.lock's job): clean.
    repo.write(
        "golden.json",
        "[\n  {\"id\": \"status-paid-en\", \"input\": {\"order_id\": \"ord_1042\", \"locale\": \"en\"}, \"expect\": {\"json\": true, \"required_keys\": [\"status\", \"order_id\"]}}\n]\n",
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["check"]).assert_code(0);
}
