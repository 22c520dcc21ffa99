//! The files a completer's argv names. A script's content decides its completions as much
//! as the argv does, so results record it: a script edited between `run` and `accept`
//! makes the results stale. Only argv words are looked at; a file the script imports is
//! not, since finding those would mean understanding every language a completer is in.

use crate::digest::Digest;
use sha2::{Digest as _, Sha256};
use std::path::{Component, Path, PathBuf};

/// An argv word that names a regular file inside the project, with the digest of its
/// content, or why it could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompleterFile {
    pub word: String,
    pub content: std::result::Result<Digest, String>,
}

/// The files `argv` names, in argv order, resolved against `workdir`, where the completer
/// runs. The program counts only when it has a `/`: without one it is looked up on PATH,
/// as `run` starts it. A word with a `..` component, or that resolves (through symlinks
/// too) outside `workdir`, is never read; a word that is no regular file (a flag, a
/// directory, a name that does not exist) is left to the argv alone.
pub fn completer_files(argv: &[String], workdir: &Path) -> Vec<CompleterFile> {
    let Ok(root) = workdir.canonicalize() else {
        return Vec::new();
    };
    argv.iter()
        .enumerate()
        .filter(|(index, word)| *index > 0 || word.contains('/'))
        .filter_map(|(_, word)| {
            let path = file_inside(&root, word)?;
            let content = file_digest(&path).map_err(|error| error.to_string());
            Some(CompleterFile {
                word: word.clone(),
                content,
            })
        })
        .collect()
}

/// The `bytes-v1` digest of a file's content, streamed: an argv may name a large data
/// file, which need not be held in memory.
fn file_digest(path: &Path) -> std::io::Result<Digest> {
    let mut hasher = Sha256::new();
    std::io::copy(&mut std::fs::File::open(path)?, &mut hasher)?;
    Ok(Digest::from_sha256_bytes(&hasher.finalize().into()))
}

/// The resolved path of the regular file `word` names under the canonical `root`, when
/// it stays inside `root`.
fn file_inside(root: &Path, word: &str) -> Option<PathBuf> {
    let path = Path::new(word);
    if word.is_empty() || path.components().any(|part| part == Component::ParentDir) {
        return None;
    }
    // An absolute word replaces `root`: it is read only when it lies inside.
    let resolved = root.join(path).canonicalize().ok()?;
    (resolved.starts_with(root) && resolved.is_file()).then_some(resolved)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::digest::bytes_digest;

    fn words(words: &[&str]) -> Vec<String> {
        words.iter().map(|word| (*word).to_owned()).collect()
    }

    fn named(argv: &[String], workdir: &Path) -> Vec<String> {
        completer_files(argv, workdir)
            .into_iter()
            .map(|file| file.word)
            .collect()
    }

    #[test]
    fn reads_the_files_the_argv_names_inside_the_project() {
        let outside = tempfile::tempdir().expect("tempdir");
        let project = outside.path().join("project");
        std::fs::create_dir_all(project.join("bin")).expect("mkdir");
        std::fs::write(project.join("bin/complete.py"), "print('hi')\n").expect("write");
        std::fs::write(project.join("complete.sh"), "echo hi\n").expect("write");
        std::fs::write(outside.path().join("secret.py"), "outside\n").expect("write");
        let inside_absolute = project.join("bin/complete.py");
        let argv = words(&[
            "./complete.sh",
            "--flag",
            "bin/complete.py",
            "bin",
            "missing.py",
            inside_absolute.to_str().expect("utf-8"),
        ]);
        assert_eq!(
            named(&argv, &project),
            words(&[
                "./complete.sh",
                "bin/complete.py",
                inside_absolute.to_str().expect("utf-8")
            ])
        );
        let files = completer_files(&argv, &project);
        assert_eq!(files[0].content, Ok(bytes_digest(b"echo hi\n")));
        assert_eq!(files[1].content, Ok(bytes_digest(b"print('hi')\n")));
    }

    #[test]
    fn never_reads_outside_the_project() {
        let outside = tempfile::tempdir().expect("tempdir");
        let project = outside.path().join("project");
        std::fs::create_dir_all(project.join("bin")).expect("mkdir");
        std::fs::write(outside.path().join("secret.py"), "outside\n").expect("write");
        std::fs::write(project.join("bin/complete.py"), "inside\n").expect("write");
        let secret = outside.path().join("secret.py");
        std::os::unix::fs::symlink(&secret, project.join("link.py")).expect("symlink");
        let argv = words(&[
            "python3",
            "../secret.py",
            "bin/../bin/complete.py",
            secret.to_str().expect("utf-8"),
            "link.py",
        ]);
        assert_eq!(named(&argv, &project), Vec::<String>::new());
    }

    #[test]
    fn a_program_without_a_slash_is_found_on_path_not_in_the_project() {
        let project = tempfile::tempdir().expect("tempdir");
        std::fs::write(project.path().join("python3"), "not the interpreter\n").expect("write");
        assert_eq!(
            named(&words(&["python3"]), project.path()),
            Vec::<String>::new()
        );
        assert_eq!(
            named(&words(&["./python3"]), project.path()),
            words(&["./python3"])
        );
    }
}
