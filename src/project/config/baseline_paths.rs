//! A suite's `baseline` names a file that `evalock accept` alone writes and that holds
//! that suite alone. One the project also reads as something else (a case file, a prompt,
//! a grader's source, evalock.toml, the lock, a file in a skill folder) or that another
//! suite names too is refused when the config is read: checked as cases, a baseline
//! becomes malformed cases and unlocked ones after every accept; read as a baseline, a
//! prompt or the lock is "tampered"; inside a skill folder, every accept tampers the skill;
//! shared, `accept` rewrites it for one suite and drops the other's entries.
//!
//! Paths are compared without regard to letter case: `evals/Support.baseline.json` and
//! `evals/support.baseline.json` are one file on macOS and Windows, where a teammate
//! checks the same project out.

use super::locate::{glob_lines, key_span_in_table, location_of, table_header_offset};
use super::DEFAULT_RESULTS_PATH;
use super::{Config, SuiteConfig, CONFIG_FILE};
use crate::error::{Error, Result};
use crate::project::lock::LOCK_FILE;
use crate::text::LineIndex;
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use std::collections::{BTreeSet, HashMap};

/// What else a baseline path is, and where evalock.toml says so.
struct Collision {
    /// `suite `support`'s case glob `evals/*` (evalock.toml:5)`, …
    other: String,
    /// The edit that resolves it.
    fix: String,
}

impl Config {
    pub(super) fn refuse_colliding_baselines(&self, path: &str, text: &str) -> Result<()> {
        let lines = LineIndex::new(text.as_bytes());
        let owners = Owners::new(self);
        let skill_folders = SkillFolderGlobs::new(self);
        for (index, suite) in self.suites.iter().enumerate() {
            let Some(baseline) = suite.baseline.as_deref() else {
                continue;
            };
            let candidate = Baseline {
                config: self,
                path,
                text,
                lines: &lines,
                owners: &owners,
                skill_folders: &skill_folders,
                index,
                suite,
                baseline,
            };
            let Some(collision) = candidate.collision() else {
                continue;
            };
            return Err(Error::malformed(
                baseline_location(path, text, suite),
                format!(
                    "suite `{}`: baseline `{baseline}` is also {}; a baseline file holds one suite's last-good completions and only `evalock accept` writes it: {}",
                    suite.name(),
                    collision.other,
                    collision.fix,
                ),
            ));
        }
        Ok(())
    }
}

/// Suite `index`'s baseline, and the config (with its text, for lines) it is checked
/// against.
struct Baseline<'a> {
    config: &'a Config,
    path: &'a str,
    text: &'a str,
    lines: &'a LineIndex,
    owners: &'a Owners,
    skill_folders: &'a SkillFolderGlobs<'a>,
    index: usize,
    suite: &'a SuiteConfig,
    baseline: &'a str,
}

impl Baseline<'_> {
    /// The first thing other than this suite's baseline that `baseline` also names:
    /// a project file, the state folder, a skill folder, then each suite's cases, prompt
    /// and baseline in turn, then the graders' sources.
    fn collision(&self) -> Option<Collision> {
        if let Some(collision) = self.project_file_collision() {
            return Some(collision);
        }
        if in_state_folder(self.baseline) {
            return Some(Collision {
                other: format!("inside `{STATE_FOLDER}/`, the folder where `evalock run` writes its results (`{DEFAULT_RESULTS_PATH}`), the cache and accept's lock"),
                fix: self.keep_with_the_cases(),
            });
        }
        if let Some(collision) = self.skill_folder_collision() {
            return Some(collision);
        }
        // Only the suites whose case globs, prompts or baselines name the path can collide
        // with it: a config of 400 suites checks 400 baselines, not 160,000 pairs.
        for other_index in self.owners.of(self.baseline, self.index) {
            let other = &self.config.suites[other_index];
            let collision = self
                .case_glob_collision(other)
                .or_else(|| self.prompt_collision(other))
                .or_else(|| self.shared_baseline_collision(other_index, other));
            if collision.is_some() {
                return collision;
            }
        }
        self.grader_source_collision()
    }

    fn project_file_collision(&self) -> Option<Collision> {
        let project_file = [CONFIG_FILE, LOCK_FILE]
            .into_iter()
            .find(|project_file| same_file(self.baseline, project_file))?;
        Some(Collision {
            other: format!("the project's `{project_file}`"),
            fix: self.file_of_its_own(),
        })
    }

    /// A baseline inside a folder that `[skills] roots` (or `vendored`) names: skills are
    /// pinned file by file, so every `accept` would change a skill file under the lock
    /// (EL201, skill-tampered). Folders are matched as skill discovery matches them (`*`
    /// stays within one folder name), ignoring letter case.
    fn skill_folder_collision(&self) -> Option<Collision> {
        let skills = self.config.skills.as_ref()?;
        let folders: Vec<&str> = self
            .baseline
            .match_indices('/')
            .map(|(end, _)| &self.baseline[..end])
            .collect();
        self.skill_folders.globs().iter().find_map(|glob| {
            let (key, index, pattern) = (glob.key, glob.index, glob.pattern);
            let patterns = match key {
                "roots" => &skills.roots,
                _ => &skills.vendored,
            };
            let folder = folders.iter().find(|folder| glob.matches(folder))?;
            // The line is looked up only for the message: each lookup scans the text.
            let line = table_header_offset(self.text, "[skills]")
                .map(|inside| glob_lines(self.text, self.lines, inside, key, patterns))
                .and_then(|written| written.get(index).copied())
                .unwrap_or(1);
            Some(Collision {
                other: format!(
                    "inside skill folder `{folder}`: the skills {key} glob `{pattern}` ({}:{line}) names it, and skills are pinned file by file, so each `accept` would tamper the skill (EL201)",
                    self.path
                ),
                fix: self.keep_with_the_cases(),
            })
        })
    }

    fn case_glob_collision(&self, other: &SuiteConfig) -> Option<Collision> {
        let inside = other.name.span().start;
        let glob_lines = glob_lines(self.text, self.lines, inside, "cases", &other.cases);
        let (pattern, line) = other
            .cases
            .iter()
            .zip(glob_lines)
            .find(|(pattern, _)| glob_matches(pattern, self.baseline))?;
        Some(Collision {
            other: format!(
                "a case file of suite `{}`: its case glob `{pattern}` ({}:{line}) matches it",
                other.name(),
                self.path
            ),
            fix: "narrow the glob to the case files (`evals/*.jsonl`, not `evals/*`), or move the baseline where no case glob reaches".to_owned(),
        })
    }

    fn prompt_collision(&self, other: &SuiteConfig) -> Option<Collision> {
        let prompt = other
            .prompt_paths()
            .into_iter()
            .find(|prompt| same_file(self.baseline, prompt))?;
        let span = key_span_in_table(self.text, other.name.span().start, "prompt")
            .unwrap_or(other.name.span());
        Some(Collision {
            other: format!(
                "suite `{}`'s prompt `{prompt}` ({})",
                other.name(),
                location_of(self.path, self.text, Some(span))
            ),
            fix: self.file_of_its_own(),
        })
    }

    /// Each pair of suites is reported once, at the later one's line.
    fn shared_baseline_collision(
        &self,
        other_index: usize,
        other: &SuiteConfig,
    ) -> Option<Collision> {
        if other_index >= self.index {
            return None;
        }
        let taken = other
            .baseline
            .as_deref()
            .filter(|taken| same_file(self.baseline, taken))?;
        let letter_case = if taken == self.baseline {
            ""
        } else {
            ", one file where letter case does not count (macOS, Windows)"
        };
        Some(Collision {
            other: format!(
                "suite `{}`'s baseline `{taken}` ({}){letter_case}",
                other.name(),
                baseline_location(self.path, self.text, other),
            ),
            fix: format!(
                "`accept` would drop one suite's entries as it records the other's; {}",
                self.file_of_its_own()
            ),
        })
    }

    fn grader_source_collision(&self) -> Option<Collision> {
        self.config.graders.iter().find_map(|(id, grader)| {
            let pattern = grader
                .sources
                .iter()
                .find(|pattern| glob_matches(pattern, self.baseline))?;
            Some(Collision {
                other: format!("a source of grader `{id}`: its glob `{pattern}` matches it"),
                fix: format!("narrow grader `{id}`'s `sources` to its code, or move the baseline out of them"),
            })
        })
    }

    fn file_of_its_own(&self) -> String {
        format!(
            "give suite `{}` a file of its own, such as `{}`",
            self.suite.name(),
            own_baseline_path(self.baseline, self.suite.name())
        )
    }

    fn keep_with_the_cases(&self) -> String {
        format!(
            "keep baselines with the cases, such as `{}`",
            own_baseline_path("evals/x", self.suite.name())
        )
    }
}

/// Which suites name a path through their case globs, prompts or baselines, compiled
/// once for the whole config; paths and globs compared without regard to letter case.
struct Owners {
    case_globs: GlobSet,
    /// The suite of each glob in `case_globs`, in order.
    glob_suites: Vec<usize>,
    /// Lower-cased prompt paths and case globs without a wildcard -> the suites that
    /// name them.
    named: HashMap<String, Vec<usize>>,
    /// Lower-cased baseline paths -> the suites that name them.
    baselines: HashMap<String, Vec<usize>>,
}

impl Owners {
    fn new(config: &Config) -> Owners {
        let mut builder = GlobSetBuilder::new();
        let mut glob_suites = Vec::new();
        let mut named: HashMap<String, Vec<usize>> = HashMap::new();
        let mut baselines: HashMap<String, Vec<usize>> = HashMap::new();
        for (index, suite) in config.suites.iter().enumerate() {
            // A pattern without a wildcard names one path: looked up, not compiled (400
            // suites of one file each built a set of 400 case-insensitive globs, 9 ms).
            let (literal, wild): (Vec<&String>, Vec<&String>) = suite
                .cases
                .iter()
                .partition(|pattern| !has_wildcard(pattern));
            for path in literal {
                named.entry(path.to_lowercase()).or_default().push(index);
            }
            // A glob that does not compile matches nothing here (validation reports it
            // on its own line).
            for glob in wild.into_iter().filter_map(|pattern| {
                GlobBuilder::new(pattern)
                    .case_insensitive(true)
                    .build()
                    .ok()
            }) {
                builder.add(glob);
                glob_suites.push(index);
            }
            for path in suite.prompt_paths() {
                named.entry(path.to_lowercase()).or_default().push(index);
            }
            if let Some(baseline) = &suite.baseline {
                baselines
                    .entry(baseline.to_lowercase())
                    .or_default()
                    .push(index);
            }
        }
        Owners {
            case_globs: builder.build().unwrap_or_default(),
            glob_suites,
            named,
            baselines,
        }
    }

    /// The suites that may name `path`, suite `own`'s baseline, in config order (an
    /// earlier suite's baseline only: each pair is reported once).
    fn of(&self, path: &str, own: usize) -> BTreeSet<usize> {
        let mut suites: BTreeSet<usize> = self
            .case_globs
            .matches(path)
            .into_iter()
            .map(|glob| self.glob_suites[glob])
            .collect();
        let lower = path.to_lowercase();
        suites.extend(self.named.get(&lower).into_iter().flatten());
        suites.extend(
            self.baselines
                .get(&lower)
                .into_iter()
                .flatten()
                .filter(|index| **index < own),
        );
        suites
    }
}

/// Whether a glob pattern holds anything but literal characters.
fn has_wildcard(pattern: &str) -> bool {
    pattern.contains(['*', '?', '[', ']', '{', '}', '\\'])
}

/// Where suite `owner` writes `baseline = …`; its `name` when the key is not in its table.
fn baseline_location(path: &str, text: &str, owner: &SuiteConfig) -> String {
    let span = key_span_in_table(text, owner.name.span().start, "baseline")
        .unwrap_or_else(|| owner.name.span());
    location_of(path, text, Some(span))
}

/// evalock's own folder at the project root: results, the cache, accept's lock.
const STATE_FOLDER: &str = ".evalock";

/// Whether `baseline` lies in evalock's own folder (any letter case).
fn in_state_folder(baseline: &str) -> bool {
    baseline
        .split('/')
        .next()
        .is_some_and(|first| same_file(first, STATE_FOLDER))
}

/// Whether two project paths name one file on a file system that ignores letter case.
fn same_file(left: &str, right: &str) -> bool {
    left.to_lowercase() == right.to_lowercase()
}

/// Whether `pattern` matches `path` regardless of letter case; a glob that does not
/// compile matches nothing here (validation reports it on its own line).
fn glob_matches(pattern: &str, path: &str) -> bool {
    GlobBuilder::new(pattern)
        .case_insensitive(true)
        .build()
        .is_ok_and(|glob| glob.compile_matcher().is_match(path))
}

/// One `[skills] roots` or `vendored` glob, compiled once for every suite's baseline.
struct SkillFolderGlob<'a> {
    key: &'static str,
    index: usize,
    pattern: &'a str,
    /// None for a glob that does not compile: it names no folder.
    matcher: Option<globset::GlobMatcher>,
}

impl SkillFolderGlob<'_> {
    fn matches(&self, folder: &str) -> bool {
        self.matcher
            .as_ref()
            .is_some_and(|matcher| matcher.is_match(folder))
    }
}

/// The skill folder globs in the order a collision names them: roots, then vendored;
/// compiled when a baseline first needs them. A config of 400 suites compiled each of
/// them 400 times over, before any file was read.
struct SkillFolderGlobs<'a> {
    config: &'a Config,
    compiled: std::cell::OnceCell<Vec<SkillFolderGlob<'a>>>,
}

impl<'a> SkillFolderGlobs<'a> {
    fn new(config: &'a Config) -> SkillFolderGlobs<'a> {
        SkillFolderGlobs {
            config,
            compiled: std::cell::OnceCell::new(),
        }
    }

    fn globs(&self) -> &[SkillFolderGlob<'a>] {
        self.compiled.get_or_init(|| {
            let Some(skills) = self.config.skills.as_ref() else {
                return Vec::new();
            };
            let keyed = [("roots", &skills.roots), ("vendored", &skills.vendored)];
            keyed
                .into_iter()
                .flat_map(|(key, patterns)| {
                    patterns
                        .iter()
                        .enumerate()
                        .map(move |(index, pattern)| SkillFolderGlob {
                            key,
                            index,
                            pattern: pattern.as_str(),
                            matcher: folder_glob(pattern),
                        })
                })
                .collect()
        })
    }
}

/// The skill-folder glob `pattern` as skill discovery reads it (`*` within one name, a
/// trailing `/` ignored), regardless of letter case; none when it does not compile.
fn folder_glob(pattern: &str) -> Option<globset::GlobMatcher> {
    GlobBuilder::new(pattern.trim_end_matches('/'))
        .literal_separator(true)
        .case_insensitive(true)
        .build()
        .ok()
        .map(|glob| glob.compile_matcher())
}

/// `evals/<suite>.baseline.json`, in the folder of `taken`: a baseline path for `suite`.
fn own_baseline_path(taken: &str, suite: &str) -> String {
    match taken.rsplit_once('/') {
        Some((folder, _)) => format!("{folder}/{suite}.baseline.json"),
        None => format!("{suite}.baseline.json"),
    }
}
