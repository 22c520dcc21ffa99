//! Graders as the model sees them: each `[grader.<id>]` with its version, what it runs
//! and the `tree-v1` digest of its `sources`, read from one content source.

use crate::digest::{bytes_digest, tree_digest, validate_relative_path, Digest, TreeEntry};
use crate::error::{Error, Result};
use crate::graders::{Grader, GraderProgram};
use crate::project::config::{Config, GraderKind};
use crate::source::{glob_files, ContentSource};

/// One configured grader and the sources pinned with its version.
#[derive(Debug, Clone)]
pub struct GraderModel {
    pub id: String,
    pub version: String,
    pub kind: GraderKind,
    pub command: Option<Vec<String>>,
    /// Where evalock.toml says what it runs (its `command`, else its table header).
    pub line: u32,
    /// The files its `sources` globs match, with their digests.
    pub files: Vec<TreeEntry>,
    /// `tree-v1` over `files`.
    pub digest: Digest,
    /// `sources` globs that match no file, each with the line of evalock.toml that
    /// writes it.
    pub unmatched_sources: Vec<(String, u32)>,
    /// Project files its `command` names that no `sources` glob matches: edits to them
    /// move no digest.
    pub unpinned_command_files: Vec<String>,
}

impl GraderModel {
    /// The runnable grader.
    pub fn grader(&self) -> Grader {
        Grader {
            id: self.id.clone(),
            version: self.version.clone(),
            program: self.program(),
        }
    }

    /// What it runs; verdicts depend on it as much as on its sources, so it is pinned
    /// with them. A `command` beside `kind = "builtin"` is never run, so it is not part.
    pub fn program(&self) -> GraderProgram {
        match (&self.kind, &self.command) {
            (GraderKind::Command, Some(argv)) => GraderProgram::Command(argv.clone()),
            _ => GraderProgram::Builtin,
        }
    }
}

/// The grader a suite uses: its `grader`, or the built-in one.
pub fn grader_for(config: &Config, graders: &[GraderModel], suite: &str) -> Grader {
    let named = config
        .suite(suite)
        .and_then(|config| config.grader.as_deref());
    match named.and_then(|id| graders.iter().find(|grader| grader.id == id)) {
        Some(grader) => grader.grader(),
        None if named == Some(crate::graders::promptfoo::PROMPTFOO_GRADER_ID) => {
            Grader::promptfoo()
        }
        None => match named.and_then(crate::graders::inspect::Scorer::of_id) {
            Some(scorer) => Grader::inspect(scorer),
            None => Grader::builtin(),
        },
    }
}

pub fn load_graders(source: &dyn ContentSource, config: &Config) -> Result<Vec<GraderModel>> {
    config
        .graders
        .iter()
        .map(|(id, grader)| {
            let mut files = Vec::new();
            let mut unmatched_sources = Vec::new();
            for (pattern, line) in grader.source_globs() {
                let matched = glob_files(source, std::slice::from_ref(pattern))?;
                if matched.is_empty() {
                    unmatched_sources.push((pattern.clone(), line));
                }
                for file in matched {
                    if files
                        .iter()
                        .any(|entry: &TreeEntry| entry.path == file.path)
                    {
                        continue;
                    }
                    let bytes = source.read(&file.path)?.unwrap_or_default();
                    files.push(TreeEntry {
                        path: file.path,
                        kind: file.kind,
                        digest: bytes_digest(&bytes),
                    });
                }
            }
            files.sort();
            let unpinned_command_files = match grader.kind {
                GraderKind::Command => unpinned_files(source, grader.argv(), &files),
                GraderKind::Builtin => Vec::new(),
            };
            let digest = tree_digest(&files).map_err(|error| {
                Error::malformed("evalock.toml", format!("grader `{id}`: {error}"))
            })?;
            Ok(GraderModel {
                id: id.clone(),
                version: grader.version.0.clone(),
                kind: grader.kind,
                command: grader.argv().map(<[String]>::to_vec),
                line: grader.line,
                files,
                digest,
                unmatched_sources,
                unpinned_command_files,
            })
        })
        .collect()
}

/// The arguments of `argv` that name a file of the project outside `files`.
fn unpinned_files(
    source: &dyn ContentSource,
    argv: Option<&[String]>,
    files: &[TreeEntry],
) -> Vec<String> {
    let mut unpinned: Vec<String> = Vec::new();
    for argument in argv.unwrap_or_default() {
        let path = argument.strip_prefix("./").unwrap_or(argument);
        if validate_relative_path(path).is_err()
            || files.iter().any(|entry| entry.path == path)
            || unpinned.iter().any(|seen| seen == path)
        {
            continue;
        }
        // Most arguments are not paths at all (flags, inline code): one that cannot be
        // looked up names no file.
        if let Ok(Some(_)) = source.kind_of(path) {
            unpinned.push(path.to_owned());
        }
    }
    unpinned
}
