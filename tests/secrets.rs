//! Tokens in the environment never reach any output: every reporter `--format` offers
//! (read from `--help`, so new reporters are covered the day they land), written to
//! standard output or to `--output`, error messages, and the files evalock writes; and,
//! with completers that echo their whole environment into completions and errors, `run`
//! in every format, the results file, `report --from`, `review`, baselines and the bodies
//! `evalock github` posts.

mod common;
mod github_support;

use common::{Run, TestRepo};
use github_support::scenario::{Scenario, PROJECT};
use github_support::WRITE_TOKEN;

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

/// Echoes its environment and its request into the completion: without scrubbing, every
/// secret would be in the completion, the results file, the diffs `review` shows, etc.
const ECHO_ENV_COMPLETER: &str = "printf 'hello round %s ' \"$ROUND\"\nenv | sort | tr '\\n' ' '\necho \"token=$GITHUB_TOKEN gh=$GH_TOKEN actions=$ACTIONS_RUNTIME_TOKEN key=$ACME_API_KEY\"\ncat\n";
/// Fails, printing its environment on stderr: the error message quotes stderr's tail.
const ECHO_ENV_FAILING_COMPLETER: &str = "cat > /dev/null\nenv >&2\necho \"token=$GITHUB_TOKEN gh=$GH_TOKEN actions=$ACTIONS_RUNTIME_TOKEN key=$ACME_API_KEY\" >&2\nexit 3\n";

/// Two suites: `echo` passes with the environment in its completions and has a
/// baseline; `broken` fails with the environment on stderr.
fn echoing_project() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("echo.sh", ECHO_ENV_COMPLETER);
    repo.write("fail.sh", ECHO_ENV_FAILING_COMPLETER);
    repo.write(
        "evalock.toml",
        "version = 1\n\n[policy]\ntimeout_secs = 60\nsecrets = [\"ACME_API_KEY\"]\n\n\
         [[suite]]\nname = \"echo\"\ncases = [\"evals/echo.jsonl\"]\nbaseline = \"evals/echo.baseline.json\"\ncompleter = [\"sh\", \"echo.sh\"]\n\n\
         [[suite]]\nname = \"broken\"\ncases = [\"evals/broken.jsonl\"]\ncompleter = [\"sh\", \"fail.sh\"]\n",
    );
    let case = |id: &str| {
        format!("{{\"id\": \"{id}\", \"input\": {{\"text\": \"hi\"}}, \"expect\": {{\"must_include\": [\"hello\"]}}}}\n")
    };
    repo.write("evals/echo.jsonl", case("greet") + &case("wave"));
    repo.write("evals/broken.jsonl", case("crash"));
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("echoing completers");
    repo
}

fn with_round(round: &'static str) -> Vec<(&'static str, &'static str)> {
    [secret_env(), vec![("ROUND", round)]].concat()
}

#[test]
fn completers_echoing_their_environment_leak_no_secret_into_any_output() {
    // Seen firing: with `is_scrubbed` in src/run/process.rs returning false, this test
    // fails at `accept` (its output lists nothing secret, but the baseline it writes
    // holds the echoed token), and the GitHub test below at the first `run`, whose
    // EL504 message quotes the completer's stderr.
    let repo = echoing_project();
    let first = repo.evalock_with(&["run", "--suite", "echo"], &with_round("one"));
    first.assert_code(0);
    let completion = repo.read(".evalock/results.json");
    assert!(
        completion.contains("hello round one") && completion.contains("ROUND=one"),
        "the completer echoes its environment into the completion:\n{completion}"
    );
    run_with_secrets(&repo, &["accept", "--reason", "first"]).assert_code(0);
    assert_no_secret("the baseline", &repo.read("evals/echo.baseline.json"));

    // Round two moves every completion (EL503, with diffs) and `broken` errors (EL504).
    let formats = formats(&repo);
    for format in &formats {
        let run = repo.evalock_with(&["run", "--format", format], &with_round("two"));
        assert_no_secret(&format!("`run --format {format}`"), &run.all());
        assert_eq!(run.code, 1, "{}", run.all());
        assert!(
            run.all().contains("EL504") || format == "sarif" || format == "junit",
            "`run --format {format}` shows the failing completer:\n{}",
            run.all()
        );
    }
    let results = repo.read(".evalock/results.json");
    assert_no_secret("the results file", &results);
    assert!(
        results.contains("EL503") && results.contains("EL504"),
        "{results}"
    );
    assert!(results.contains("exited with status 3"), "{results}");
    for format in &formats {
        run_with_secrets(
            &repo,
            &[
                "report",
                "--from",
                ".evalock/results.json",
                "--format",
                format,
            ],
        );
    }
    let review = run_with_secrets(&repo, &["review"]);
    assert!(
        review.all().contains("ROUND=two"),
        "review shows the moved completions:\n{}",
        review.all()
    );
    run_with_secrets(&repo, &["run", "--suite", "broken", "--out", "broken.json"]);
    assert_no_secret("run --out", &repo.read("broken.json"));
    assert!(
        completion.contains("token= gh= actions= key="),
        "the secrets were withheld, not just hidden:\n{completion}"
    );
}

#[test]
fn bodies_posted_to_github_hold_no_secret() {
    let scenario = Scenario::new();
    let repo = &scenario.repo;
    repo.write(&format!("{PROJECT}/fail.sh"), ECHO_ENV_FAILING_COMPLETER);
    repo.replace(
        &format!("{PROJECT}/evalock.toml"),
        "completer = [\"python3\", \"completers/stub.py\"]",
        "completer = [\"sh\", \"fail.sh\"]",
    );
    let results = scenario.path("results.json");
    let run = repo.evalock_with(
        &[
            "-C",
            PROJECT,
            "run",
            "--out",
            results.to_str().expect("utf-8"),
        ],
        &secret_env(),
    );
    assert_no_secret("`run` in the pull request", &run.all());
    assert!(run.all().contains("EL504"), "{}", run.all());
    // GITHUB_TOKEN is the write token here (the fake GitHub checks it); the other
    // secrets stay in the environment.
    let others: Vec<(&str, &str)> = secret_env()
        .into_iter()
        .filter(|(name, _)| *name != "GITHUB_TOKEN")
        .collect();
    let posted = scenario.github(WRITE_TOKEN, &[&results], &others);
    assert_no_secret("`evalock github`", &posted.all());
    let bodies: Vec<String> = scenario.github.with(|state| {
        let reviews = state.reviews.iter().map(|review| review.body.clone());
        let comments = state
            .review_comments
            .iter()
            .map(|comment| comment.body.clone());
        let issue = state
            .issue_comments
            .iter()
            .map(|comment| comment.body.clone());
        reviews.chain(comments).chain(issue).collect()
    });
    let all = bodies.join("\n---\n");
    assert!(
        all.contains("EL504"),
        "the failing completer was posted:\n{all}"
    );
    assert!(
        all.contains("token="),
        "its stderr was quoted in what was posted:\n{all}"
    );
    assert_no_secret("bodies posted to GitHub", &all);
    assert!(
        !all.contains(WRITE_TOKEN),
        "the write token was posted:\n{all}"
    );
    let summary = std::fs::read_to_string(scenario.path("step-summary.md")).unwrap_or_default();
    assert_no_secret("the step summary", &summary);
}
