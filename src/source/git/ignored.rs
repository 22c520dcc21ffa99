//! Which working-tree paths git ignores (`.gitignore`, `.git/info/exclude`, the global
//! excludes file), asked of git itself so every rule git honours is honoured here.

use std::collections::BTreeSet;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

/// The paths among `paths` (relative to `project_root`) that git ignores. A file git
/// tracks is never ignored, whatever the patterns say. Empty when git cannot tell (not
/// installed, not a repository): nothing is left out then.
pub fn git_ignored(project_root: &Path, paths: &[String]) -> BTreeSet<String> {
    if paths.is_empty() {
        return BTreeSet::new();
    }
    let child = Command::new("git")
        .current_dir(project_root)
        .args([
            "-c",
            "core.quotePath=false",
            "check-ignore",
            "-z",
            "--stdin",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn();
    let Ok(mut child) = child else {
        return BTreeSet::new();
    };
    let Some(mut stdin) = child.stdin.take() else {
        return BTreeSet::new();
    };
    let mut input = Vec::new();
    for path in paths {
        input.extend_from_slice(path.as_bytes());
        input.push(0);
    }
    // Written from another thread: git answers while it reads, and a full stdout pipe
    // would otherwise stall both sides.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let output = child.wait_with_output();
    let _ = writer.join();
    match output {
        // 0: some paths are ignored; 1: none is; anything else: git could not tell.
        Ok(output) if output.status.code() == Some(0) => output
            .stdout
            .split(|byte| *byte == 0)
            .filter(|path| !path.is_empty())
            .filter_map(|path| std::str::from_utf8(path).ok())
            .map(str::to_owned)
            .collect(),
        _ => BTreeSet::new(),
    }
}
