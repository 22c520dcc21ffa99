use super::*;
use crate::source::WorktreeSource;
use std::sync::Mutex;

/// A cache that holds nothing and records what it is asked to keep.
#[derive(Default)]
struct RecordingCache {
    kept: Mutex<Vec<(String, Vec<String>)>>,
}

impl LoadCache for RecordingCache {
    fn get(&self, _: &str, _: &ContentIdentity) -> Option<ParsedCaseFile> {
        None
    }

    fn put(&self, path: &str, _: ContentIdentity, parsed: &ParsedCaseFile) {
        let ids = parsed
            .cases
            .iter()
            .map(|case| case.id.to_string())
            .collect();
        self.kept
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push((path.to_owned(), ids));
    }
}

/// Every case file parsed is offered to the cache once, whole: a suite of one file
/// offers it while its cases are indexed, a larger suite each file as it is parsed.
#[test]
fn every_parsed_case_file_is_offered_to_the_cache_once() {
    let directory = tempfile::tempdir().unwrap();
    let write = |path: &str, text: &str| {
        let path = directory.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "evalock.toml",
        "version = 1\n\n[[suite]]\nname = \"one\"\ncases = [\"evals/one.jsonl\"]\n\n\
             [[suite]]\nname = \"many\"\ncases = [\"evals/many/*.jsonl\"]\n",
    );
    let line =
        |id: &str| format!("{{\"id\": \"{id}\", \"expect\": {{\"must_include\": \"x\"}}}}\n");
    write("evals/one.jsonl", &(line("c") + &line("a") + &line("b")));
    write("evals/many/1.jsonl", &(line("m2") + &line("m1")));
    write("evals/many/2.jsonl", &line("m3"));
    let source = WorktreeSource::new(directory.path());
    let cache = RecordingCache::default();
    let project = Project::load_summary(&source, Some(&cache)).unwrap();
    let mut kept = cache.kept.into_inner().unwrap();
    kept.sort();
    let expected = [
        ("evals/many/1.jsonl", vec!["m2", "m1"]),
        ("evals/many/2.jsonl", vec!["m3"]),
        ("evals/one.jsonl", vec!["c", "a", "b"]),
    ]
    .map(|(path, ids)| (path.to_owned(), ids.into_iter().map(String::from).collect()));
    assert_eq!(kept, expected);
    // The suites are indexed all the same.
    for (suite, id, line) in [("one", "a", 2), ("one", "c", 1), ("many", "m3", 1)] {
        let suite = project
            .suites
            .iter()
            .find(|model| model.name == suite)
            .unwrap();
        assert_eq!(suite.case(id).map(|case| case.line), Some(line), "{id}");
    }
}
