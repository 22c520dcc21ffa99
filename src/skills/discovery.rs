//! Where skills are: folders holding a `SKILL.md` under the `[skills] roots` globs, and
//! the skill paths that plugin marketplaces (`.claude-plugin/marketplace.json`) list.

mod marketplace;

use crate::digest::EntryKind;
use crate::error::Result;
use crate::project::config::SkillsConfig;
use crate::source::{compile_folder_globs, literal_prefix, ContentSource, Listing};
pub use marketplace::paths_read_through;
use marketplace::read_marketplace;
use std::collections::BTreeSet;

pub const SKILL_FILE: &str = "SKILL.md";

/// Something a marketplace (or a skills root) says that evalock cannot pin or find.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscoveryProblem {
    pub file: String,
    pub line: u32,
    pub message: String,
    pub kind: ProblemKind,
    /// What fixes it, when not the marketplace entry.
    pub help: Option<&'static str>,
}

/// What kind of problem discovery met, and so which rule reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProblemKind {
    /// What evalock.toml names finds nothing, or stands behind a symlink (EL201).
    Unpinnable,
    /// A marketplace lists a plugin or skill that is not a folder here (EL214).
    Missing,
    /// A marketplace plugin fetched from elsewhere at install time, unpinned (EL210).
    Remote,
}

/// A plugin manifest a skill set was found through (a marketplace, a plugin's
/// `plugin.json`): its descriptions reach the model too.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginManifest {
    pub path: String,
    pub text: String,
}

/// SKILL.md files of a snapshot (as [`ContentSource::files_named`] finds them) that no
/// configured skill holds and `[skills] exclude` does not name: an agent can load each
/// as a skill, and nothing pins or audits it. Returned by folder, sorted.
pub fn unlisted_skills(
    named: &[String],
    config: Option<&SkillsConfig>,
    skill_paths: &[String],
) -> Result<Vec<String>> {
    let excluded = match config {
        Some(config) => crate::source::compile_globs(&config.exclude)?,
        None => globset::GlobSet::empty(),
    };
    let held: BTreeSet<&str> = skill_paths.iter().map(String::as_str).collect();
    if held.contains("") {
        return Ok(Vec::new());
    }
    let mut unlisted = Vec::new();
    for path in named {
        if crate::source::file_name(path) != SKILL_FILE {
            continue;
        }
        let folder = path.rsplit_once('/').map_or("", |(folder, _)| folder);
        let inside_a_skill = std::iter::once(folder)
            .chain(folder.match_indices('/').map(|(slash, _)| &folder[..slash]))
            .any(|ancestor| held.contains(ancestor));
        if inside_a_skill || is_excluded(&excluded, path) {
            continue;
        }
        unlisted.push(folder.to_owned());
    }
    Ok(drop_nested(unlisted.into_iter().collect()))
}

/// Whether `path`, or a folder on its way, matches one of `excluded`.
pub fn is_excluded(excluded: &globset::GlobSet, path: &str) -> bool {
    if excluded.is_empty() {
        return false;
    }
    excluded.is_match(path)
        || path
            .match_indices('/')
            .any(|(slash, _)| excluded.is_match(&path[..slash]))
}

/// Skill folders found through roots and marketplaces, sorted, without nested duplicates.
#[derive(Debug, Default)]
pub struct Discovered {
    pub skill_paths: Vec<String>,
    pub problems: Vec<DiscoveryProblem>,
    /// The folders listed to find them, with their listings: a skill inside one is read
    /// from it instead of being listed again.
    pub listings: Vec<(String, Listing)>,
    /// The marketplaces read and the `plugin.json` of each local plugin they list.
    pub manifests: Vec<PluginManifest>,
}

impl Discovered {
    /// What listing the skill folder `path` gives, when a listing made while discovering
    /// it holds that folder.
    pub fn listing_of(&self, path: &str) -> Option<Listing> {
        self.listings
            .iter()
            .find_map(|(listed, listing)| listing.below(listed, path))
    }
}

pub fn discover(source: &dyn ContentSource, config: &SkillsConfig) -> Result<Discovered> {
    let mut found = BTreeSet::new();
    let mut problems = Vec::new();
    let mut listings = Listings::default();
    let mut manifests = Vec::new();
    for (root, line) in config.root_globs() {
        let (skills, links) = skills_and_symlinks_under_glob(source, root, &mut listings)?;
        if skills.is_empty() && links.is_empty() {
            problems.push(root_matches_nothing(root, line));
        }
        found.extend(skills);
        for link in links {
            problems.push(DiscoveryProblem {
                file: crate::project::config::CONFIG_FILE.into(),
                line,
                message: format!("{link} is a symlink where skills root `{root}` looks for skills; evalock never follows symlinks, so nothing behind it is pinned or audited"),
                kind: ProblemKind::Unpinnable,
                help: Some("replace the symlink with the skill's files (vendor them), or remove it, then run `evalock lock`"),
            });
        }
    }
    for (marketplace, line) in config.marketplace_paths() {
        let mut reading = marketplace::Found {
            skills: &mut found,
            problems: &mut problems,
            manifests: &mut manifests,
            listings: &mut listings,
        };
        read_marketplace(source, (marketplace, line), &mut reading)?;
    }
    let mut skill_paths = Vec::new();
    for path in drop_nested(found) {
        match crate::digest::validate_relative_path(&path) {
            Ok(()) => skill_paths.push(path),
            Err(error) => problems.push(DiscoveryProblem {
                file: crate::project::config::CONFIG_FILE.into(),
                line: 1,
                message: format!("a skill folder cannot be pinned: {error}; rename it"),
                kind: ProblemKind::Unpinnable,
                help: Some("rename the skill folder to a plain name, then run `evalock lock`"),
            }),
        }
    }
    Ok(Discovered {
        skill_paths,
        problems,
        listings: listings.0,
        manifests,
    })
}

/// A root that finds no skill guards nothing, and says nothing about it: a typo, a moved
/// folder or an unescaped `[` in a folder name would leave skills unpinned while
/// `check` passes. Reported as a case glob that matches no file is (EL105).
fn root_matches_nothing(root: &str, line: u32) -> DiscoveryProblem {
    DiscoveryProblem {
        file: crate::project::config::CONFIG_FILE.into(),
        line,
        message: format!("skills root `{root}` matches no folder holding a {SKILL_FILE}: nothing there is pinned or audited"),
        kind: ProblemKind::Unpinnable,
        help: Some("fix the glob in `[skills] roots` in evalock.toml (write a `*`, `?`, `[`, `]`, `{` or `}` in a folder name in brackets: `team[[]1[]]/*` for `team[1]`), or remove it; then run `evalock lock`"),
    }
}

/// The folders listed while discovering skills, each with its listing: a root or a
/// marketplace plugin at or below one already listed is read from it, not walked again
/// (a collection's `[skills] roots` and its marketplace name the same `skills` folders).
#[derive(Default)]
pub(super) struct Listings(Vec<(String, Listing)>);

impl Listings {
    /// What listing `dir` gives, from a listing made already when one holds it.
    fn of(&mut self, source: &dyn ContentSource, dir: &str) -> Result<Listing> {
        let made = self
            .0
            .iter()
            .find_map(|(listed, listing)| match listed == dir {
                true => Some(listing.clone()),
                false => listing.below(listed, dir),
            });
        if let Some(listing) = made {
            return Ok(listing);
        }
        let listing = source.listing(dir)?;
        self.0.push((dir.to_owned(), listing.clone()));
        Ok(listing)
    }
}

/// Folders matching `root` that hold a SKILL.md.
pub fn skills_under_glob(source: &dyn ContentSource, root: &str) -> Result<Vec<String>> {
    Ok(skills_and_symlinks_under_glob(source, root, &mut Listings::default())?.0)
}

/// Folders matching `root` that hold a SKILL.md, and the symlinks where `root` looks for
/// skills: one matching the folder glob, or one on the way to it (`skills` itself a
/// link). An agent runtime follows them; evalock does not, so they are reported rather
/// than passed over in silence. One listing serves both, kept in `listings`.
pub(super) fn skills_and_symlinks_under_glob(
    source: &dyn ContentSource,
    root: &str,
    listings: &mut Listings,
) -> Result<(Vec<String>, Vec<String>)> {
    let folders = compile_folder_globs(&[root.to_owned()])?;
    let skill_glob = format!("{}/{SKILL_FILE}", root.trim_end_matches('/'));
    let prefix = literal_prefix(&skill_glob);
    if let Some(link) = symlink_on_path(source, &prefix)? {
        return Ok((Vec::new(), vec![link]));
    }
    let mut skills = Vec::new();
    let mut links = Vec::new();
    let listing = listings.of(source, &prefix)?;
    for file in &listing.files {
        if file.kind == EntryKind::Symlink && folders.is_match(&file.path) {
            links.push(file.path.clone());
            continue;
        }
        let Some(folder) = file.path.strip_suffix(&format!("/{SKILL_FILE}")) else {
            continue;
        };
        if folders.is_match(folder) {
            skills.push(folder.to_owned());
        }
    }
    Ok((skills, links))
}

/// The first part of `path` (itself included) that is a symlink in `source`.
fn symlink_on_path(source: &dyn ContentSource, path: &str) -> Result<Option<String>> {
    if path.is_empty() {
        return Ok(None);
    }
    for (end, _) in path.match_indices('/').chain([(path.len(), "")]) {
        let part = &path[..end];
        if source.kind_of(part)? == Some(EntryKind::Symlink) {
            return Ok(Some(part.to_owned()));
        }
    }
    Ok(None)
}

/// Every folder below `dir` (or `dir` itself) that holds a SKILL.md, outermost only.
pub fn skills_below(source: &dyn ContentSource, dir: &str) -> Result<Vec<String>> {
    let mut found = BTreeSet::new();
    if source.kind_of(&join(dir, SKILL_FILE))?.is_some() {
        found.insert(dir.to_owned());
    }
    for file in source.list(dir)? {
        if let Some(folder) = file.path.strip_suffix(&format!("/{SKILL_FILE}")) {
            found.insert(folder.to_owned());
        }
    }
    Ok(drop_nested(found))
}

/// A SKILL.md inside another skill (a template, an example) belongs to the outer skill.
/// Each path's ancestors are looked up, not every other skill compared with it (which was
/// quadratic in the number of skills). A skill at the root holds every other one.
fn drop_nested(found: BTreeSet<String>) -> Vec<String> {
    if found.contains("") {
        return vec![String::new()];
    }
    let inside_another = |path: &str| {
        path.match_indices('/')
            .any(|(slash, _)| found.contains(&path[..slash]))
    };
    found
        .iter()
        .filter(|path| !inside_another(path))
        .cloned()
        .collect()
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_owned()
    } else {
        format!("{dir}/{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folder_globs_keep_stars_within_a_folder() {
        let set = compile_folder_globs(&["skills/*".to_owned()]).unwrap();
        assert!(set.is_match("skills/pdf"));
        assert!(!set.is_match("skills/pdf/examples"));
        let deep = compile_folder_globs(&["vendor/**".to_owned()]).unwrap();
        assert!(deep.is_match("vendor/a/b"));
        for bad in ["", ".", "/abs", "../up"] {
            assert!(compile_folder_globs(&[bad.to_owned()]).is_err(), "{bad}");
        }
    }

    #[test]
    fn nested_skills_belong_to_the_outer_one() {
        let found: BTreeSet<String> = ["skills/a", "skills/a/templates/b", "skills/ab"]
            .map(String::from)
            .into();
        assert_eq!(drop_nested(found), ["skills/a", "skills/ab"]);
        // Deeper nesting, a sibling sharing a name's start, and one nested in a nested one.
        let found: BTreeSet<String> = [
            "a", "a-b", "a/x/y", "a/x/y/z", "b/c", "b/c.d", "b/cd/e", "b/c/d/e",
        ]
        .map(String::from)
        .into();
        assert_eq!(drop_nested(found), ["a", "a-b", "b/c", "b/c.d", "b/cd/e"]);
        let with_root: BTreeSet<String> = ["", "a", "b/c"].map(String::from).into();
        assert_eq!(drop_nested(with_root), [""]);
    }
}
