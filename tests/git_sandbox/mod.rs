//! A demo repository plus a private home, so that git, its hooks, evalock and the
//! pre-commit framework run exactly as on a developer's machine without reading or writing
//! anything of the real user's (config, caches, hook environments).

#![allow(dead_code)]

use crate::common::{path_with_evalock, Run, TestRepo, EVALOCK};
use std::path::Path;
use std::process::{Command, Stdio};

/// Environment variables git sets for hooks or users set by hand; none may leak in from
/// the process running the tests (which may itself run inside a git hook).
const LEAKY_VARIABLES: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_PREFIX",
    "GIT_EDITOR",
    "GIT_CONFIG",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_COUNT",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_DATE",
    "CI",
    "GITHUB_ACTIONS",
    "EVALOCK",
    "PRE_COMMIT",
    "PRE_COMMIT_ALLOW_NO_CONFIG",
    "SKIP",
];

pub struct Sandbox {
    pub repo: TestRepo,
    home: tempfile::TempDir,
}

impl Sandbox {
    /// The demo project committed on `main`, evalock's hook not installed yet.
    pub fn demo() -> Sandbox {
        Sandbox {
            repo: TestRepo::with_fixture("demo"),
            home: tempfile::tempdir().expect("temp home"),
        }
    }

    pub fn path(&self) -> &Path {
        self.repo.path()
    }

    pub fn home(&self) -> &Path {
        self.home.path()
    }

    /// A command in the repository with a private HOME, XDG folders and pre-commit cache,
    /// and the built evalock first on PATH.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut command = Command::new(program);
        command.current_dir(self.path());
        for variable in LEAKY_VARIABLES {
            command.env_remove(variable);
        }
        let home = self.home();
        command
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("XDG_CACHE_HOME", home.join(".cache"))
            .env("XDG_DATA_HOME", home.join(".local/share"))
            .env("PRE_COMMIT_HOME", home.join("pre-commit-cache"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("NO_COLOR", "1")
            .env("PATH", path_with_evalock())
            .stdin(Stdio::null());
        command
    }

    pub fn run(&self, mut command: Command) -> Run {
        let output = command.output().expect("start process");
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    pub fn git(&self, args: &[&str]) -> Run {
        let mut command = self.command("git");
        command.args(args);
        self.run(command)
    }

    /// Runs git and returns its standard output; panics when git fails.
    #[track_caller]
    pub fn git_ok(&self, args: &[&str]) -> String {
        let run = self.git(args);
        assert_eq!(
            run.code, 0,
            "git {args:?} failed\n--- stdout\n{}\n--- stderr\n{}",
            run.stdout, run.stderr
        );
        run.stdout
    }

    pub fn evalock(&self, args: &[&str]) -> Run {
        let mut command = self.command(EVALOCK);
        command.args(args);
        self.run(command)
    }

    /// The commit HEAD points at.
    pub fn head(&self) -> String {
        self.git_ok(&["rev-parse", "HEAD"]).trim().to_owned()
    }

    /// A file's bytes as committed in HEAD.
    pub fn committed(&self, path: &str) -> String {
        self.git_ok(&["show", &format!("HEAD:{path}")])
    }

    /// A file's bytes as staged in the index.
    pub fn staged(&self, path: &str) -> String {
        self.git_ok(&["show", &format!(":{path}")])
    }

    /// Stages `content` for `path` without touching the working tree.
    pub fn stage_only(&self, path: &str, content: &str) {
        let blob_file = self.home().join("staged-blob");
        std::fs::write(&blob_file, content).expect("write blob");
        let blob = self.git_ok(&["hash-object", "-w", blob_file.to_str().expect("utf-8 path")]);
        self.git_ok(&[
            "update-index",
            "--cacheinfo",
            &format!("100644,{},{path}", blob.trim()),
        ]);
    }
}

/// The demo's `refund-no-order-id` case (evals/support.jsonl line 2, version 3).
pub const CASE_FILE: &str = "evals/support.jsonl";
pub const CASE_TEXT: &str = "I want my money back.";
pub const CASE_EDITED: &str = "I want my money back, now.";
pub const CASE_VERSION: &str = r#""id": "refund-no-order-id", "version": 3"#;
pub const CASE_BUMPED: &str = r#""id": "refund-no-order-id", "version": 4"#;
