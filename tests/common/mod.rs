//! Shared helpers for integration tests: real git repositories in temp dirs, built with
//! the git CLI, and the real evalock binary.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

pub const EVALOCK: &str = env!("CARGO_BIN_EXE_evalock");

/// The repository's own folder (for fixtures).
pub fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn fixture(path: &str) -> PathBuf {
    manifest_dir().join("fixtures").join(path)
}

/// What a command did.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    fn from_output(output: Output) -> Run {
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// Standard output and standard error together, for assertions on messages.
    pub fn all(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }

    #[track_caller]
    pub fn assert_code(&self, expected: i32) -> &Run {
        assert_eq!(
            self.code, expected,
            "unexpected exit code\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout, self.stderr
        );
        self
    }

    #[track_caller]
    pub fn assert_contains(&self, needle: &str) -> &Run {
        assert!(
            self.all().contains(needle),
            "expected {needle:?} in output\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout,
            self.stderr
        );
        self
    }

    #[track_caller]
    pub fn assert_not_contains(&self, needle: &str) -> &Run {
        assert!(
            !self.all().contains(needle),
            "did not expect {needle:?} in output\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout,
            self.stderr
        );
        self
    }
}

/// A real git repository in a temp dir.
pub struct TestRepo {
    dir: tempfile::TempDir,
}

impl TestRepo {
    /// An empty repository on branch `main` with a test identity.
    pub fn new() -> TestRepo {
        let dir = tempfile::tempdir().expect("temp dir");
        let repo = TestRepo { dir };
        repo.git(&["init", "-q", "-b", "main"]);
        repo.git(&["config", "user.email", "test@example.com"]);
        repo.git(&["config", "user.name", "Test"]);
        repo.git(&["config", "commit.gpgsign", "false"]);
        repo.git(&["config", "core.hooksPath", ".git/hooks"]);
        repo
    }

    /// A repository holding a copy of a fixture tree (e.g. `demo`), committed on `main`.
    pub fn with_fixture(name: &str) -> TestRepo {
        let repo = TestRepo::new();
        copy_tree(&fixture(name), repo.path());
        repo.git(&["add", "-A"]);
        repo.git(&["commit", "-q", "-m", "initial"]);
        repo
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn join(&self, relative: &str) -> PathBuf {
        self.path().join(relative)
    }

    pub fn write(&self, relative: &str, content: impl AsRef<[u8]>) {
        let path = self.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create dirs");
        }
        std::fs::write(path, content).expect("write file");
    }

    pub fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.join(relative)).expect("read file")
    }

    pub fn read_bytes(&self, relative: &str) -> Vec<u8> {
        std::fs::read(self.join(relative)).expect("read file")
    }

    /// Replaces the first occurrence of `from` with `to` in a file; panics if absent.
    #[track_caller]
    pub fn replace(&self, relative: &str, from: &str, to: &str) {
        let text = self.read(relative);
        assert!(text.contains(from), "{from:?} not found in {relative}");
        self.write(relative, text.replacen(from, to, 1));
    }

    pub fn remove(&self, relative: &str) {
        std::fs::remove_file(self.join(relative)).expect("remove file");
    }

    /// Runs git and returns its standard output; panics when git fails.
    #[track_caller]
    pub fn git(&self, args: &[&str]) -> String {
        let output = Command::new("git")
            .args(args)
            .current_dir(self.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", self.path())
            .env_remove("GIT_INDEX_FILE")
            .env_remove("GIT_DIR")
            .output()
            .expect("run git");
        assert!(
            output.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Runs git and returns what happened, success or not.
    pub fn git_run(&self, args: &[&str]) -> Run {
        let output = Command::new("git")
            .args(args)
            .current_dir(self.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", self.path())
            .env("PATH", path_with_evalock())
            .env_remove("CI")
            .env_remove("GIT_INDEX_FILE")
            .env_remove("GIT_DIR")
            .stdin(Stdio::null())
            .output()
            .expect("run git");
        Run::from_output(output)
    }

    /// An empty commit whose trailer approves a refusal (`Evalock-Approved: …`), as a
    /// reviewer adds one to a pull request.
    pub fn approve(&self, trailer: &str) {
        self.git(&[
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "approve",
            "-m",
            trailer,
        ]);
    }

    /// In the demo, moves both suites to another model whose prompt lost a rule: the stub
    /// completer answers as that model does, and `model` names it.
    pub fn swap_demo_model(&self) {
        self.replace(
            "evalock.toml",
            "\"completers/stub.py\"]",
            "\"completers/stub.py\", \"regressed\"]",
        );
        self.replace(
            "evalock.toml",
            "model = \"acme-support-stub\"",
            "model = \"acme-support-next\"",
        );
    }

    pub fn commit_all(&self, message: &str) {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "--allow-empty", "-m", message]);
    }

    /// Runs the evalock binary in this repository, with CI unset.
    pub fn evalock(&self, args: &[&str]) -> Run {
        self.evalock_with::<&str>(args, &[])
    }

    /// Runs evalock with extra environment variables (`("CI", "true")`).
    pub fn evalock_with<V: AsRef<std::ffi::OsStr>>(&self, args: &[&str], env: &[(&str, V)]) -> Run {
        let mut command = self.evalock_command(args);
        for (key, value) in env {
            command.env(key, value);
        }
        Run::from_output(command.output().expect("run evalock"))
    }

    /// Runs evalock started in `folder` of this repository (not moved there with `-C`):
    /// what it prints is read from that folder.
    pub fn evalock_in(&self, folder: &str, args: &[&str]) -> Run {
        let mut command = self.evalock_command(args);
        command.current_dir(self.join(folder));
        Run::from_output(command.output().expect("run evalock"))
    }

    /// Starts evalock without waiting, its output piped (for races between processes).
    pub fn spawn_evalock(&self, args: &[&str]) -> Child {
        self.evalock_command(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn evalock")
    }

    /// evalock in this repository, with CI, a git index override and Actions unset.
    fn evalock_command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(EVALOCK);
        command
            .args(args)
            .current_dir(self.path())
            .env_remove("CI")
            .env_remove("GIT_INDEX_FILE")
            .env_remove("GITHUB_ACTIONS")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null());
        command
    }
}

/// PATH with the built evalock binary's folder first, for hooks that call `evalock`.
pub fn path_with_evalock() -> String {
    let bin_dir = Path::new(EVALOCK)
        .parent()
        .expect("binary dir")
        .display()
        .to_string();
    format!("{bin_dir}:{}", std::env::var("PATH").unwrap_or_default())
}

/// Copies a directory tree (files, executable bits and symlinks as they are).
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create target");
    for entry in std::fs::read_dir(from).expect("read fixture dir") {
        let entry = entry.expect("dir entry");
        let target = to.join(entry.file_name());
        let file_type = entry.file_type().expect("file type");
        if file_type.is_dir() {
            copy_tree(&entry.path(), &target);
        } else if file_type.is_symlink() {
            let link = std::fs::read_link(entry.path()).expect("read link");
            std::os::unix::fs::symlink(link, &target).expect("symlink");
        } else {
            std::fs::copy(entry.path(), &target).expect("copy file");
        }
    }
}

/// Whether a process is gone (or a zombie nobody reaped yet: it runs nothing).
pub fn process_is_gone(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z')),
    }
}
