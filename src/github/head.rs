//! The project as the pull request's head commit has it: which suite reads which prompt
//! files, and which paths exist, so findings are placed on the right files.

use crate::model::{Config, CONFIG_FILE};
use crate::report::Report;
use crate::source::{ContentSource, GitRepo, WorktreeSource};
use std::collections::BTreeMap;
use std::path::Path;

/// The head commit when it is available locally, else the working tree.
pub fn head_source(
    repo: Option<&GitRepo>,
    head_sha: Option<&str>,
    project_root: &Path,
) -> Box<dyn ContentSource> {
    let commit = repo.zip(head_sha).and_then(|(repo, sha)| {
        let id = repo.resolve_commit(sha).ok()?;
        repo.commit_source(id, format!("head ({})", &sha[..sha.len().min(7)]))
            .ok()
    });
    match commit {
        Some(snapshot) => Box::new(snapshot),
        None => Box::new(WorktreeSource::new(project_root)),
    }
}

/// Each suite's prompt files (project-relative); empty without a readable evalock.toml.
pub fn prompt_files(source: &dyn ContentSource) -> BTreeMap<String, Vec<String>> {
    let Ok(Some(bytes)) = source.read(CONFIG_FILE) else {
        return BTreeMap::new();
    };
    let Ok(config) = Config::parse(CONFIG_FILE, &bytes) else {
        return BTreeMap::new();
    };
    config
        .suites
        .iter()
        .map(|suite| (suite.name().to_owned(), suite.prompt_paths()))
        .collect()
}

/// Findings reports carry project-relative paths, unless a step already prefixed them
/// for the repository (`evalock report --path-prefix`). A path that starts with the
/// project's prefix, names no file of the project as it is, and names one once the
/// prefix is removed, was prefixed: it is made project-relative again so the prefix is
/// added exactly once.
pub fn project_relative(mut report: Report, prefix: &str, source: &dyn ContentSource) -> Report {
    if prefix.is_empty() {
        return report;
    }
    let exists = |path: &str| matches!(source.kind_of(path), Ok(Some(_)));
    for finding in &mut report.findings {
        let Some(location) = finding.location.as_mut() else {
            continue;
        };
        let Some(stripped) = location
            .path
            .strip_prefix(prefix)
            .and_then(|rest| rest.strip_prefix('/'))
        else {
            continue;
        };
        if !exists(&location.path) && exists(stripped) {
            location.path = stripped.to_owned();
        }
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::{Finding, Location, Subject};
    use crate::rules::RuleId;

    #[test]
    fn prefixed_paths_are_made_project_relative_once() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir_all(dir.path().join("evals")).expect("mkdir");
        std::fs::create_dir_all(dir.path().join("ai/nested")).expect("mkdir");
        std::fs::write(dir.path().join("evals/s.jsonl"), "{}\n").expect("write");
        std::fs::write(dir.path().join("ai/nested/x.txt"), "x\n").expect("write");
        let source = WorktreeSource::new(dir.path());
        let at = |path: &str| {
            Finding::new(RuleId::CaseUnlocked, Subject::case("s", path), "m")
                .at(Location::line(path, 1))
        };
        let report = Report::new(
            "check",
            "w".into(),
            None,
            vec![
                at("ai/evals/s.jsonl"),
                at("evals/s.jsonl"),
                at("ai/nested/x.txt"),
            ],
        );
        let paths: Vec<String> = project_relative(report, "ai", &source)
            .findings
            .iter()
            .map(|finding| {
                finding
                    .location
                    .as_ref()
                    .map(|location| location.path.clone())
                    .unwrap_or_default()
            })
            .collect();
        assert_eq!(
            paths,
            vec!["evals/s.jsonl", "evals/s.jsonl", "ai/nested/x.txt"]
        );
    }
}
