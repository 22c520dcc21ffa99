//! Plugin marketplaces (`.claude-plugin/marketplace.json`): the skill folders each
//! plugin's `source` and `skills` name, and what in them evalock cannot pin or find.

use super::{join, skills_under_glob, symlink_on_path, DiscoveryProblem, SKILL_FILE};
use crate::cases::strict_json::StrictValue;
use crate::digest::EntryKind;
use crate::error::Result;
use crate::source::ContentSource;
use serde_json::Value;
use std::collections::BTreeSet;

/// Reads a marketplace: each plugin's `source` (a path in this repository) and its
/// `skills` (paths relative to the plugin), or `<plugin>/skills/*` when none are listed.
pub(super) fn read_marketplace(
    source: &dyn ContentSource,
    (marketplace, config_line): (&str, u32),
    found: &mut BTreeSet<String>,
    problems: &mut Vec<DiscoveryProblem>,
) -> Result<()> {
    let Some((text, document)) = load_marketplace(source, (marketplace, config_line), problems)?
    else {
        return Ok(());
    };
    let plugins = document
        .get("plugins")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut reading = MarketplaceReading {
        source,
        marketplace,
        text: &text,
        market_root: marketplace_root(marketplace),
        plugin_root: document
            .pointer("/metadata/pluginRoot")
            .and_then(Value::as_str)
            .unwrap_or(""),
        found,
        problems,
    };
    for plugin in &plugins {
        reading.read_plugin(plugin)?;
    }
    Ok(())
}

/// The marketplace's text and JSON document; `None`, with the problem recorded, when it
/// is a symlink, missing or not JSON.
fn load_marketplace(
    source: &dyn ContentSource,
    (marketplace, config_line): (&str, u32),
    problems: &mut Vec<DiscoveryProblem>,
) -> Result<Option<(String, Value)>> {
    // A symlink's target string is what `read` returns: never take it for the listing,
    // even when it parses as one.
    if source.kind_of(marketplace)? == Some(EntryKind::Symlink) {
        problems.push(marketplace_problem(
            marketplace,
            1,
            format!("{marketplace} is a symlink; evalock never follows symlinks: make it a regular file"),
            false,
        ));
        return Ok(None);
    }
    let Some(bytes) = source.read(marketplace)? else {
        problems.push(DiscoveryProblem {
            file: crate::project::config::CONFIG_FILE.into(),
            line: config_line,
            message: format!("skills.marketplaces names {marketplace}, which does not exist"),
            remote: false,
            help: Some("correct the path in `skills.marketplaces` in evalock.toml, or remove it"),
        });
        return Ok(None);
    };
    let text = String::from_utf8_lossy(&bytes).into_owned();
    match serde_json::from_str::<StrictValue>(&text) {
        Ok(StrictValue(document)) => Ok(Some((text, document))),
        Err(error) => {
            problems.push(marketplace_problem(
                marketplace,
                error.line().max(1) as u32,
                format!("invalid JSON: {error}"),
                false,
            ));
            Ok(None)
        }
    }
}

fn marketplace_problem(
    marketplace: &str,
    line: u32,
    message: String,
    remote: bool,
) -> DiscoveryProblem {
    DiscoveryProblem {
        file: marketplace.to_owned(),
        line,
        message,
        remote,
        help: None,
    }
}

/// The folder holding `.claude-plugin/`, which plugin sources are relative to.
fn marketplace_root(marketplace: &str) -> &str {
    let folder = marketplace
        .rsplit_once('/')
        .map_or("", |(folder, _)| folder);
    folder
        .strip_suffix(".claude-plugin")
        .map(|root| root.trim_end_matches('/'))
        .unwrap_or(folder)
}

/// A marketplace being read: where its plugins' paths start, its text for the line of
/// each problem, and what reading it finds.
struct MarketplaceReading<'a> {
    source: &'a dyn ContentSource,
    marketplace: &'a str,
    text: &'a str,
    market_root: &'a str,
    /// `metadata.pluginRoot`, which plugin sources are relative to.
    plugin_root: &'a str,
    found: &'a mut BTreeSet<String>,
    problems: &'a mut Vec<DiscoveryProblem>,
}

impl MarketplaceReading<'_> {
    fn read_plugin(&mut self, plugin: &Value) -> Result<()> {
        let name = plugin
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("(unnamed)");
        let Some(plugin_dir) = self.plugin_folder(plugin, name)? else {
            return Ok(());
        };
        match plugin.get("skills").and_then(Value::as_array) {
            Some(listed) => {
                for entry in listed.iter().filter_map(Value::as_str) {
                    self.find_listed_skill(name, &plugin_dir, entry)?;
                }
            }
            None => self.found.extend(skills_under_glob(
                self.source,
                &join(&plugin_dir, "skills/*"),
            )?),
        }
        Ok(())
    }

    /// The plugin's folder in this repository; `None`, with the problem recorded, when
    /// its source is remote, leaves the repository or is not a folder here.
    fn plugin_folder(&mut self, plugin: &Value, name: &str) -> Result<Option<String>> {
        let plugin_dir = match plugin.get("source") {
            Some(Value::String(path)) => resolve(self.market_root, &[self.plugin_root, path]),
            Some(other) => {
                self.report(
                    self.line_of_string(name),
                    format!("plugin `{name}` is fetched from {other} at install time; evalock can only pin what is in this repository: vendor it and list its path"),
                    true,
                );
                return Ok(None);
            }
            None => resolve(self.market_root, &[self.plugin_root]),
        };
        let Some(plugin_dir) = plugin_dir else {
            self.report(
                self.line_of_string(name),
                format!("plugin `{name}`: its source leaves the repository"),
                false,
            );
            return Ok(None);
        };
        // A plugin folder that is not there holds no skill to find: a typo, a moved
        // folder or a URL written as a path would otherwise pass in silence.
        if !plugin_dir.is_empty() && !self.source.is_directory(&plugin_dir)? {
            self.report_missing_plugin_folder(plugin, name, &plugin_dir)?;
            return Ok(None);
        }
        Ok(Some(plugin_dir))
    }

    fn report_missing_plugin_folder(
        &mut self,
        plugin: &Value,
        name: &str,
        plugin_dir: &str,
    ) -> Result<()> {
        let written = plugin
            .get("source")
            .and_then(Value::as_str)
            .unwrap_or(self.plugin_root);
        let message = match symlink_on_path(self.source, plugin_dir)? {
            Some(link) => format!("plugin `{name}` has its source in {plugin_dir}, but {link} is a symlink, which evalock never follows: nothing of the plugin is pinned or audited; vendor the files instead"),
            None => format!("plugin `{name}` has source `{written}`, which is not a folder in this repository ({plugin_dir} is missing): nothing of the plugin is pinned or audited"),
        };
        self.report(self.line_of_string(name), message, false);
        Ok(())
    }

    /// One entry of a plugin's `skills`: a skill folder when it holds a SKILL.md.
    fn find_listed_skill(&mut self, name: &str, plugin_dir: &str, entry: &str) -> Result<()> {
        match resolve(plugin_dir, &[entry]) {
            Some(path)
                if !path.is_empty() && self.source.kind_of(&join(&path, SKILL_FILE))?.is_some() =>
            {
                self.found.insert(path);
            }
            Some(path) if !path.is_empty() => {
                let message = match symlink_on_path(self.source, &path)? {
                    Some(link) => format!("plugin `{name}` lists {entry}, but {link} is a symlink, which evalock never follows: nothing in {path} is pinned; vendor the files instead"),
                    None => format!("plugin `{name}` lists {entry}, but {path}/{SKILL_FILE} does not exist"),
                };
                self.report(self.line_of_string(entry), message, false);
            }
            _ => self.report(
                self.line_of_string(entry),
                format!(
                    "plugin `{name}` lists {entry}, which is not a folder inside the repository"
                ),
                false,
            ),
        }
        Ok(())
    }

    fn report(&mut self, line: u32, message: String, remote: bool) {
        self.problems
            .push(marketplace_problem(self.marketplace, line, message, remote));
    }

    /// The line of the first JSON string `value` in the marketplace, 1 when absent.
    fn line_of_string(&self, value: &str) -> u32 {
        let needle = format!("\"{value}\"");
        self.text.find(&needle).map_or(1, |offset| {
            self.text[..offset].matches('\n').count() as u32 + 1
        })
    }
}

/// Joins relative parts onto `base` and resolves `.` and `..`; `None` when the result
/// leaves the project or a part is absolute.
fn resolve(base: &str, parts: &[&str]) -> Option<String> {
    let mut components: Vec<&str> = base.split('/').filter(|part| !part.is_empty()).collect();
    for part in parts {
        if part.starts_with('/') {
            return None;
        }
        for component in part.split('/') {
            match component {
                "" | "." => {}
                ".." => {
                    components.pop()?;
                }
                name => components.push(name),
            }
        }
    }
    Some(components.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_stays_inside() {
        assert_eq!(
            resolve("", &["./", "./skills/xlsx"]).as_deref(),
            Some("skills/xlsx")
        );
        assert_eq!(
            resolve("market", &["plugins/a", "../b"]).as_deref(),
            Some("market/plugins/b")
        );
        assert_eq!(resolve("", &["../outside"]), None);
        assert_eq!(resolve("", &["/etc"]), None);
    }
}
