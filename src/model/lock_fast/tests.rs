use super::lines::READ_BUFFER;
use super::*;
use crate::hash::bytes_digest;
use crate::model::lock::CaseLock;
use crate::model::trickle::Trickle;

fn tricky_lock() -> Lock {
    let mut lock = Lock::new();
    for suite in ["support", "a.b", "quote\"d", "tab\tand\u{7f}", "ünï"] {
        lock.suites.insert(
            suite.into(),
            SuiteLock {
                digest: bytes_digest(suite.as_bytes()),
                prompt: (suite != "a.b").then(|| bytes_digest(b"p")),
                prompts: [("prompts/x y.txt".to_owned(), bytes_digest(b"p"))].into(),
            },
        );
        let cases = lock.cases.entry(suite.into()).or_default();
        for id in [
            "plain-id_1",
            "with space",
            "dot.ted",
            "q\"uote",
            "back\\slash",
            "new\nline",
            "é🙂",
            "",
        ] {
            let entry = CaseLock {
                version: 1 + id.len() as u64,
                digest: bytes_digest(id.as_bytes()),
                file: format!("evals/{suite}.jsonl").into(),
                retired: id.len() % 2 == 0,
            };
            cases.insert(id.into(), entry);
        }
    }
    // Grader tables sit between the suites and the cases; a grader whose file path
    // or argv looks like a table header must not split the text there.
    for (id, file) in [("struct", "graders/[case.x].py"), ("a.b", "g\n[case.y]")] {
        let argv = vec![
            "python3".to_owned(),
            file.to_owned(),
            "--q\"uote".to_owned(),
        ];
        lock.graders.insert(
            id.into(),
            GraderLock {
                files: [(file.to_owned(), bytes_digest(file.as_bytes()))].into(),
                ..GraderLock::new(
                    &format!("{id}-3"),
                    &crate::grade::GraderProgram::Command(argv),
                    bytes_digest(id.as_bytes()),
                )
            },
        );
    }
    let builtin = GraderLock::new(
        "1",
        &crate::grade::GraderProgram::Builtin,
        bytes_digest(b"builtin"),
    );
    lock.graders.insert("plain".into(), builtin);
    // A grader pinned before evalock pinned what it runs: no `kind`, no `command`.
    let older = GraderLock {
        kind: None,
        ..GraderLock::new(
            "2",
            &crate::grade::GraderProgram::Builtin,
            bytes_digest(b"o"),
        )
    };
    lock.graders.insert("older".into(), older);
    lock
}

#[test]
fn reads_what_render_writes_exactly_as_toml_does() {
    let lock = tricky_lock();
    let text = lock.render();
    let fast = parse_rendered(&text).expect("the rendered shape is read without TOML");
    let slow: Lock = toml::from_str(&text).unwrap();
    assert_eq!(fast, slow);
    assert_eq!(fast, lock);
    let mut without_graders = tricky_lock();
    without_graders.graders.clear();
    assert_eq!(
        parse_rendered(&without_graders.render()),
        Some(without_graders),
        "a lock without graders is read without TOML too"
    );
    let empty = Lock::new().render();
    assert_eq!(parse_rendered(&empty), Some(Lock::new()));
}

#[test]
fn a_suite_whose_entries_are_known_shares_them_and_only_that_suite() {
    let known = tricky_lock();
    let mut changed = tricky_lock();
    // One entry of one suite is another version; one suite has an entry more; one is gone.
    let entries = changed.cases.get_mut("support").expect("suite");
    let mut entry = entries.get("dot.ted").expect("entry").clone();
    entry.version += 1;
    entries.insert("dot.ted".into(), entry.clone());
    changed
        .cases
        .get_mut("a.b")
        .expect("suite")
        .insert("added".into(), entry);
    changed.cases.remove("ünï");
    let text = changed.render();
    let read = parse_rendered_from(text.as_bytes(), Some(&known)).expect("rendered");
    assert_eq!(
        read, changed,
        "what is read does not depend on what is known"
    );
    let shared: Vec<&str> = read
        .cases
        .iter()
        .filter(|(suite, entries)| entries.shares(&known.cases[suite.as_str()]))
        .map(|(suite, _)| suite.as_str())
        .collect();
    assert_eq!(shared, ["quote\"d", "tab\tand\u{7f}"]);
    // Read again without anything known, nothing is shared.
    let alone = parse_rendered_from(text.as_bytes(), None).expect("rendered");
    assert_eq!(alone, read);
    assert!(alone
        .cases
        .iter()
        .all(|(suite, entries)| !entries.shares(&known.cases[suite.as_str()])));
}

fn first_difference(one: &str, other: &str) -> usize {
    one.bytes()
        .zip(other.bytes())
        .position(|(a, b)| a != b)
        .unwrap_or(one.len().min(other.len()))
}

#[test]
fn declines_anything_that_is_not_the_rendered_shape() {
    let text = tricky_lock().render();
    for edited in [
        text.replace("version = 7\n", "version = 07\n"),
        text.replace("version = 7\n", "version  = 7\n"),
        text.replacen("\n[case.", "\n# note\n[case.", 1),
        text.replace("lock_version = 1", "lock_version = 1 # one"),
        format!("{text}\n"),
        text.replacen("file = ", "file= ", 1),
        text.replacen(
            "\n\n[case.support.plain-id_1]",
            "\n[case.support.plain-id_1]",
            1,
        ),
        text[..text.len() - 5].to_owned(),
    ] {
        assert!(edited != text, "the edit must change the text");
        assert!(
            parse_rendered(&edited).is_none(),
            "must decline an edit that differs at byte {}",
            first_difference(&edited, &text)
        );
    }
}

#[test]
fn a_lock_of_many_buffers_is_compared_to_its_last_byte() {
    let mut lock = Lock::new();
    let cases = lock.cases.entry("support".into()).or_default();
    for number in 0..3_000 {
        let id = format!("case-{number:05}");
        let entry = CaseLock {
            version: 1,
            digest: bytes_digest(id.as_bytes()),
            file: "evals/support.jsonl".into(),
            retired: false,
        };
        cases.insert(id, entry);
    }
    let text = lock.render();
    assert!(text.len() > 4 * READ_BUFFER, "{} bytes", text.len());
    assert_eq!(parse_rendered(&text).as_ref(), Some(&lock));
    // A version written `01` reads as 1 but renders as `1`: the comparison must see
    // it in every block, including the last one.
    for at in [0, READ_BUFFER + 7, 3 * READ_BUFFER + 1, text.len() - 200] {
        let start = text[at..]
            .find("version = 1\n")
            .map(|offset| at + offset)
            .expect("a version after the offset");
        let edited = format!(
            "{}version = 01\n{}",
            &text[..start],
            &text[start + "version = 1\n".len()..]
        );
        assert!(parse_rendered(&edited).is_none(), "an edit at byte {start}");
        // Same length, same entry once read, another text: the comparison must see it.
        let line_end = start + text[start..].find("\nfile = ").expect("a file line");
        let (version, digest) = text[start..line_end].split_once('\n').expect("two lines");
        let swapped = format!("{}{digest}\n{version}{}", &text[..start], &text[line_end..]);
        assert_eq!(swapped.len(), text.len());
        assert!(parse_rendered(&swapped).is_none(), "a swap at byte {start}");
    }
    assert!(parse_rendered(&format!("{text}#")).is_none());
    assert!(parse_rendered(&text[..text.len() - 1]).is_none());
}

fn all_lines(input: impl Read) -> (Vec<String>, bool) {
    let mut lines = Lines::new(input);
    let mut read = Vec::new();
    while let Some(line) = lines.next_line() {
        let newline = if line.newline { "\n" } else { "" };
        read.push(format!("{}{newline}", line.text));
    }
    (read, lines.failed)
}

/// Lines come out whole and in order however the reads fall: across blocks, inside
/// multi-byte characters, longer than a block, with or without a last newline (each
/// line says whether it had one).
#[test]
fn lines_are_whole_whatever_the_reads() {
    let long = "é".repeat(READ_BUFFER);
    let text = format!("a = 1\n\n東京 = \"🙂\"\n{long}\nlast");
    for input in [text.clone(), format!("{text}\n")] {
        let expected: Vec<String> = input.split_inclusive('\n').map(str::to_owned).collect();
        let trickled = Trickle::new(input.as_bytes());
        assert_eq!(all_lines(trickled), (expected.clone(), false));
        assert_eq!(all_lines(input.as_bytes()), (expected, false));
    }
    // Invalid UTF-8 ends the lines and marks the read as failed, in any block.
    for at in [0, 3, READ_BUFFER + 5] {
        let mut bytes = text.clone().into_bytes();
        bytes[at] = 0xFF;
        let trickled = Trickle::new(&bytes);
        assert!(all_lines(trickled).1, "a bad byte at {at}");
    }
}

/// Any text the fast path takes renders back to itself: a rendered lock edited at
/// random (bytes deleted, inserted or changed, lines doubled, dropped or swapped) is
/// either declined or read as a lock whose rendering is the edited text.
#[test]
fn whatever_is_read_renders_back_to_the_text_read() {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move |bound: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % bound as u64) as usize
    };
    let mut small = tricky_lock();
    small.graders.clear();
    for text in [tricky_lock().render(), small.render()] {
        assert!(parse_rendered(&text).is_some());
        let inserts = [
            "\n", " ", "0", "1", "\"", "\\", "a", "#", "[", "]", "=", ".", "\r", "\u{85}", "é",
        ];
        let (mut read, mut declined) = (0, 0);
        for _ in 0..4_000 {
            let lines: Vec<&str> = text.split_inclusive('\n').collect();
            let mut edited = text.clone();
            match next(6) {
                0 => {
                    let at = next(edited.len());
                    if edited.is_char_boundary(at) && edited.is_char_boundary(at + 1) {
                        edited.remove(at);
                    }
                }
                1 => {
                    let at = next(edited.len());
                    if edited.is_char_boundary(at) {
                        edited.insert_str(at, inserts[next(inserts.len())]);
                    }
                }
                2 => {
                    let at = next(edited.len());
                    let byte = edited.as_bytes()[at];
                    let replacement = match byte {
                        b'0'..=b'8' => Some((byte + 1) as char),
                        b'a'..=b'y' => Some((byte + 1) as char),
                        b'"' => Some('\''),
                        _ => None,
                    };
                    if let Some(replacement) = replacement {
                        edited.replace_range(at..at + 1, &replacement.to_string());
                    }
                }
                3 => {
                    let at = next(lines.len());
                    let mut changed = lines.clone();
                    changed.insert(at, lines[at]);
                    edited = changed.concat();
                }
                4 => {
                    let mut changed = lines.clone();
                    changed.remove(next(lines.len()));
                    edited = changed.concat();
                }
                _ => {
                    let at = next(lines.len() - 1);
                    let mut changed = lines.clone();
                    changed.swap(at, at + 1);
                    edited = changed.concat();
                }
            }
            match parse_rendered(&edited) {
                Some(lock) => {
                    assert_eq!(
                        lock.render(),
                        edited,
                        "read an edit at byte {}",
                        first_difference(&edited, &text)
                    );
                    read += 1;
                }
                None => declined += 1,
            }
        }
        // Most edits break the shape; some (a changed digit in a digest or version, a
        // line swapped with its twin) are another lock in the same shape.
        assert!(
            declined > 2_000 && read > 100,
            "{read} read, {declined} declined"
        );
    }
}

/// Entries written otherwise than `render` writes them are declined, each alone.
#[test]
fn case_entries_are_read_only_as_render_writes_them() {
    let lock = tricky_lock();
    let text = lock.render();
    let entry = "\n[case.support.plain-id_1]\nversion = 11\n";
    assert!(text.contains(entry), "{text}");
    let digest = format!("digest = \"{}\"\n", bytes_digest(b"plain-id_1"));
    assert!(text.contains(&digest));
    for edited in [
        text.replace(entry, "\n[case.support.\"plain-id_1\"]\nversion = 11\n"),
        text.replace(entry, "\n[case.\"support\".plain-id_1]\nversion = 11\n"),
        text.replace(entry, "\n[case.support.plain-id_1]\nversion = +11\n"),
        text.replace(entry, "\n[case.support.plain-id_1]\nversion = 011\n"),
        text.replace(entry, "\n[case.support.plain-id_1]\nversion = 11 \n"),
        text.replace(entry, "\n[case.support.plain-id_1]\r\nversion = 11\n"),
        text.replace(entry, "\n[case.support.plain-id_1]\nversion=11\n"),
        text.replace(
            entry,
            "\n[case.support.plain-id_1]\nversion = 11\nversion = 11\n",
        ),
        text.replace(entry, "\n\n[case.support.plain-id_1]\nversion = 11\n"),
        text.replace(
            &digest,
            &digest
                .to_uppercase()
                .replace("DIGEST = \"SHA256:", "digest = \"sha256:"),
        ),
        text.replace(
            &digest,
            &digest
                .replace("\"sha256:", "\"sha256:\\u0030")
                .replacen('0', "", 1),
        ),
        text.replace(&digest, ""),
        text.replacen(
            "file = \"evals/support.jsonl\"",
            "file = \"evals/\\u0073upport.jsonl\"",
            1,
        ),
        text.replacen(
            "file = \"evals/support.jsonl\"",
            "file = 'evals/support.jsonl'",
            1,
        ),
        text.replacen("retired = true\n", "retired = false\n", 1),
        text.replacen("retired = true\n", "retired = true\n\n", 1),
        text.replacen(
            "file = \"evals/support.jsonl\"\n",
            "file = \"evals/support.jsonl\"\nretired = true\nretired = true\n",
            1,
        ),
        text.replacen("[case.support.", "[case.support2.", 1),
    ] {
        assert!(edited != text, "the edit must change the text");
        assert!(
            parse_rendered(&edited).is_none(),
            "must decline an edit at byte {}",
            first_difference(&edited, &text)
        );
    }
    // Suites out of order: the entries of the first two suites (`a.b`, `quote"d`)
    // swapped.
    let first = text.find("\n[case.").unwrap();
    let second_suite = text[first..]
        .find("\n[case.\"quote")
        .map(|at| first + at)
        .unwrap();
    let third = text[second_suite + 1..]
        .find("\n[case.support")
        .map(|at| second_suite + 1 + at)
        .unwrap();
    let swapped = format!(
        "{}{}{}{}",
        &text[..first],
        &text[second_suite..third],
        &text[first..second_suite],
        &text[third..]
    );
    assert_eq!(swapped.len(), text.len());
    assert!(parse_rendered(&swapped).is_none());
}
