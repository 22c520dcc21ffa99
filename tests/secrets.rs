//! Tokens in the environment never reach any output: every reporter `--format` offers
//! (read from `--help`, so new reporters are covered the day they land), written to
//! standard output or to `--output`, error messages, and the files evalock writes.

mod common;

use common::{Run, TestRepo};

const FAKE_GITHUB_TOKEN: &str = "ghp_FAKEevalockHardeningToken0123456789ab";
const FAKE_ACTIONS_TOKEN: &str = "ACTIONS_FAKE_runtime_token_ZZ9";
/// The demo's evalock.toml lists ACME_API_KEY under `[policy] secrets`.
const FAKE_CONFIGURED_SECRET: &str = "acme_FAKE_configured_secret_77";

const SECRETS: [&str; 3] = [
    FAKE_GITHUB_TOKEN,
    FAKE_ACTIONS_TOKEN,
    FAKE_CONFIGURED_SECRET,
];

fn secret_env() -> Vec<(&'static str, &'static str)> {
    vec![
        ("GITHUB_TOKEN", FAKE_GITHUB_TOKEN),
        ("GH_TOKEN", FAKE_GITHUB_TOKEN),
        ("ACTIONS_RUNTIME_TOKEN", FAKE_ACTIONS_TOKEN),
        ("ACTIONS_ID_TOKEN_REQUEST_TOKEN", FAKE_ACTIONS_TOKEN),
        ("ACME_API_KEY", FAKE_CONFIGURED_SECRET),
    ]
}

#[track_caller]
fn assert_no_secret(what: &str, text: &str) {
    for secret in SECRETS {
        assert!(!text.contains(secret), "{what} leaks a secret:\n{text}");
    }
}

fn run_with_secrets(repo: &TestRepo, args: &[&str]) -> Run {
    let run = repo.evalock_with(args, &secret_env());
    assert_no_secret(&format!("`evalock {}`", args.join(" ")), &run.all());
    run
}

/// Every value `check --format` accepts, as clap lists them in `--help`.
fn formats(repo: &TestRepo) -> Vec<String> {
    let help = repo.evalock(&["check", "--help"]).stdout;
    let mut formats = Vec::new();
    let mut in_format = false;
    for line in help.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("--format") {
            in_format = true;
            continue;
        }
        if in_format {
            if trimmed.starts_with("--") || (trimmed.is_empty() && !formats.is_empty()) {
                break;
            }
            if let Some(value) = trimmed.strip_prefix("- ") {
                formats.push(value.split(':').next().unwrap_or(value).trim().to_owned());
            }
        }
    }
    formats
}

/// A project with findings of several kinds, so every reporter has something to say.
fn project_with_findings() -> TestRepo {
    let repo = TestRepo::with_fixture("demo");
    repo.replace(
        "evals/support.jsonl",
        "I want my money back.",
        "I want my money back now.",
    );
    repo.write(
        "evals/support.jsonl",
        repo.read("evals/support.jsonl") + "{\"id\": \"broken\", \"x\": NaN}\n",
    );
    repo.replace("prompts/support.txt", "Rules:", "Rules (edited):");
    repo
}

#[test]
fn no_reporter_prints_or_writes_a_secret() {
    let repo = project_with_findings();
    let formats = formats(&repo);
    assert!(
        formats.contains(&"human".to_owned()) && formats.contains(&"json".to_owned()),
        "formats found: {formats:?}"
    );
    for format in &formats {
        let run = run_with_secrets(&repo, &["check", "--format", format]);
        assert_eq!(
            run.code,
            2,
            "`check --format {format}` should refuse the edits:\n{}",
            run.all()
        );
        let out = format!("report.{format}");
        run_with_secrets(&repo, &["check", "--format", format, "--output", &out]);
        assert_no_secret(
            &format!("--output of --format {format}"),
            &String::from_utf8_lossy(&repo.read_bytes(&out)),
        );
        run_with_secrets(&repo, &["check", "--base", "HEAD", "--format", format]);
    }
}

#[test]
fn no_command_or_error_message_prints_a_secret() {
    let repo = project_with_findings();
    run_with_secrets(&repo, &["lock", "--check"]);
    run_with_secrets(&repo, &["lock", "--check", "--format", "json"]);
    run_with_secrets(&repo, &["rules"]);
    run_with_secrets(&repo, &["check", "--rev", "no-such-revision"]);
    run_with_secrets(&repo, &["check", "--no-such-flag"]);
    run_with_secrets(&repo, &["-C", "no-such-directory", "check"]);
    // CI refuses to write the lock; the refusal must not quote the environment.
    let refused = repo.evalock_with(&["lock"], &[secret_env(), vec![("CI", "true")]].concat());
    assert_eq!(refused.code, 2, "{}", refused.all());
    assert_no_secret("the CI refusal", &refused.all());
    // A broken config: the error names the file and line, nothing of the environment.
    repo.replace(
        "evalock.toml",
        "timeout_secs = 20",
        "timeout_secs = \"$GITHUB_TOKEN\"",
    );
    let malformed = run_with_secrets(&repo, &["check"]);
    assert_eq!(malformed.code, 65, "{}", malformed.all());
}

#[test]
fn files_evalock_writes_hold_no_secret() {
    let repo = project_with_findings();
    repo.replace(
        "evals/support.jsonl",
        "{\"id\": \"broken\", \"x\": NaN}\n",
        "",
    );
    run_with_secrets(&repo, &["lock"]).assert_code(0);
    assert_no_secret("evalock.lock", &repo.read("evalock.lock"));
    repo.remove("evalock.toml");
    run_with_secrets(&repo, &["init"]).assert_code(0);
    assert_no_secret("evalock.toml from init", &repo.read("evalock.toml"));
}

#[test]
fn the_leak_detector_itself_sees_a_leak() {
    // Guards the test: a command that echoes its argument does show up.
    let repo = TestRepo::new();
    let run = repo.evalock_with(&["rules", FAKE_GITHUB_TOKEN], &secret_env());
    assert!(run.all().contains(FAKE_GITHUB_TOKEN), "{}", run.all());
}
