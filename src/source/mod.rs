//! Where content comes from: the working tree (default), the git index (`--staged`), or a
//! commit (`--rev`). Every later stage reads through [`ContentSource`], so a pre-commit
//! hook never judges unstaged bytes.

pub mod atomic;
mod folders;
mod git;
mod recording;
mod same_objects;
#[cfg(test)]
pub(crate) mod testing;
mod worktree;

pub use folders::ListedFolders;
pub use git::{
    git_ignored, trailer_values, CommitInfo, GitRepo, GitSnapshot, IndexSource, RevisionSource,
    StagedChanges, StagedIndex, WorktreeObjects,
};
pub use recording::{all_hold, Dependency, RecordingSource};
pub use same_objects::SameObjects;
pub use worktree::WorktreeSource;

use crate::digest::EntryKind;
use crate::error::{Error, Result};
pub use gix::ObjectId;
use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use std::path::Path;

/// Which content a command judges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceSpec {
    Worktree,
    Index,
    Revision(String),
}

/// One file of a source, by project-relative `/`-separated path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct SourceFile {
    pub path: String,
    pub kind: EntryKind,
}

/// An entry of a snapshot that has no content evalock can read or pin: a git submodule
/// (its files live in another repository) or a name that is not UTF-8. Listed apart from
/// [`SourceFile`]s so that whoever pins a folder can refuse it instead of missing it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Unpinnable {
    /// Project-relative, `/`-separated; bytes that are not UTF-8 shown as U+FFFD.
    pub path: String,
    pub reason: UnpinnableReason,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum UnpinnableReason {
    Submodule,
    NameNotUtf8,
}

impl UnpinnableReason {
    pub fn describe(self) -> &'static str {
        match self {
            UnpinnableReason::Submodule => {
                "a git submodule: its files live in another repository and nothing here pins them"
            }
            UnpinnableReason::NameNotUtf8 => "its name is not valid UTF-8",
        }
    }
}

/// Everything below a folder: the files, and the entries that cannot be pinned.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listing {
    pub files: Vec<SourceFile>,
    pub unpinnable: Vec<Unpinnable>,
}

impl Listing {
    /// The part of this listing (of `listed`, sorted by path) below `dir`, a folder inside
    /// it: what listing `dir` itself gives, without reading the folder again.
    pub fn below(&self, listed: &str, dir: &str) -> Option<Listing> {
        let inside = |path: &str, folder: &str| {
            folder.is_empty()
                || path
                    .strip_prefix(folder)
                    .is_some_and(|rest| rest.starts_with('/'))
        };
        if dir.is_empty() || !inside(dir, listed) {
            return None;
        }
        let prefix = format!("{dir}/");
        let start = self
            .files
            .partition_point(|file| file.path.as_str() < prefix.as_str());
        let files = self.files[start..]
            .iter()
            .take_while(|file| file.path.starts_with(&prefix))
            .cloned()
            .collect();
        let unpinnable = unpinnable_below(&self.unpinnable, &prefix);
        Some(Listing { files, unpinnable })
    }
}

/// The entries of `unpinnable` whose paths start with `prefix` (`dir/`, or `""` for all).
fn unpinnable_below<'a>(
    unpinnable: impl IntoIterator<Item = &'a Unpinnable>,
    prefix: &str,
) -> Vec<Unpinnable> {
    unpinnable
        .into_iter()
        .filter(|entry| entry.path.starts_with(prefix))
        .cloned()
        .collect()
}

/// Read access to one snapshot of the project.
pub trait ContentSource: Send + Sync {
    /// For messages: `working tree`, `index`, `main (1a2b3c4)`.
    fn describe(&self) -> String;

    /// The bytes of a file, or a symlink's target (never followed); `None` when absent.
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>>;

    /// [`ContentSource::read`] into `buffer` (emptied first), which keeps its allocation
    /// from one read to the next: a check reads every case file once, and a new block of
    /// memory for each costs it its page faults. `false` when absent.
    fn read_into(&self, path: &str, buffer: &mut Vec<u8>) -> Result<bool> {
        buffer.clear();
        match self.read(path)? {
            Some(bytes) => {
                *buffer = bytes;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// The bytes of the file at `path` given to `each` in order, in blocks of at most
    /// `block` bytes where the source reads them so: a caller that parses as it reads
    /// never holds a large file whole. `false` when absent. A symlink gives its target, as
    /// [`ContentSource::read`] does.
    fn read_blocks(
        &self,
        path: &str,
        block: usize,
        each: &mut (dyn FnMut(&[u8]) + Send),
    ) -> Result<bool> {
        let _ = block;
        let mut bytes = Vec::new();
        let present = self.read_into(path, &mut bytes)?;
        if present {
            each(&bytes);
        }
        Ok(present)
    }

    /// The kind of the entry at `path`, `None` when absent.
    fn kind_of(&self, path: &str) -> Result<Option<EntryKind>>;

    /// Whether a directory stands at `path`, where a caller expected a file or nothing.
    fn is_directory(&self, _path: &str) -> Result<bool> {
        Ok(false)
    }

    /// What stands at `path`, `None` when nothing: [`ContentSource::kind_of`] and
    /// [`ContentSource::is_directory`] at once, one `lstat` in the working tree (a
    /// suite's baseline, absent until the first `accept`, costs no more).
    fn entry_of(&self, path: &str) -> Result<Option<Entry>> {
        Ok(match self.kind_of(path)? {
            Some(kind) => Some(Entry::File(kind)),
            None if self.is_directory(path)? => Some(Entry::Directory),
            None => None,
        })
    }

    /// Every file below `dir` (`""` for the whole project), recursively, sorted by path.
    fn list(&self, dir: &str) -> Result<Vec<SourceFile>>;

    /// [`ContentSource::list`] together with the entries below `dir` that have no
    /// content to pin (submodules, names that are not UTF-8), each sorted by path.
    fn listing(&self, dir: &str) -> Result<Listing> {
        Ok(Listing {
            files: self.list(dir)?,
            unpinnable: Vec::new(),
        })
    }

    /// [`ContentSource::listing`] as a memo checks it: whether a file is executable is
    /// left out (as [`EntryKind::File`]), which the working tree can tell from its
    /// folders alone, without the stat data of each file. Nothing is lost: a file whose
    /// mode matters is read, and its identity changes with its mode.
    fn listed_names(&self, dir: &str) -> Result<Listing> {
        let mut listing = self.listing(dir)?;
        for file in &mut listing.files {
            if file.kind == EntryKind::Executable {
                file.kind = EntryKind::File;
            }
        }
        Ok(listing)
    }

    /// Every file of the snapshot whose name (last path component) is one of `names`,
    /// sorted by path: what an agent or an editor would find by name anywhere in the
    /// project. The working tree leaves out what git ignores, as a clone would lack it.
    fn files_named(&self, names: &[&str]) -> Result<Vec<String>> {
        Ok(self
            .list("")?
            .into_iter()
            .filter(|file| names.contains(&file_name(&file.path)))
            .map(|file| file.path)
            .collect())
    }

    /// What identifies the content at `path` without reading it, for caches; `None` when
    /// absent or when this source cannot vouch for its content that way.
    fn identity(&self, _path: &str) -> Result<Option<ContentIdentity>> {
        Ok(None)
    }

    /// [`ContentSource::listing`] with the stamps of the folders it read: a memo takes a
    /// listing as unchanged while they are, without listing it again. No stamps where
    /// this source has none (then the memo lists again).
    fn listing_stamped(&self, dir: &str) -> Result<(Listing, Vec<Stamp>)> {
        Ok((self.listing(dir)?, Vec::new()))
    }

    /// [`ContentSource::listed_names`] with the stamps of the folders it read.
    fn listed_names_stamped(&self, dir: &str) -> Result<(Listing, Vec<Stamp>)> {
        Ok((self.listed_names(dir)?, Vec::new()))
    }

    /// [`ContentSource::files_named`] with the stamps of the folders it read and of the
    /// files that decided what it leaves out (`.gitignore`, `.git/info/exclude`).
    fn files_named_stamped(&self, names: &[&str]) -> Result<(Vec<String>, Vec<Stamp>)> {
        Ok((self.files_named(names)?, Vec::new()))
    }

    /// The stamp of the folder or file at `path` now, `None` when there is none: how
    /// [`Stamp`]s are checked.
    fn stamp(&self, _path: &str) -> Result<Option<ContentIdentity>> {
        Ok(None)
    }

    /// The git object the regular file at `path` holds, when this source knows it without
    /// reading the file: a commit's or the index's entry, or for the working tree the
    /// index entry of a file whose stat data shows it unchanged. `None` otherwise.
    fn object_id(&self, _path: &str) -> Result<Option<ObjectId>> {
        Ok(None)
    }
}

/// A folder or file as a listing found it: its stat data, `None` for a file that was
/// absent. A folder's stat data change whenever an entry is added to it, removed or
/// renamed (POSIX: its modification and change times), so while every folder a listing
/// read keeps its stamp, the listing is the same. A warm check then stats folders instead
/// of listing them: on the 8,000-file collection 31.4 ms → 14.7 ms, on the public
/// davila7/claude-code-templates (9,221 files) 56.8 ms → 27.5 ms, where `git status` takes
/// 34–36 ms.
pub type Stamp = (String, Option<ContentIdentity>);

/// What stands at a path: a file of some kind, or a directory.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum Entry {
    File(EntryKind),
    Directory,
}

/// The last component of a `/`-separated path.
pub fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// What identifies a file's content without reading it. Equal identities mean equal
/// content: git's object id, or the working tree's stat data, which changes whenever the
/// content may have (the inode change time cannot be set back by hand).
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum ContentIdentity {
    /// A git object id (hex), from the index or a commit.
    Object(String),
    /// A working-tree file's stat data.
    Stat {
        size: u64,
        modified_ns: i128,
        changed_ns: i128,
        inode: u64,
        device: u64,
    },
}

/// Opens the source a command asked for, rooted at the project directory.
pub fn open(project_root: &Path, spec: &SourceSpec) -> Result<Box<dyn ContentSource>> {
    match spec {
        SourceSpec::Worktree => Ok(Box::new(WorktreeSource::new(project_root))),
        SourceSpec::Index => Ok(Box::new(GitRepo::discover(project_root)?.index_source()?)),
        SourceSpec::Revision(revision) => Ok(Box::new(
            GitRepo::discover(project_root)?.revision_source(revision)?,
        )),
    }
}

/// Files of `source` matching any of `patterns` (globs relative to the project root).
pub fn glob_files(source: &dyn ContentSource, patterns: &[String]) -> Result<Vec<SourceFile>> {
    glob_in(patterns, |dir| source.list(dir))
}

/// [`glob_files`] with kinds as [`ContentSource::listed_names`] gives them: a symlink is
/// told from a file, an executable file shows as a file. The working tree lists them
/// from its folders alone, without each file's stat data (with 20,000 small case files,
/// a tenth of a cold check).
///
/// A pattern without wildcards names one file, which is looked up alone: `evalock init`
/// writes one literal path per suite, and listing their folder once per suite made a
/// config of 400 suites read 160,000 folder entries.
pub fn glob_listed(source: &dyn ContentSource, patterns: &[String]) -> Result<Vec<SourceFile>> {
    glob_listed_in(source, patterns, &ListedFolders::default())
}

/// [`glob_listed`], each folder listed once in `folders` for every glob of a load.
pub fn glob_listed_in(
    source: &dyn ContentSource,
    patterns: &[String],
    folders: &ListedFolders,
) -> Result<Vec<SourceFile>> {
    let (literal, wildcard): (Vec<&String>, Vec<&String>) = patterns
        .iter()
        .partition(|pattern| !pattern.contains(['*', '?', '[', '{', '\\']));
    let mut files = Vec::new();
    for pattern in wildcard {
        files.extend(folders.matching(source, pattern)?);
    }
    for path in literal {
        let kind = match source.kind_of(path)? {
            Some(EntryKind::Symlink) => EntryKind::Symlink,
            Some(EntryKind::File | EntryKind::Executable) => EntryKind::File,
            None => continue,
        };
        files.push(SourceFile {
            path: path.clone(),
            kind,
        });
    }
    files.sort();
    files.dedup();
    Ok(files)
}

fn glob_in(
    patterns: &[String],
    list: impl Fn(&str) -> Result<Vec<SourceFile>>,
) -> Result<Vec<SourceFile>> {
    let matcher = compile_globs(patterns)?;
    let mut prefixes: Vec<String> = patterns
        .iter()
        .map(|pattern| literal_prefix(pattern))
        .collect();
    prefixes.sort();
    prefixes.dedup();
    // A prefix inside another prefix would list the same files twice.
    let roots: Vec<&String> = prefixes
        .iter()
        .filter(|prefix| {
            !prefixes.iter().any(|other| {
                other != *prefix && (other.is_empty() || prefix.starts_with(&format!("{other}/")))
            })
        })
        .collect();
    let mut files = Vec::new();
    for root in roots {
        for file in list(root)? {
            if matcher.is_match(&file.path) {
                files.push(file);
            }
        }
    }
    files.sort();
    files.dedup();
    Ok(files)
}

pub fn compile_globs(patterns: &[String]) -> Result<GlobSet> {
    let mut builder = GlobSetBuilder::new();
    for pattern in patterns {
        let glob = Glob::new(pattern)
            .map_err(|error| Error::Usage(format!("invalid glob `{pattern}`: {error}")))?;
        builder.add(glob);
    }
    builder
        .build()
        .map_err(|error| Error::Usage(format!("invalid globs: {error}")))
}

/// Globs over folder paths where `*` stays within one folder and `**` crosses folders.
pub fn compile_folder_globs(patterns: &[String]) -> Result<GlobSet> {
    let mut builder = GlobSetBuilder::new();
    for pattern in patterns {
        let trimmed = pattern.trim_end_matches('/');
        if trimmed.is_empty()
            || trimmed == "."
            || trimmed.starts_with('/')
            || trimmed.split('/').any(|part| part == "..")
        {
            return Err(Error::Usage(format!(
                "skills glob `{pattern}` must name folders inside the project, such as `skills/*`"
            )));
        }
        let glob = GlobBuilder::new(trimmed)
            .literal_separator(true)
            .build()
            .map_err(|error| Error::Usage(format!("invalid skills glob `{pattern}`: {error}")))?;
        builder.add(glob);
    }
    builder
        .build()
        .map_err(|error| Error::Usage(format!("invalid skills globs: {error}")))
}

/// The directory part of a glob before its first wildcard: `evals/**/*.jsonl` -> `evals`.
pub fn literal_prefix(pattern: &str) -> String {
    let components: Vec<&str> = pattern.split('/').collect();
    let mut literal = Vec::new();
    for (index, component) in components.iter().enumerate() {
        let is_last = index + 1 == components.len();
        if is_last || component.contains(['*', '?', '[', '{']) {
            break;
        }
        literal.push(*component);
    }
    literal.join("/")
}

/// The bytes of evalock's own files; a symlink is refused, since its target string is
/// not the file and following it could leave the project.
pub fn read_regular_file(source: &dyn ContentSource, path: &str) -> Result<Option<Vec<u8>>> {
    refuse_non_file(source, path)?;
    source.read(path)
}

/// A symlink or a directory where evalock's own file goes is refused by name, not taken
/// for "there is no such file yet".
pub fn refuse_non_file(source: &dyn ContentSource, path: &str) -> Result<()> {
    if source.kind_of(path)? == Some(EntryKind::Symlink) {
        return Err(Error::malformed(
            format!("{path}:1"),
            format!("{path} is a symlink, and evalock never follows symlinks: replace it with the file itself"),
        ));
    }
    if source.is_directory(path)? {
        return Err(Error::malformed(
            path,
            format!(
                "{path} is a directory (a folder or a git submodule) in the {}, where evalock expects its file: move it away",
                source.describe()
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_prefix_stops_at_the_first_wildcard() {
        assert_eq!(literal_prefix("evals/**/*.jsonl"), "evals");
        assert_eq!(literal_prefix("evals/support.jsonl"), "evals");
        assert_eq!(literal_prefix("*.jsonl"), "");
        assert_eq!(literal_prefix("a/b/c/*.yaml"), "a/b/c");
        assert_eq!(literal_prefix("skills/*/SKILL.md"), "skills");
    }

    /// The part of a listing below a folder is what listing that folder gives: names that
    /// only start alike (`a` and `a-b`, `a.md`) stay out, symlinks and names that are not
    /// UTF-8 stay in, and a folder the listing does not hold is not answered for.
    #[test]
    fn a_listing_below_a_folder_is_the_folders_own_listing() {
        let directory = tempfile::tempdir().unwrap();
        let root = directory.path();
        for file in [
            "skills/a/SKILL.md",
            "skills/a/scripts/run.sh",
            "skills/a/nested/SKILL.md",
            "skills/a-b/SKILL.md",
            "skills/a.md",
            "skills/b/SKILL.md",
            "other/a/x.txt",
        ] {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, file).unwrap();
        }
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            std::os::unix::fs::symlink("../b", root.join("skills/a/link")).unwrap();
            let name = std::ffi::OsStr::from_bytes(b"bad-\xff");
            std::fs::write(root.join("skills/a/scripts").join(name), "x").unwrap();
        }
        let source = WorktreeSource::new(root);
        for listed in ["", "skills"] {
            let listing = source.listing(listed).unwrap();
            for dir in [
                "skills/a",
                "skills/a/scripts",
                "skills/a/nested",
                "skills/a-b",
                "skills/b",
            ] {
                assert_eq!(
                    listing.below(listed, dir),
                    Some(source.listing(dir).unwrap()),
                    "{dir} below {listed:?}"
                );
            }
            assert_eq!(listing.below(listed, ""), None);
        }
        let skills = source.listing("skills").unwrap();
        assert_eq!(skills.below("skills", "other/a"), None);
        assert_eq!(skills.below("skills", "skill"), None);
        let a = skills.below("skills", "skills/a").unwrap();
        assert!(a
            .files
            .iter()
            .all(|file| file.path.starts_with("skills/a/")));
        assert_eq!(a.files.len(), if cfg!(unix) { 4 } else { 3 });
        assert_eq!(a.unpinnable.len(), usize::from(cfg!(unix)));
    }
}
