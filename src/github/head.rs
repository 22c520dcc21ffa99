//! The project as the pull request's head commit has it: which suite reads which prompt
//! files, and which paths exist, so findings are placed on the right files.

use crate::project::config::{Config, CONFIG_FILE};
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
/// for the repository (`evalock report --path-prefix`, as the action does). A path that
/// starts with the project's prefix, names no file of the project as it is, and names one
/// once the prefix is removed, was prefixed: it is made project-relative again so the
/// prefix is added exactly once. `snapshots` are the project at the pull request's head
/// and at its merge base: a finding on a file the pull request deletes names a file only
/// there. A prefixed path that names a file in neither form (its base is not in this
/// clone) is taken as prefixed when other paths of the report were: `--path-prefix`
/// prefixes every path of a report.
pub fn project_relative(
    mut report: Report,
    prefix: &str,
    snapshots: &[&dyn ContentSource],
) -> Report {
    if prefix.is_empty() {
        return report;
    }
    let exists = |path: &str| {
        snapshots
            .iter()
            .any(|snapshot| matches!(snapshot.kind_of(path), Ok(Some(_))))
    };
    let strip = |path: &str| {
        path.strip_prefix(prefix)
            .and_then(|rest| rest.strip_prefix('/'))
            .map(str::to_owned)
    };
    // Per finding: was its path prefixed (`Some(true)`), not (`Some(false)`), or cannot
    // tell (`None`)?
    let prefixed: Vec<Option<bool>> = report
        .findings
        .iter()
        .map(|finding| {
            let path = &finding.location.as_ref()?.path;
            let stripped = strip(path)?;
            match (exists(path), exists(&stripped)) {
                (false, true) => Some(true),
                (false, false) => None,
                (true, _) => Some(false),
            }
        })
        .collect();
    let report_was_prefixed = prefixed.contains(&Some(true));
    for (finding, prefixed) in report.findings.iter_mut().zip(prefixed) {
        if !prefixed.unwrap_or(report_was_prefixed) {
            continue;
        }
        if let Some(location) = finding.location.as_mut() {
            if let Some(stripped) = strip(&location.path) {
                location.path = stripped;
            }
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
        assert_eq!(
            paths_of(project_relative(report, "ai", &[&source])),
            vec!["evals/s.jsonl", "evals/s.jsonl", "ai/nested/x.txt"]
        );
    }

    fn removed_at(path: &str) -> Finding {
        Finding::new(RuleId::CaseRemoved, Subject::case("s", path), "m").at(Location::file(path))
    }

    fn paths_of(report: Report) -> Vec<String> {
        report
            .findings
            .iter()
            .map(|finding| {
                finding
                    .location
                    .as_ref()
                    .map(|location| location.path.clone())
                    .unwrap_or_default()
            })
            .collect()
    }

    #[test]
    fn a_file_the_pull_request_deletes_is_prefixed_once_too() {
        let head = tempfile::tempdir().expect("temp dir");
        let base = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir_all(head.path().join("evals")).expect("mkdir");
        std::fs::create_dir_all(base.path().join("evals")).expect("mkdir");
        std::fs::write(head.path().join("evals/kept.jsonl"), "{}\n").expect("write");
        std::fs::write(base.path().join("evals/deleted.jsonl"), "{}\n").expect("write");
        let (head, base) = (
            WorktreeSource::new(head.path()),
            WorktreeSource::new(base.path()),
        );
        let deleted = || {
            Report::new(
                "check",
                "w".into(),
                None,
                vec![removed_at("ai/evals/deleted.jsonl")],
            )
        };
        // Only the merge base has the file.
        assert_eq!(
            paths_of(project_relative(deleted(), "ai", &[&head, &base])),
            vec!["evals/deleted.jsonl"]
        );
        // Without the merge base, the report's other paths tell.
        let both = Report::new(
            "check",
            "w".into(),
            None,
            vec![
                removed_at("ai/evals/deleted.jsonl"),
                removed_at("ai/evals/kept.jsonl"),
            ],
        );
        assert_eq!(
            paths_of(project_relative(both, "ai", &[&head])),
            vec!["evals/deleted.jsonl", "evals/kept.jsonl"]
        );
        // With nothing to tell, the path is taken as it is.
        assert_eq!(
            paths_of(project_relative(deleted(), "ai", &[&head])),
            vec!["ai/evals/deleted.jsonl"]
        );
    }
}
