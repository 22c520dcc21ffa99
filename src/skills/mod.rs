//! Agent skills: folders holding a `SKILL.md` (agentskills front matter), scripts and
//! assets, and optionally a `skill.json` manifest. Each skill is read from a content
//! source file by file, pinned with `tree-v1`, and described for the EL2xx checks.

pub mod audit;
pub mod discovery;
pub mod files;
pub mod front_matter;
pub mod manifest;
pub mod rules;
pub mod scan;
pub mod spec;

pub use discovery::{DiscoveryProblem, SKILL_FILE};
pub use files::{ExecutableSignal, ReadFile, SkillFile, SkillTree};
pub use front_matter::{FrontMatter, Located};
pub use manifest::{Manifest, RemoteSource, SourceDecl, MANIFEST_FILE};

use crate::digest::{tree_digest, Digest, TreeEntry};
use crate::error::{Error, Result};
use crate::project::config::SkillsConfig;
use crate::project::lock::skills::{FileLock, SkillLock, SourceKind, SourceLock};
use crate::rules::RuleId;
use crate::source::{ContentSource, Listing};
use globset::GlobSet;
use rayon::prelude::*;
use scan::RiskyPatterns;
use std::collections::BTreeSet;

/// A problem at a place in one file: 1-based line and column, and what to fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub line: u32,
    pub column: u32,
    pub message: String,
}

impl Problem {
    pub fn at(line: u32, column: u32, message: impl Into<String>) -> Problem {
        Problem {
            line,
            column,
            message: message.into(),
        }
    }
}

/// One skill folder as found in a snapshot.
#[derive(Debug, Clone)]
pub struct Skill {
    /// Project-relative folder path.
    pub path: String,
    /// Found through `[skills] roots` or a marketplace (not only named on a command line):
    /// it must be in the lock and its folder name must equal its `name`.
    pub configured: bool,
    /// Matches `[skills] vendored`: it must record where it was copied from.
    pub vendored: bool,
    pub front_matter: Option<FrontMatter>,
    /// Why SKILL.md's front matter could not be read.
    pub front_matter_problem: Option<Problem>,
    pub manifest: Option<Manifest>,
    /// skill.json problems (syntax, types, paths outside the skill).
    pub manifest_problems: Vec<Problem>,
    pub tree: SkillTree,
}

/// An acknowledgement from evalock.toml that applies to a file of this skill as it is now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Acknowledged {
    pub rule: RuleId,
    /// Skill-relative.
    pub path: String,
    pub digest: Digest,
    pub reason: String,
}

impl Skill {
    pub fn folder_name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }

    /// The front matter `name`, else the manifest's, else the folder's.
    pub fn name(&self) -> &str {
        self.front_matter
            .as_ref()
            .and_then(|front| front.name.as_ref())
            .or_else(|| {
                self.manifest
                    .as_ref()
                    .and_then(|manifest| manifest.name.as_ref())
            })
            .map_or_else(|| self.folder_name(), |name| name.value.as_str())
    }

    /// Project-relative path of a skill-relative one.
    pub fn file_path(&self, relative: &str) -> String {
        format!("{}/{relative}", self.path)
    }

    pub fn skill_md_path(&self) -> String {
        self.file_path(SKILL_FILE)
    }

    pub fn manifest_path(&self) -> String {
        self.file_path(MANIFEST_FILE)
    }

    /// skill.json `version`, else SKILL.md `metadata.version`.
    pub fn version(&self) -> Option<&str> {
        self.manifest
            .as_ref()
            .and_then(|manifest| manifest.version.as_ref())
            .or_else(|| {
                self.front_matter
                    .as_ref()
                    .and_then(|front| front.metadata_version.as_ref())
            })
            .map(|version| version.value.as_str())
    }

    pub fn allowed_tools(&self) -> Vec<String> {
        self.front_matter
            .as_ref()
            .and_then(|front| front.allowed_tools.as_ref())
            .map(|tools| tools.value.clone())
            .unwrap_or_default()
    }

    pub fn manifest_permissions(&self) -> Vec<String> {
        self.manifest
            .as_ref()
            .and_then(|manifest| manifest.permissions.as_ref())
            .map(|permissions| permissions.value.clone())
            .unwrap_or_default()
    }

    /// Everything the skill asks to be allowed: skill.json `permissions` and `allowed-tools`.
    pub fn declared_permissions(&self) -> BTreeSet<String> {
        self.allowed_tools()
            .into_iter()
            .chain(self.manifest_permissions())
            .collect()
    }

    /// skill.json `executables` and SKILL.md `metadata.executables`.
    pub fn declared_executables(&self) -> BTreeSet<String> {
        let from_manifest = self
            .manifest
            .as_ref()
            .and_then(|manifest| manifest.executables.as_ref());
        let from_front = self
            .front_matter
            .as_ref()
            .and_then(|front| front.metadata_executables.as_ref());
        from_manifest
            .into_iter()
            .chain(from_front)
            .flat_map(|listed| listed.value.iter().cloned())
            .collect()
    }

    pub fn source(&self) -> Option<&Located<SourceDecl>> {
        self.manifest
            .as_ref()
            .and_then(|manifest| manifest.source.as_ref())
    }

    fn entries(&self, include_manifest: bool) -> Vec<TreeEntry> {
        self.tree
            .files
            .iter()
            .filter(|file| include_manifest || file.path != MANIFEST_FILE)
            .map(|file| TreeEntry {
                path: file.path.clone(),
                kind: file.kind,
                digest: file.digest,
            })
            .collect()
    }

    /// `tree-v1` over every file of the folder.
    pub fn digest(&self) -> Digest {
        tree_digest(&self.entries(true)).unwrap_or_else(|_| Digest::of_bytes(b""))
    }

    /// `tree-v1` over every file but skill.json: what a registry digest pins (the manifest
    /// carries the digest, so it cannot be part of it).
    pub fn content_digest(&self) -> Digest {
        tree_digest(&self.entries(false)).unwrap_or_else(|_| Digest::of_bytes(b""))
    }

    /// The acknowledgements of `config` that match a file of this skill byte for byte.
    pub fn acknowledged(&self, config: &SkillsConfig) -> Vec<Acknowledged> {
        let mut matched = Vec::new();
        for acknowledgement in &config.acknowledgements {
            let Some(relative) = acknowledgement
                .file
                .strip_prefix(&format!("{}/", self.path))
            else {
                continue;
            };
            let Some(rule) = RuleId::parse(acknowledgement.rule.get_ref()) else {
                continue;
            };
            let Some(file) = self.tree.file(relative) else {
                continue;
            };
            if file.digest == acknowledgement.digest {
                matched.push(Acknowledged {
                    rule,
                    path: relative.to_owned(),
                    digest: file.digest,
                    reason: acknowledgement.reason.clone(),
                });
            }
        }
        matched.sort_by(|left, right| (left.rule, &left.path).cmp(&(right.rule, &right.path)));
        matched.dedup_by(|left, right| left.rule == right.rule && left.path == right.path);
        matched
    }

    /// The lock entry `evalock lock` writes for this skill.
    pub fn lock_entry(&self, config: &SkillsConfig) -> SkillLock {
        SkillLock {
            name: self
                .front_matter
                .as_ref()
                .and_then(|front| front.name.as_ref())
                .map(|name| name.value.clone()),
            version: self.version().map(str::to_owned),
            source: self.source_lock(),
            digest: self.digest(),
            allowed_tools: self.allowed_tools(),
            permissions: self.manifest_permissions(),
            executables: self.declared_executables().into_iter().collect(),
            acknowledged: self
                .acknowledged(config)
                .iter()
                .map(|acknowledged| {
                    format!(
                        "{} {} {}",
                        acknowledged.rule.id(),
                        acknowledged.path,
                        acknowledged.digest
                    )
                })
                .collect(),
            files: self
                .tree
                .files
                .iter()
                .map(|file| {
                    (
                        file.path.clone(),
                        FileLock {
                            kind: file.kind,
                            digest: file.digest,
                        },
                    )
                })
                .collect(),
        }
    }

    fn source_lock(&self) -> SourceLock {
        match self.source().map(|source| &source.value) {
            None | Some(SourceDecl::Local) => SourceLock::default(),
            Some(SourceDecl::Remote(remote)) => SourceLock {
                kind: if remote.is_registry() {
                    SourceKind::Registry
                } else {
                    SourceKind::Vendored
                },
                repo: remote.repo.clone(),
                commit: remote.commit.clone(),
                registry: remote.registry.clone(),
                version: remote.version.clone(),
                digest: remote.digest.clone(),
            },
        }
    }
}

/// All skills of a snapshot, and what discovery could not resolve.
#[derive(Debug, Default)]
pub struct SkillSet {
    pub skills: Vec<Skill>,
    pub problems: Vec<DiscoveryProblem>,
    /// The plugin manifests read to find them (marketplaces, each plugin's `plugin.json`).
    pub manifests: Vec<discovery::PluginManifest>,
    /// Folders holding a SKILL.md that no root or marketplace finds (EL213).
    pub unlisted: Vec<String>,
}

/// What loading needs from `[skills]`, compiled once.
pub struct LoadSettings {
    patterns: RiskyPatterns,
    vendored: GlobSet,
}

impl LoadSettings {
    pub fn new(config: &SkillsConfig) -> Result<LoadSettings> {
        let extra: std::collections::BTreeMap<String, String> = config
            .risky_patterns
            .iter()
            .map(|(name, regex)| (name.clone(), regex.get_ref().clone()))
            .collect();
        Ok(LoadSettings {
            patterns: RiskyPatterns::new(&extra).map_err(Error::Usage)?,
            vendored: crate::source::compile_folder_globs(&config.vendored)?,
        })
    }
}

/// How much of each skill a load reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SkillDetail {
    /// Every file, pinned and scanned.
    #[default]
    Full,
    /// SKILL.md and skill.json alone: what a skill declares (its name and permissions),
    /// all that a base revision is compared on. A pull request's check then does not read
    /// every file of every skill a second time from git.
    Declarations,
}

/// Loads every configured skill of a snapshot.
pub fn load_skills(source: &dyn ContentSource, config: &SkillsConfig) -> Result<SkillSet> {
    load_skills_as(source, config, SkillDetail::Full)
}

/// [`load_skills`], reading as much of each skill as `detail` says.
pub fn load_skills_as(
    source: &dyn ContentSource,
    config: &SkillsConfig,
    detail: SkillDetail,
) -> Result<SkillSet> {
    let settings = LoadSettings::new(config)?;
    let discovered = discovery::discover(source, config)?;
    // Each skill's files come from the listing discovery made of its root (one walk of
    // the skills, not one more per skill).
    let skills = discovered
        .skill_paths
        .par_iter()
        .map(|path| {
            let mut listing = match discovered.listing_of(path) {
                Some(listing) => listing,
                None => source.listing(path)?,
            };
            if detail == SkillDetail::Declarations {
                let declarations = [SKILL_FILE, MANIFEST_FILE].map(|file| format!("{path}/{file}"));
                listing
                    .files
                    .retain(|file| declarations.contains(&file.path));
                listing.unpinnable.clear();
            }
            load_skill(source, path, listing, true, &settings)
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(SkillSet {
        skills,
        problems: discovered.problems,
        manifests: discovered.manifests,
        unlisted: Vec::new(),
    })
}

/// Loads the skills at `paths` (folders holding a SKILL.md), in parallel.
pub fn load_paths(
    source: &dyn ContentSource,
    paths: &[String],
    configured: bool,
    settings: &LoadSettings,
) -> Result<Vec<Skill>> {
    paths
        .par_iter()
        .map(|path| {
            let listing = source.listing(path)?;
            load_skill(source, path, listing, configured, settings)
        })
        .collect()
}

/// The skill at `path`, whose files `listing` lists.
fn load_skill(
    source: &dyn ContentSource,
    path: &str,
    listing: Listing,
    configured: bool,
    settings: &LoadSettings,
) -> Result<Skill> {
    let tree = files::read_tree(source, path, listing, &settings.patterns)?;
    let (front_matter, front_matter_problem) = match (&tree.skill_md, tree.file(SKILL_FILE)) {
        (Some(bytes), _) => match front_matter::parse_front_matter(bytes) {
            Ok(front) => (Some(front), None),
            Err(problem) => (None, Some(problem)),
        },
        (None, Some(_)) => (
            None,
            Some(Problem::at(
                1,
                1,
                "SKILL.md is a symlink; evalock never follows symlinks: make it a regular file",
            )),
        ),
        (None, None) => (None, Some(Problem::at(1, 1, "SKILL.md is missing"))),
    };
    let (manifest, manifest_problems) = match (&tree.manifest, tree.file(MANIFEST_FILE)) {
        (Some(bytes), _) => match manifest::parse_manifest(bytes) {
            Ok((manifest, problems)) => (Some(manifest), problems),
            Err(problem) => (None, vec![problem]),
        },
        (None, Some(_)) => (
            None,
            vec![Problem::at(
                1,
                1,
                "skill.json is a symlink; evalock never follows symlinks: make it a regular file",
            )],
        ),
        (None, None) => (None, Vec::new()),
    };
    Ok(Skill {
        path: path.to_owned(),
        configured,
        vendored: settings.vendored.is_match(path),
        front_matter,
        front_matter_problem,
        manifest,
        manifest_problems,
        tree,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::testing::Recording;

    #[test]
    fn manifest_traversal_never_reaches_outside_the_skill() {
        let root = tempfile::tempdir().expect("temp dir");
        let skill = root.path().join("skills/notes");
        std::fs::create_dir_all(&skill).expect("dirs");
        std::fs::write(
            skill.join("SKILL.md"),
            "---\nname: notes\ndescription: d\n---\n",
        )
        .expect("write");
        std::fs::write(
            skill.join("skill.json"),
            r#"{"files": {"../../etc/passwd": "sha256:00", "/etc/shadow": "00"}, "executables": ["../../bin/sh"]}"#,
        )
        .expect("write");
        std::fs::write(root.path().join("outside.txt"), "secret").expect("write");
        let source = Recording::new(root.path());
        let config = SkillsConfig {
            roots: vec!["skills/*".into()],
            ..SkillsConfig::default()
        };
        let set = load_skills(&source, &config).expect("load");
        assert_eq!(set.skills.len(), 1);
        assert_eq!(
            set.skills[0].manifest_problems.len(),
            3,
            "{:?}",
            set.skills[0].manifest_problems
        );
        let touched = source.touched();
        assert!(!touched.is_empty());
        for path in &touched {
            assert!(
                // `skills` itself: asked whether it is a symlink, never read.
                path == "skills/" || path == "skills" || path.starts_with("skills/notes"),
                "read outside the skill: {path}"
            );
        }
    }

    /// A collection names its skills twice: its `[skills] roots` and its marketplace's
    /// plugins reach the same `skills` folders. Each is walked once, and every skill is
    /// read from that walk.
    #[test]
    fn roots_and_a_marketplace_naming_one_folder_list_it_once() {
        let root = tempfile::tempdir().expect("temp dir");
        for plugin in ["a", "b"] {
            let skill = root
                .path()
                .join(format!("plugins/{plugin}/skills/s{plugin}"));
            std::fs::create_dir_all(&skill).expect("dirs");
            std::fs::write(
                skill.join("SKILL.md"),
                format!("---\nname: s{plugin}\ndescription: d\n---\n"),
            )
            .expect("write");
        }
        std::fs::create_dir_all(root.path().join(".claude-plugin")).expect("dirs");
        std::fs::write(
            root.path().join(".claude-plugin/marketplace.json"),
            r#"{"name": "m", "plugins": [{"name": "a", "source": "./plugins/a"}, {"name": "b", "source": "./plugins/b"}]}"#,
        )
        .expect("write");
        let source = Recording::new(root.path());
        let config = SkillsConfig {
            roots: vec!["plugins/a/skills/*".into(), "plugins/*/skills/*".into()],
            marketplaces: vec![".claude-plugin/marketplace.json".into()],
            ..SkillsConfig::default()
        };
        let set = load_skills(&source, &config).expect("load");
        assert!(set.problems.is_empty(), "{:?}", set.problems);
        let paths: Vec<&str> = set.skills.iter().map(|skill| skill.path.as_str()).collect();
        assert_eq!(paths, ["plugins/a/skills/sa", "plugins/b/skills/sb"]);
        assert_eq!(
            source.listed(),
            ["plugins/a/skills/", "plugins/"],
            "{:?}",
            source.touched()
        );
    }
}
