//! `evalock.toml` mistakes a user makes on first contact: each is exit 65 at
//! `evalock.toml:line:col`, with a message that says what to write instead.

mod common;

use common::TestRepo;

const ONE_CASE: &str = "{\"id\": \"a\", \"input\": \"hi\"}\n";

/// A repository with one case file and `config` as its evalock.toml.
fn project(config: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.write("evals/support.jsonl", ONE_CASE);
    repo.write("prompts/support.txt", "Answer.\n");
    repo.write("evalock.toml", config);
    repo
}

const SUITE: &str =
    "version = 1\n\n[[suite]]\nname = \"support\"\ncases = [\"evals/support.jsonl\"]\n";

/// Globs and paths that leave the project, or do not compile, point at the value's own
/// line and column, as every other mistake in the file does.
#[test]
fn path_and_glob_errors_point_at_the_line_and_column_of_the_value() {
    for (line, expected) in [
        (
            "prompt = \"../prompts/support.txt\"",
            "evalock.toml:6:10: suite `support`: prompt `../prompts/support.txt`",
        ),
        (
            "baseline = \"/tmp/support.baseline.json\"",
            "evalock.toml:6:12: suite `support`: baseline `/tmp/support.baseline.json`",
        ),
    ] {
        let repo = project(&format!("{SUITE}{line}\n"));
        repo.evalock(&["check"])
            .assert_code(65)
            .assert_contains(expected);
    }
    for (cases, expected) in [
        (
            "[\"evals/[support.jsonl\"]",
            "evalock.toml:5:10: suite `support`: case glob: invalid glob",
        ),
        (
            "[\"../elsewhere/*.jsonl\"]",
            "evalock.toml:5:10: suite `support`: case glob `../elsewhere/*.jsonl`",
        ),
        (
            "[\"/etc/*.jsonl\"]",
            "evalock.toml:5:10: suite `support`: case glob `/etc/*.jsonl`",
        ),
    ] {
        let config = SUITE.replace("[\"evals/support.jsonl\"]", cases);
        project(&config)
            .evalock(&["check"])
            .assert_code(65)
            .assert_contains(expected);
    }
    // Quiet: the same keys with paths inside the project.
    let repo = project(&format!(
        "{SUITE}prompt = \"prompts/support.txt\"\nbaseline = \"evals/support.baseline.json\"\n"
    ));
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["check"]).assert_code(0);
}

/// `[suite]` for `[[suite]]` (and `[skills.acknowledge]` for `[[skills.acknowledge]]`) is
/// the likeliest slip in a hand-written config; serde alone says only that a map is not a
/// sequence.
#[test]
fn a_list_of_tables_written_as_one_table_says_to_double_the_brackets() {
    let config = SUITE.replace("[[suite]]", "[suite]");
    project(&config)
        .evalock(&["check"])
        .assert_code(65)
        .assert_contains("evalock.toml:3:1: `[suite]` opens a single table, but `suite` is a list of tables: write `[[suite]]` above each entry");
    let config = format!(
        "{SUITE}\n[skills]\nroots = [\"skills/*\"]\n\n[skills.acknowledge]\nrule = \"EL205\"\n"
    );
    project(&config)
        .evalock(&["check"])
        .assert_code(65)
        .assert_contains("evalock.toml:10:1: `[skills.acknowledge]` opens a single table, but `skills.acknowledge` is a list of tables: write `[[skills.acknowledge]]` above each entry");
    // Quiet: another wrong type keeps serde's own words.
    let config = SUITE.replace("[\"evals/support.jsonl\"]", "\"evals/support.jsonl\"");
    project(&config)
        .evalock(&["check"])
        .assert_code(65)
        .assert_contains(
            "evalock.toml:5:9: invalid type: string \"evals/support.jsonl\", expected a sequence",
        )
        .assert_not_contains("list of tables");
}

/// An unknown key that is a slip away from a real one (a typo, a plural, a key cut short)
/// names the key it probably meant, besides listing them all.
#[test]
fn an_unknown_key_names_the_key_it_probably_meant() {
    for (line, unknown, meant) in [
        ("promt = \"prompts/support.txt\"", "promt", "prompt"),
        ("prompts = \"prompts/support.txt\"", "prompts", "prompt"),
        ("completor = [\"python3\"]", "completor", "completer"),
        ("timeout = 5", "timeout", "timeout_secs"),
    ] {
        project(&format!("{SUITE}{line}\n"))
            .evalock(&["check"])
            .assert_code(65)
            .assert_contains(&format!(
                "evalock.toml:6:1: unknown field `{unknown}`, expected one of"
            ))
            .assert_contains(&format!("; did you mean `{meant}`?"));
    }
    project("version = 1\n\n[policy]\nagrement_min = 0.5\n")
        .evalock(&["check"])
        .assert_code(65)
        .assert_contains("did you mean `agreement_min`?");
    // Quiet: a key like none of them gets the list alone.
    project(&format!("{SUITE}xyz = 1\n"))
        .evalock(&["check"])
        .assert_code(65)
        .assert_contains("unknown field `xyz`, expected one of")
        .assert_not_contains("did you mean");
}

/// `max_output_bytes = 0` would turn every completion into an EL504 error; it is refused
/// where it is written, as an out-of-range `agreement_min` is.
#[test]
fn policy_values_that_no_run_could_pass_are_refused_at_their_key() {
    project(&format!("{SUITE}\n[policy]\nmax_output_bytes = 0\n"))
        .evalock(&["check"])
        .assert_code(65)
        .assert_contains("evalock.toml:8:1: policy.max_output_bytes must be at least 1");
    project(&format!(
        "{SUITE}\n[policy]\ntimeout_secs = 5\nagreement_min = 1.5\n"
    ))
    .evalock(&["check"])
    .assert_code(65)
    .assert_contains("evalock.toml:9:1: policy.agreement_min must be between 0.0 and 1.0");
    project(&format!("{SUITE}\n[policy]\ntimeout_secs = 0\n"))
        .evalock(&["check"])
        .assert_code(65)
        .assert_contains("evalock.toml:8:1: policy.timeout_secs must be at least 1 second");
    project(&SUITE.replace("\ncases", "\ntimeout_secs = 0\ncases"))
        .evalock(&["check"])
        .assert_code(65)
        .assert_contains("suite `support`: timeout_secs must be at least 1 second");
    // Quiet: the smallest cap and the shortest timeout are allowed.
    let repo = project(&format!(
        "{SUITE}\n[policy]\nmax_output_bytes = 1\ntimeout_secs = 1\n"
    ));
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["check"]).assert_code(0);
}

/// Type errors name the type as a person would, not as Rust spells it; the location is
/// the value's.
#[test]
fn a_number_written_as_a_string_says_a_whole_number_is_expected() {
    project(&SUITE.replace("version = 1", "version = \"1\""))
        .evalock(&["check"])
        .assert_code(65)
        .assert_contains(
            "evalock.toml:1:11: invalid type: string \"1\", expected a whole number, 0 or more",
        )
        .assert_not_contains("u32");
    project(&format!("{SUITE}\n[policy]\nagreement_min = \"all\"\n"))
        .evalock(&["check"])
        .assert_code(65)
        .assert_contains("expected a number")
        .assert_not_contains("f64");
}

/// serde quotes the value it could not take: a megabyte string is cut in the message, not
/// printed whole; the location still names the value.
#[test]
fn a_huge_wrong_value_is_quoted_short() {
    let huge = "x".repeat(200_000);
    let run = project(&SUITE.replace("version = 1", &format!("version = \"{huge}\"")))
        .evalock(&["check"]);
    run.assert_code(65)
        .assert_contains("evalock.toml:1:11: invalid type: string \"xxxx")
        .assert_contains("…");
    assert!(
        run.all().len() < 2_000,
        "{} bytes of output",
        run.all().len()
    );
}

/// `accept` rewrites a suite's baseline file whole: two suites sharing one would drop each
/// other's entries, and each would read the other's file as tampered (EL402). Refused when
/// the config is read, at the second `baseline` line, naming the first.
#[test]
fn two_suites_naming_one_baseline_file_are_refused_at_both_lines() {
    let two_suites = |second_baseline: &str| {
        format!(
            "{SUITE}baseline = \"evals/support.baseline.json\"\n\n[[suite]]\nname = \"escalation\"\ncases = [\"evals/escalation.jsonl\"]\nbaseline = \"{second_baseline}\"\n"
        )
    };
    // Quiet: a file of its own; its run leaves results for review and accept to read.
    let repo = project(&two_suites("evals/escalation.baseline.json"));
    repo.write(
        "evals/escalation.jsonl",
        "{\"id\": \"b\", \"input\": \"hi\"}\n",
    );
    repo.write(
        "completions.jsonl",
        "{\"case_id\": \"a\", \"completion\": \"ok\"}\n{\"case_id\": \"b\", \"completion\": \"ok\"}\n",
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["check"]).assert_code(0);
    // Cases without `expect` fail: the run still writes its results.
    repo.evalock(&["run", "--completions", "completions.jsonl"])
        .assert_code(1);
    repo.write("evalock.toml", two_suites("evals/support.baseline.json"));
    for command in [
        &["check"][..],
        &["lock"],
        &["run", "--completions", "completions.jsonl"],
        &["review"],
        &["accept", "--reason", "x"],
    ] {
        repo.evalock(command)
            .assert_code(65)
            .assert_contains("evalock.toml:11:1: suite `escalation`: baseline `evals/support.baseline.json` is also suite `support`'s baseline `evals/support.baseline.json` (evalock.toml:6:1)")
            .assert_contains("such as `evals/escalation.baseline.json`");
    }
    assert!(!repo.join("evals/support.baseline.json").exists());
}

/// A baseline the project also reads as something else gives wrong verdicts: matched by a
/// case glob, every `accept` turns it into malformed and unlocked cases; a prompt, the lock
/// or evalock.toml read as a baseline is "tampered". Baselines differing only in letter
/// case are one file on macOS and Windows. Each is refused when the config is read, at
/// the `baseline` line, naming the line it collides with.
#[test]
fn a_baseline_that_is_also_another_project_file_is_refused_at_its_line() {
    let with_baseline = |cases: &str, baseline: &str| {
        format!(
            "version = 1\n\n[[suite]]\nname = \"support\"\ncases = [\"{cases}\"]\nprompt = \"prompts/support.txt\"\nbaseline = \"{baseline}\"\n\n[[suite]]\nname = \"escalation\"\ncases = [\"other/*.yaml\"]\nbaseline = \"other/escalation.baseline.json\"\n"
        )
    };
    // Quiet: a case glob that reaches case files only, and a baseline beside them.
    let repo = project(&with_baseline(
        "evals/*.jsonl",
        "evals/support.baseline.json",
    ));
    repo.write("other/escalation.yaml", "- id: b\n  input: hi\n");
    repo.write(
        "completions.jsonl",
        "{\"case_id\": \"a\", \"completion\": \"ok\"}\n",
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["check"]).assert_code(0);
    for (cases, baseline, expected) in [
        (
            "evals/*",
            "evals/support.baseline.json",
            "evalock.toml:7:1: suite `support`: baseline `evals/support.baseline.json` is also a case file of suite `support`: its case glob `evals/*` (evalock.toml:5)",
        ),
        (
            "evals/*.jsonl",
            "evals/support.jsonl",
            "is also a case file of suite `support`: its case glob `evals/*.jsonl` (evalock.toml:5)",
        ),
        // A case path without a wildcard, as `init` writes one for each file.
        (
            "evals/support.jsonl",
            "evals/Support.jsonl",
            "is also a case file of suite `support`: its case glob `evals/support.jsonl` (evalock.toml:5)",
        ),
        (
            "evals/*.jsonl",
            "other/support.yaml",
            "is also a case file of suite `escalation`: its case glob `other/*.yaml` (evalock.toml:11)",
        ),
        (
            "evals/*.jsonl",
            "prompts/Support.txt",
            "is also suite `support`'s prompt `prompts/support.txt` (evalock.toml:6:1)",
        ),
        ("evals/*.jsonl", "evalock.lock", "is also the project's `evalock.lock`"),
        (
            "evals/*.jsonl",
            ".evalock/results.json",
            "is also inside `.evalock/`, the folder where `evalock run` writes its results (`.evalock/results.json`), the cache and accept's lock; a baseline file holds one suite's last-good completions and only `evalock accept` writes it: keep baselines with the cases, such as `evals/support.baseline.json`",
        ),
        ("evals/*.jsonl", "Evalock.toml", "is also the project's `evalock.toml`"),
        (
            "evals/*.jsonl",
            "Other/Escalation.baseline.json",
            "evalock.toml:12:1: suite `escalation`: baseline `other/escalation.baseline.json` is also suite `support`'s baseline `Other/Escalation.baseline.json` (evalock.toml:7:1), one file where letter case does not count",
        ),
    ] {
        repo.write("evalock.toml", with_baseline(cases, baseline));
        for command in [
            &["check"][..],
            &["lock"],
            &["run", "--completions", "completions.jsonl"],
            &["accept", "--reason", "x"],
        ] {
            repo.evalock(command)
                .assert_code(65)
                .assert_contains(expected);
        }
    }
    assert_eq!(repo.read("evals/support.jsonl"), ONE_CASE);
}

/// Skills are pinned file by file: a baseline inside a skill folder would be a new,
/// unlisted skill file after the first accept (EL201). Refused when the config is read,
/// at the `baseline` line, naming the folder and the `roots` line; a baseline beside the
/// cases, with the same skills root, is quiet.
#[test]
fn a_baseline_inside_a_skill_folder_is_refused_at_its_line() {
    let with_baseline = |baseline: &str| {
        format!(
            "version = 1\n\n[[suite]]\nname = \"support\"\ncases = [\"evals/*.jsonl\"]\nbaseline = \"{baseline}\"\n\n[skills]\nroots = [\"skills/*\"]\nallowed_permissions = [\"Read\"]\n"
        )
    };
    let repo = project(&with_baseline("evals/support.baseline.json"));
    repo.write(
        "skills/refund/SKILL.md",
        "---\nname: refund\ndescription: Refunds orders.\nallowed-tools: Read\nmetadata:\n  version: 1.0.0\n---\nRefund the order.\n",
    );
    repo.write(
        "completions.jsonl",
        "{\"case_id\": \"a\", \"completion\": \"ok\"}\n",
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["check"]).assert_code(0);
    repo.write(
        "evalock.toml",
        with_baseline("skills/refund/support.baseline.json"),
    );
    for command in [
        &["check"][..],
        &["lock"],
        &["run", "--completions", "completions.jsonl"],
        &["accept", "--reason", "x"],
    ] {
        repo.evalock(command)
            .assert_code(65)
            .assert_contains("evalock.toml:6:1: suite `support`: baseline `skills/refund/support.baseline.json` is also inside skill folder `skills/refund`: the skills roots glob `skills/*` (evalock.toml:9) names it")
            .assert_contains("such as `evals/support.baseline.json`");
    }
    assert!(!repo.join("skills/refund/support.baseline.json").exists());

    // Deeper in a skill, or in a folder `vendored` names: the same.
    for (baseline, expected) in [
        (
            "skills/Refund/data/support.baseline.json",
            "is also inside skill folder `skills/Refund`: the skills roots glob `skills/*` (evalock.toml:9) names it",
        ),
        (
            "vendor/tool/support.baseline.json",
            "is also inside skill folder `vendor/tool`: the skills vendored glob `vendor/*` (evalock.toml:11) names it",
        ),
    ] {
        repo.write(
            "evalock.toml",
            format!("{}vendored = [\"vendor/*\"]\n", with_baseline(baseline)),
        );
        repo.evalock(&["check"])
            .assert_code(65)
            .assert_contains(expected);
    }
    // Beside the skill folders, not in one: quiet.
    repo.write(
        "evalock.toml",
        with_baseline("skills/support.baseline.json"),
    );
    repo.evalock(&["check"]).assert_code(0);
}
