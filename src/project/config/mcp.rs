//! `[mcp]`: which tool-server configurations evalock pins, and the committed `tools/list`
//! answers that pin each server's tools.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The configurations agents and editors read without being told, at the project root.
pub const WELL_KNOWN_CONFIGS: &[&str] = &[
    ".mcp.json",
    ".claude/settings.json",
    ".cursor/mcp.json",
    ".vscode/mcp.json",
];

/// Tool servers (MCP): their configurations and their tools' snapshots.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpConfig {
    /// Configuration files (paths or globs) that start tool servers: `.mcp.json`,
    /// `.claude/settings.json`, `.cursor/mcp.json`, `.vscode/mcp.json`, a plugin's
    /// `.claude-plugin/plugin.json`. Absent: the four well-known files at the root.
    #[serde(default = "default_configs")]
    pub configs: Vec<String>,
    /// Server name -> a committed JSON snapshot of its `tools/list` answer, pinned tool by
    /// tool (name, description, input schema).
    #[serde(default)]
    pub snapshots: BTreeMap<String, String>,
    /// Globs of files or folders holding tool-server configurations that no client
    /// loads (templates, test fixtures): without them, a configuration outside `configs`
    /// that starts a server is EL610.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// The line of evalock.toml that writes each of `configs`, in order.
    #[serde(skip)]
    #[schemars(skip)]
    pub config_lines: Vec<u32>,
    /// The line of evalock.toml that writes each snapshot, by server name.
    #[serde(skip)]
    #[schemars(skip)]
    pub snapshot_lines: BTreeMap<String, u32>,
}

fn default_configs() -> Vec<String> {
    WELL_KNOWN_CONFIGS
        .iter()
        .map(|path| (*path).to_owned())
        .collect()
}

impl Default for McpConfig {
    fn default() -> Self {
        McpConfig {
            configs: default_configs(),
            snapshots: BTreeMap::new(),
            exclude: Vec::new(),
            config_lines: Vec::new(),
            snapshot_lines: BTreeMap::new(),
        }
    }
}
