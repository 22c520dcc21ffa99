//! Where a command may write a report or a results file: never over a file the project
//! reads. `evalock.lock` is written only by `evalock lock` and baselines only by `evalock
//! accept`; a report written over one of them, over `evalock.toml`, a case file, a prompt,
//! a grader's source or a skill's file would break the next check, or change what it
//! judges, with no lock step anyone reviewed.

use crate::error::{Error, Result};
use crate::project::config::{Config, CONFIG_FILE};
use crate::project::lock::LOCK_FILE;
use crate::source::compile_globs;
use std::path::{Component, Path, PathBuf};

/// Refuses (a usage error) an output path that names a file of the project it lies in.
/// `flag` and `output` are as the command line gave them (`--out FILE`); a relative
/// `output` names a file in `folder`.
pub fn refuse_project_file(flag: &str, folder: &Path, output: &Path) -> Result<()> {
    let Some((project_root, relative)) = project_relative(&folder.join(output)) else {
        return Ok(());
    };
    let Some(role) = project_file_role(&project_root, &relative) else {
        return Ok(());
    };
    Err(Error::Usage(format!(
        "{flag} {}: this is {role}, which evalock reads; write the report to another file (e.g. `{flag} evalock-report.json`)",
        output.display()
    )))
}

/// The project holding `output` and the output's path inside it (`/`-separated, as
/// evalock.toml writes paths), once `..` and symlinked folders are resolved: the name
/// itself is not followed, since a write replaces a symlink rather than its target.
fn project_relative(output: &Path) -> Option<(PathBuf, String)> {
    let absolute = std::path::absolute(output).ok()?;
    let name = absolute.file_name()?;
    let folder = resolved_folder(absolute.parent()?)?;
    let project_root = project_of(&folder)?;
    let inside = folder.join(name);
    let relative = inside.strip_prefix(&project_root).ok()?;
    let parts: Option<Vec<&str>> = relative
        .components()
        .map(|component| component.as_os_str().to_str())
        .collect();
    Some((project_root.clone(), parts?.join("/")))
}

/// `folder` with symlinks and `..` resolved as far as it exists; the folders a write would
/// create are added lexically.
fn resolved_folder(folder: &Path) -> Option<PathBuf> {
    let mut missing = Vec::new();
    let mut existing = folder;
    let mut resolved = loop {
        if let Ok(canonical) = existing.canonicalize() {
            break canonical;
        }
        missing.push(existing.components().next_back()?);
        existing = existing.parent()?;
    };
    for component in missing.into_iter().rev() {
        match component {
            Component::ParentDir => {
                resolved.pop();
            }
            Component::Normal(name) => resolved.push(name),
            _ => {}
        }
    }
    Some(resolved)
}

/// The nearest folder at or above `folder` holding evalock.toml, within the git work tree
/// `folder` is in: how evalock finds the project a command started in belongs to.
fn project_of(folder: &Path) -> Option<PathBuf> {
    for candidate in folder.ancestors() {
        if candidate.join(CONFIG_FILE).symlink_metadata().is_ok() {
            return Some(candidate.to_path_buf());
        }
        if candidate.join(".git").symlink_metadata().is_ok() {
            return None;
        }
    }
    None
}

/// What `relative` is to the project at `project_root`, if it is a file the project reads.
/// The lock and the configuration are known by name; the rest only when evalock.toml
/// parses (a check of a project whose config does not parse stops before writing).
fn project_file_role(project_root: &Path, relative: &str) -> Option<String> {
    if relative == LOCK_FILE {
        return Some(format!(
            "the project's lock ({LOCK_FILE}, written only by `evalock lock`)"
        ));
    }
    if relative == CONFIG_FILE {
        return Some(format!("the project's configuration ({CONFIG_FILE})"));
    }
    let bytes = std::fs::read(project_root.join(CONFIG_FILE)).ok()?;
    let config = Config::parse(CONFIG_FILE, &bytes).ok()?;
    configured_role(&config, relative)
}

/// The role evalock.toml gives `relative`: a case file, prompt or baseline of a suite, a
/// grader's source, a skill's file or a plugin marketplace manifest.
fn configured_role(config: &Config, relative: &str) -> Option<String> {
    for suite in &config.suites {
        if matches_any(&suite.cases, relative) {
            return Some(format!("a case file of suite `{}`", suite.name()));
        }
        if suite.prompt_paths().iter().any(|path| path == relative) {
            return Some(format!("a prompt of suite `{}`", suite.name()));
        }
        if suite.baseline.as_deref() == Some(relative) {
            return Some(format!(
                "the baseline of suite `{}` (written only by `evalock accept`)",
                suite.name()
            ));
        }
    }
    for (id, grader) in &config.graders {
        if matches_any(&grader.sources, relative) {
            return Some(format!("a source of grader `{id}`"));
        }
    }
    let skills = config.skills.as_ref()?;
    if matches_any(&skills.marketplaces, relative) {
        return Some("a plugin marketplace manifest".to_owned());
    }
    // A `*` in a glob also crosses `/`: the skill is the outermost folder that matches.
    let folders = Path::new(relative).ancestors().skip(1);
    folders
        .filter_map(Path::to_str)
        .filter(|folder| !folder.is_empty() && matches_any(&skills.roots, folder))
        .last()
        .map(|folder| format!("a file of skill `{folder}`"))
}

/// Whether any of the globs matches `path`; globs that do not compile match nothing here
/// (the check reports them).
fn matches_any(globs: &[String], path: &str) -> bool {
    !globs.is_empty() && compile_globs(globs).is_ok_and(|set| set.is_match(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFIG: &str = r#"
version = 1

[[suite]]
name = "support"
cases = ["evals/*.jsonl"]
prompt = ["prompts/support.txt"]
baseline = "evals/support.baseline.json"

[grader.tone]
version = 1
kind = "command"
command = ["python3", "graders/tone.py"]
sources = ["graders/**/*.py"]

[skills]
roots = ["skills/*"]
marketplaces = [".claude-plugin/marketplace.json"]
"#;

    fn role(relative: &str) -> Option<String> {
        let config = Config::parse(CONFIG_FILE, CONFIG.as_bytes()).expect("config parses");
        configured_role(&config, relative)
    }

    #[test]
    fn every_file_the_config_names_has_a_role() {
        for (path, expected) in [
            ("evals/support.jsonl", "a case file of suite `support`"),
            ("prompts/support.txt", "a prompt of suite `support`"),
            ("graders/lib/tone.py", "a source of grader `tone`"),
            ("skills/triage/SKILL.md", "a file of skill `skills/triage`"),
            (
                "skills/triage/scripts/run.sh",
                "a file of skill `skills/triage`",
            ),
            (
                ".claude-plugin/marketplace.json",
                "a plugin marketplace manifest",
            ),
        ] {
            assert_eq!(role(path).as_deref(), Some(expected), "{path}");
        }
        assert!(role("evals/support.baseline.json").is_some_and(|role| role.contains("baseline")));
    }

    #[test]
    fn files_the_project_does_not_read_have_none() {
        for path in [
            "report.json",
            "evals/report.md",
            ".evalock/results.json",
            "skills/README.md",
            "prompts/escalation.txt",
        ] {
            assert_eq!(role(path), None, "{path}");
        }
    }

    #[test]
    fn a_folder_that_does_not_exist_yet_is_resolved_lexically() {
        let directory = tempfile::tempdir().expect("temp dir");
        let root = directory.path().canonicalize().expect("canonical");
        let folder = resolved_folder(&root.join("new/deeper/../..")).expect("resolved");
        assert_eq!(folder, root);
        let folder = resolved_folder(&root.join("new/./deeper")).expect("resolved");
        assert_eq!(folder, root.join("new/deeper"));
    }
}
