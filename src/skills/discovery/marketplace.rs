//! Plugin marketplaces (`.claude-plugin/marketplace.json`): the skill folders each
//! plugin's `source` and `skills` name, and what in them evalock cannot pin or find.

use super::{
    join, skills_and_symlinks_under_glob, symlink_on_path, DiscoveryProblem, Listings,
    PluginManifest, ProblemKind, SKILL_FILE,
};
use crate::cases::strict_json::StrictValue;
use crate::digest::EntryKind;
use crate::error::Result;
use crate::source::ContentSource;
use serde_json::Value;
use std::collections::BTreeSet;

/// What reading marketplaces finds: skill folders, problems, and the manifests read.
pub(super) struct Found<'a> {
    pub skills: &'a mut BTreeSet<String>,
    pub problems: &'a mut Vec<DiscoveryProblem>,
    pub manifests: &'a mut Vec<PluginManifest>,
    /// The folders listed so far, shared with the skills roots.
    pub listings: &'a mut Listings,
}

/// The manifest of a plugin, relative to its folder.
pub const PLUGIN_MANIFEST: &str = ".claude-plugin/plugin.json";

/// Every path that reading the marketplace at `marketplace`, whose text is `text`, may
/// look at, as paths or globs, each with everything below it: each local plugin's folder,
/// its `plugin.json`, and its skills (those it lists, else `<plugin>/skills/*`). They
/// follow from the text alone, so `check --staged` can tell from them whether a commit
/// touches what the marketplace lists. Nothing is named when the text is not JSON: then
/// no plugin is read.
pub fn paths_read_through(marketplace: &str, text: &str) -> Vec<String> {
    let Ok(StrictValue(document)) = serde_json::from_str::<StrictValue>(text) else {
        return Vec::new();
    };
    let market_root = marketplace_root(marketplace);
    let plugin_root = document
        .pointer("/metadata/pluginRoot")
        .and_then(Value::as_str)
        .unwrap_or("");
    let mut paths = Vec::new();
    let plugins = document.get("plugins").and_then(Value::as_array);
    for plugin in plugins.into_iter().flatten() {
        let folder = match plugin.get("source") {
            Some(Value::String(path)) => resolve(market_root, &[plugin_root, path]),
            Some(_) => None,
            None => resolve(market_root, &[plugin_root]),
        };
        let Some(folder) = folder else {
            continue;
        };
        paths.push(join(&folder, PLUGIN_MANIFEST));
        match plugin.get("skills").and_then(Value::as_array) {
            Some(listed) => paths.extend(
                listed
                    .iter()
                    .filter_map(Value::as_str)
                    .filter_map(|entry| resolve(&folder, &[entry])),
            ),
            None => paths.push(join(&folder, "skills/*")),
        }
        // The folder itself: whether it exists is read too. Empty for the repository's
        // root, which names nothing more.
        paths.push(folder);
    }
    paths
}

/// Reads a marketplace: each plugin's `source` (a path in this repository) and its
/// `skills` (paths relative to the plugin), or `<plugin>/skills/*` when none are listed.
pub(super) fn read_marketplace(
    source: &dyn ContentSource,
    (marketplace, config_line): (&str, u32),
    found: &mut Found<'_>,
) -> Result<()> {
    let Some((text, document)) =
        load_marketplace(source, (marketplace, config_line), found.problems)?
    else {
        return Ok(());
    };
    found.manifests.push(PluginManifest {
        path: marketplace.to_owned(),
        text: text.clone(),
    });
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
            ProblemKind::Unpinnable,
        ));
        return Ok(None);
    }
    let Some(bytes) = source.read(marketplace)? else {
        problems.push(DiscoveryProblem {
            file: crate::project::config::CONFIG_FILE.into(),
            line: config_line,
            message: format!("skills.marketplaces names {marketplace}, which does not exist"),
            kind: ProblemKind::Unpinnable,
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
                ProblemKind::Unpinnable,
            ));
            Ok(None)
        }
    }
}

fn marketplace_problem(
    marketplace: &str,
    line: u32,
    message: String,
    kind: ProblemKind,
) -> DiscoveryProblem {
    DiscoveryProblem {
        file: marketplace.to_owned(),
        line,
        message,
        kind,
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
struct MarketplaceReading<'a, 'f> {
    source: &'a dyn ContentSource,
    marketplace: &'a str,
    text: &'a str,
    market_root: &'a str,
    /// `metadata.pluginRoot`, which plugin sources are relative to.
    plugin_root: &'a str,
    found: &'a mut Found<'f>,
}

impl MarketplaceReading<'_, '_> {
    fn read_plugin(&mut self, plugin: &Value) -> Result<()> {
        let name = plugin
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("(unnamed)");
        let Some(plugin_dir) = self.plugin_folder(plugin, name)? else {
            return Ok(());
        };
        self.read_plugin_manifest(&plugin_dir)?;
        match plugin.get("skills").and_then(Value::as_array) {
            Some(listed) => {
                for entry in listed.iter().filter_map(Value::as_str) {
                    self.find_listed_skill(name, &plugin_dir, entry)?;
                }
            }
            None => {
                let root = join(&plugin_dir, "skills/*");
                let (skills, _) =
                    skills_and_symlinks_under_glob(self.source, &root, self.found.listings)?;
                self.found.skills.extend(skills);
            }
        }
        Ok(())
    }

    /// The plugin's folder in this repository; `None`, with the problem recorded, when
    /// its source is remote, leaves the repository or is not a folder here.
    fn plugin_folder(&mut self, plugin: &Value, name: &str) -> Result<Option<String>> {
        let plugin_dir = match plugin.get("source") {
            Some(Value::String(path)) => resolve(self.market_root, &[self.plugin_root, path]),
            Some(other) => {
                if !is_pinned_remote(other) {
                    self.report(
                        self.line_of_string(name),
                        format!("plugin `{name}` is fetched from {other} at install time, pinned to no commit: what it installs can change under the same marketplace"),
                        ProblemKind::Remote,
                    );
                }
                return Ok(None);
            }
            None => resolve(self.market_root, &[self.plugin_root]),
        };
        let Some(plugin_dir) = plugin_dir else {
            self.report(
                self.line_of_string(name),
                format!("plugin `{name}`: its source leaves the repository"),
                ProblemKind::Missing,
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
        let kind = match message.contains("symlink") {
            true => ProblemKind::Unpinnable,
            false => ProblemKind::Missing,
        };
        self.report(self.line_of_string(name), message, kind);
        Ok(())
    }

    /// Keeps the plugin's `plugin.json`, when it has one, for its descriptions.
    fn read_plugin_manifest(&mut self, plugin_dir: &str) -> Result<()> {
        let path = join(plugin_dir, PLUGIN_MANIFEST);
        if self
            .found
            .manifests
            .iter()
            .any(|manifest| manifest.path == path)
            || self.source.kind_of(&path)? != Some(EntryKind::File)
        {
            return Ok(());
        }
        if let Some(bytes) = self.source.read(&path)? {
            self.found.manifests.push(PluginManifest {
                path,
                text: String::from_utf8_lossy(&bytes).into_owned(),
            });
        }
        Ok(())
    }

    /// One entry of a plugin's `skills`: a skill folder when it holds a SKILL.md.
    fn find_listed_skill(&mut self, name: &str, plugin_dir: &str, entry: &str) -> Result<()> {
        match resolve(plugin_dir, &[entry]) {
            Some(path)
                if !path.is_empty() && self.source.kind_of(&join(&path, SKILL_FILE))?.is_some() =>
            {
                self.found.skills.insert(path);
            }
            Some(path) if !path.is_empty() => {
                let (message, kind) = match symlink_on_path(self.source, &path)? {
                    Some(link) => (format!("plugin `{name}` lists {entry}, but {link} is a symlink, which evalock never follows: nothing in {path} is pinned; vendor the files instead"), ProblemKind::Unpinnable),
                    None => (format!("plugin `{name}` lists {entry}, but {path}/{SKILL_FILE} does not exist"), ProblemKind::Missing),
                };
                self.report(self.line_of_string(entry), message, kind);
            }
            _ => self.report(
                self.line_of_string(entry),
                format!(
                    "plugin `{name}` lists {entry}, which is not a folder inside the repository"
                ),
                ProblemKind::Missing,
            ),
        }
        Ok(())
    }

    fn report(&mut self, line: u32, message: String, kind: ProblemKind) {
        self.found
            .problems
            .push(marketplace_problem(self.marketplace, line, message, kind));
    }

    /// The line of the first JSON string `value` in the marketplace, 1 when absent.
    fn line_of_string(&self, value: &str) -> u32 {
        let needle = format!("\"{value}\"");
        self.text.find(&needle).map_or(1, |offset| {
            self.text[..offset].matches('\n').count() as u32 + 1
        })
    }
}

/// Whether a plugin fetched at install time is pinned to one commit: a full 40-hex `sha`
/// (Claude Code checks that commit out whatever its `ref` says), or for a package
/// registry (`npm`, `pip`) an exact version, which those registries never re-publish.
fn is_pinned_remote(source: &Value) -> bool {
    let field = |key: &str| source.get(key).and_then(Value::as_str);
    if field("sha")
        .or(field("commit"))
        .is_some_and(crate::skills::spec::is_real_commit)
    {
        return true;
    }
    matches!(field("source"), Some("npm" | "pip"))
        && field("version").is_some_and(crate::skills::spec::is_semver)
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
    fn a_full_commit_pins_a_remote_plugin() {
        let pinned = |json: &str| is_pinned_remote(&serde_json::from_str(json).unwrap());
        let sha = "d16d14ac7f817336e21bf9392cf51b6cac6194d8";
        assert!(pinned(&format!(
            r#"{{"source":"url","url":"https://x.example/p.git","sha":"{sha}"}}"#
        )));
        assert!(pinned(&format!(
            r#"{{"source":"git-subdir","url":"u","path":"p","ref":"main","sha":"{sha}"}}"#
        )));
        assert!(pinned(
            r#"{"source":"npm","package":"p","version":"1.2.3"}"#
        ));
        assert!(!pinned(
            r#"{"source":"github","repo":"o/r","ref":"v2.0.0"}"#
        ));
        assert!(!pinned(
            r#"{"source":"github","repo":"o/r","sha":"d16d14a"}"#
        ));
        assert!(!pinned(
            r#"{"source":"npm","package":"p","version":"^1.2.3"}"#
        ));
        assert!(!pinned(&format!(
            r#"{{"source":"url","url":"u","sha":"{}"}}"#,
            "0".repeat(40)
        )));
    }

    #[test]
    fn the_paths_a_marketplace_names_follow_from_its_text() {
        let text = r#"{"metadata": {"pluginRoot": "./plugins"}, "plugins": [
            {"name": "listed", "source": "./docs", "skills": ["./skills/api", "../shared/brand"]},
            {"name": "default", "source": "ops"},
            {"name": "remote", "source": {"source": "github", "repo": "o/r"}},
            {"name": "escapes", "source": "../../../outside"}
        ]}"#;
        assert_eq!(
            paths_read_through("market/.claude-plugin/marketplace.json", text),
            [
                "market/plugins/docs/.claude-plugin/plugin.json",
                "market/plugins/docs/skills/api",
                "market/plugins/shared/brand",
                "market/plugins/docs",
                "market/plugins/ops/.claude-plugin/plugin.json",
                "market/plugins/ops/skills/*",
                "market/plugins/ops",
            ]
        );
        let at_the_root = r#"{"plugins": [{"name": "all", "source": "./"}]}"#;
        assert_eq!(
            paths_read_through(".claude-plugin/marketplace.json", at_the_root),
            [".claude-plugin/plugin.json", "skills/*", ""]
        );
        assert!(paths_read_through(".claude-plugin/marketplace.json", "{ not json").is_empty());
    }

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
