//! Tool servers (MCP): the configurations that start them (`.mcp.json`,
//! `.claude/settings.json`, `.cursor/mcp.json`, `.vscode/mcp.json`, a plugin's
//! `mcpServers`), pinned like skills: each server's launch (never an environment value)
//! and, from a committed `tools/list` snapshot, each of its tools. EL6xx.

pub mod audit;
pub mod launch;
pub mod rules;
pub mod secrets;
pub mod servers;
pub mod tools;

pub use servers::{Field, Named, Server};
pub use tools::{Snapshot, Tool};

use crate::digest::EntryKind;
use crate::error::Result;
use crate::finding::{Finding, Location, Subject};
use crate::project::config::{McpConfig, CONFIG_FILE, WELL_KNOWN_CONFIGS};
use crate::project::lock::mcp::ServerLock;
use crate::rules::RuleId;
use crate::source::{glob_files, ContentSource};
use std::collections::BTreeSet;

/// The tool servers of one snapshot of the project.
#[derive(Debug, Clone, Default)]
pub struct McpSet {
    pub servers: Vec<Server>,
    pub snapshots: Vec<Snapshot>,
    /// EL601: configurations and snapshots that could not be read.
    pub problems: Vec<Finding>,
    /// Configurations that could not be read as a whole: their locked servers are not
    /// reported gone, and no snapshot is refused for want of its server.
    pub unreadable: BTreeSet<String>,
    /// Every configuration read (those `[mcp] configs` names and those they point at).
    pub read: BTreeSet<String>,
    /// Configurations that start servers but that `[mcp] configs` does not name (EL610).
    pub unlisted: Vec<UnlistedConfig>,
}

/// A file that starts tool servers when a client opens the project, outside `[mcp]
/// configs`, with the servers it starts (judged for their launch like any other).
#[derive(Debug, Clone)]
pub struct UnlistedConfig {
    pub path: String,
    pub servers: Vec<Server>,
}

/// The names of files that can start tool servers, for [`ContentSource::files_named`].
pub const CONFIG_NAMES: &[&str] = &[
    ".mcp.json",
    "mcp.json",
    "settings.json",
    "settings.local.json",
    "plugin.json",
];

/// Whether a client loads `path` as a configuration of tool servers when it opens the
/// project: `.mcp.json` anywhere (a project's, a plugin's), an editor's `mcp.json`
/// (`.cursor/`, `.vscode/`), Claude Code's and VS Code's settings, a plugin's manifest.
pub fn is_config_candidate(path: &str) -> bool {
    let name = crate::source::file_name(path);
    let parent = path.rsplit('/').nth(1).unwrap_or("");
    match name {
        ".mcp.json" => true,
        "mcp.json" => matches!(parent, ".cursor" | ".vscode"),
        "settings.json" => matches!(parent, ".claude" | ".vscode"),
        "settings.local.json" => parent == ".claude",
        "plugin.json" => parent == ".claude-plugin",
        _ => false,
    }
}

/// The files of `named` (as [`ContentSource::files_named`] found them for
/// [`CONFIG_NAMES`]) that start a server and that neither `set` read nor `[mcp] exclude`
/// names.
pub fn unlisted(
    source: &dyn ContentSource,
    named: &[String],
    config: Option<&McpConfig>,
    set: &McpSet,
) -> Result<Vec<UnlistedConfig>> {
    let excluded = match config {
        Some(config) => crate::source::compile_globs(&config.exclude)?,
        None => globset::GlobSet::empty(),
    };
    let mut unlisted = Vec::new();
    for path in named.iter().filter(|path| is_config_candidate(path)) {
        if set.read.contains(path) || crate::skills::discovery::is_excluded(&excluded, path) {
            continue;
        }
        let Some(bytes) = crate::source::read_regular_file(source, path)? else {
            continue;
        };
        let parsed = servers::parse(path, &String::from_utf8_lossy(&bytes));
        if parsed.servers.is_empty() && parsed.references.is_empty() {
            continue;
        }
        unlisted.push(UnlistedConfig {
            path: path.clone(),
            servers: parsed.servers,
        });
    }
    Ok(unlisted)
}

impl McpSet {
    pub fn snapshot(&self, server: &str) -> Option<&Snapshot> {
        self.snapshots
            .iter()
            .find(|snapshot| snapshot.server == server)
    }

    pub fn server(&self, config: &str, name: &str) -> Option<&Server> {
        self.servers
            .iter()
            .find(|server| server.config == config && server.name == name)
    }

    /// The lock entry of `server`: its launch as written (a credential replaced by its
    /// digest), the names of its environment and headers, and its tools.
    pub fn lock_entry(&self, server: &Server) -> ServerLock {
        let snapshot = self.snapshot(&server.name);
        let redact =
            |field: &Option<Field>| field.as_ref().map(|field| secrets::redact(&field.value));
        ServerLock {
            transport: server.transport.as_ref().map(|field| field.value.clone()),
            command: redact(&server.command),
            args: server
                .args
                .iter()
                .map(|arg| secrets::redact(&arg.value))
                .collect(),
            url: redact(&server.url),
            env: server.env.iter().map(|entry| entry.name.clone()).collect(),
            headers: server
                .headers
                .iter()
                .map(|entry| entry.name.clone())
                .collect(),
            snapshot: snapshot.map(|snapshot| snapshot.path.clone()),
            tools: snapshot
                .map(|snapshot| {
                    snapshot
                        .tools
                        .iter()
                        .map(|tool| (tool.name.clone(), tool.pins.clone()))
                        .collect()
                })
                .unwrap_or_default(),
        }
    }
}

/// Reads the configurations `[mcp] configs` names (the well-known ones by default), the
/// files plugin manifests point at, and the snapshots of `[mcp] snapshots`. `some_files`:
/// only some of the configurations are read (an audit of named files), so a snapshot of
/// a server none of them starts is skipped, not refused.
pub fn load(source: &dyn ContentSource, config: &McpConfig, some_files: bool) -> Result<McpSet> {
    let mut set = McpSet::default();
    let mut queue: Vec<(String, Option<Location>)> = Vec::new();
    for (index, entry) in config.configs.iter().enumerate() {
        let line = config.config_lines.get(index).copied().unwrap_or(1);
        if entry.contains(['*', '?', '[', '{']) {
            for file in glob_files(source, std::slice::from_ref(entry))? {
                queue.push((file.path, None));
            }
        } else {
            let named_by = (!WELL_KNOWN_CONFIGS.contains(&entry.as_str()))
                .then(|| Location::line(CONFIG_FILE, line));
            queue.push((entry.trim_start_matches("./").to_owned(), named_by));
        }
    }
    while let Some((path, named_by)) = queue.pop() {
        if !set.read.insert(path.clone()) {
            continue;
        }
        let problems_before = set.problems.len();
        let Some(text) = read_text(
            source,
            &path,
            named_by.as_ref(),
            "configuration",
            &mut set.problems,
        )?
        else {
            if set.problems.len() > problems_before {
                set.unreadable.insert(path.clone());
            }
            continue;
        };
        let parsed = servers::parse(&path, &text);
        if parsed.servers.is_empty() && !parsed.problems.is_empty() {
            set.unreadable.insert(path.clone());
        }
        for server in parsed.servers {
            if set.server(&server.config, &server.name).is_some() {
                set.problems.push(
                    Finding::new(
                        RuleId::McpConfigInvalid,
                        server.subject(),
                        format!(
                            "{path} starts server `{}` twice: the client keeps only one of them",
                            server.name
                        ),
                    )
                    .at(server.at(server.line)),
                );
                continue;
            }
            set.servers.push(server);
        }
        set.problems.extend(parsed.problems);
        queue.extend(
            parsed
                .references
                .into_iter()
                .map(|(target, line)| (target, Some(Location::line(&path, line)))),
        );
    }
    set.servers
        .sort_by(|a, b| (&a.config, &a.name).cmp(&(&b.config, &b.name)));
    for (server, path) in &config.snapshots {
        let line = config.snapshot_lines.get(server).copied().unwrap_or(1);
        let named_by = Location::line(CONFIG_FILE, line);
        let started = set
            .servers
            .iter()
            .any(|candidate| &candidate.name == server);
        if !started && (some_files || !set.unreadable.is_empty()) {
            continue;
        }
        if !started {
            set.problems.push(
                Finding::new(
                    RuleId::McpConfigInvalid,
                    Subject::default(),
                    format!("`[mcp.snapshots]` pins the tools of server `{server}`, which no configuration starts"),
                )
                .at(named_by.clone())
                .discriminator(server),
            );
        }
        let Some(text) = read_text(
            source,
            path,
            Some(&named_by),
            "tools snapshot",
            &mut set.problems,
        )?
        else {
            continue;
        };
        match tools::parse(server, path, &text) {
            Ok(snapshot) => set.snapshots.push(snapshot),
            Err(problem) => set.problems.push(*problem),
        }
    }
    Ok(set)
}

/// A file's text, or `None` with a problem (absent when something named it, a symlink,
/// not UTF-8). An absent well-known configuration is no problem.
fn read_text(
    source: &dyn ContentSource,
    path: &str,
    named_by: Option<&Location>,
    what: &str,
    problems: &mut Vec<Finding>,
) -> Result<Option<String>> {
    let problem = |location: Location, message: String| {
        Finding::new(RuleId::McpConfigInvalid, Subject::default(), message)
            .at(location)
            .discriminator(path)
    };
    if source.kind_of(path)? == Some(EntryKind::Symlink) {
        problems.push(problem(
            Location::line(path, 1),
            format!("the {what} {path} is a symlink, and evalock never follows symlinks: replace it with the file itself"),
        ));
        return Ok(None);
    }
    let Some(bytes) = source.read(path)? else {
        if let Some(location) = named_by {
            problems.push(problem(
                location.clone(),
                format!(
                    "{} names the {what} {path}, which is not in the {}",
                    location.path,
                    source.describe()
                ),
            ));
        }
        return Ok(None);
    };
    match String::from_utf8(bytes) {
        Ok(text) => Ok(Some(text)),
        Err(error) => {
            let offset = error.utf8_error().valid_up_to();
            let line = crate::text::LineIndex::new(error.as_bytes()).line_of(offset);
            problems.push(problem(
                Location::line(path, line),
                format!("the {what} {path} is not UTF-8 text"),
            ));
            Ok(None)
        }
    }
}
