//! `evalock mcp audit [PATH]…`: the tool servers of the named configuration files, or of
//! every configuration the project pins, judged criterion by criterion.

use crate::error::{Error, Result};
use crate::mcp::audit::{audit, Outcome};
use crate::project::config::{Config, McpConfig, CONFIG_FILE};
use crate::project::lock::{Lock, LOCK_FILE};
use crate::source::{read_regular_file, WorktreeSource};
use std::path::{Path, PathBuf};

/// Audits `paths` (configuration files, from the project root), or what `[mcp]` names
/// (the well-known files without it). Reads the working tree; a file outside the project
/// is audited alone, without the project's lock.
pub fn mcp_audit(project_root: &Path, paths: &[PathBuf]) -> Result<Outcome> {
    let source = WorktreeSource::new(project_root);
    let config = match read_regular_file(&source, CONFIG_FILE)? {
        Some(bytes) => Some(Config::parse(CONFIG_FILE, &bytes)?),
        None => None,
    };
    let lock = match read_regular_file(&source, LOCK_FILE)? {
        Some(bytes) => Some(Lock::parse(LOCK_FILE, &bytes)?),
        None => None,
    };
    let configured = config.as_ref().and_then(|config| config.mcp.clone());
    let mut settings = configured.clone().unwrap_or_default();
    let mut outcome = Outcome::default();
    if !paths.is_empty() {
        settings.configs.clear();
        settings.config_lines.clear();
        for path in paths {
            match inside(project_root, path)? {
                Some(relative) => settings.configs.push(relative),
                None => {
                    let outside = audit_outside(path)?;
                    outcome.servers.extend(outside.servers);
                    outcome.other.extend(outside.other);
                }
            }
        }
        if settings.configs.is_empty() {
            return Ok(outcome);
        }
        // What the command line names must be there.
        for (index, path) in settings.configs.iter().enumerate() {
            if !project_root.join(path).is_file() {
                return Err(Error::Usage(format!(
                    "{}: no such file",
                    paths[index].display()
                )));
            }
        }
    }
    let set = crate::mcp::load(&source, &settings, !paths.is_empty())?;
    let digest_of = |path: &str| crate::commands::lock::file_digest(&source, path);
    let debt = config.as_ref().map(|config| {
        (
            config,
            &digest_of as &dyn Fn(&str) -> Option<crate::digest::Digest>,
        )
    });
    let audited = audit(
        &set,
        configured.as_ref(),
        lock.as_ref(),
        "working tree",
        debt,
    );
    outcome.servers.splice(0..0, audited.servers);
    outcome.other.splice(0..0, audited.other);
    Ok(outcome)
}

/// The project-relative path of `path`, or `None` when it lies outside the project.
fn inside(project_root: &Path, path: &Path) -> Result<Option<String>> {
    let joined = match path.is_absolute() {
        true => path.to_path_buf(),
        false => project_root.join(path),
    };
    if !joined.is_file() {
        return Err(Error::Usage(format!("{}: no such file", path.display())));
    }
    let canonical = joined
        .canonicalize()
        .map_err(|error| Error::io(path.display().to_string(), error))?;
    let root = project_root
        .canonicalize()
        .map_err(|error| Error::io(project_root.display().to_string(), error))?;
    Ok(canonical.strip_prefix(&root).ok().map(|relative| {
        relative
            .components()
            .map(|part| part.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/")
    }))
}

/// A configuration outside the project: no config or lock of ours speaks for it.
fn audit_outside(path: &Path) -> Result<Outcome> {
    let absolute = path
        .canonicalize()
        .map_err(|error| Error::io(path.display().to_string(), error))?;
    let (Some(parent), Some(name)) = (absolute.parent(), absolute.file_name()) else {
        return Err(Error::Usage(format!("{}: no such file", path.display())));
    };
    let source = WorktreeSource::new(parent);
    let settings = McpConfig {
        configs: vec![name.to_string_lossy().into_owned()],
        ..McpConfig::default()
    };
    let set = crate::mcp::load(&source, &settings, true)?;
    Ok(audit(&set, None, None, "working tree", None))
}
