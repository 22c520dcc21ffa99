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
    write_atomic_streamed(path, executable, |file| file.write_all(bytes))
}

/// Like [`write_atomic`], for content written piece by piece (a lock of 200,000 cases is
/// never held whole): `write` fills the temporary file, and an error from it leaves the
/// destination as it was and no temporary file behind.
pub fn write_atomic_from(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    write_atomic_streamed(path, false, |file| {
        let mut buffered = std::io::BufWriter::with_capacity(1 << 16, file);
        write(&mut buffered)?;
        buffered.flush()
    })
}

fn write_atomic_streamed(
    path: &Path,
    executable: bool,
    write: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> Result<()> {
    require_file_destination(path)?;
    let staged = stage_temporary_with(path, executable, write)?;
    staged
        .temporary
        .persist(path)
        .map_err(|error| blocked_or_io(staged.display, error.error))?;
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
    stage_temporary_with(path, executable, |file| file.write_all(bytes))
}

fn stage_temporary_with(
    path: &Path,
    executable: bool,
    write: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> Result<StagedFile> {
    let display = path.display().to_string();
    let directory = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(directory)
        .map_err(|error| blocked_or_io(directory.display().to_string(), error))?;
    ignore_state_folder(directory);
    let mut builder = tempfile::Builder::new();
    builder.prefix(".evalock-tmp-");
    set_ordinary_mode(&mut builder);
    let mut temporary = builder
        .tempfile_in(directory)
        .map_err(|error| blocked_or_io(directory.display().to_string(), error))?;
    write(temporary.as_file_mut()).map_err(|error| Error::io(display.clone(), error))?;
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

/// A write that the file system refuses for a reason the user can fix (no permission, a
/// read-only file system) is malformed project state, not an internal error.
fn blocked_or_io(path: String, error: std::io::Error) -> Error {
    use std::io::ErrorKind;
    match error.kind() {
        ErrorKind::PermissionDenied | ErrorKind::ReadOnlyFilesystem => Error::malformed(
            path,
            format!("cannot write here ({error}): make it writable, then try again"),
        ),
        ErrorKind::NotADirectory | ErrorKind::AlreadyExists => Error::malformed(
            path,
            format!("cannot create this directory ({error}): a file is in the way; move it, then try again"),
        ),
        _ => Error::io(path, error),
    }
}

/// Refuses a destination that a rename cannot replace with a file: a directory (or
/// anything but a file or symlink) where the file goes, or a file where one of its
/// folders goes.
pub fn require_file_destination(path: &Path) -> Result<()> {
    let display = path.display().to_string();
    if let Ok(metadata) = std::fs::symlink_metadata(path) {
        let file_type = metadata.file_type();
        if file_type.is_dir() {
            return Err(Error::malformed(
                display,
                "a directory is in the way of this file: move or remove it, then try again",
            ));
        }
        if !file_type.is_file() && !file_type.is_symlink() {
            return Err(Error::malformed(
                display,
                "this is not a regular file: move or remove it, then try again",
            ));
        }
    }
    for ancestor in path.ancestors().skip(1) {
        if ancestor.as_os_str().is_empty() {
            break;
        }
        match std::fs::metadata(ancestor) {
            Ok(metadata) if metadata.is_dir() => break,
            Ok(_) => {
                return Err(Error::malformed(
                    ancestor.display().to_string(),
                    format!("this is a file, but {display} needs it to be a directory: move it, then try again"),
                ))
            }
            Err(_) => continue,
        }
    }
    Ok(())
}

/// Writes several files all or nothing, as far as a file system allows: every destination
/// is checked and every temporary file written and synced before the first rename, so a
/// blocked destination writes nothing. Should a rename still fail, the files already
/// renamed get their previous content back.
pub fn write_all_atomic(files: &[(std::path::PathBuf, Vec<u8>)]) -> Result<()> {
    for (path, _) in files {
        require_file_destination(path)?;
    }
    let staged = files
        .iter()
        .map(|(path, bytes)| Ok((stage_temporary(path, bytes, false)?, path)))
        .collect::<Result<Vec<_>>>()?;
    let previous = files
        .iter()
        .map(|(path, _)| previous_content(path))
        .collect::<Result<Vec<_>>>()?;
    for (index, (staged_file, path)) in staged.into_iter().enumerate() {
        if let Err(error) = staged_file.temporary.persist(path) {
            restore_previous(&files[..index], &previous[..index]);
            return Err(blocked_or_io(staged_file.display, error.error));
        }
    }
    Ok(())
}

/// A destination's bytes before it is replaced (`None`: it does not exist yet).
fn previous_content(path: &Path) -> Result<Option<Vec<u8>>> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(blocked_or_io(path.display().to_string(), error)),
    }
}

/// Best effort: the write already failed, and that failure is what gets reported.
fn restore_previous(files: &[(std::path::PathBuf, Vec<u8>)], previous: &[Option<Vec<u8>>]) {
    for ((path, _), bytes) in files.iter().zip(previous) {
        let _ = match bytes {
            Some(bytes) => write_atomic(path, bytes),
            None => std::fs::remove_file(path).map_err(|error| Error::io("", error)),
        };
    }
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
    // A file where the lock's folder belongs would otherwise surface as `File exists`.
    require_file_destination(path)?;
    let display = path.display().to_string();
    if let Some(parent) = path
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
    {
        std::fs::create_dir_all(parent)
            .map_err(|error| Error::io(parent.display().to_string(), error))?;
        ignore_state_folder(parent);
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

/// The folder evalock keeps its own state in (results, the memo, the accept lock).
pub const STATE_FOLDER: &str = ".evalock";

/// When `directory` is, or is inside, evalock's state folder, makes git ignore that folder
/// with a `.gitignore` of its own, so that `git add -A` never commits results or the memo.
/// Best effort: a folder that cannot take the file still works.
pub fn ignore_state_folder(directory: &Path) {
    let Some(state) = directory
        .ancestors()
        .find(|folder| folder.file_name().is_some_and(|name| name == STATE_FOLDER))
    else {
        return;
    };
    let ignore = state.join(".gitignore");
    if std::fs::symlink_metadata(&ignore).is_err() {
        let _ = std::fs::write(
            ignore,
            "# evalock's own state (results, memo, locks): never commit it.\n*\n",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The directory holds one file: no temporary was left beside it.
    #[track_caller]
    fn assert_only_file(directory: &Path) {
        let names: Vec<_> = std::fs::read_dir(directory)
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[test]
    fn replaces_the_whole_file_and_leaves_no_temporary() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("evalock.lock");
        write_atomic(&path, b"first version, longer\n").unwrap();
        write_atomic(&path, b"second\n").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"second\n");
        assert_only_file(directory.path());
    }

    #[test]
    fn a_streamed_write_that_fails_leaves_the_file_as_it_was_and_nothing_behind() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("evalock.lock");
        write_atomic_from(&path, |out| {
            out.write_all(b"first ")?;
            out.write_all(b"version\n")
        })
        .unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"first version\n");
        let failed = write_atomic_from(&path, |out| {
            out.write_all(b"half of a lo")?;
            Err(std::io::Error::other("disk full"))
        });
        let message = failed.unwrap_err().to_string();
        assert!(message.contains("disk full"), "{message}");
        assert_eq!(std::fs::read(&path).unwrap(), b"first version\n");
        assert_only_file(directory.path());
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
    fn a_blocked_destination_writes_none_of_the_files() {
        let directory = tempfile::tempdir().unwrap();
        let first = directory.path().join("a.baseline.json");
        let in_the_way = directory.path().join("b.baseline.json");
        std::fs::create_dir(&in_the_way).unwrap();
        let error =
            write_all_atomic(&[(first.clone(), b"a".to_vec()), (in_the_way, b"b".to_vec())])
                .unwrap_err();
        assert_eq!(error.exit_code(), crate::finding::exit_code::MALFORMED);
        assert!(
            error.to_string().contains("a directory is in the way"),
            "{error}"
        );
        assert!(!first.exists());
        let file_as_folder = directory.path().join("folder");
        std::fs::write(&file_as_folder, b"").unwrap();
        let error = write_all_atomic(&[
            (first.clone(), b"a".to_vec()),
            (file_as_folder.join("c.baseline.json"), b"c".to_vec()),
        ])
        .unwrap_err();
        assert!(
            error.to_string().contains("needs it to be a directory"),
            "{error}"
        );
        assert!(!first.exists());
        let names: Vec<_> = std::fs::read_dir(directory.path()).unwrap().collect();
        assert_eq!(
            names.len(),
            2,
            "no temporary file is left behind: {names:?}"
        );
    }

    #[test]
    fn files_already_renamed_get_their_previous_content_back() {
        let directory = tempfile::tempdir().unwrap();
        let existing = directory.path().join("a.baseline.json");
        let created = directory.path().join("b.baseline.json");
        std::fs::write(&existing, b"old").unwrap();
        let files = [
            (existing.clone(), b"new".to_vec()),
            (created.clone(), b"new".to_vec()),
        ];
        let previous = [Some(b"old".to_vec()), None];
        write_all_atomic(&files).unwrap();
        restore_previous(&files, &previous);
        assert_eq!(std::fs::read(&existing).unwrap(), b"old");
        assert!(!created.exists());
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
