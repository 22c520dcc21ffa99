//! The bad-input corpus (tests/corpus/manifest.toml): for every entry, a real git project
//! is built in a temp dir, broken as the entry says, and the real evalock binary is run.
//! Bad input must give a finding or exit 65 naming `path:line`, never a panic, never a
//! half-written lock, and a message that says what to fix.
//!
//! `CORPUS_ONLY=name[,name…]` runs only the named entries.

mod common;

use common::{fixture, manifest_dir, Run, TestRepo};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    entry: Vec<Entry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    name: String,
    about: String,
    #[serde(default = "default_base")]
    base: String,
    #[serde(default)]
    edit: Vec<Edit>,
    #[serde(default)]
    generate: Vec<Generated>,
    #[serde(default)]
    symlinks: Vec<(String, String)>,
    #[serde(default)]
    remove: Vec<String>,
    #[serde(default)]
    git: Option<String>,
    command: Vec<String>,
    exit: i32,
    #[serde(default)]
    contains: Vec<String>,
    #[serde(default)]
    at: Option<At>,
}

fn default_base() -> String {
    "demo".into()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Edit {
    file: String,
    find: Option<String>,
    replace: Option<String>,
    replace_bytes: Option<Vec<u8>>,
    append: Option<String>,
    truncate_after: Option<String>,
    content: Option<String>,
    #[serde(default)]
    bom: bool,
    #[serde(default)]
    crlf: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Generated {
    file: String,
    parts: Vec<Part>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Part {
    text: String,
    #[serde(default = "one")]
    repeat: usize,
    #[serde(default)]
    numbered: bool,
}

fn one() -> usize {
    1
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct At {
    file: String,
    text: String,
    #[serde(default)]
    last: bool,
}

/// More output than this means an input was echoed back (a 100 MB line in a message).
const MAX_OUTPUT_BYTES: usize = 256 * 1024;

fn corpus_dir() -> PathBuf {
    manifest_dir().join("tests").join("corpus")
}

fn load_manifest() -> Manifest {
    let text = std::fs::read_to_string(corpus_dir().join("manifest.toml")).expect("read manifest");
    toml::from_str(&text)
        .unwrap_or_else(|error| panic!("tests/corpus/manifest.toml: {}", error.message()))
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len().max(1))
        .position(|window| window == needle)
}

fn apply_edit(repo: &TestRepo, edit: &Edit) -> Result<(), String> {
    let path = repo.join(&edit.file);
    let mut bytes = std::fs::read(&path).unwrap_or_default();
    if let Some(content) = &edit.content {
        bytes = content.as_bytes().to_vec();
    }
    if let Some(needle) = &edit.find {
        let start = find(&bytes, needle.as_bytes())
            .ok_or_else(|| format!("{:?} not found in {}", needle, edit.file))?;
        let replacement = match (&edit.replace, &edit.replace_bytes) {
            (Some(text), None) => text.as_bytes().to_vec(),
            (None, Some(raw)) => raw.clone(),
            _ => return Err("`find` needs exactly one of `replace` and `replace_bytes`".into()),
        };
        bytes.splice(start..start + needle.len(), replacement);
    }
    if let Some(tail) = &edit.append {
        bytes.extend_from_slice(tail.as_bytes());
    }
    if let Some(marker) = &edit.truncate_after {
        let start = find(&bytes, marker.as_bytes())
            .ok_or_else(|| format!("{marker:?} not found in {}", edit.file))?;
        bytes.truncate(start + marker.len());
    }
    if edit.crlf {
        bytes = String::from_utf8_lossy(&bytes)
            .replace('\n', "\r\n")
            .into_bytes();
    }
    if edit.bom {
        bytes.splice(0..0, [0xEF, 0xBB, 0xBF]);
    }
    repo.write(&edit.file, bytes);
    Ok(())
}

fn generate(repo: &TestRepo, generated: &Generated) {
    let path = repo.join(&generated.file);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("create dirs");
    let mut bytes = Vec::new();
    for part in &generated.parts {
        for index in 0..part.repeat {
            if part.numbered {
                bytes.extend_from_slice(part.text.replace("{n}", &index.to_string()).as_bytes());
            } else {
                bytes.extend_from_slice(part.text.as_bytes());
            }
        }
    }
    std::fs::write(path, bytes).expect("write generated file");
}

fn set_up(entry: &Entry) -> Result<TestRepo, String> {
    let repo = match entry.base.as_str() {
        "demo" => TestRepo::with_fixture("demo"),
        "skills" => TestRepo::with_fixture("skills"),
        "empty" => TestRepo::new(),
        other => return Err(format!("unknown base `{other}`")),
    };
    let overlay = corpus_dir().join(&entry.name);
    if overlay.is_dir() {
        common::copy_tree(&overlay, repo.path());
    }
    for path in &entry.remove {
        std::fs::remove_file(repo.join(path)).map_err(|error| format!("remove {path}: {error}"))?;
    }
    for edit in &entry.edit {
        apply_edit(&repo, edit)?;
    }
    for generated in &entry.generate {
        generate(&repo, generated);
    }
    for (link, target) in &entry.symlinks {
        let link_path = repo.join(link);
        let _ = std::fs::remove_file(&link_path);
        std::fs::create_dir_all(link_path.parent().expect("parent")).expect("create dirs");
        std::os::unix::fs::symlink(target, &link_path)
            .map_err(|error| format!("symlink {link}: {error}"))?;
    }
    match entry.git.as_deref() {
        None => {}
        Some("stage") => {
            repo.git(&["add", "-A"]);
        }
        Some("commit") => repo.commit_all("corpus entry"),
        Some(other) => return Err(format!("unknown git step `{other}`")),
    }
    Ok(repo)
}

/// The 1-based line of the first occurrence of `text` in a file of the project.
fn line_of(repo: &TestRepo, at: &At) -> Result<usize, String> {
    let bytes = repo.read_bytes(&at.file);
    let needle = at.text.as_bytes();
    let found = if at.last {
        bytes
            .windows(needle.len())
            .rposition(|window| window == needle)
    } else {
        find(&bytes, needle)
    };
    let start = found.ok_or_else(|| format!("`at` text {:?} not in {}", at.text, at.file))?;
    Ok(bytes[..start].iter().filter(|byte| **byte == b'\n').count() + 1)
}

fn names_a_path_and_line(output: &str) -> bool {
    let pattern = regex::Regex::new(r"[\w./-]+\.[a-z]+:[0-9]+").expect("regex");
    pattern.is_match(output)
}

fn leftover_temp_files(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(directory) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&directory) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Ok(file_type) = entry.file_type() else {
                continue;
            };
            if file_type.is_dir() && name != ".git" {
                pending.push(entry.path());
            } else if name.starts_with(".evalock-tmp-") {
                found.push(entry.path().display().to_string());
            }
        }
    }
    found
}

/// Runs one entry; returns every broken expectation.
fn run_entry(entry: &Entry) -> Vec<String> {
    let repo = match set_up(entry) {
        Ok(repo) => repo,
        Err(error) => return vec![format!("setup: {error}")],
    };
    let lock_before = std::fs::read(repo.join("evalock.lock")).ok();
    let args: Vec<&str> = entry.command.iter().map(String::as_str).collect();
    let run: Run = repo.evalock(&args);
    let output = run.all();
    let mut problems = Vec::new();
    if run.code == 101 || output.contains("panicked") {
        problems.push("panicked".to_owned());
    }
    if run.code != entry.exit {
        problems.push(format!("exit {} (expected {})", run.code, entry.exit));
    }
    for needle in &entry.contains {
        if !output.contains(needle.as_str()) {
            problems.push(format!("output lacks {needle:?}"));
        }
    }
    if let Some(at) = &entry.at {
        match line_of(&repo, at) {
            Ok(line) => {
                let expected = format!("{}:{line}", at.file);
                let found = output.match_indices(&expected).any(|(index, _)| {
                    !output[index + expected.len()..]
                        .starts_with(|next: char| next.is_ascii_digit())
                });
                if !found {
                    problems.push(format!("output does not name {expected}"));
                }
            }
            Err(error) => problems.push(error),
        }
    }
    if run.code == 65 && !names_a_path_and_line(&output) {
        problems.push("exit 65 without a `path:line`".to_owned());
    }
    if output.len() > MAX_OUTPUT_BYTES {
        problems.push(format!(
            "{} bytes of output: input echoed back?",
            output.len()
        ));
    }
    let is_lock_write = entry
        .command
        .first()
        .is_some_and(|command| command == "lock")
        && !entry.command.iter().any(|arg| arg == "--check");
    if is_lock_write
        && run.code != 0
        && std::fs::read(repo.join("evalock.lock")).ok() != lock_before
    {
        problems.push("a failed `lock` changed evalock.lock".to_owned());
    }
    if is_lock_write && run.code == 0 {
        let written = std::fs::read(repo.join("evalock.lock")).unwrap_or_default();
        if let Err(error) = evalock::project::lock::Lock::parse("evalock.lock", &written) {
            problems.push(format!("`lock` wrote a lock that does not parse: {error}"));
        }
    }
    let leftovers = leftover_temp_files(repo.path());
    if !leftovers.is_empty() {
        problems.push(format!("temp files left behind: {leftovers:?}"));
    }
    if !problems.is_empty() {
        let shown: String = output.chars().take(2000).collect();
        problems.push(format!("--- output\n{shown}"));
    }
    problems
}

#[test]
fn every_corpus_entry_gives_a_finding_or_a_located_error_and_never_panics() {
    let manifest = load_manifest();
    let mut names = std::collections::BTreeSet::new();
    for entry in &manifest.entry {
        assert!(
            names.insert(entry.name.as_str()),
            "entry `{}` is listed twice",
            entry.name
        );
        assert!(
            !entry.about.is_empty(),
            "entry `{}` needs an `about`",
            entry.name
        );
    }
    assert!(
        manifest.entry.len() >= 40,
        "the corpus holds {} entries; the issue asks for at least 40",
        manifest.entry.len()
    );
    let only: Option<Vec<String>> = std::env::var("CORPUS_ONLY")
        .ok()
        .map(|names| names.split(',').map(str::to_owned).collect());
    let selected: Vec<&Entry> = manifest
        .entry
        .iter()
        .filter(|entry| {
            only.as_ref()
                .is_none_or(|names| names.contains(&entry.name))
        })
        .collect();
    let queue = Mutex::new(selected.into_iter());
    let failures = Mutex::new(Vec::new());
    // Two workers: the big generated entries dominate, and the machine has two cores.
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| loop {
                let next = queue.lock().expect("queue").next();
                let Some(entry) = next else { break };
                let problems = run_entry(entry);
                if !problems.is_empty() {
                    failures.lock().expect("failures").push(format!(
                        "[{}] {}\n  {}",
                        entry.name,
                        entry.about,
                        problems.join("\n  ")
                    ));
                }
            });
        }
    });
    let failures = failures.into_inner().expect("failures");
    assert!(
        failures.is_empty(),
        "{} corpus entries failed:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn the_corpus_test_catches_a_broken_expectation() {
    // Guards the harness itself: an entry expecting the wrong exit code must fail.
    let entry = Entry {
        name: "harness-self-check".into(),
        about: "a conflicted lock, with a wrong expectation".into(),
        base: "demo".into(),
        edit: vec![Edit {
            file: "evalock.lock".into(),
            find: Some("lock_version = 1\n".into()),
            replace: Some("lock_version = 1\n<<<<<<< HEAD\n".into()),
            replace_bytes: None,
            append: None,
            truncate_after: None,
            content: None,
            bom: false,
            crlf: false,
        }],
        generate: Vec::new(),
        symlinks: Vec::new(),
        remove: Vec::new(),
        git: None,
        command: vec!["check".into()],
        exit: 0,
        contains: vec!["this text is never printed".into()],
        at: Some(At {
            file: "evalock.lock".into(),
            text: "lock_version".into(),
            last: false,
        }),
    };
    let problems = run_entry(&entry).join("\n");
    assert!(problems.contains("exit 65 (expected 0)"), "{problems}");
    assert!(
        problems.contains("output lacks \"this text is never printed\""),
        "{problems}"
    );
    assert!(
        problems.contains("output does not name evalock.lock:2"),
        "{problems}"
    );
    assert!(fixture("demo").join("evalock.lock").is_file());
}
