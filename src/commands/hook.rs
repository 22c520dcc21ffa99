//! `evalock hook install|uninstall`: put evalock's git hook (`hooks/pre-commit` in this
//! repository) in place as pre-commit and pre-merge-commit hook, keeping any hook that
//! was there, and put that hook back on uninstall.

use crate::error::{Error, Result};
use crate::source::atomic::write_atomic_executable;
use crate::source::GitRepo;
use std::path::{Path, PathBuf};

/// The hook script, as users may also copy it from the repository.
pub const HOOK_SCRIPT: &str = include_str!("../../hooks/pre-commit");

/// The line that marks a hook file as evalock's own.
const MARKER: &str = "# evalock-managed-hook";

/// A plain `git commit` runs pre-commit; a merge that needs no conflict resolution runs
/// pre-merge-commit instead.
pub const HOOK_NAMES: [&str; 2] = ["pre-commit", "pre-merge-commit"];

/// Where an earlier hook waits while evalock's is installed: chained hooks run first,
/// replaced ones (`--force`) do not run.
const CHAINED_SUFFIX: &str = ".before-evalock";
const REPLACED_SUFFIX: &str = ".replaced-by-evalock";

/// The script lines `install` fills in.
const PROJECT_LINE: &str = "project_dir=.";
const FALLBACK_LINE: &str = "fallback_evalock=";

#[derive(Debug, Clone)]
pub struct InstallOptions {
    pub project_root: PathBuf,
    /// Move a foreign hook aside without running it, instead of chaining it.
    pub force: bool,
    /// The evalock the hook runs when none is on PATH (usually the installing binary).
    pub fallback_binary: Option<PathBuf>,
}

/// What happened to one hook file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookChange {
    /// There was no hook; evalock's is now there.
    Installed,
    /// An older evalock hook was rewritten.
    Updated,
    /// evalock's hook was already there, byte for byte.
    Unchanged,
    /// A foreign hook was moved to `kept`; it runs before evalock's.
    Chained { kept: PathBuf },
    /// A foreign hook was moved to `kept` (`--force`); it no longer runs.
    Replaced { kept: PathBuf },
    /// evalock's hook was removed; no earlier hook was kept.
    Removed,
    /// evalock's hook was removed and the earlier hook is back from `from`.
    Restored { from: PathBuf },
    /// There is no hook file.
    NotInstalled,
    /// The hook file is not evalock's; it was left alone.
    Foreign,
}

/// One hook file and what happened to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookFile {
    pub name: &'static str,
    pub path: PathBuf,
    pub change: HookChange,
}

#[derive(Debug, Clone)]
pub struct HookOutcome {
    pub hooks_dir: PathBuf,
    pub hooks: Vec<HookFile>,
}

/// What is at a hook's path now.
enum Existing {
    Nothing,
    Evalock(Vec<u8>),
    Foreign,
}

fn existing_hook(path: &Path) -> Result<Existing> {
    match std::fs::symlink_metadata(path) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(Existing::Nothing),
        Err(error) => Err(Error::io(path.display().to_string(), error)),
        // A symlinked hook points at someone else's script; it is moved aside as it is.
        Ok(metadata) if metadata.file_type().is_symlink() => Ok(Existing::Foreign),
        Ok(metadata) if metadata.is_dir() => Err(Error::Usage(format!(
            "{} is a directory, not a hook: move it away first",
            path.display()
        ))),
        Ok(_) => {
            let bytes = std::fs::read(path)
                .map_err(|error| Error::io(path.display().to_string(), error))?;
            if is_evalock_hook(&bytes) {
                Ok(Existing::Evalock(bytes))
            } else {
                Ok(Existing::Foreign)
            }
        }
    }
}

fn is_evalock_hook(bytes: &[u8]) -> bool {
    String::from_utf8_lossy(bytes)
        .lines()
        .any(|line| line.starts_with(MARKER))
}

fn path_exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

fn kept_path(hook: &Path, suffix: &str) -> PathBuf {
    let mut name = hook.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    hook.with_file_name(name)
}

/// The script with the project folder and the fallback binary filled in.
pub fn render_script(project_dir: &str, fallback_binary: Option<&Path>) -> Result<String> {
    let project_dir = if project_dir.is_empty() {
        "."
    } else {
        project_dir
    };
    let fallback = fallback_binary
        .and_then(Path::to_str)
        .map(shell_quote)
        .unwrap_or_default();
    let mut script = String::with_capacity(HOOK_SCRIPT.len() + 64);
    let mut filled = 0;
    for line in HOOK_SCRIPT.lines() {
        if line == PROJECT_LINE {
            script.push_str(&format!("project_dir={}", shell_quote(project_dir)));
            filled += 1;
        } else if line == FALLBACK_LINE {
            script.push_str(&format!("fallback_evalock={fallback}"));
            filled += 1;
        } else {
            script.push_str(line);
        }
        script.push('\n');
    }
    if filled != 2 {
        return Err(Error::Internal(
            "hooks/pre-commit lost its `project_dir=` or `fallback_evalock=` line".into(),
        ));
    }
    Ok(script)
}

fn display_folder(path: &Path) -> String {
    std::path::absolute(path)
        .unwrap_or_else(|_| path.to_path_buf())
        .display()
        .to_string()
}

/// Single-quotes a value for POSIX sh.
fn shell_quote(value: &str) -> String {
    format!("'{}'", value.replace('\'', r"'\''"))
}

/// Installs evalock's hook as every name in [`HOOK_NAMES`]. Nothing is changed unless
/// every hook can be installed.
pub fn install(options: &InstallOptions) -> Result<HookOutcome> {
    let config = options
        .project_root
        .join(crate::project::config::CONFIG_FILE);
    if !config.is_file() {
        return Err(Error::Usage(format!(
            "no {} in {}: the hook checks the project there on every commit; run `evalock init` first, or pass -C with the project's folder",
            crate::project::config::CONFIG_FILE,
            display_folder(&options.project_root),
        )));
    }
    let repo = GitRepo::discover(&options.project_root)?;
    if let Some(origin) = repo.shared_hooks_path_origin() {
        return Err(Error::Usage(format!(
            "core.hooksPath is set in {origin}, outside this repository: a hook installed there would run in every repository it reaches. Set it for this repository only (`git config core.hooksPath .git/hooks`) and run `evalock hook install` again, or use the pre-commit framework"
        )));
    }
    let hooks_dir = repo.hooks_dir()?;
    let script = render_script(repo.prefix(), options.fallback_binary.as_deref())?;
    let suffix = if options.force {
        REPLACED_SUFFIX
    } else {
        CHAINED_SUFFIX
    };
    let mut plan = Vec::new();
    for name in HOOK_NAMES {
        let path = hooks_dir.join(name);
        let existing = existing_hook(&path)?;
        if matches!(existing, Existing::Foreign) {
            for taken in [
                kept_path(&path, CHAINED_SUFFIX),
                kept_path(&path, REPLACED_SUFFIX),
            ] {
                if path_exists(&taken) {
                    return Err(Error::Usage(format!(
                        "{} is not evalock's hook, and {} already holds an earlier one: move one of them away, then run `evalock hook install` again",
                        path.display(),
                        taken.display()
                    )));
                }
            }
        }
        plan.push((name, path, existing));
    }
    let mut hooks = Vec::new();
    for (name, path, existing) in plan {
        let change = match existing {
            Existing::Nothing => HookChange::Installed,
            Existing::Evalock(bytes) if bytes == script.as_bytes() => HookChange::Unchanged,
            Existing::Evalock(_) => HookChange::Updated,
            Existing::Foreign => {
                let kept = kept_path(&path, suffix);
                std::fs::rename(&path, &kept)
                    .map_err(|error| Error::io(path.display().to_string(), error))?;
                if options.force {
                    HookChange::Replaced { kept }
                } else {
                    HookChange::Chained { kept }
                }
            }
        };
        if change != HookChange::Unchanged {
            write_atomic_executable(&path, script.as_bytes())?;
        }
        hooks.push(HookFile { name, path, change });
    }
    Ok(HookOutcome { hooks_dir, hooks })
}

/// Removes evalock's hooks and puts back whatever was there before. Hooks that are not
/// evalock's are left alone.
pub fn uninstall(project_root: &Path) -> Result<HookOutcome> {
    let repo = GitRepo::discover(project_root)?;
    let hooks_dir = repo.hooks_dir()?;
    let mut hooks = Vec::new();
    for name in HOOK_NAMES {
        let path = hooks_dir.join(name);
        let change = match existing_hook(&path)? {
            Existing::Nothing => HookChange::NotInstalled,
            Existing::Foreign => HookChange::Foreign,
            Existing::Evalock(_) => {
                std::fs::remove_file(&path)
                    .map_err(|error| Error::io(path.display().to_string(), error))?;
                restore_earlier_hook(&path)?
            }
        };
        hooks.push(HookFile { name, path, change });
    }
    Ok(HookOutcome { hooks_dir, hooks })
}

fn restore_earlier_hook(path: &Path) -> Result<HookChange> {
    for suffix in [CHAINED_SUFFIX, REPLACED_SUFFIX] {
        let kept = kept_path(path, suffix);
        if path_exists(&kept) {
            std::fs::rename(&kept, path)
                .map_err(|error| Error::io(kept.display().to_string(), error))?;
            return Ok(HookChange::Restored { from: kept });
        }
    }
    Ok(HookChange::Removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_is_marked_and_fillable() {
        assert!(is_evalock_hook(HOOK_SCRIPT.as_bytes()));
        let script = render_script(
            "evals dir/it's",
            Some(Path::new("/opt/evalock/bin/evalock")),
        )
        .unwrap();
        assert!(
            script.contains("\nproject_dir='evals dir/it'\\''s'\n"),
            "{script}"
        );
        assert!(
            script.contains("\nfallback_evalock='/opt/evalock/bin/evalock'\n"),
            "{script}"
        );
        assert!(script.starts_with("#!/bin/sh\n"));
    }

    #[test]
    fn the_project_at_the_top_runs_from_the_top() {
        let script = render_script("", None).unwrap();
        assert!(script.contains("\nproject_dir='.'\n"));
        assert!(script.contains("\nfallback_evalock=\n"));
    }

    #[test]
    fn foreign_scripts_are_not_ours() {
        assert!(!is_evalock_hook(b"#!/bin/sh\nexec pre-commit run\n"));
        assert!(!is_evalock_hook(
            b"#!/bin/sh\n# runs evalock-managed-hook checks? no\n"
        ));
    }
}
