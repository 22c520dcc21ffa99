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
