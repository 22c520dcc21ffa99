//! Atomic, deterministic writes: a temp file in the same directory, fsync, rename.
//! Readers and concurrent writers see either the old file or the new one, never a mix.

use crate::error::{Error, Result};
use std::io::Write;
use std::path::Path;

pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_with(path, bytes, false)
}

/// Like [`write_atomic`], for scripts such as git hooks: the file is executable (0755)
/// from the moment it appears, so git never finds it half-installed.
pub fn write_atomic_executable(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_with(path, bytes, true)
}

fn write_atomic_with(path: &Path, bytes: &[u8], executable: bool) -> Result<()> {
    let staged = stage_temporary(path, bytes, executable)?;
    staged
        .temporary
        .persist(path)
        .map_err(|error| Error::io(staged.display, error.error))?;
    if let Ok(directory_handle) = std::fs::File::open(&staged.directory) {
        // Makes the rename itself durable; not every platform allows it, and a failure
        // here cannot leave a half-written file.
        let _ = directory_handle.sync_all();
    }
    Ok(())
}

/// A fully written and synced temporary file beside its destination, not yet renamed.
struct StagedFile {
    temporary: tempfile::NamedTempFile,
    directory: std::path::PathBuf,
    display: String,
}

fn stage_temporary(path: &Path, bytes: &[u8], executable: bool) -> Result<StagedFile> {
    let display = path.display().to_string();
    let directory = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(directory)
        .map_err(|error| Error::io(directory.display().to_string(), error))?;
    let mut builder = tempfile::Builder::new();
    builder.prefix(".evalock-tmp-");
    set_ordinary_mode(&mut builder);
    let mut temporary = builder
        .tempfile_in(directory)
        .map_err(|error| Error::io(directory.display().to_string(), error))?;
    temporary
        .write_all(bytes)
        .map_err(|error| Error::io(display.clone(), error))?;
    if executable {
        make_executable(temporary.as_file()).map_err(|error| Error::io(display.clone(), error))?;
    }
    temporary
        .as_file()
        .sync_all()
        .map_err(|error| Error::io(display.clone(), error))?;
    Ok(StagedFile {
        temporary,
        directory: directory.to_path_buf(),
        display,
    })
}

/// Writes several files so that a failure before the last rename leaves every one of them
/// untouched: all temporary files are written and synced first, then renamed in order.
pub fn write_all_atomic(files: &[(std::path::PathBuf, Vec<u8>)]) -> Result<()> {
    let staged = files
        .iter()
        .map(|(path, bytes)| Ok((stage_temporary(path, bytes, false)?, path)))
        .collect::<Result<Vec<_>>>()?;
    for (staged_file, path) in staged {
        staged_file
            .temporary
            .persist(path)
            .map_err(|error| Error::io(staged_file.display, error.error))?;
    }
    Ok(())
}

/// Files evalock writes are committed and shared: they get the mode of any new file
/// (0666 less the umask), not the private 0600 of a temporary file.
#[cfg(unix)]
fn set_ordinary_mode(builder: &mut tempfile::Builder<'_, '_>) {
    use std::os::unix::fs::PermissionsExt;
    builder.permissions(std::fs::Permissions::from_mode(0o666));
}

#[cfg(not(unix))]
fn set_ordinary_mode(_builder: &mut tempfile::Builder<'_, '_>) {}

/// An exclusive advisory lock on `path` (created if missing, never removed: removing it
/// would let a third process lock a different file). Held until the returned file is
/// dropped; released by the kernel if the process dies, so a crash never leaves it stale.
/// Blocks while another process holds it.
#[cfg(unix)]
pub fn lock_exclusive(path: &Path) -> Result<std::fs::File> {
    let display = path.display().to_string();
    if let Some(parent) = path
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
    {
        std::fs::create_dir_all(parent)
            .map_err(|error| Error::io(parent.display().to_string(), error))?;
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|error| Error::io(display.clone(), error))?;
    rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)
        .map_err(|error| Error::io(display, error.into()))?;
    Ok(file)
}

#[cfg(unix)]
fn make_executable(file: &std::fs::File) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    file.set_permissions(std::fs::Permissions::from_mode(0o755))
}

#[cfg(not(unix))]
fn make_executable(_file: &std::fs::File) -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_whole_file_and_leaves_no_temporary() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("evalock.lock");
        write_atomic(&path, b"first version, longer\n").unwrap();
        write_atomic(&path, b"second\n").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"second\n");
        let names: Vec<_> = std::fs::read_dir(directory.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[cfg(unix)]
    #[test]
    #[cfg(unix)]
    fn ordinary_writes_are_readable_by_others_as_the_umask_allows() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("evalock.lock");
        write_atomic(&path, b"lock").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        // What a plain new file gets under this process's umask.
        let plain = dir.path().join("plain");
        std::fs::write(&plain, b"").unwrap();
        let expected = std::fs::metadata(&plain).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, expected, "a written lock must not be private (0600)");
    }

    #[test]
    fn executable_writes_are_executable() {
        use std::os::unix::fs::PermissionsExt;
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("pre-commit");
        write_atomic_executable(&path, b"#!/bin/sh\n").unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o755
        );
    }
}
