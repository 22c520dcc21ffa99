//! The properties each fuzz target checks, as plain functions: the fuzz targets call
//! them, and tests/fuzz_regressions.rs replays saved inputs through the very same code.

use evalock::cases::canonical::Canonicalizer;
use evalock::cases::identity::Identity;
use evalock::cases::jsonl_stream::JsonLinesStream;
use evalock::cases::strict_json::StrictValue;
use evalock::cases::{
    parse_case_file, parse_case_file_with, parse_identified_case_file, Case, CaseBody, CaseDetail,
    GradedMembers, ParsedCaseFile,
};
use evalock::digest::canonical_json;
use evalock::graders::probe::probe_builtin;
use evalock::project::config::Config;
use evalock::project::lock::Lock;
use evalock::text::conflict_marker_line;
use evalock::text::require_clean_text;
use serde_json::Value;

/// The first byte picks the format, so one corpus exercises the JSONL, JSON and YAML
/// parsers. Never panics; every problem and case has a 1-based position; ids are clean.
///
/// A differential holds the fast path to the reference: a summary load (JSONL lines
/// canonicalized straight from their text, the graded members kept as their text) gives
/// the cases, digests, graded members, probe outcomes and problems of a full load
/// (serde_json, then RFC 8785 on the value).
/// Records read one by one (CSV, and every format under an identity rule): every
/// problem and case is placed on a real line, identities are never empty, and the
/// summary read agrees with the full one.
pub fn records(data: &[u8]) {
    let Some((selector, bytes)) = data.split_first() else {
        return;
    };
    let path = match selector % 4 {
        // The top selectors read a promptfoo configuration's inline tests.
        _ if *selector >= 240 => "evals/promptfooconfig.yaml",
        0 => "evals/rows.csv",
        1 => "evals/records.jsonl",
        2 => "evals/records.json",
        _ => "evals/records.yaml",
    };
    let identity = match (selector / 4) % 3 {
        0 => Identity::Member,
        1 => Identity::KeyPath("meta.key".to_owned()),
        _ => Identity::Content(vec!["input".to_owned()]),
    };
    let parsed = parse_identified_case_file(path, bytes, CaseDetail::Full, &identity);
    let lines = u32::try_from(bytes.split(|byte| *byte == b'\n').count()).unwrap_or(u32::MAX);
    for problem in &parsed.problems {
        assert!(
            problem.line >= 1 && problem.line <= lines && problem.column >= 1,
            "{problem:?}"
        );
        assert!(!problem.message.is_empty());
    }
    for case in &parsed.cases {
        assert!(
            case.line >= 1 && case.end_line >= case.line && case.end_line <= lines,
            "{case:?}"
        );
        assert!(!case.id.is_empty());
    }
    let summary = parse_identified_case_file(path, bytes, CaseDetail::Summary, &identity);
    assert_eq!(summary.problems, parsed.problems);
    assert_eq!(summary.cases.len(), parsed.cases.len());
}

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
    let summary = parse_case_file_with(path, bytes, CaseDetail::Summary);
    assert_eq!(summary.problems, parsed.problems);
    let graded: Vec<Case> = parsed
        .cases
        .iter()
        .map(|case| Case {
            body: CaseBody::Graded(GradedMembers::of_value(case.value())),
            ..case.clone()
        })
        .collect();
    assert_eq!(summary.cases, graded);
    for (summary, full) in summary.cases.iter().zip(&parsed.cases) {
        assert_eq!(probe_builtin(summary), probe_builtin(full), "{}", full.id);
    }
    // Conflict markers are found by the parse itself, in any format: where a scan of the
    // clean text finds the first one, that marker is the file's only problem.
    if let Some(line) = require_clean_text(bytes)
        .ok()
        .and_then(conflict_marker_line)
    {
        assert!(parsed.cases.is_empty(), "cases beside a conflict marker");
        let lines: Vec<u32> = parsed.problems.iter().map(|problem| problem.line).collect();
        assert_eq!(
            lines,
            [line as u32],
            "the first conflict marker is at line {line}"
        );
        assert!(parsed.problems[0].message.contains("merge conflict"));
    }
    // A JSONL file read in blocks, cut anywhere, gives what the whole text gives.
    if path.ends_with(".jsonl") {
        for block in [1, 7, 64] {
            let mut stream = JsonLinesStream::new(path, CaseDetail::Summary);
            for piece in bytes.chunks(block) {
                stream.push(piece);
            }
            assert_eq!(
                ParsedCaseFile::joined(stream.finish()),
                summary,
                "blocks of {block}"
            );
        }
    }
}

/// RFC 8785 straight from the text (the hot path of `case-v1`): whenever it answers, it
/// gives what strict serde_json and the reference canonicalizer give, with and without
/// the excluded member, each wanted member's raw text is that member's value, and the
/// numbers it flags as finer than a double are the ones a scan of the text finds.
pub fn jcs(data: &[u8]) {
    const WANTED: &[&str] = &["id", "version", "expect"];
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut canonicalizer = Canonicalizer::new();
    let Some(object) = canonicalizer.object(text, WANTED, Some("retired")) else {
        return;
    };
    let value = match serde_json::from_str::<StrictValue>(text) {
        Ok(StrictValue(value)) => value,
        Err(error) => panic!("the fast path accepted what serde_json refuses: {error}"),
    };
    let reference = canonical_json(&value).expect("a parsed value canonicalizes");
    assert_eq!(String::from_utf8_lossy(object.canonical), reference);
    let Value::Object(mut members) = value else {
        panic!("the fast path accepted a top level that is not an object");
    };
    let excluded = members.remove("retired");
    match object.without_excluded {
        Some(without) => {
            assert!(excluded.is_some());
            let reference = canonical_json(&Value::Object(members.clone()))
                .expect("a parsed value canonicalizes");
            assert_eq!(String::from_utf8_lossy(without), reference);
        }
        None => assert!(excluded.is_none()),
    }
    for member in object.members {
        let raw = &text[member.raw_value.clone()];
        let read: Value = serde_json::from_str(raw).expect("a member's raw text is JSON");
        let expected = match member.key {
            "retired" => excluded.as_ref(),
            key => members.get(key),
        };
        assert_eq!(Some(&read), expected, "member `{}`", member.key);
    }
    let reported = |key: &str| object.members.iter().any(|member| member.key == key);
    assert!(WANTED
        .iter()
        .all(|key| reported(key) == members.contains_key(*key)));
    // Numbers finer than a double: what the canonicalizer flags while writing is what the
    // scan of the text finds.
    let scanned = evalock::cases::canonical::imprecise_numbers(text.as_bytes());
    assert_eq!(object.imprecise_numbers, scanned.as_slice());
}

/// evalock.toml: never panics; an error is malformed input (exit 65) at `evalock.toml:line`.
pub fn config(data: &[u8]) {
    if let Err(error) = Config::parse("evalock.toml", data) {
        assert_eq!(error.exit_code(), 65, "{error}");
        assert!(error.to_string().starts_with("evalock.toml:"), "{error}");
    }
}

/// evalock.lock: never panics; errors carry `evalock.lock:line`; whatever parses renders
/// to a lock that parses back to the same value and renders the same again. The lock is
/// read table by table: whatever it reads is what one TOML parse of the whole document
/// reads.
pub fn lock(data: &[u8]) {
    let parsed = Lock::parse("evalock.lock", data);
    match &parsed {
        Ok(lock) => {
            let text = std::str::from_utf8(data).expect("a lock that parses is UTF-8");
            match toml::from_str::<Lock>(text) {
                Ok(reference) => assert_eq!(&reference, lock),
                Err(error) => panic!("a lock that parses is not TOML: {error}"),
            }
            let rendered = lock.render();
            let reparsed = match Lock::parse("evalock.lock", rendered.as_bytes()) {
                Ok(reparsed) => reparsed,
                Err(error) => panic!("a rendered lock does not parse: {error}\n{rendered}"),
            };
            assert_eq!(&reparsed, lock);
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
    use evalock::baselines::BaselineFile;
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
/// so a comment anchored on an added line is always one GitHub accepts; so is the line
/// that shows where removed lines were, and a LEFT-side range of removed lines.
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
            for removal in &hunk.removed {
                assert!(removal.old_first <= removal.old_last, "{hunk:?}");
                if let Some(line) = file.line_where_removed(removal.old_first, removal.old_last) {
                    assert!(diff.accepts_range(&file.path, line, line) || file.deleted);
                }
                // The removed lines themselves can carry one LEFT-side comment, and so can
                // any range anchoring picks among them.
                if let Some((start, end)) =
                    file.removed_lines_within(removal.old_first, removal.old_last)
                {
                    assert!(removal.old_first <= start && start <= end, "{hunk:?}");
                    assert!(end <= removal.old_last, "{hunk:?}");
                    assert!(
                        diff.accepts_removed_range(&file.path, start, end),
                        "{hunk:?}"
                    );
                }
                assert!(
                    diff.accepts_removed_range(&file.path, removal.old_first, removal.old_last),
                    "{hunk:?}"
                );
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

/// Tool-server configurations and `tools/list` snapshots (the first byte picks which):
/// never a panic; every problem sits on a real line of the text with a message; servers
/// have a name and a line inside the text; no credential shape reaches a lock entry.
pub fn mcp(data: &[u8]) {
    let Some((selector, bytes)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(bytes) else {
        return;
    };
    let lines = u32::try_from(text.split('\n').count()).unwrap_or(u32::MAX);
    let within = |finding: &evalock::Finding| {
        let location = finding.location.as_ref().expect("a problem has a location");
        let line = location.line.expect("a problem has a line");
        assert!(line >= 1 && line <= lines, "{finding:?}");
        assert!(!finding.message.is_empty());
    };
    if selector % 2 == 0 {
        let parsed = evalock::mcp::servers::parse(".mcp.json", text);
        parsed.problems.iter().for_each(within);
        for server in &parsed.servers {
            assert!(server.line >= 1 && server.line <= lines, "{server:?}");
            let set = evalock::mcp::McpSet {
                servers: vec![server.clone()],
                ..evalock::mcp::McpSet::default()
            };
            let entry = set.lock_entry(server);
            for arg in entry.args.iter().chain(&entry.url) {
                assert!(!evalock::mcp::secrets::holds_token(arg), "{arg}");
            }
            let _ = evalock::mcp::launch::judge(server);
        }
    } else {
        match evalock::mcp::tools::parse("github", "mcp/github.tools.json", text) {
            Ok(snapshot) => {
                for tool in &snapshot.tools {
                    assert!(tool.line >= 1 && tool.description_line <= lines, "{tool:?}");
                }
                let subject = evalock::finding::Subject::default();
                let _ = evalock::mcp::tools::hidden_instructions(&snapshot, &subject);
                let _ =
                    evalock::mcp::tools::shadowing(&snapshot, &subject, &[&snapshot], &["github"]);
            }
            Err(problem) => within(problem.as_ref()),
        }
    }
}
