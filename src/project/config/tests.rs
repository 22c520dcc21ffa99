use super::*;

#[test]
fn each_case_glob_knows_its_line_within_its_own_suite() {
    let text = "[[suite]]\nname = \"a\"\ncases = [\"shared/*.jsonl\"]\n\n[[suite]]\nname = \"b\"\ncases = [\n  \"b/*.jsonl\",\n  'shared/*.jsonl',\n  \"c/\\u002A.yaml\",\n]\n";
    let config = Config::parse("evalock.toml", text.as_bytes()).unwrap();
    let lines = |index: usize| -> Vec<u32> {
        config.suites[index]
            .case_globs()
            .map(|(_, line)| line)
            .collect()
    };
    assert_eq!(lines(0), vec![3]);
    // Not the first suite's glob that reads the same; an escaped one falls back to
    // the `cases` key.
    assert_eq!(lines(1), vec![8, 9, 7]);
}

#[test]
fn a_bad_suite_value_is_reported_on_its_own_line() {
    let text = "[[suite]]\nname = \"a\"\ncases = [\"a.jsonl\"]\n\n[[suite]]\nname = \"b\"\ncases = [\"b.jsonl\"]\n# grader = \"commented\"\nmodel = \"m\"\n  grader = \"nope\"\nnormalizer = \"ws-v1\"\n";
    let error = Config::parse("evalock.toml", text.as_bytes()).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("evalock.toml:10:3: suite `b` names grader `nope`"),
        "{error}"
    );
    let text = text
        .replace("  grader = \"nope\"\n", "")
        .replace("ws-v1", "ws-v9");
    let error = Config::parse("evalock.toml", text.as_bytes()).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("evalock.toml:10:1: suite `b`: unknown normalizer"),
        "{error}"
    );
}

#[test]
fn parses_a_minimal_config() {
    let config = Config::parse(
        "evalock.toml",
        b"[[suite]]\nname = \"support\"\ncases = [\"evals/*.jsonl\"]\nprompt = \"prompts/support.txt\"\n",
    )
    .unwrap();
    assert_eq!(config.suites[0].name(), "support");
    assert_eq!(config.suites[0].prompt_paths(), vec!["prompts/support.txt"]);
    assert_eq!(config.suites[0].normalizer, "exact");
}

#[test]
fn unknown_keys_are_errors_with_a_line() {
    let error = Config::parse(
        "evalock.toml",
        b"[[suite]]\nname = \"s\"\ncases = [\"a\"]\ncasess = 1\n",
    )
    .unwrap_err();
    let message = error.to_string();
    assert!(message.starts_with("evalock.toml:4:"), "{message}");
    assert!(message.contains("casess"), "{message}");
    assert_eq!(error.exit_code(), 65);
}

#[test]
fn unknown_grader_reference_points_at_its_line() {
    let error = Config::parse(
        "evalock.toml",
        b"\n[[suite]]\nname = \"s\"\ncases = [\"a\"]\ngrader = \"nope\"\n",
    )
    .unwrap_err();
    assert!(
        error.to_string().starts_with("evalock.toml:5:1:"),
        "{error}"
    );
}

#[test]
fn duplicate_suite_names_are_refused() {
    let error = Config::parse(
        "c",
        b"[[suite]]\nname = \"s\"\ncases = [\"a\"]\n[[suite]]\nname = \"s\"\ncases = [\"b\"]\n",
    )
    .unwrap_err();
    assert!(error.to_string().contains("defined twice"));
}

#[test]
fn grader_versions_accept_strings_and_integers() {
    let config = Config::parse(
        "c",
        b"[grader.a]\nversion = 3\n[grader.b]\nversion = \"sem-2026-09-16\"\n",
    )
    .unwrap();
    assert_eq!(config.graders["a"].version.0, "3");
    assert_eq!(config.graders["b"].version.0, "sem-2026-09-16");
}
