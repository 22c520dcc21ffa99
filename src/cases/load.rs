//! A suite from its files: case globs and the folders they go through, case files read
//! whole or streamed and kept in the cache, and prompts; the bulk of a load, apart from
//! the project's own files.

use crate::cases::identity::Identity;
use crate::cases::suite::{PromptFile, SuiteCases, SuiteModel, UnmatchedGlob};
use crate::cases::{
    parse_identified_case_file, CaseDetail, CaseProblem, ParsedCaseFile, ProblemKind,
};
use crate::digest::{bytes_digest, EntryKind};
use crate::error::{Error, Result};
use crate::project::config::{Config, CONFIG_FILE};
use crate::source::{glob_files, ContentSource};
use rayon::prelude::*;
use std::sync::Arc;

/// A directory where a prompt goes cannot be read as one, as the lock in its place
/// cannot: it is bad input (exit 65) named as a directory, not a prompt that went missing
/// and that `evalock lock` would record as gone.
fn refuse_directory_prompt(source: &dyn ContentSource, path: &str, suite: &str) -> Result<()> {
    if source.is_directory(path)? {
        return Err(Error::malformed(
            path,
            format!(
                "{path} is a directory, where evalock expects a prompt of suite `{suite}`: move the directory away, or point `prompt` of suite `{suite}` in {CONFIG_FILE} at the prompt file"
            ),
        ));
    }
    Ok(())
}

/// A symlink's target is not case content, and following it could leave the project.
fn symlinked_case_file(path: &str) -> ParsedCaseFile {
    let problem = CaseProblem {
        kind: ProblemKind::Malformed,
        file: path.to_owned(),
        line: 1,
        column: 1,
        message: format!("{path} is a symlink, and evalock never follows symlinks: replace it with the case file itself"),
    };
    ParsedCaseFile {
        cases: Vec::new(),
        problems: vec![problem],
    }
}

/// One case file; empty when it is absent.
fn load_case_file(
    source: &dyn ContentSource,
    path: &str,
    detail: CaseDetail,
    identity: &Identity,
) -> Result<ParsedCaseFile> {
    if source.kind_of(path)? == Some(EntryKind::Symlink) {
        return Ok(symlinked_case_file(path));
    }
    // Each thread reads its case files into one buffer, kept from file to file.
    thread_local! {
        static BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    BUFFER.with_borrow_mut(|buffer| {
        let parsed = match source.read_into(path, buffer)? {
            true => parse_identified_case_file(path, buffer, detail, identity),
            false => ParsedCaseFile::default(),
        };
        // A very large file's buffer is not kept past its parse.
        if buffer.capacity() > 64 << 20 {
            *buffer = Vec::new();
        }
        Ok(parsed)
    })
}

/// A command grader receives the whole case, so its suite is loaded in full even for a
/// check; the built-in grader reads only what a summary keeps.
pub fn detail_for_suite(
    config: &Config,
    suite: &crate::project::config::SuiteConfig,
    detail: CaseDetail,
) -> CaseDetail {
    // promptfoo's assertions are a test's `assert` list, which a summary does not keep.
    let command_graded = suite.grader.as_deref().is_some_and(|id| {
        config.graders.get(id).map_or(
            id == crate::project::config::PROMPTFOO_GRADER_ID,
            |grader| grader.kind == crate::project::config::GraderKind::Command,
        )
    });
    match command_graded {
        true => CaseDetail::Full,
        false => detail,
    }
}

/// The first folder of `pattern`'s literal part that is a symlink: its files are not
/// the project's (a symlink is pinned as its target, never followed).
fn symlink_on_the_way(source: &dyn ContentSource, pattern: &str) -> Result<Option<String>> {
    let prefix = crate::source::literal_prefix(pattern);
    let mut folder = String::new();
    for component in prefix.split('/').filter(|component| !component.is_empty()) {
        if !folder.is_empty() {
            folder.push('/');
        }
        folder.push_str(component);
        if source.kind_of(&folder)? == Some(EntryKind::Symlink) {
            return Ok(Some(folder));
        }
    }
    Ok(None)
}

/// The cases of `files` (sorted), parsed side by side, joined and indexed by id.
fn load_content(
    source: &dyn ContentSource,
    files: Vec<String>,
    detail: CaseDetail,
    identity: &Identity,
) -> Result<Arc<SuiteCases>> {
    let parsed = files
        .par_iter()
        .map(|path| load_case_file(source, path, detail, identity))
        .collect::<Result<Vec<_>>>()?;
    Ok(Arc::new(SuiteCases::new(
        files,
        ParsedCaseFile::joined(parsed),
    )))
}

/// The test files the promptfoo configurations among `case_files` name (`tests:
/// file://…`): cases of the suite too. A reference that matches no file is reported at
/// its line of the configuration.
fn promptfoo_test_files(
    source: &dyn ContentSource,
    case_files: &[String],
    unmatched: &mut Vec<UnmatchedGlob>,
) -> Result<Vec<String>> {
    use crate::cases::promptfoo_config::{is_promptfoo_config, test_file_references};
    let mut files = Vec::new();
    for config in case_files.iter().filter(|path| is_promptfoo_config(path)) {
        if source.kind_of(config)? == Some(EntryKind::Symlink) {
            continue;
        }
        let Some(bytes) = source.read(config)? else {
            continue;
        };
        let Ok(text) = std::str::from_utf8(&bytes) else {
            continue;
        };
        for pattern in test_file_references(config, text) {
            let matched = glob_files(source, std::slice::from_ref(&pattern))?;
            if matched.is_empty() {
                let written = pattern.rsplit('/').next().unwrap_or(&pattern);
                unmatched.push(UnmatchedGlob {
                    line: crate::text::line_of_first(text, &[written, "tests:"]),
                    pattern,
                    names_directory: false,
                    through_symlink: None,
                    named_in: Some(config.clone()),
                });
                continue;
            }
            files.extend(matched.into_iter().map(|file| file.path));
        }
    }
    Ok(files)
}

pub fn load_suite(
    source: &dyn ContentSource,
    suite: &crate::project::config::SuiteConfig,
    detail: CaseDetail,
) -> Result<SuiteModel> {
    let mut case_files = Vec::new();
    let mut unmatched_globs = Vec::new();
    for (pattern, line) in suite.case_globs() {
        let matched = glob_files(source, std::slice::from_ref(pattern))?;
        if matched.is_empty() {
            let literal = !pattern.contains(['*', '?', '[', '{', '\\']);
            let directory = pattern.trim_end_matches('/');
            let names_directory =
                literal && !directory.is_empty() && !source.list(directory)?.is_empty();
            unmatched_globs.push(UnmatchedGlob {
                pattern: pattern.clone(),
                line,
                names_directory,
                through_symlink: symlink_on_the_way(source, pattern)?,
                named_in: None,
            });
        }
        case_files.extend(matched.into_iter().map(|file| file.path));
    }
    case_files.sort();
    case_files.dedup();
    let referenced = promptfoo_test_files(source, &case_files, &mut unmatched_globs)?;
    case_files.extend(referenced);
    case_files.sort();
    case_files.dedup();
    let content = load_content(
        source,
        case_files,
        detail,
        &crate::cases::identity::Identity::of(suite),
    )?;
    let prompts = suite
        .prompt_paths()
        .into_iter()
        .map(|path| -> Result<PromptFile> {
            let digest = match source.kind_of(&path)? {
                Some(EntryKind::Symlink) => None,
                None => {
                    refuse_directory_prompt(source, &path, suite.name())?;
                    None
                }
                Some(_) => source.read(&path)?.map(|bytes| bytes_digest(&bytes)),
            };
            Ok(PromptFile { path, digest })
        })
        .collect::<Result<Vec<_>>>()?;
    let mut model = SuiteModel::of(suite.name().to_owned(), content);
    model.unmatched_globs = unmatched_globs;
    model.prompts = prompts;
    Ok(model)
}
