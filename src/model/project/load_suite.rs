//! A suite from its files: case globs and the folders they go through, case files read
//! whole or streamed and kept in the cache, and prompts; the bulk of a load, apart from
//! the project's own files.

use super::LoadOptions;
use crate::error::{Error, Result};
use crate::hash::{bytes_digest, EntryKind};
use crate::model::case_blocks::parse_json_lines_from;
use crate::model::cases::{
    is_json_lines, parse_owned_case_file, CaseDetail, CaseProblem, ParsedCaseFile, ProblemKind,
};
use crate::model::config::{Config, CONFIG_FILE};
use crate::model::suite::{CaseIndex, PromptFile, SuiteCases, SuiteModel, UnmatchedGlob};
use crate::source::{glob_files, ContentIdentity, ContentSource};
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

/// The identity the cache knows a case file by; `None` for a symlink, which is never
/// read, so never cached.
fn cache_identity(source: &dyn ContentSource, path: &str) -> Result<Option<ContentIdentity>> {
    match source.kind_of(path)? {
        Some(EntryKind::Symlink) => Ok(None),
        _ => source.identity(path),
    }
}

/// One case file, through the cache when it has an `identity` there. With `write_cache`
/// false, also the identity the file's cache entry is still to be written under (when the
/// file was not in the cache).
fn load_case_file(
    source: &dyn ContentSource,
    path: &str,
    identity: Option<ContentIdentity>,
    options: &LoadOptions<'_>,
    write_cache: bool,
) -> Result<(ParsedCaseFile, Option<ContentIdentity>)> {
    let cache = options.case_cache.zip(identity);
    if cache.is_none() && source.kind_of(path)? == Some(EntryKind::Symlink) {
        return Ok((symlinked_case_file(path), None));
    }
    if let Some((cache, identity)) = &cache {
        if let Some(parsed) = cache.get(path, identity) {
            return Ok((parsed, None));
        }
    }
    let parsed = match read_case_file(source, path, options.detail)? {
        Some(parsed) => parsed,
        None => return Ok((ParsedCaseFile::default(), None)),
    };
    match cache {
        Some((cache, identity)) if write_cache => {
            cache.put(path, identity, &parsed);
            Ok((parsed, None))
        }
        Some((_, identity)) => Ok((parsed, Some(identity))),
        None => Ok((parsed, None)),
    }
}

/// A JSONL file is read in blocks when the source can stream it (a file far larger than
/// the rest of the suite is then never held whole); other files are read whole. `None`
/// when the file is absent.
fn read_case_file(
    source: &dyn ContentSource,
    path: &str,
    detail: CaseDetail,
) -> Result<Option<ParsedCaseFile>> {
    if is_json_lines(path) {
        if let Some(reader) = source.reader(path)? {
            let parsed = parse_json_lines_from(path, reader, detail)
                .map_err(|error| Error::io(path, error))?;
            return Ok(Some(parsed));
        }
    }
    Ok(source
        .read(path)?
        .map(|bytes| parse_owned_case_file(path, bytes, detail)))
}

/// A command grader receives the whole case, so its suite is loaded in full even for a
/// check; the built-in grader reads only what a summary keeps.
pub(super) fn options_for_suite<'a>(
    config: &Config,
    suite: &crate::model::config::SuiteConfig,
    options: &LoadOptions<'a>,
) -> LoadOptions<'a> {
    let command_graded = suite
        .grader
        .as_deref()
        .and_then(|id| config.graders.get(id))
        .is_some_and(|grader| grader.kind == crate::model::config::GraderKind::Command);
    match command_graded {
        true => LoadOptions {
            detail: CaseDetail::Full,
            ..*options
        },
        false => *options,
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

/// The cases of `files` (sorted): a whole suite's content from the cache when it holds
/// one for exactly these files, else each file's, joined and indexed by id.
fn load_content(
    source: &dyn ContentSource,
    files: Vec<String>,
    options: &LoadOptions<'_>,
) -> Result<Arc<SuiteCases>> {
    // Only summaries are cached.
    let cache = options
        .case_cache
        .filter(|_| options.detail == CaseDetail::Summary);
    let identities: Vec<Option<ContentIdentity>> = match cache {
        Some(_) => files
            .par_iter()
            .map(|path| cache_identity(source, path))
            .collect::<Result<_>>()?,
        None => vec![None; files.len()],
    };
    // The whole suite is looked up, and kept, when every file has its identity.
    let whole = identities.iter().cloned().collect::<Option<Vec<_>>>();
    let whole = cache.zip(whole);
    if let Some(content) = whole
        .as_ref()
        .and_then(|(cache, identities)| cache.get_suite(&files, identities))
    {
        return Ok(content);
    }
    // A suite of one file (often a large one) writes that file's cache entry while its
    // cases are indexed, instead of before: the two are the only work left then. The
    // files of a larger suite write theirs as they are parsed.
    let single = files.len() == 1;
    let loaded: Vec<_> = files
        .par_iter()
        .zip(identities)
        .map(|(path, identity)| load_case_file(source, path, identity, options, !single))
        .collect::<Result<Vec<_>>>()?;
    let (parsed, unwritten): (Vec<_>, Vec<_>) = loaded.into_iter().unzip();
    let pending = unwritten.into_iter().flatten().next();
    // The first file's cases are not copied: a suite of one large file is held once.
    let joined = ParsedCaseFile::joined(parsed);
    let index = match (pending, cache, files.first()) {
        (Some(identity), Some(cache), Some(path)) => {
            let (_, index) = rayon::join(
                || cache.put(path, identity, &joined),
                || CaseIndex::of(&joined.cases),
            );
            index
        }
        _ => CaseIndex::of(&joined.cases),
    };
    let content = Arc::new(SuiteCases::indexed(files, joined, index));
    if let Some((cache, identities)) = whole {
        cache.put_suite(&identities, &content);
    }
    Ok(content)
}

pub(super) fn load_suite(
    source: &dyn ContentSource,
    suite: &crate::model::config::SuiteConfig,
    options: &LoadOptions<'_>,
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
            });
        }
        case_files.extend(matched.into_iter().map(|file| file.path));
    }
    case_files.sort();
    case_files.dedup();
    let content = load_content(source, case_files, options)?;
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
