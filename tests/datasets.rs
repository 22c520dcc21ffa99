//! Datasets as other runners keep them, locked case by case without rewriting them:
//! `init` recognises their shapes and the identity that fits; then, through `lock`,
//! `check`, the installed hook and `check --base`, a row edited in place is refused, a
//! row deleted is EL103, reordered rows change nothing, malformed rows are EL105 at their
//! line, and promptfoo's assertions are graded, failing closed where they cannot be.

mod common;

use common::{copy_tree, fixture, Run, TestRepo};

fn adopted() -> TestRepo {
    let repo = TestRepo::new();
    copy_tree(&fixture("datasets"), repo.path());
    repo.evalock(&["init"])
        .assert_code(0)
        .assert_contains("read as OpenAI evals samples (`input`, `ideal`): identified by `id = { content = [\"input\"] }`")
        .assert_contains("read as deepeval goldens")
        .assert_contains("read as promptfoo tests");
    let config = repo.read("evalock.toml");
    assert!(config.contains("grader = \"promptfoo\""), "{config}");
    assert!(!config.contains("left out"), "{config}");
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["hook", "install"]).assert_code(0);
    repo.git(&["add", "-A"]);
    commit(&repo, "lock the datasets").assert_code(0);
    repo.evalock(&["check"])
        .assert_code(0)
        .assert_contains("PASS");
    repo.git(&["switch", "-q", "-c", "change"]);
    repo
}

fn commit(repo: &TestRepo, message: &str) -> Run {
    repo.git_run(&["commit", "-q", "-m", message])
}

#[test]
fn every_row_is_a_case_with_its_own_line() {
    let repo = adopted();
    let lock = repo.read("evalock.lock");
    // Three OpenAI evals samples, two goldens, three promptfoo rows, two inspect rows.
    assert_eq!(lock.matches("[case.arithmetic.").count(), 3, "{lock}");
    assert_eq!(lock.matches("[case.goldens.").count(), 2);
    assert_eq!(lock.matches("[case.smoke.").count(), 3);
    assert!(
        lock.contains("[case.inspect.q-1]") && lock.contains("[case.inspect.q-2]"),
        "{lock}"
    );
    // The quoted field over two lines: its row starts on line 3 (the BOM'd header is 1).
    repo.replace("evals/inspect.csv", "one answer\",yes", "one answer\",no");
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains("evals/inspect.csv:3: EL101");
    repo.replace("evals/smoke.csv", "icontains: paris", "icontains: lyon");
    repo.evalock(&["check"])
        .assert_contains("evals/smoke.csv:3: EL101");
}

#[test]
fn an_edited_answer_is_an_edit_in_place_and_an_edited_input_a_removed_case() {
    let repo = adopted();
    repo.replace(
        "evals/arithmetic.jsonl",
        "\"ideal\": \"9\"",
        "\"ideal\": \"nine\"",
    );
    // Before a lock: the digest moved.
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains("evals/arithmetic.jsonl:2: EL101");
    repo.evalock(&["lock"]).assert_code(0);
    repo.git(&["add", "-A"]);
    commit(&repo, "change an answer").assert_code(0);
    repo.evalock(&["check", "--base", "main"])
        .assert_code(2)
        .assert_contains("evals/arithmetic.jsonl:2: EL102 case-edited-in-place")
        .assert_contains("(suite `arithmetic` identifies cases by the content of `input`)");
    // The question itself edited: another case, and the old one is gone.
    repo.replace("evals/arithmetic.jsonl", "What is 3*3?", "What is 4*4?");
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["check", "--base", "main"])
        .assert_code(2)
        .assert_contains("EL103 case-removed")
        .assert_contains("an edit to an identity field makes another case");
}

#[test]
fn reordered_rows_change_nothing_and_a_deleted_row_is_removed() {
    let repo = adopted();
    let text = repo.read("evals/arithmetic.jsonl");
    let mut lines: Vec<&str> = text.lines().collect();
    lines.reverse();
    repo.write("evals/arithmetic.jsonl", lines.join("\n") + "\n");
    let csv = repo.read("evals/smoke.csv");
    let rows: Vec<&str> = csv.split("\r\n").collect();
    repo.write(
        "evals/smoke.csv",
        [rows[0], rows[3], rows[1], rows[2], ""].join("\r\n"),
    );
    repo.evalock(&["check"]).assert_code(0);
    repo.evalock(&["lock"]).assert_code(0);
    repo.git(&["add", "-A"]);
    commit(&repo, "reorder").assert_code(0);
    repo.evalock(&["check", "--base", "main"]).assert_code(0);
    // A deleted row.
    let csv = repo.read("evals/smoke.csv");
    let kept: Vec<&str> = csv
        .split("\r\n")
        .filter(|row| !row.contains("capital of France"))
        .collect();
    repo.write("evals/smoke.csv", kept.join("\r\n"));
    repo.evalock(&["lock"]).assert_code(0);
    repo.git(&["add", "-A"]);
    commit(&repo, "drop a row").assert_code(0);
    repo.evalock(&["check", "--base", "main"])
        .assert_code(2)
        .assert_contains("EL103 case-removed");
}

#[test]
fn malformed_rows_are_refused_at_their_line() {
    let repo = adopted();
    repo.write(
        "evals/inspect.csv",
        "id,input,target\nq-1,\"Spell \"\"cat\"\" backwards\",tac\nq-2,one,two,three\n",
    );
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains("evals/inspect.csv:3:1: EL105")
        .assert_contains("this row has 4 fields where the header names 3");
    repo.write(
        "evals/arithmetic.jsonl",
        "{\"input\": \"a\", \"ideal\": \"b\"}\n{\"ideal\": \"no input\"}\n",
    );
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains("evals/arithmetic.jsonl:2:1: EL105")
        .assert_contains(
            "the record has no `input`: the suite identifies cases by the content of `input`",
        );
    // The hook refuses to commit them.
    repo.git(&["add", "-A"]);
    commit(&repo, "break rows").assert_code(1);
}

#[test]
fn promptfoo_assertions_are_graded_and_what_needs_a_model_fails_closed() {
    let repo = adopted();
    let config = repo.read("evalock.toml");
    repo.write(
        "evalock.toml",
        config.replace(
            "# completer = [\"python3\", \"tools/complete.py\"]",
            "completer = [\"sh\", \"tools/answer.sh\"]",
        ),
    );
    repo.evalock(&["lock"]).assert_code(0);
    let run = repo.evalock(&["run", "--suite", "smoke"]);
    run.assert_code(0).assert_contains("3 cases: 3 PASS");
    // A rubric cannot be graded in process: the row fails, never skipped.
    let csv = repo.read("evals/smoke.csv");
    repo.write(
        "evals/smoke.csv",
        csv.replace("contains-json,,json", "llm-rubric: answers politely,,json"),
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["run", "--suite", "smoke"])
        .assert_code(1)
        .assert_contains("EL502 failing")
        .assert_contains("`llm-rubric` is not deterministic")
        .assert_contains("command grader");
    // A grader that cannot fail is EL303 as for native cases: `not-contains` alone
    // passes an empty completion.
    let csv = repo.read("evals/smoke.csv");
    repo.write(
        "evals/smoke.csv",
        csv.replace("contains: 4,not-icontains: five", "not-contains: 5,"),
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["check"])
        .assert_code(1)
        .assert_contains("EL303 grader-cannot-fail");
}

#[test]
fn a_suite_can_name_the_field_that_holds_its_ids() {
    let repo = TestRepo::new();
    repo.write(
        "evals/qa.jsonl",
        "{\"input\": \"a\", \"target\": \"b\", \"metadata\": {\"case_id\": \"qa-1\"}}\n{\"input\": \"c\", \"target\": \"d\", \"metadata\": {\"case_id\": \"qa-2\"}}\n",
    );
    repo.write(
        "evalock.toml",
        "version = 1\n\n[[suite]]\nname = \"qa\"\ncases = [\"evals/qa.jsonl\"]\nid = \"metadata.case_id\"\n",
    );
    repo.evalock(&["lock"]).assert_code(0);
    let lock = repo.read("evalock.lock");
    assert!(
        lock.contains("[case.qa.qa-1]") && lock.contains("[case.qa.qa-2]"),
        "{lock}"
    );
    repo.commit_all("lock");
    repo.write(
        "evals/qa.jsonl",
        "{\"input\": \"a\", \"target\": \"b\", \"metadata\": {\"case_id\": \"qa-1\"}}\n{\"input\": \"c\", \"target\": \"d\", \"metadata\": {\"case_id\": \"qa-1\"}}\n",
    );
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains("EL104")
        .assert_contains("identifies cases by the key path `metadata.case_id`");
    repo.write(
        "evalock.toml",
        "version = 1\n\n[[suite]]\nname = \"qa\"\ncases = [\"evals/qa.jsonl\"]\nid = \"metadata..case_id\"\n",
    );
    repo.evalock(&["check"])
        .assert_code(65)
        .assert_contains("evalock.toml:")
        .assert_contains("is no key path");
}

/// The rows of `evals/arithmetic.jsonl`, each given an `id` of its own.
fn with_ids(text: &str, ids: &[&str]) -> String {
    text.lines()
        .zip(ids)
        .map(|(line, id)| line.replacen('{', &format!("{{\"id\": \"{id}\", "), 1) + "\n")
        .collect()
}

#[test]
fn a_suite_that_moves_to_explicit_ids_is_compared_with_the_base_by_its_former_identity() {
    let repo = adopted();
    let config = repo.read("evalock.toml");
    let rule = "id = { content = [\"input\"] }\n";
    assert!(config.contains(rule), "{config}");
    repo.write("evalock.toml", config.replacen(rule, "", 1));
    let text = repo.read("evals/arithmetic.jsonl");
    repo.write(
        "evals/arithmetic.jsonl",
        with_ids(&text, &["add", "multiply", "subtract"]),
    );
    repo.evalock(&["lock"]).assert_code(0);
    assert!(repo
        .read("evalock.lock")
        .contains("[case.arithmetic.multiply]"));
    repo.git(&["add", "-A"]);
    commit(&repo, "give the arithmetic samples ids").assert_code(0);
    // The same records: nothing removed, nothing edited.
    repo.evalock(&["check", "--base", "main"])
        .assert_code(0)
        .assert_contains("PASS");
    // The move may not hide an edit or a removal made with it.
    let edited = with_ids(&text, &["add", "multiply", "subtract"])
        .replace("\"ideal\": \"9\"", "\"ideal\": \"nine\"");
    let dropped: String = edited
        .lines()
        .filter(|line| !line.contains("10-7"))
        .map(|line| format!("{line}\n"))
        .collect();
    repo.write("evals/arithmetic.jsonl", dropped);
    repo.evalock(&["lock"]).assert_code(0);
    repo.git(&["add", "-A"]);
    commit(&repo, "and change two of them").assert_code(0);
    repo.evalock(&["check", "--base", "main"])
        .assert_code(2)
        .assert_contains("evals/arithmetic.jsonl:2: EL102 case-edited-in-place")
        .assert_contains("now identifies cases by the record's `id`, and is compared with the base by its former rule, the content of `input`")
        .assert_contains("EL103 case-removed");
}

/// inspect_ai samples without ids: `init` identifies them by `input` and grades their
/// `target` with inspect's `includes()` scorer; `exact()` is the other choice.
#[test]
fn inspect_samples_are_graded_by_their_target() {
    let repo = TestRepo::new();
    repo.write(
        "evals/capitals.jsonl",
        "{\"input\": \"Capital of France?\", \"target\": \"Paris\"}\n{\"input\": \"Two plus two?\", \"target\": [\"4\", \"four\"]}\n{\"input\": \"Capital of Spain?\", \"target\": \"Madrid\"}\n",
    );
    repo.write(
        "tools/answer.sh",
        "#!/bin/sh\ncat > /dev/null\necho 'it is 4, and Paris'\n",
    );
    repo.evalock(&["init"]).assert_code(0);
    let config = repo.read("evalock.toml");
    assert!(config.contains("grader = \"inspect-includes\""), "{config}");
    repo.write(
        "evalock.toml",
        config.replace(
            "# completer = [\"python3\", \"tools/complete.py\"]",
            "completer = [\"sh\", \"tools/answer.sh\"]",
        ),
    );
    repo.evalock(&["lock"]).assert_code(0);
    let run = repo.evalock(&["run"]);
    run.assert_code(1)
        .assert_contains("3 cases: 2 PASS, 1 FAIL")
        .assert_contains("target_missing:Madrid");
    let results: serde_json::Value =
        serde_json::from_str(&repo.read(".evalock/results.json")).expect("results");
    let keys: Vec<&str> = results["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|case| case["assertions"][0]["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["target includes"; 3]);
    // Exact match: the answers are not the targets, word for word.
    repo.replace(
        "evalock.toml",
        "grader = \"inspect-includes\"",
        "grader = \"inspect-exact\"",
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["run"])
        .assert_code(1)
        .assert_contains("3 cases: 3 FAIL")
        .assert_contains("target_not_exact:Paris");
    // A name that is no grader is refused where it is written.
    repo.replace(
        "evalock.toml",
        "grader = \"inspect-exact\"",
        "grader = \"inspect-fuzzy\"",
    );
    repo.evalock(&["check"])
        .assert_code(65)
        .assert_contains("`inspect-includes` and `inspect-exact`");
}

/// A Git LFS pointer as a checkout without `git lfs pull` holds it, and as git stores the
/// file even when the working tree has it (OpenAI evals keeps its samples so).
const LFS_POINTER: &str = "version https://git-lfs.github.com/spec/v1\noid sha256:8d2599ae3a6c1008a4091b67335cd7f9ca9301a49ddb842d5ffebf46b1245160\nsize 3852\n";

/// A dataset kept in Git LFS is named as one, once, not refused line by line as broken
/// JSON: `init` leaves it out and says why, a check of the pointer says what to do, and
/// the hook (which reads what git stores) says it of the staged pointer although the
/// working tree holds the cases.
#[test]
fn a_dataset_kept_in_git_lfs_is_named_as_a_pointer() {
    let repo = TestRepo::new();
    let case = "{\"id\": \"a\", \"input\": \"hi\", \"expect\": {\"must_include\": [\"hello\"]}}\n";
    repo.write("evals/support.jsonl", case);
    repo.write("evals/registry/samples.jsonl", LFS_POINTER);
    repo.write(
        ".gitattributes",
        "evals/registry/**/*.jsonl filter=lfs diff=lfs merge=lfs -text\n",
    );
    repo.evalock(&["init"]).assert_code(0).assert_contains(
        "skipped case file `evals/registry/samples.jsonl`: a Git LFS pointer, not cases",
    );
    let config = repo.read("evalock.toml");
    assert!(config.contains("evals/support.jsonl"), "{config}");
    assert!(!config.contains("evals/registry/samples.jsonl"), "{config}");

    // Named in a suite by hand, the pointer is one finding at its first line.
    repo.write(
        "evalock.toml",
        format!(
            "{config}\n[[suite]]\nname = \"samples\"\ncases = [\"evals/registry/samples.jsonl\"]\n"
        ),
    );
    let refused = repo.evalock(&["check"]);
    refused
        .assert_code(2)
        .assert_contains("evals/registry/samples.jsonl:1:1: EL105 malformed-case (refuse): a Git LFS pointer, not cases: the file it stands for (sha256:8d2599ae3a6c…, 3852 bytes) is kept outside git")
        .assert_contains("fetch it (`git lfs pull`)")
        .assert_contains("git add --renormalize evals/registry/samples.jsonl")
        .assert_not_contains("expected value");
    assert_eq!(
        refused.all().matches("EL105").count(),
        1,
        "{}",
        refused.all()
    );

    // Fetched, the working tree holds the cases and they lock; git still stores the pointer.
    repo.git(&["add", "-A"]);
    repo.write(
        "evals/registry/samples.jsonl",
        "{\"id\": \"s-1\", \"input\": \"2+2\", \"expect\": {\"must_include\": [\"4\"]}}\n",
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["check"]).assert_code(0);
    repo.git(&["add", "evalock.lock"]);
    repo.evalock(&["check", "--staged"])
        .assert_code(2)
        .assert_contains("evals/registry/samples.jsonl:1:1: EL105")
        .assert_contains("a Git LFS pointer, not cases");
}
