//! What the staged `evalock.toml` makes evalock read, and through it the marketplaces and
//! tool-server configurations it names: the paths a commit must leave alone for the
//! pre-commit fast path to answer without a check.

use crate::commands::memo::Memo;
use crate::error::Result;
use crate::project::config::{Config, CONFIG_FILE};
use crate::project::lock::LOCK_FILE;
use crate::source::StagedIndex;
use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::{Deserialize, Serialize};
use std::cell::OnceCell;
use std::collections::BTreeSet;

/// The paths the staged `evalock.toml` makes evalock read: `None` when it is absent or
/// does not parse, `Some(None)` when they are not known from the index (see
/// [`tracked_strings`]).
///
/// They follow from the bytes of the configuration and of the manifests it names, so
/// they are remembered by the configuration's object id, together with the id each
/// manifest had: parsing and validating a configuration of 400 suites takes longer than
/// the rest of a commit that touches nothing evalock tracks (2.4 ms of 5.6 ms, against
/// 2.3 ms for `git diff --cached --name-only`).
pub(super) fn staged_tracked_paths(
    memo: Option<&Memo>,
    staged: &StagedIndex,
) -> Result<Option<Option<TrackedPaths>>> {
    let Some(config_id) = staged.file_id(CONFIG_FILE) else {
        return Ok(None);
    };
    let question = format!("tracked paths of {CONFIG_FILE} {config_id}");
    let remembered = memo
        .and_then(|memo| memo.recall_answer(&question))
        .and_then(|text| serde_json::from_str::<Option<TrackedStrings>>(&text).ok())
        .filter(|strings| {
            strings
                .as_ref()
                .is_none_or(|strings| strings.manifests_unchanged(staged))
        });
    if let Some(strings) = remembered {
        return Ok(Some(strings.map(TrackedPaths::new)));
    }
    let Some(config_bytes) = staged.read_file(CONFIG_FILE)? else {
        return Ok(None);
    };
    let Ok(config) = Config::parse(CONFIG_FILE, &config_bytes) else {
        return Ok(None);
    };
    let strings = match tracked_strings(&config) {
        Some((strings, manifests)) => {
            let mut strings = follow_manifests(staged, strings, manifests)?;
            strings.reduce();
            Some(strings)
        }
        None => None,
    };
    if let (Some(memo), Ok(text)) = (memo, serde_json::to_string(&strings)) {
        memo.remember_answer(&question, &text);
    }
    Ok(Some(strings.map(TrackedPaths::new)))
}

/// A file whose content names more files evalock reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Manifest {
    /// A plugin marketplace: its plugins' folders and skills.
    Marketplace,
    /// A tool-server configuration: the files it points at for its servers.
    ServerConfig,
}

/// Every path evalock may read for this config, as far as the config alone says:
/// `evalock.toml`, `evalock.lock`, and every string value of the config taken as a path
/// or glob, with everything below it; and the manifests whose content names the rest
/// (marketplaces, tool-server configurations), to be read with [`follow_manifests`].
///
/// Taking every string rather than a list of known fields keeps the fast path exact when
/// a setting that names files is added: a string that is not a path (a suite name, a
/// model) at worst costs a full check. `None` when test files are listed inside promptfoo
/// configurations or files inside promptfoo tests' `vars` (`file://…`, in suites graded
/// by `promptfoo`), or tool-server configurations are named by a glob: which files
/// those name, only the files matched know.
fn tracked_strings(config: &Config) -> Option<(TrackedStrings, Vec<(String, Manifest)>)> {
    let server_configs = config.mcp.as_ref().map_or(&[][..], |mcp| &mcp.configs[..]);
    if server_configs
        .iter()
        .any(|path| path.contains(['*', '?', '[', '{']))
        || config
            .suites
            .iter()
            .flat_map(|suite| &suite.cases)
            .any(|pattern| may_match_promptfoo_config(pattern))
        || config.suites.iter().any(|suite| {
            suite.grader.as_deref() == Some(crate::project::config::PROMPTFOO_GRADER_ID)
        })
    {
        return None;
    }
    let value = serde_json::to_value(config).ok()?;
    let mut strings = vec![CONFIG_FILE.to_owned(), LOCK_FILE.to_owned()];
    collect_strings(&value, &mut Vec::new(), &mut strings);
    let mut tracked = TrackedStrings::default();
    for text in &strings {
        tracked.add(text);
    }
    let marketplaces = config
        .skills
        .as_ref()
        .map_or(&[][..], |skills| &skills.marketplaces[..]);
    let manifests = marketplaces
        .iter()
        .map(|path| (path, Manifest::Marketplace))
        .chain(
            server_configs
                .iter()
                .map(|path| (path, Manifest::ServerConfig)),
        )
        .map(|(path, manifest)| (path.trim_start_matches("./").to_owned(), manifest))
        .collect();
    Some((tracked, manifests))
}

/// Reads each manifest as staged, and the files tool-server configurations point at in
/// turn, adding the paths they name to `tracked` and noting the object id each had.
fn follow_manifests(
    staged: &StagedIndex,
    mut tracked: TrackedStrings,
    mut queue: Vec<(String, Manifest)>,
) -> Result<TrackedStrings> {
    let mut seen = BTreeSet::new();
    while let Some((path, manifest)) = queue.pop() {
        if !seen.insert(path.clone()) {
            continue;
        }
        let id = staged.file_id(&path);
        tracked
            .manifests
            .push((path.clone(), id.map(|id| id.to_string())));
        let Some(bytes) = staged.read_file(&path)? else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        match manifest {
            Manifest::Marketplace => {
                for named in crate::skills::discovery::paths_read_through(&path, &text) {
                    tracked.add(&named);
                }
            }
            Manifest::ServerConfig => {
                for (target, _) in crate::mcp::servers::parse(&path, &text).references {
                    tracked.add(&target);
                    queue.push((target, Manifest::ServerConfig));
                }
            }
        }
    }
    Ok(tracked)
}

/// Whether a case glob names a promptfoo configuration (as `init` writes it: by its
/// name), whose `tests: file://…` name case files only that configuration knows. A
/// configuration reached through a wider wildcard (`evals/*.yaml`) is not looked for here:
/// that would cost every YAML suite its fast path.
fn may_match_promptfoo_config(pattern: &str) -> bool {
    pattern
        .rsplit('/')
        .next()
        .is_some_and(|name| name.to_ascii_lowercase().contains("promptfoo"))
}

/// What makes a config string a wildcard pattern; the text before the first of them is
/// literal in every path the pattern matches.
const GLOB_SYNTAX: [char; 5] = ['*', '?', '[', '{', '\\'];

/// The paths a config makes evalock read, as written: what the hook's memo keeps.
#[derive(Debug, Default, Serialize, Deserialize)]
struct TrackedStrings {
    /// Each names a file, or a folder and everything below it.
    literals: Vec<String>,
    /// Wildcard patterns, matched as evalock matches case globs, plus everything below a match.
    patterns: Vec<String>,
    /// The manifests read to find some of them, each with the object id it had in the
    /// index (`None`: not there as a file).
    #[serde(default)]
    manifests: Vec<(String, Option<String>)>,
}

impl TrackedStrings {
    fn add(&mut self, text: &str) {
        let path = text.trim_start_matches("./").trim_end_matches('/');
        if path.is_empty() {
            return;
        }
        // Also taken literally: `evals/[draft].jsonl` may name exactly that file.
        self.literals.push(path.to_owned());
        if path.contains(GLOB_SYNTAX) {
            self.patterns.push(path.to_owned());
        }
    }

    /// Drops the literals that add nothing: repeated ones, and those below another (a
    /// plugin's manifest below its folder). Sorted by folder names, a folder comes right
    /// before everything below it.
    fn reduce(&mut self) {
        self.literals
            .sort_unstable_by(|a, b| a.split('/').cmp(b.split('/')));
        self.literals.dedup();
        let mut kept: Vec<String> = Vec::with_capacity(self.literals.len());
        for literal in self.literals.drain(..) {
            if !kept.last().is_some_and(|folder| is_below(&literal, folder)) {
                kept.push(literal);
            }
        }
        self.literals = kept;
        self.patterns.sort_unstable();
        self.patterns.dedup();
    }

    /// Whether every manifest read is staged as it was when these paths were worked out.
    fn manifests_unchanged(&self, staged: &StagedIndex) -> bool {
        self.manifests.iter().all(|(path, id)| {
            staged.file_id(path).map(|id| id.to_string()).as_deref() == id.as_deref()
        })
    }
}

/// The paths a config makes evalock read.
pub struct TrackedPaths {
    literals: Vec<String>,
    patterns: Vec<Pattern>,
    /// `patterns` as one set, compiled for the first path that starts with the literal
    /// prefix of one of them: compiling costs more than the rest of a commit that touches
    /// nothing evalock tracks. `None` inside when they do not compile together.
    compiled: OnceCell<Option<GlobSet>>,
}

/// A wildcard pattern of the config, and the literal text a path must start with to
/// match it or fall below a match.
struct Pattern {
    prefix: String,
    glob: String,
}

impl TrackedPaths {
    fn new(strings: TrackedStrings) -> TrackedPaths {
        let patterns = strings
            .patterns
            .into_iter()
            .filter_map(|glob| {
                let wildcard = glob.find(GLOB_SYNTAX)?;
                Some(Pattern {
                    prefix: glob[..wildcard].to_owned(),
                    glob,
                })
            })
            .collect();
        TrackedPaths {
            literals: strings.literals,
            patterns,
            compiled: OnceCell::new(),
        }
    }

    /// Whether `path` is tracked, or is a folder on the way to a tracked path: a file or
    /// a symlink staged there (`skills` made a link) changes what evalock finds below it.
    pub fn contains(&self, path: &str) -> bool {
        self.literals
            .iter()
            .any(|literal| is_below(path, literal) || is_below(literal, path))
            || self.patterns.iter().any(|pattern| {
                pattern
                    .prefix
                    .rsplit_once('/')
                    .is_some_and(|(folder, _)| is_below(folder, path))
            })
            || (self
                .patterns
                .iter()
                .any(|pattern| path.starts_with(&pattern.prefix))
                && self.matches_pattern(path))
    }

    /// Whether a wildcard pattern matches `path`; a set that does not compile is taken to
    /// match, so the change is judged in full.
    fn matches_pattern(&self, path: &str) -> bool {
        let compiled = self.compiled.get_or_init(|| {
            let mut set = GlobSetBuilder::new();
            for pattern in &self.patterns {
                set.add(Glob::new(&pattern.glob).ok()?);
                set.add(Glob::new(&format!("{}/**", pattern.glob)).ok()?);
            }
            set.build().ok()
        });
        compiled.as_ref().is_none_or(|set| set.is_match(path))
    }
}

/// Whether `path` is `folder` or below it.
fn is_below(path: &str, folder: &str) -> bool {
    path.strip_prefix(folder)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// Settings that hold names, versions, digests, regular expressions or prose, never a
/// path (`*` stands for any table key or list position). Everything else is taken as a
/// possible path, so a new setting that names files is tracked without being listed.
const NOT_PATHS: &[&[&str]] = &[
    &["policy", "secrets"],
    &["suite", "*", "name"],
    &["suite", "*", "id"],
    &["suite", "*", "grader"],
    &["suite", "*", "normalizer"],
    &["suite", "*", "model"],
    &["grader", "*", "version"],
    &["grader", "*", "kind"],
    &["skills", "allowed_permissions"],
    &["skills", "risky_patterns"],
    &["skills", "acknowledge", "*", "rule"],
    &["skills", "acknowledge", "*", "digest"],
    &["skills", "acknowledge", "*", "reason"],
    &["debt", "findings", "*", "rule"],
    &["debt", "findings", "*", "fingerprint"],
    &["debt", "findings", "*", "digest"],
];

fn is_not_a_path(at: &[String]) -> bool {
    NOT_PATHS.iter().any(|pattern| {
        pattern.len() <= at.len()
            && pattern
                .iter()
                .zip(at)
                .all(|(expected, key)| *expected == "*" || expected == key)
    })
}

fn collect_strings(value: &serde_json::Value, at: &mut Vec<String>, strings: &mut Vec<String>) {
    if is_not_a_path(at) {
        return;
    }
    match value {
        serde_json::Value::String(text) => strings.push(text.clone()),
        serde_json::Value::Array(items) => {
            for (position, item) in items.iter().enumerate() {
                at.push(position.to_string());
                collect_strings(item, at, strings);
                at.pop();
            }
        }
        serde_json::Value::Object(fields) => {
            for (key, item) in fields {
                at.push(key.clone());
                collect_strings(item, at, strings);
                at.pop();
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(text: &str) -> Config {
        Config::parse(CONFIG_FILE, text.as_bytes()).expect("valid config")
    }

    /// What the config alone makes evalock read (no manifest followed).
    fn tracked_paths(config: &Config) -> Option<TrackedPaths> {
        tracked_strings(config).map(|(strings, _)| TrackedPaths::new(strings))
    }

    fn assert_tracked(tracked: &TrackedPaths, paths: &[&str], expected: bool) {
        for path in paths {
            assert_eq!(tracked.contains(path), expected, "{path}: tracked?");
        }
    }

    #[test]
    fn tracked_paths_cover_config_lock_cases_prompts_baselines_graders_and_skills() {
        let tracked = tracked_paths(&config(
            r#"
[[suite]]
name = "support"
cases = ["evals/*.jsonl"]
prompt = ["prompts/support.txt", "prompts/shared.txt"]
baseline = "evals/support.baseline.json"
grader = "strict"

[grader.strict]
version = 2
kind = "command"
sources = ["graders/strict"]
command = ["python3", "graders/strict/main.py"]

[skills]
roots = ["skills/*"]
"#,
        ))
        .expect("decidable");
        assert_tracked(
            &tracked,
            &[
                "evalock.toml",
                "evalock.lock",
                "evals/support.jsonl",
                "evals/deeper/more.jsonl",
                "prompts/support.txt",
                "prompts/shared.txt",
                "evals/support.baseline.json",
                "graders/strict/main.py",
                "graders/strict/lib/util.py",
                "skills/refunds/SKILL.md",
                "skills/refunds/scripts/run.sh",
            ],
            true,
        );
        assert_tracked(
            &tracked,
            &[
                "README.md",
                "src/main.rs",
                "evals/notes.md",
                "prompts/other.txt",
                "skillsets/x",
            ],
            false,
        );
    }

    #[test]
    fn names_patterns_and_prose_in_the_config_are_not_taken_for_paths() {
        let digest = format!("sha256:{}", "a".repeat(64));
        let tracked = tracked_paths(&config(&format!(
            r#"
[policy]
secrets = ["*"]

[[suite]]
name = "support"
cases = ["evals/*.jsonl"]
model = "gpt-*"

[skills]
roots = ["skills/*"]
vendored = ["vendor/skills/*"]
allowed_permissions = ["*"]
risky_patterns = {{ anything = ".*" }}

[[skills.acknowledge]]
rule = "EL206"
file = "tools/reviewed.sh"
digest = "{digest}"
reason = "read line by line: *nothing* leaves the machine"
"#
        )))
        .expect("decidable");
        assert_tracked(
            &tracked,
            &["src/app.rs", ".github/workflows/ci.yml", "support", "*"],
            false,
        );
        assert_tracked(
            &tracked,
            &[
                "vendor/skills/pdf/SKILL.md",
                "tools/reviewed.sh",
                "evals/support.jsonl",
            ],
            true,
        );
    }

    #[test]
    fn wildcards_compile_only_for_a_path_under_their_literal_prefix() {
        let tracked = tracked_paths(&config(
            "[[suite]]\nname = \"support\"\ncases = [\"evals/su*/{a,b}.jsonl\"]\n",
        ))
        .expect("decidable");
        assert_tracked(
            &tracked,
            &["src/app.rs", "README.md", "eval/support/a.jsonl"],
            false,
        );
        assert!(
            tracked.compiled.get().is_none(),
            "compiled for an unrelated path"
        );
        assert!(!tracked.contains("evals/notes.md"));
        assert!(
            tracked.compiled.get().is_none(),
            "compiled outside `evals/su`"
        );
        assert!(!tracked.contains("evals/summary.md"));
        assert!(tracked.compiled.get().is_some_and(Option::is_some));
        assert_tracked(
            &tracked,
            &["evals/support/a.jsonl", "evals/sub/b.jsonl/deeper"],
            true,
        );
    }

    #[test]
    fn a_wildcard_at_the_start_is_tried_on_every_path() {
        let tracked = tracked_paths(&config(
            "[[suite]]\nname = \"support\"\ncases = [\"**/*.jsonl\"]\n",
        ))
        .expect("decidable");
        assert!(tracked.contains("deep/down/cases.jsonl"));
        assert!(!tracked.contains("deep/down/cases.json"));
    }

    #[test]
    fn suites_graded_by_promptfoo_are_not_decidable_from_the_config() {
        let suite = "[[suite]]\nname = \"support\"\ncases = [\"evals/tests.csv\"]\n";
        assert!(tracked_paths(&config(suite)).is_some());
        let graded = format!("{suite}grader = \"promptfoo\"\n");
        assert!(tracked_paths(&config(&graded)).is_none());
    }

    #[test]
    fn marketplaces_and_server_configs_are_manifests_to_read_and_globbed_ones_undecidable() {
        let listed = config(
            "[skills]\nmarketplaces = [\".claude-plugin/marketplace.json\"]\n\n[mcp]\nconfigs = [\".mcp.json\", \"plugins/db/.claude-plugin/plugin.json\"]\n",
        );
        let (_, manifests) = tracked_strings(&listed).expect("decidable");
        assert_eq!(
            manifests,
            [
                (
                    ".claude-plugin/marketplace.json".to_owned(),
                    Manifest::Marketplace
                ),
                (".mcp.json".to_owned(), Manifest::ServerConfig),
                (
                    "plugins/db/.claude-plugin/plugin.json".to_owned(),
                    Manifest::ServerConfig
                ),
            ]
        );
        let globbed = config("[mcp]\nconfigs = [\"plugins/*/.mcp.json\"]\n");
        assert!(tracked_strings(&globbed).is_none());
    }

    #[test]
    fn reducing_keeps_what_every_dropped_literal_tracks() {
        let mut strings = TrackedStrings::default();
        for path in [
            "plugins/a/.claude-plugin/plugin.json",
            "plugins/a",
            "plugins/a-b",
            "plugins/a/skills/x",
            "plugins/a",
            "evalock.toml",
            "skills/*",
            "skills/*",
        ] {
            strings.add(path);
        }
        strings.reduce();
        assert_eq!(
            strings.literals,
            ["evalock.toml", "plugins/a", "plugins/a-b", "skills/*"]
        );
        assert_eq!(strings.patterns, ["skills/*"]);
    }

    #[test]
    fn a_folder_on_the_way_to_a_tracked_path_is_tracked() {
        let tracked = tracked_paths(&config(
            "[[suite]]\nname = \"support\"\ncases = [\"evals/support.jsonl\"]\n\n[skills]\nroots = [\"team/skills/*\"]\n",
        ))
        .expect("decidable");
        assert_tracked(&tracked, &["evals", "team", "team/skills"], true);
        assert_tracked(
            &tracked,
            &["eval", "evals.md", "team-notes", "team/skillset"],
            false,
        );
    }
}
