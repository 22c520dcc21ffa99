use super::*;
use crate::digest::bytes_digest;

fn sample() -> Lock {
    let mut lock = Lock::new();
    lock.suites.insert(
        "support".into(),
        SuiteLock {
            digest: bytes_digest(b"suite"),
            prompt: Some(bytes_digest(b"prompt")),
            prompts: [("prompts/support.txt".to_owned(), bytes_digest(b"prompt"))].into(),
        },
    );
    lock.graders.insert(
        "strict".into(),
        GraderLock {
            files: [("graders/strict.py".to_owned(), bytes_digest(b"py"))].into(),
            ..GraderLock::new(
                "struct-3",
                GraderKind::Command,
                Some(vec!["python3".into(), "graders/strict.py".into()]),
                bytes_digest(b"tree"),
            )
        },
    );
    let cases = lock.cases.entry("support".into()).or_default();
    cases.insert(
        "refund \"quoted\" id".into(),
        CaseLock {
            version: 3,
            digest: bytes_digest(b"a"),
            file: "evals/support.jsonl".into(),
            retired: false,
        },
    );
    cases.insert(
        "old-case".into(),
        CaseLock {
            version: 1,
            digest: bytes_digest(b"b"),
            file: "evals/support.jsonl".into(),
            retired: true,
        },
    );
    lock
}

#[test]
fn render_then_parse_round_trips() {
    let lock = sample();
    let text = lock.render();
    assert_eq!(Lock::parse("evalock.lock", text.as_bytes()).unwrap(), lock);
    assert_eq!(
        text,
        Lock::parse("evalock.lock", text.as_bytes())
            .unwrap()
            .render(),
        "render must be stable"
    );
}

#[test]
fn each_case_is_its_own_line_group() {
    let text = sample().render();
    assert!(
        text.contains("\n[case.support.old-case]\nversion = 1\n"),
        "{text}"
    );
    assert!(
        text.contains("[case.support.\"refund \\\"quoted\\\" id\"]"),
        "{text}"
    );
}

#[test]
fn conflict_markers_are_whole_line_markers() {
    let cases: &[(&str, Option<usize>)] = &[
        ("<<<<<<< HEAD\n", Some(1)),
        ("a\n=======", Some(2)),
        ("a\n=======\nb", Some(2)),
        ("a\n=======x\n>>>>>>> b", Some(3)),
        ("a\n<<<<<<<\n x <<<<<<< y\n", None),
        ("x = \"=======\"\n\n\n>>>>>>> other\n<<<<<<< HEAD", Some(4)),
        ("<a>\n=b\n>>>>>>>\n==\n=======\n", Some(5)),
        ("{\"a\": \"<<<<<<< \"}\n{\"b\": 1}\n", None),
        ("=======", Some(1)),
        (">>>>>>> x", Some(1)),
        ("", None),
    ];
    for (text, line) in cases {
        assert_eq!(conflict_marker_line(text), *line, "{text:?}");
    }
}

#[test]
fn conflict_markers_are_reported_with_their_line() {
    let text = "lock_version = 1\n<<<<<<< HEAD\nx\n=======\ny\n>>>>>>> branch\n";
    let error = Lock::parse("evalock.lock", text.as_bytes()).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("evalock.lock:2: unresolved merge conflict"),
        "{error}"
    );
    assert_eq!(error.exit_code(), 65);
}

#[test]
fn truncated_lock_is_malformed_with_a_line() {
    let text = sample().render();
    let truncated = &text[..text.len() - 20];
    let error = Lock::parse("evalock.lock", truncated.as_bytes()).unwrap_err();
    assert!(error.to_string().starts_with("evalock.lock:"), "{error}");
}

#[test]
fn traversal_in_lock_paths_is_refused() {
    let text = sample()
        .render()
        .replace("evals/support.jsonl", "../../etc/passwd");
    assert!(Lock::parse("evalock.lock", text.as_bytes()).is_err());
}

#[test]
fn ids_with_control_characters_are_refused_at_their_line() {
    let with_id = |id: &str| {
        let mut lock = sample();
        let entry = CaseLock {
            version: 1,
            digest: bytes_digest(id.as_bytes()),
            file: Arc::from("evals/support.jsonl"),
            retired: false,
        };
        lock.cases
            .entry("support".into())
            .or_default()
            .insert(id.to_owned(), entry);
        let text = lock.render();
        (Lock::parse("evalock.lock", text.as_bytes()), text)
    };
    // C0, DEL and C1 controls, in ASCII ids and in ids with other characters.
    for id in [
        "a\u{0}",
        "a\nb",
        "a\u{1f}",
        "a\u{7f}",
        "\u{e9}\u{7f}",
        "\u{e9}\u{85}",
        "\u{9f}",
    ] {
        let (parsed, text) = with_id(id);
        let error = parsed.unwrap_err().to_string();
        assert!(
            error.contains("contains control characters"),
            "{id:?}: {error}"
        );
        let line = 1 + text
            .lines()
            .position(|line| line.contains(&toml_string(id)))
            .unwrap();
        assert!(
            error.starts_with(&format!("evalock.lock:{line}:")),
            "{id:?}: {error}"
        );
    }
    for id in ["a b", "a~", "\u{e9}t\u{e9}", "\u{a0}", "\u{2028}"] {
        assert!(with_id(id).0.is_ok(), "{id:?}");
    }
}

#[test]
fn every_distinct_file_of_a_suite_is_checked_even_after_shared_ones() {
    for bad_id in ["a-1", "a-3", "a-5"] {
        let mut lock = sample();
        let cases = lock.cases.entry("support".into()).or_default();
        let shared: Arc<str> = Arc::from("evals/shared.jsonl");
        for index in 1..=5 {
            let id = format!("a-{index}");
            let file = match id == bad_id {
                true => Arc::from("evals/../../outside.jsonl"),
                false => Arc::clone(&shared),
            };
            let entry = CaseLock {
                version: 1,
                digest: bytes_digest(id.as_bytes()),
                file,
                retired: false,
            };
            cases.insert(id, entry);
        }
        let error = Lock::parse("evalock.lock", lock.render().as_bytes()).unwrap_err();
        assert!(
            error
                .to_string()
                .contains(&format!("case `support/{bad_id}`")),
            "{error}"
        );
    }
}

#[test]
fn a_lock_read_from_the_working_tree_streams_and_still_locates_its_errors() {
    let directory = tempfile::tempdir().unwrap();
    let source = crate::source::WorktreeSource::new(directory.path());
    assert_eq!(Lock::read(&source, "evalock.lock").unwrap(), None);

    let text = sample().render();
    std::fs::write(directory.path().join("evalock.lock"), &text).unwrap();
    assert_eq!(Lock::read(&source, "evalock.lock").unwrap(), Some(sample()));

    // A hand-written lock takes the TOML path and reads the same.
    let spaced = text.replace("lock_version = 1\n", "lock_version   =   1\n");
    std::fs::write(directory.path().join("evalock.lock"), &spaced).unwrap();
    assert_eq!(Lock::read(&source, "evalock.lock").unwrap(), Some(sample()));

    // A lock in the rendered shape that fails validation is reported at its line.
    let mut bad = sample();
    let entries = bad.cases.remove("support").unwrap();
    bad.cases.insert("bad name!".into(), entries);
    let text = bad.render();
    std::fs::write(directory.path().join("evalock.lock"), &text).unwrap();
    let error = Lock::read(&source, "evalock.lock").unwrap_err().to_string();
    let line = text
        .lines()
        .position(|line| line.starts_with("[case.\"bad name!\""))
        .unwrap()
        + 1;
    assert!(error.contains(&format!("evalock.lock:{line}")), "{error}");
}

/// `run --suite` reads the lock narrowed as it is read: the same lock as one read whole
/// and then narrowed, and every error still found and located in the whole lock.
#[test]
fn a_lock_narrowed_as_it_is_read_is_the_whole_lock_narrowed() {
    let directory = tempfile::tempdir().unwrap();
    let source = crate::source::WorktreeSource::new(directory.path());
    let only: std::collections::BTreeSet<String> = ["support".to_owned()].into();
    assert_eq!(
        Lock::read_suites(&source, LOCK_FILE, Some(&only)).unwrap(),
        None
    );
    let mut lock = sample();
    let mut other = lock.suites["support"].clone();
    other.digest = bytes_digest(b"other");
    lock.suites.insert("billing".into(), other);
    let entries = lock.cases["support"].clone();
    lock.cases.insert("billing".into(), entries);
    let skill = "\n[skill.\"skills/x\"]\nname = \"x\"\nsource = { kind = \"local\" }\ndigest = \"sha256:9e786872cc258396a1c4e8dc42273fd2231336ed093447cb16af23714e6d433b\"\n\n[skill.\"skills/x\".files]\n\"SKILL.md\" = \"f sha256:4abd554794634c31101a952e255b93401f86ae606002b7dd989a545e5b8e7dfa\"\n";
    let text = format!("{}{skill}", lock.render());
    let whole = Lock::parse(LOCK_FILE, text.as_bytes()).unwrap();
    assert_eq!(whole.skills.len(), 1);
    let mut expected = whole.clone();
    expected.narrow_to(&only);
    assert_eq!(expected.suites.keys().collect::<Vec<_>>(), ["support"]);
    assert_eq!(expected.cases.keys().collect::<Vec<_>>(), ["support"]);
    assert!(expected.skills.is_empty());
    assert_eq!(expected.graders, whole.graders);
    // Narrowed as it is read, or (a hand-written header the lines cannot place) read
    // whole: the same lock.
    let quoted = text.replace("[suite.billing]", "[suite.\"billing\"]");
    assert_ne!(quoted, text);
    for text in [&text, &quoted] {
        std::fs::write(directory.path().join(LOCK_FILE), text).unwrap();
        let read = Lock::read_suites(&source, LOCK_FILE, Some(&only)).unwrap();
        assert_eq!(read.as_ref(), Some(&expected), "{text}");
    }
    // A conflict in a table that is not kept is still the whole lock's error, at its line.
    let at = text.find("[case.billing.").unwrap();
    let conflicted = format!("{}<<<<<<< ours\n{}", &text[..at], &text[at..]);
    let error_of = |text: &str| {
        std::fs::write(directory.path().join(LOCK_FILE), text).unwrap();
        Lock::read_suites(&source, LOCK_FILE, Some(&only))
            .unwrap_err()
            .to_string()
    };
    let line = text[..at].lines().count() + 1;
    let error = error_of(&conflicted);
    assert!(error.contains(&format!("{LOCK_FILE}:{line}")), "{error}");
    assert!(error.contains("merge conflict"), "{error}");
    // An error in a kept table is located in the whole lock, not in what was kept.
    let at = text.find("[case.support.").unwrap();
    let damaged = format!(
        "{}[case.support.bad]\nversion = \"x\"\n\n{}",
        &text[..at],
        &text[at..]
    );
    let line = text[..at].lines().count() + 2;
    let error = error_of(&damaged);
    assert!(error.contains(&format!("{LOCK_FILE}:{line}")), "{error}");
}
