//! The files named one of some names anywhere in the working tree, as git would have
//! them (its ignore rules honoured), and the stamps that let a memo take the walk as
//! unchanged without walking again.

use super::{display, WorktreeSource, SKIPPED_ROOT_DIRECTORIES};
use crate::error::{Error, Result};
use crate::source::{ContentSource, Stamp};
use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// The repository's own ignore rules, which the walk for names honours.
const GIT_EXCLUDE: &str = ".git/info/exclude";

impl WorktreeSource {
    /// The files named one of `names` below the root, git's ignore rules honoured (the
    /// project's `.gitignore` files and `.git/info/exclude`, not a user's global ones:
    /// every clone judges alike), symlinks listed and never followed; and the stamps of
    /// every folder the walk read and of every file that decided what it leaves out
    /// (none when the project root does not hold its repository's `.git` folder, whose
    /// `info/exclude` then lives elsewhere).
    pub(super) fn walk_for_names(&self, names: &[&str]) -> Result<(Vec<String>, Vec<Stamp>)> {
        let mut builder = ignore::WalkBuilder::new(&self.root);
        builder
            .hidden(false)
            .ignore(false)
            .git_global(false)
            .parents(false)
            .follow_links(false)
            .threads(rayon::current_num_threads())
            .filter_entry(|entry| {
                entry.depth() != 1
                    || !SKIPPED_ROOT_DIRECTORIES
                        .iter()
                        .any(|skipped| entry.file_name() == *skipped)
            });
        let found = std::sync::Mutex::new(Vec::new());
        // The folders read.
        let folders = std::sync::Mutex::new(Vec::new());
        let unstampable = AtomicBool::new(false);
        let failed = std::sync::Mutex::new(None);
        let relative = |path: &Path| -> Option<String> {
            let relative = path.strip_prefix(&self.root).ok()?;
            let parts: Option<Vec<&str>> = relative
                .components()
                .map(|part| part.as_os_str().to_str())
                .collect();
            Some(parts?.join("/"))
        };
        builder.build_parallel().run(|| {
            Box::new(|entry| {
                match entry {
                    Ok(entry) if entry.file_type().is_some_and(|kind| !kind.is_dir()) => {
                        let named = entry
                            .file_name()
                            .to_str()
                            .is_some_and(|name| names.contains(&name));
                        if let (true, Some(path)) = (named, relative(entry.path())) {
                            if let Ok(mut found) = found.lock() {
                                found.push(path);
                            }
                        }
                    }
                    // A folder whose name is not UTF-8 cannot be stamped: list again.
                    Ok(entry) => match (relative(entry.path()), folders.lock()) {
                        (Some(path), Ok(mut folders)) => folders.push(path),
                        _ => unstampable.store(true, Ordering::Relaxed),
                    },
                    // A folder that cannot be read holds nothing anyone loads; the root
                    // that cannot be read is an error.
                    Err(error) if error.depth() == Some(0) => {
                        if let Ok(mut failed) = failed.lock() {
                            *failed = Some(error.to_string());
                        }
                    }
                    Err(_) => unstampable.store(true, Ordering::Relaxed),
                }
                ignore::WalkState::Continue
            })
        });
        if let Some(message) = failed.into_inner().ok().flatten() {
            return Err(Error::io(
                display(&self.root),
                std::io::Error::other(message),
            ));
        }
        let mut found = found.into_inner().unwrap_or_default();
        found.sort();
        let git_folder = fs::symlink_metadata(self.root.join(".git")).is_ok_and(|git| git.is_dir());
        let stamps = match (git_folder, unstampable.into_inner(), folders.into_inner()) {
            (true, false, Ok(mut folders)) => {
                folders.sort();
                self.stamps_with_ignore_files(folders)?
            }
            _ => Vec::new(),
        };
        Ok((found, stamps))
    }

    /// The stamps of `folders` and of the ignore files among them: each `.gitignore`
    /// there is (the walk reads it whether or not it ignores itself; one added or removed
    /// changes its folder's stamp) and `.git/info/exclude`, present or not.
    fn stamps_with_ignore_files(&self, folders: Vec<String>) -> Result<Vec<Stamp>> {
        let mut ignore_files = Vec::new();
        for folder in &folders {
            let path = match folder.is_empty() {
                true => ".gitignore".to_owned(),
                false => format!("{folder}/.gitignore"),
            };
            if let Some(stamp) = self.stamp(&path)? {
                ignore_files.push((path, Some(stamp)));
            }
        }
        let mut stamps = self.stamps(folders)?;
        if !stamps.is_empty() {
            stamps.extend(ignore_files);
            stamps.push((GIT_EXCLUDE.to_owned(), self.stamp(GIT_EXCLUDE)?));
        }
        Ok(stamps)
    }
}
