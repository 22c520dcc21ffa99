//! The properties each fuzz target checks, as plain functions: the fuzz targets call
//! them, and tests/fuzz_regressions.rs replays saved inputs through the very same code.

use evalock::model::{cases::parse_case_file, Config, Lock};

/// The first byte picks the format, so one corpus exercises the JSONL, JSON and YAML
/// parsers. Never panics; every problem and case has a 1-based position; ids are clean.
pub fn case_file(data: &[u8]) {
    let Some((selector, bytes)) = data.split_first() else {
        return;
    };
    let path = match selector % 3 {
        0 => "evals/cases.jsonl",
        1 => "evals/cases.json",
        _ => "evals/cases.yaml",
    };
    let parsed = parse_case_file(path, bytes);
    for problem in &parsed.problems {
        assert!(problem.line >= 1 && problem.column >= 1, "{problem:?}");
        assert!(!problem.message.is_empty());
    }
    for case in &parsed.cases {
        assert!(case.line >= 1 && case.end_line >= case.line, "{case:?}");
        assert!(
            !case.id.trim().is_empty() && !case.id.chars().any(char::is_control),
            "{:?}",
            case.id
        );
        assert!(case.version >= 1);
    }
}

/// evalock.toml: never panics; an error is malformed input (exit 65) at `evalock.toml:line`.
pub fn config(data: &[u8]) {
    if let Err(error) = Config::parse("evalock.toml", data) {
        assert_eq!(error.exit_code(), 65, "{error}");
        assert!(error.to_string().starts_with("evalock.toml:"), "{error}");
    }
}

/// evalock.lock: never panics; errors carry `evalock.lock:line`; whatever parses renders
/// to a lock that parses back to the same value and renders the same again.
pub fn lock(data: &[u8]) {
    match Lock::parse("evalock.lock", data) {
        Ok(lock) => {
            let rendered = lock.render();
            let reparsed = match Lock::parse("evalock.lock", rendered.as_bytes()) {
                Ok(reparsed) => reparsed,
                Err(error) => panic!("a rendered lock does not parse: {error}\n{rendered}"),
            };
            assert_eq!(reparsed, lock);
            assert_eq!(reparsed.render(), rendered);
        }
        Err(error) => {
            assert_eq!(error.exit_code(), 65, "{error}");
            assert!(error.to_string().starts_with("evalock.lock:"), "{error}");
        }
    }
}

/// SKILL.md front matter: never panics; problems and located values have 1-based lines.
pub fn skill_front_matter(data: &[u8]) {
    match evalock::skills::front_matter::parse_front_matter(data) {
        Ok(front_matter) => {
            assert!(front_matter.end_line >= 1);
            for located in [&front_matter.name, &front_matter.description]
                .into_iter()
                .flatten()
            {
                assert!(located.line >= 1 && located.end_line >= located.line);
            }
        }
        Err(problem) => assert!(
            problem.line >= 1 && !problem.message.is_empty(),
            "{problem:?}"
        ),
    }
}

/// skill.json: never panics; problems have 1-based lines.
pub fn skill_manifest(data: &[u8]) {
    match evalock::skills::manifest::parse_manifest(data) {
        Ok((_, problems)) => {
            for problem in problems {
                assert!(
                    problem.line >= 1 && !problem.message.is_empty(),
                    "{problem:?}"
                );
            }
        }
        Err(problem) => assert!(
            problem.line >= 1 && !problem.message.is_empty(),
            "{problem:?}"
        ),
    }
}

/// Baseline files (`evals/<suite>.baseline.json`): never panics; a problem has a 1-based
/// position and a message; whatever parses renders to the same file `accept` would write,
/// which parses back to the same value.
pub fn baseline(data: &[u8]) {
    use evalock::model::BaselineFile;
    match BaselineFile::parse("support", data) {
        Ok(file) => {
            let rendered = file.render();
            let reparsed = match BaselineFile::parse("support", rendered.as_bytes()) {
                Ok(reparsed) => reparsed,
                Err(problem) => panic!("a rendered baseline does not parse: {problem:?}"),
            };
            assert_eq!(reparsed, file);
            assert_eq!(reparsed.render(), rendered);
        }
        Err((line, column, message)) => {
            assert!(line >= 1 && column >= 1, "{line}:{column}: {message}");
            assert!(!message.is_empty());
        }
    }
}

/// Results files (`evalock.results/v1`) and saved reports, as `report --from` reads them:
/// never panics; an error is exit 65 naming `results.json:`; a results file round-trips,
/// and every reporter renders whatever was read.
pub fn results(data: &[u8]) {
    use evalock::report::{self, read_report};
    use evalock::run::results::Results;
    if let Ok(results) = Results::parse("results.json", data) {
        let rendered = results.render();
        match Results::parse("results.json", rendered.as_bytes()) {
            Ok(reparsed) => assert_eq!(reparsed.render(), rendered),
            Err(error) => panic!("rendered results do not parse: {error}\n{rendered}"),
        }
    }
    match read_report("results.json", data) {
        Ok(read) => {
            let _ = report::human::render(&read, false);
            let _ = report::json::render(&read);
            let _ = report::junit::render(&read);
            let _ = report::markdown::render(&read);
            let _ = report::sarif::render(&read);
            let _ = report::github::render(&read);
            let _ = read.exit_code();
        }
        Err(error) => {
            assert_eq!(error.exit_code(), 65, "{error}");
            assert!(error.to_string().starts_with("results.json"), "{error}");
        }
    }
}

/// The unified-diff hunk parser (`evalock github` anchors review comments with it):
/// never panics; every file has a path; every added line lies inside its hunk, ascending,
/// so a comment anchored on an added line is always one GitHub accepts.
pub fn diff(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let diff = evalock::github::PullDiff::parse(&text);
    for file in diff.files() {
        assert!(!file.path.is_empty());
        for hunk in &file.hunks {
            assert!(
                hunk.added.windows(2).all(|pair| pair[0] < pair[1]),
                "{hunk:?}"
            );
            for &line in &hunk.added {
                assert!(hunk.contains(line), "{hunk:?}");
                assert!(diff.accepts_range(&file.path, line, line) || file.deleted);
            }
            if let Some(last) = hunk.last_line() {
                assert!(last >= hunk.new_start);
                let _ = diff.accepts_range(&file.path, hunk.new_start, last);
            }
        }
    }
}

/// Webhook event payloads (`GITHUB_EVENT_PATH`): never panics; a pull request read from
/// one names a real `owner/name` and two full commit ids.
pub fn event(data: &[u8]) {
    let Ok(payload) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    for repository in [None, Some("octo/evals")] {
        match evalock::github::pull_request_from_payload(&payload, repository) {
            Ok(pull) => {
                assert!(!pull.owner.is_empty() && !pull.repo.is_empty());
                assert!(!pull.owner.contains('/') && !pull.repo.contains('/'));
                for sha in [&pull.head_sha, &pull.base_sha] {
                    assert!(sha.len() == 40 && sha.bytes().all(|b| b.is_ascii_hexdigit()));
                }
            }
            Err(message) => assert!(!message.is_empty()),
        }
    }
}
