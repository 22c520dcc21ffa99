//! A suite from its files: case globs and the folders they go through, case files read
//! whole or streamed and kept in the cache, and prompts; the bulk of a load, apart from
//! the project's own files.

use crate::cases::identity::Identity;
use crate::cases::jsonl_stream::{JsonLinesStream, BLOCK_BYTES};
use crate::cases::suite::{PromptFile, SuiteModel, UnmatchedGlob};
use crate::cases::{
    parse_case_file_in_parts, reads_json_lines, CaseDetail, CaseProblem, ParsedCaseFile,
    ProblemKind,
};
use crate::digest::{bytes_digest, EntryKind};
use crate::error::{Error, Result};
use crate::project::config::{Config, CONFIG_FILE};
use crate::source::{
    glob_listed, glob_listed_in, ContentSource, ListedFolders, ObjectId, SourceFile,
};
use rayon::prelude::*;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

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

/// How one case file is read: from its own folder, or as the promptfoo configuration that
/// names it reads it (from the configuration's folder, its `defaultTest` merged in).
#[derive(Debug, Clone, Default)]
struct FileContext {
    /// The folder `file://` paths in the file's `vars` are relative to.
    folder: String,
    defaults: Option<Arc<serde_json::Value>>,
}

impl FileContext {
    fn own(path: &str) -> FileContext {
        FileContext {
            folder: folder_of(path).to_owned(),
            defaults: None,
        }
    }
}

fn folder_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(folder, _)| folder)
}

/// Case files parsed once in a check, by the git object they hold. A check with a base
/// parses the judged snapshot first, and then only those of the base's files whose objects
/// differ (in a pull request, the few it touches): the others share the judged snapshot's
/// parts, their memory included. On the benchmark's pull request (200,000 cases, one file
/// changed) this halves the time of `check --base` and its peak memory.
#[derive(Default)]
pub struct ParsedFiles {
    parsed: Mutex<HashMap<(String, ObjectId), Vec<ParsedFile>>>,
}

/// One file's parts, with everything that parsing it depended on besides its bytes.
struct ParsedFile {
    detail: CaseDetail,
    identity: Identity,
    defaults: Option<Arc<serde_json::Value>>,
    parts: FileParts,
}

/// What one case file yielded, in parts (see [`parse_case_file_in_parts`]).
type FileParts = Vec<Arc<ParsedCaseFile>>;

impl ParsedFiles {
    fn get(
        &self,
        key: &(String, ObjectId),
        detail: CaseDetail,
        identity: &Identity,
        context: &FileContext,
    ) -> Option<FileParts> {
        let parsed = self.parsed.lock().ok()?;
        parsed.get(key)?.iter().find_map(|file| {
            let same = file.detail == detail
                && file.identity == *identity
                && file.defaults == context.defaults;
            same.then(|| file.parts.clone())
        })
    }

    /// Keeps a file's parts for reuse, unless one of its cases pins files its `vars`
    /// name: those are read apart, and may differ where the case file does not.
    fn insert(&self, key: (String, ObjectId), file: ParsedFile) {
        let pins_files = file
            .parts
            .iter()
            .any(|part| part.cases.iter().any(|case| case.var_files.is_some()));
        if pins_files {
            return;
        }
        if let Ok(mut parsed) = self.parsed.lock() {
            parsed.entry(key).or_default().push(file);
        }
    }
}

/// One case file, or the parts another snapshot of the check parsed from the same object.
fn load_case_file(
    source: &dyn ContentSource,
    file: &SourceFile,
    how: &HowToLoad<'_>,
    context: &FileContext,
) -> Result<FileParts> {
    let path = file.path.as_str();
    // Its kind as its folder listed it: a symlink that replaces a file changes the listing.
    if file.kind == EntryKind::Symlink {
        return Ok(vec![Arc::new(symlinked_case_file(path))]);
    }
    let key = match how.parsed_files {
        Some(_) => source.object_id(path)?.map(|id| (path.to_owned(), id)),
        None => None,
    };
    let reused = key
        .as_ref()
        .zip(how.parsed_files)
        .and_then(|(key, files)| files.get(key, how.detail, how.identity, context));
    if let Some(parts) = reused {
        return Ok(parts);
    }
    let parts: FileParts = parse_case_file(source, path, how.detail, how.identity, context)?
        .into_iter()
        .map(Arc::new)
        .collect();
    if let (Some(key), Some(files)) = (key, how.parsed_files) {
        let file = ParsedFile {
            detail: how.detail,
            identity: how.identity.clone(),
            defaults: context.defaults.clone(),
            parts: parts.clone(),
        };
        files.insert(key, file);
    }
    Ok(parts)
}

/// How a suite's case files are read: how much of each case to keep, how cases are
/// identified, and what the check parsed already.
pub struct HowToLoad<'a> {
    pub detail: CaseDetail,
    pub identity: &'a Identity,
    pub parsed_files: Option<&'a ParsedFiles>,
    /// The folders the load's case globs listed, shared by its suites.
    pub folders: &'a ListedFolders,
}

/// One case file, parsed in parts; none when it is absent.
fn parse_case_file(
    source: &dyn ContentSource,
    path: &str,
    detail: CaseDetail,
    identity: &Identity,
    context: &FileContext,
) -> Result<Vec<ParsedCaseFile>> {
    let defaults = context.defaults.as_deref();
    let mut parts = match reads_json_lines(path, identity, defaults) {
        true => {
            let mut lines = JsonLinesStream::new(path, detail);
            match source.read_blocks(path, BLOCK_BYTES, &mut |block| lines.push(block))? {
                true => lines.finish(),
                false => Vec::new(),
            }
        }
        false => read_and_parse(source, path, detail, identity, defaults)?,
    };
    for part in &mut parts {
        pin_var_files(source, part, &context.folder)?;
    }
    Ok(parts)
}

/// One case file read whole, then parsed; nothing when it is absent.
fn read_and_parse(
    source: &dyn ContentSource,
    path: &str,
    detail: CaseDetail,
    identity: &Identity,
    defaults: Option<&serde_json::Value>,
) -> Result<Vec<ParsedCaseFile>> {
    // Each thread reads its case files into one buffer, kept from file to file; taken out
    // while in use, since a parse may run another file's read on this thread (rayon
    // steals work while it waits).
    thread_local! {
        static BUFFER: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
    }
    let mut buffer = BUFFER.take();
    let parts = match source.read_into(path, &mut buffer)? {
        true => parse_case_file_in_parts(path, &buffer, detail, identity, defaults),
        false => Vec::new(),
    };
    // A very large file's buffer is not kept past its parse.
    if buffer.capacity() <= 64 << 20 {
        BUFFER.set(buffer);
    }
    Ok(parts)
}

/// Folds the bytes of the files each case's `vars` name (`file://…`) into its digest, so
/// editing one is an edit of the case. A path that leaves the project, names no file or
/// is a symlink is EL105 at the case.
fn pin_var_files(
    source: &dyn ContentSource,
    parsed: &mut ParsedCaseFile,
    folder: &str,
) -> Result<()> {
    for case in &mut parsed.cases {
        let Some(references) = case.var_files.as_deref() else {
            continue;
        };
        let mut pinned = Vec::new();
        let mut refused = Vec::new();
        for reference in &references.0 {
            let written = format!("file://{reference}");
            let Some(path) = crate::cases::promptfoo_config::join(folder, reference) else {
                refused.push(format!(
                    "`vars` names {written}, which is outside the project: keep the files a case reads in the repository"
                ));
                continue;
            };
            let paths = match path.contains(['*', '?', '[', '{']) {
                true => glob_listed(source, std::slice::from_ref(&path))?
                    .into_iter()
                    .map(|file| file.path)
                    .collect(),
                false => vec![path.clone()],
            };
            if paths.is_empty() {
                refused.push(format!(
                    "`vars` names {written}, and `{path}` matches no file: add the files or fix the pattern"
                ));
            }
            for path in paths {
                match source.kind_of(&path)? {
                    Some(EntryKind::Symlink) => refused.push(format!(
                        "`vars` names {written}, and `{path}` is a symlink, which evalock never follows: replace it with the file itself"
                    )),
                    _ => match source.read(&path)? {
                        Some(bytes) => pinned.push((path, bytes_digest(&bytes))),
                        None => refused.push(format!(
                            "`vars` names {written}, and there is no file `{path}`: add it or fix the path (relative to {})",
                            match folder { "" => "the project root", folder => folder }
                        )),
                    },
                }
            }
        }
        pinned.sort();
        pinned.dedup();
        case.digest = crate::digest::with_files(&case.digest, &pinned);
        if let Some(contract) = &mut case.contract {
            **contract = crate::digest::with_files(contract, &pinned);
        }
        parsed
            .problems
            .extend(refused.into_iter().map(|message| CaseProblem {
                kind: ProblemKind::Malformed,
                file: case.file.to_string(),
                line: case.line,
                column: 1,
                message,
            }));
    }
    Ok(())
}

/// A command grader receives the whole case, so its suite is loaded in full even for a
/// check; the built-in grader reads only what a summary keeps.
pub fn detail_for_suite(
    config: &Config,
    suite: &crate::project::config::SuiteConfig,
    detail: CaseDetail,
) -> CaseDetail {
    // promptfoo's assertions are a test's `assert` list, and inspect's a sample's
    // `target`, which a summary does not keep.
    let command_graded = suite.grader.as_deref().is_some_and(|id| {
        config.graders.get(id).map_or(
            crate::project::config::IN_PROCESS_GRADER_IDS.contains(&id),
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

/// What `files` yield, in file order, parsed side by side; a file in `named` is read as
/// the configuration that names it reads it.
fn load_content(
    source: &dyn ContentSource,
    files: &[SourceFile],
    named: &BTreeMap<SourceFile, FileContext>,
    how: &HowToLoad<'_>,
) -> Result<Vec<Arc<ParsedCaseFile>>> {
    let per_file: Vec<FileParts> = files
        .par_iter()
        .map(|file| {
            let context = named
                .get(file)
                .cloned()
                .unwrap_or_else(|| FileContext::own(&file.path));
            load_case_file(source, file, how, &context)
        })
        .collect::<Result<_>>()?;
    Ok(per_file.into_iter().flatten().collect())
}

/// The test files the promptfoo configurations among `case_files` name (`tests:
/// file://…`): cases of the suite too. A reference that matches no file is reported at
/// its line of the configuration.
fn promptfoo_test_files(
    source: &dyn ContentSource,
    case_files: &[SourceFile],
    unmatched: &mut Vec<UnmatchedGlob>,
) -> Result<BTreeMap<SourceFile, FileContext>> {
    use crate::cases::promptfoo_config::{
        default_test, is_promptfoo_config_text, may_be_config, test_file_references,
    };
    let mut files = BTreeMap::new();
    for file in case_files.iter().filter(|file| may_be_config(&file.path)) {
        let config = &file.path;
        if file.kind == EntryKind::Symlink {
            continue;
        }
        let Some(bytes) = source.read(config)? else {
            continue;
        };
        if !is_promptfoo_config_text(config, &bytes) {
            continue;
        }
        let Ok(text) = std::str::from_utf8(&bytes) else {
            continue;
        };
        let context = FileContext {
            folder: folder_of(config).to_owned(),
            defaults: default_test(text).map(Arc::new),
        };
        for pattern in test_file_references(config, text) {
            // An absolute path is one machine's: it matches nothing here.
            let matched = match pattern.starts_with('/') {
                true => Vec::new(),
                false => glob_listed(source, std::slice::from_ref(&pattern))?,
            };
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
            for file in matched {
                files.entry(file).or_insert_with(|| context.clone());
            }
        }
    }
    Ok(files)
}

pub fn load_suite(
    source: &dyn ContentSource,
    suite: &crate::project::config::SuiteConfig,
    detail: CaseDetail,
    parsed_files: Option<&ParsedFiles>,
    folders: &ListedFolders,
) -> Result<SuiteModel> {
    let how = HowToLoad {
        detail,
        identity: &Identity::of(suite),
        parsed_files,
        folders,
    };
    load_suite_as(source, suite, &how)
}

/// [`load_suite`] as `how` says (its cases identified by another rule than the suite's).
pub fn load_suite_as(
    source: &dyn ContentSource,
    suite: &crate::project::config::SuiteConfig,
    how: &HowToLoad<'_>,
) -> Result<SuiteModel> {
    let mut case_files = Vec::new();
    let mut unmatched_globs = Vec::new();
    for (pattern, line) in suite.case_globs() {
        let matched = glob_listed_in(source, std::slice::from_ref(pattern), how.folders)?;
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
        case_files.extend(matched);
    }
    case_files.sort();
    case_files.dedup();
    let named = promptfoo_test_files(source, &case_files, &mut unmatched_globs)?;
    case_files.extend(named.keys().cloned());
    case_files.sort();
    case_files.dedup();
    let parts = load_content(source, &case_files, &named, how)?;
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
    let case_files = case_files.into_iter().map(|file| file.path).collect();
    let mut model = SuiteModel::of(suite.name().to_owned(), case_files, parts);
    model.unmatched_globs = unmatched_globs;
    model.prompts = prompts;
    Ok(model)
}
