//! `check --staged` as a pre-commit hook runs it: a commit that changes nothing evalock
//! tracks cannot introduce drift, so it is answered from the index and HEAD alone,
//! without loading the lock or any case. Everything else gets the full check.

mod tracked;

use crate::commands::memo::Memo;
use crate::digest::EntryKind;
use crate::error::Result;
use crate::finding::Finding;
use crate::project::config::{Config, CONFIG_FILE};
use crate::project::lock::LOCK_FILE;
use crate::report::Report;
use crate::rules::{RuleId, Severity};
use crate::source::{
    glob_files, read_regular_file, ContentSource, GitRepo, GitSnapshot, StagedChanges,
    WorktreeSource,
};
use crate::text::shell_word;
use std::collections::BTreeSet;
use std::path::Path;
use tracked::staged_tracked_paths;

/// How the staged content is to be judged.
pub enum StagedTriage {
    /// No staged path is one evalock tracks: the finished (clean) report.
    Untouched(Report),
    /// Judge the whole index.
    Judge(Box<GitSnapshot>),
}

/// Decides whether the staged change can be skipped. Anything that cannot be decided
/// exactly (no HEAD yet, no or an unreadable `evalock.toml`, tool-server configurations
/// named by a glob) is judged in full, never passed. `remember`: use and update the memo of
/// what the configuration tracks.
pub fn triage(project_root: &Path, remember: bool) -> Result<StagedTriage> {
    let repo = GitRepo::discover(project_root)?;
    let staged = repo.staged_index()?;
    let memo = remember
        .then(|| Memo::open(project_root, "staged-paths"))
        .flatten();
    let Some(Some(tracked)) = staged_tracked_paths(memo.as_ref(), &staged)? else {
        return Ok(StagedTriage::Judge(Box::new(staged.into_snapshot())));
    };
    let StagedChanges::Paths(changed) = staged.changes_since_head()? else {
        return Ok(StagedTriage::Judge(Box::new(staged.into_snapshot())));
    };
    // A skill or a tool-server configuration is judged wherever it is staged: one that
    // the configuration does not list is a finding of its own (EL213, EL610).
    let found_by_name = |path: &str| {
        let name = crate::source::file_name(path);
        name == crate::skills::SKILL_FILE || crate::mcp::CONFIG_NAMES.contains(&name)
    };
    if changed
        .iter()
        .any(|path| tracked.contains(path) || found_by_name(path))
    {
        return Ok(StagedTriage::Judge(Box::new(staged.into_snapshot())));
    }
    let source = "index: no staged change touches what evalock tracks".to_owned();
    Ok(StagedTriage::Untouched(Report::new(
        "check",
        source,
        None,
        Vec::new(),
    )))
}

/// A commit records the index, not the working tree: a fix that ends in `evalock lock` or
/// `evalock accept` only reaches the commit once what they wrote is staged, so say so.
pub fn add_staging_step(findings: &mut [Finding]) {
    for finding in findings {
        let already_stages = finding.help.contains("git add");
        if let Some(help) = stage_after_chmod(&finding.help) {
            finding.help = help;
        }
        if already_stages {
            continue;
        }
        let (command, staging) = if finding.help.contains("`evalock lock`") {
            ("`evalock lock`", "`git add evalock.lock`")
        } else if finding.help.contains("`evalock accept") {
            ("`evalock accept", "`git add` the re-recorded baseline file")
        } else {
            continue;
        };
        // Right after the command it follows, not at the end: the help may go on with
        // another way out ("…, else restore it with …") that needs no staging. A command
        // named as the writer of a file ("written only by `evalock accept`") is no step.
        let Some(start) = finding
            .help
            .match_indices(command)
            .map(|(start, _)| start)
            .find(|start| !finding.help[..*start].ends_with("by "))
        else {
            continue;
        };
        let end = finding.help[start + 1..]
            .find('`')
            .map_or(finding.help.len(), |offset| start + offset + 2);
        finding.help.insert_str(end, &format!(" and {staging}"));
    }
}

/// A commit that changes a suite's contract (its case files, prompts, evalock.toml or the
/// lock) and leaves its baseline file as HEAD has it is the first half of the split EL407
/// asks for: the baselines recorded against the old contract drift (EL401), and the
/// re-recording belongs in a commit of its own. The hook lets it through with a warning
/// that says so; the pull request is still refused until the baselines are re-recorded.
pub fn defer_rerecording(
    report: &mut Report,
    index: &dyn ContentSource,
    project_root: &Path,
) -> Result<()> {
    if !report.findings.iter().any(|finding| {
        finding.rule == RuleId::BaselineDrifted && finding.severity == Severity::Refuse
    }) {
        return Ok(());
    }
    let repo = GitRepo::discover(project_root)?;
    let Ok(head) = repo.resolve_commit("HEAD") else {
        return Ok(());
    };
    let committed = repo.commit_source(head, "HEAD".to_owned())?;
    let changed = |path: &str| -> Result<bool> {
        Ok(read_regular_file(index, path)? != read_regular_file(&committed, path)?)
    };
    let Some(config) = read_regular_file(index, CONFIG_FILE)?
        .and_then(|bytes| Config::parse(CONFIG_FILE, &bytes).ok())
    else {
        return Ok(());
    };
    let contract_changed = changed(CONFIG_FILE)? || changed(LOCK_FILE)?;
    let mut deferred = BTreeSet::new();
    for suite in &config.suites {
        let Some(baseline) = suite.baseline.clone() else {
            continue;
        };
        if !contract_changed || changed(&baseline)? {
            continue;
        }
        deferred.insert((suite.name().to_owned(), baseline));
    }
    for finding in &mut report.findings {
        if finding.rule != RuleId::BaselineDrifted || finding.severity != Severity::Refuse {
            continue;
        }
        let Some((suite, baseline)) = finding
            .subject
            .suite
            .as_deref()
            .and_then(|suite| deferred.iter().find(|(name, _)| name == suite))
        else {
            continue;
        };
        finding.severity = Severity::Warn;
        finding.message = format!(
            "{}; this commit changes the suite's contract and leaves {baseline} as HEAD has it: re-record it in a commit of its own",
            finding.message
        );
        finding.help = format!(
            "commit this change, then `evalock run --suite {suite}` and `evalock accept --suite {suite} --reason \"…\"`, and commit the re-recorded {baseline} on its own (a pull request is refused until then)"
        );
    }
    Ok(())
}

/// A case or prompt file the working tree has and the index does not (a new file never
/// `git add`ed, or one `git rm --cached`): judged from the index, its glob matches nothing
/// and each of its locked cases reads as deleted (a prompt, as missing), whose usual fixes
/// (fix the glob; restore and retire the cases; restore the prompt) are wrong. The help says to stage it instead. Applied to the finished
/// report (also one remembered from an earlier check): it depends on the working tree,
/// which the index's report does not.
pub fn name_unstaged_files(findings: &mut [Finding], index: &dyn ContentSource, workdir: &Path) {
    let worktree = WorktreeSource::new(workdir);
    let stage = |paths: &[&str]| {
        const LISTED: usize = 5;
        let listed: Vec<&str> = paths.iter().take(LISTED).copied().collect();
        let (it, more) = match paths.len() {
            1 => ("it", String::new()),
            count if count > LISTED => (
                "them",
                format!(" (and the {} more it matches)", count - LISTED),
            ),
            _ => ("them", String::new()),
        };
        format!(
            "the working tree has {it}, the commit does not: `{}`{more}, then commit again",
            git_add_command(workdir, &listed)
        )
    };
    // A regular file in the working tree, absent from the index.
    let unstaged = |path: &str| {
        let in_worktree = matches!(
            worktree.kind_of(path),
            Ok(Some(EntryKind::File | EntryKind::Executable))
        );
        (in_worktree && matches!(index.kind_of(path), Ok(None))).then(|| path.to_owned())
    };
    for finding in findings.iter_mut() {
        let Some(location) = &finding.location else {
            continue;
        };
        let paths: Vec<String> = match finding.rule {
            RuleId::MalformedCase if location.path == CONFIG_FILE => {
                let Some(pattern) = finding
                    .message
                    .split_once(": no case file matches `")
                    .and_then(|(_, rest)| rest.strip_suffix('`'))
                else {
                    continue;
                };
                match glob_files(&worktree, &[pattern.to_owned()]) {
                    Ok(files) => files.into_iter().map(|file| file.path).collect(),
                    Err(_) => continue,
                }
            }
            RuleId::CaseUnlocked
                if finding.message.starts_with("locked case `")
                    && finding.message.contains(") is missing from ") =>
            {
                unstaged(&location.path).into_iter().collect()
            }
            RuleId::PromptUnlocked
                if finding.message.ends_with(" is missing (or is a symlink)") =>
            {
                unstaged(&location.path).into_iter().collect()
            }
            _ => continue,
        };
        if !paths.is_empty() {
            let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
            finding.help = stage(&paths);
        }
    }
}

/// `git add` of exactly `paths`, as typed at a shell in the project: `-f` when git ignores
/// one of them (git refuses an ignored path without it), `--` so a path cannot read as an
/// option, and `:(literal)` before a path holding glob characters, which git would
/// otherwise match as a pattern.
fn git_add_command(workdir: &Path, paths: &[&str]) -> String {
    let owned: Vec<String> = paths.iter().map(|path| (*path).to_owned()).collect();
    let force = match crate::source::git_ignored(workdir, &owned).is_empty() {
        true => "",
        false => " -f",
    };
    let words: Vec<String> = paths
        .iter()
        .map(|path| {
            let literal = path.contains(['*', '?', '[', '\\']);
            let pathspec = match literal {
                true => format!(":(literal){path}"),
                false => (*path).to_owned(),
            };
            shell_word(&pathspec)
        })
        .collect();
    format!("git add{force} -- {}", words.join(" "))
}

/// A `chmod` changes the working tree only: the index keeps the old mode until the file
/// is staged again, so `chmod +x f` becomes `chmod +x f` and `git add f`.
fn stage_after_chmod(help: &str) -> Option<String> {
    let start = help.find("`chmod ")?;
    let end = start + 1 + help[start + 1..].find('`')?;
    let path = help[start + 1..end].split_whitespace().last()?;
    let mut staged = help.to_owned();
    staged.insert_str(end + 1, &format!(" and `git add {path}`"));
    Some(staged)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::Subject;
    use crate::rules::RuleId;

    #[test]
    fn staging_step_follows_every_fix_that_relocks() {
        let mut findings = vec![
            Finding::new(RuleId::CaseUnlocked, Subject::case("s", "a"), "m")
                .help("bump `version`, then run `evalock lock`"),
            Finding::new(RuleId::CaseUnlocked, Subject::case("s", "b"), "m")
                .help("run `evalock lock` and commit it"),
            Finding::new(RuleId::DuplicateCaseId, Subject::case("s", "c"), "m")
                .help("give each case a unique `id`"),
            Finding::new(RuleId::BaselineDrifted, Subject::case("s", "d"), "m")
                .help("run the suite and re-record with `evalock accept --reason \"…\"`"),
            Finding::new(RuleId::SkillTampered, Subject::skill("skills/x"), "m")
                .help("if intended, run `evalock lock`, else restore it with `git restore -- x`"),
            Finding::new(RuleId::BaselineTampered, Subject::suite("s"), "m")
                .help("written only by `evalock accept`: restore it, or re-record it (`evalock accept --suite s`)"),
        ];
        add_staging_step(&mut findings);
        assert_eq!(
            findings[0].help,
            "bump `version`, then run `evalock lock` and `git add evalock.lock`"
        );
        assert_eq!(
            findings[1].help,
            "run `evalock lock` and `git add evalock.lock` and commit it"
        );
        assert_eq!(findings[2].help, "give each case a unique `id`");
        assert_eq!(
            findings[4].help,
            "if intended, run `evalock lock` and `git add evalock.lock`, else restore it with `git restore -- x`"
        );
        assert_eq!(
            findings[3].help,
            "run the suite and re-record with `evalock accept --reason \"…\"` and `git add` the re-recorded baseline file"
        );
        assert_eq!(
            findings[5].help,
            "written only by `evalock accept`: restore it, or re-record it (`evalock accept --suite s` and `git add` the re-recorded baseline file)"
        );
    }
}
