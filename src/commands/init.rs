//! `evalock init`: write a commented starter `evalock.toml` from what the project holds.

use crate::cases::{parse_case_file, Case, CaseBody, CaseProblem, ProblemKind, CASE_WITHOUT_ID};
use crate::error::{Error, Result};
use crate::project::config::{is_valid_name, MAX_NAME_CHARS};
use crate::project::config::{Config, CONFIG_FILE};
use crate::source::atomic::write_atomic;
use crate::source::{git_ignored, ContentSource, WorktreeSource};
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

/// Directories never searched for cases, prompts or skills.
const IGNORED_DIRECTORIES: &[&str] = &[
    "node_modules",
    "target",
    "vendor",
    "dist",
    "build",
    ".venv",
    "venv",
    "__pycache__",
];

#[derive(Debug)]
pub struct InitOutcome {
    pub config_text: String,
    /// Suite name -> case files.
    pub suites: BTreeMap<String, Vec<String>>,
    pub prompts: Vec<String>,
    pub skill_roots: Vec<String>,
    /// Plugin marketplaces (`.claude-plugin/marketplace.json`) whose skills are guarded.
    pub marketplaces: Vec<String>,
    /// Tool-server configurations (`.mcp.json`, a plugin's `plugin.json`…) written to
    /// `[mcp] configs`.
    pub mcp_configs: Vec<String>,
    /// Detected files left out of the config for their names, each with the reason.
    pub skipped: Vec<SkippedPath>,
    /// Files of records that would be cases but have no `id` (datasets of other eval
    /// tools), left out until each record gets one.
    pub without_ids: Vec<String>,
    /// Files of records without `id` whose shape init recognised, with the identity rule
    /// it wrote for their suite.
    pub identified: BTreeMap<String, DetectedIdentity>,
    /// Graders declared for the `grader_version` the cases pin: id -> version.
    pub graders: BTreeMap<String, String>,
    /// Findings present today, adopted as debt in `[debt]`: how many per rule.
    pub adopted: BTreeMap<crate::rules::RuleId, usize>,
}

/// A case file, prompt or skill init found but left out of evalock.toml, and why.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct SkippedPath {
    pub path: String,
    /// `case file`, `prompt`, `skill` or `marketplace`.
    pub kind: &'static str,
    pub reason: String,
}

pub fn init(project_root: &Path, force: bool) -> Result<InitOutcome> {
    let config_path = project_root.join(CONFIG_FILE);
    if config_path.exists() && !force {
        return Err(Error::Usage(format!(
            "{CONFIG_FILE} already exists: edit it, or pass --force to replace it with a fresh starter"
        )));
    }
    let source = WorktreeSource::new(project_root);
    let listed: Vec<String> = source.list("")?.into_iter().map(|file| file.path).collect();
    let all_files = without_git_ignored(project_root, listed);
    let files: Vec<String> = all_files
        .iter()
        .filter(|path| {
            !path
                .split('/')
                .any(|part| IGNORED_DIRECTORIES.contains(&part) || part.starts_with('.'))
        })
        .cloned()
        .collect();
    let mut skipped = Vec::new();
    let mut without_ids = Vec::new();
    let mut identified = BTreeMap::new();
    let mut grader_pins = BTreeMap::new();
    let suites = detect_case_files(
        &source,
        (&files, &all_files),
        &mut skipped,
        &mut without_ids,
        (&mut identified, &mut grader_pins),
    )?;
    let graders = pinned_graders(&suites, &grader_pins, &identified);
    let prompts: Vec<String> = files
        .iter()
        .filter(|path| is_prompt(path))
        .filter(|path| writable(path, "prompt", &mut skipped))
        .cloned()
        .collect();
    let mut skills = crate::project::config::SkillsConfig {
        roots: detect_skill_roots(&all_files, &mut skipped),
        marketplaces: detect_marketplaces(&all_files, &mut skipped),
        ..Default::default()
    };
    let mut mcp_configs = McpFound {
        configs: detect_mcp_configs(&source, &all_files, &mut skipped)?,
        exclude: Vec::new(),
    };
    let skill_permissions = declared_skill_permissions(&source, &skills)?;
    let render_all = |skills: &crate::project::config::SkillsConfig, mcp: &McpFound| {
        let mut text = render(
            &suites,
            &prompts,
            skills,
            &skill_permissions,
            (&identified, &graders),
        );
        text.push_str(&render_mcp(mcp));
        text
    };
    let mut config_text = render_all(&skills, &mcp_configs);
    Config::parse(CONFIG_FILE, config_text.as_bytes())
        .map_err(|error| Error::Internal(format!("generated config does not parse: {error}")))?;
    write_atomic(&config_path, config_text.as_bytes())?;
    // What the roots and configurations found leave out (a dependency's copy under
    // node_modules/, a name evalock cannot pin) is excluded in so many words, so that
    // `check` judges anything new outside the lists (EL213, EL610) and nothing old.
    let (unlisted_skills, unlisted_configs) = unlisted_after(&source)?;
    if unlisted_skills
        .iter()
        .chain(&unlisted_configs)
        .any(|path| unwritable_reason(path).is_none())
    {
        // A name evalock cannot write into evalock.toml is named in the notes already:
        // renaming it is the way through, and `check` says so (EL213).
        for folder in unlisted_skills
            .into_iter()
            .filter(|folder| unwritable_reason(folder).is_none())
        {
            skipped.push(SkippedPath {
                path: folder.clone(),
                kind: "skill",
                reason: "excluded in `[skills] exclude`: no agent loads skills from there; remove the entry if one does".to_owned(),
            });
            skills.exclude.push(format!("{}/**", literal_glob(&folder)));
        }
        for path in unlisted_configs
            .into_iter()
            .filter(|path| unwritable_reason(path).is_none())
        {
            skipped.push(SkippedPath {
                path: path.clone(),
                kind: "tool-server configuration",
                reason: "excluded in `[mcp] exclude`: no client loads configurations from there; remove the entry if one does".to_owned(),
            });
            mcp_configs.exclude.push(literal_glob(&path));
        }
        config_text = render_all(&skills, &mcp_configs);
        Config::parse(CONFIG_FILE, config_text.as_bytes()).map_err(|error| {
            Error::Internal(format!("generated config does not parse: {error}"))
        })?;
        write_atomic(&config_path, config_text.as_bytes())?;
    }
    skipped.sort();
    // Made now, not by the first check: a folder made at the project root changes the
    // root's stat data, which the first check's memo would otherwise stamp stale.
    let state_folder = project_root.join(crate::source::atomic::STATE_FOLDER);
    if std::fs::create_dir_all(&state_folder).is_ok() {
        crate::source::atomic::ignore_state_folder(&state_folder);
    }
    let debt = adoptable_findings(&source)?;
    let mut adopted = BTreeMap::new();
    for entry in &debt {
        *adopted.entry(entry.rule).or_insert(0) += 1;
    }
    let config_text = match debt.is_empty() {
        true => config_text,
        false => {
            let with_debt = format!("{config_text}{}", crate::gate::render_debt(&debt));
            Config::parse(CONFIG_FILE, with_debt.as_bytes()).map_err(|error| {
                Error::Internal(format!("generated config does not parse: {error}"))
            })?;
            write_atomic(&config_path, with_debt.as_bytes())?;
            with_debt
        }
    };
    Ok(InitOutcome {
        config_text,
        suites,
        prompts,
        skill_roots: skills.roots,
        marketplaces: skills.marketplaces,
        mcp_configs: mcp_configs.configs,
        skipped,
        without_ids,
        identified,
        graders: graders.by_suite.into_values().collect(),
        adopted,
    })
}

/// The configurations of tool servers `init` writes into `[mcp]`, and what it excludes.
struct McpFound {
    configs: Vec<String>,
    exclude: Vec<String>,
}

/// The skill folders and tool-server configurations the written evalock.toml leaves out.
fn unlisted_after(source: &WorktreeSource) -> Result<(Vec<String>, Vec<String>)> {
    let options = crate::commands::project::LoadOptions {
        read_lock: false,
        detail: crate::cases::CaseDetail::Summary,
        find_unlisted: true,
        ..Default::default()
    };
    let Some(project) = crate::commands::project::Project::load_with_options(source, &options)?
    else {
        return Ok((Vec::new(), Vec::new()));
    };
    let configs = project
        .mcp
        .unlisted
        .iter()
        .map(|config| config.path.clone())
        .collect();
    Ok((project.skills.unlisted, configs))
}

/// What `check` would report once the new config is locked, as debt to adopt: every
/// finding of a policy rule (integrity rules are never adopted).
fn adoptable_findings(source: &WorktreeSource) -> Result<Vec<crate::gate::AdoptedFinding>> {
    let options = crate::commands::project::LoadOptions {
        read_lock: false,
        detail: crate::cases::CaseDetail::Summary,
        find_unlisted: true,
        ..Default::default()
    };
    let Some(mut project) = crate::commands::project::Project::load_with_options(source, &options)?
    else {
        return Ok(Vec::new());
    };
    let lock = project.to_lock();
    project.replace_lock(Some(lock));
    let findings = crate::commands::check::families::check_project(&project, None);
    Ok(crate::gate::debt_for(&findings))
}

/// `files` but those git ignores: build outputs, caches, local data. A clone (CI's
/// included) lacks them, so a suite or skill root naming them would match nothing there.
fn without_git_ignored(project_root: &Path, files: Vec<String>) -> Vec<String> {
    let ignored = git_ignored(project_root, &files);
    if ignored.is_empty() {
        return files;
    }
    files
        .into_iter()
        .filter(|path| !ignored.contains(path))
        .collect()
}

/// Whether `path` can go into evalock.toml; when not, it is recorded in `skipped` so the
/// user learns which file is not guarded, instead of init failing on a name (exit 70) or
/// writing a config that `lock` then refuses.
fn writable(path: &str, kind: &'static str, skipped: &mut Vec<SkippedPath>) -> bool {
    match unwritable_reason(path) {
        None => true,
        Some(reason) => {
            skipped.push(SkippedPath {
                path: path.to_owned(),
                kind,
                reason: format!(
                    "{reason}; rename it, then run `evalock init --force` to include it"
                ),
            });
            false
        }
    }
}

/// Why init leaves `path` out of evalock.toml, if it does. evalock refuses to pin a path
/// holding a backslash (a separator on Windows, an escape in globs) or a newline (it would
/// split the lock's lines); one holding another control character it could pin, but the
/// character would reach terminals and review comments unescaped.
fn unwritable_reason(path: &str) -> Option<String> {
    if path.contains('\\') {
        return Some("a backslash is not allowed in a path evalock pins (paths use `/`)".into());
    }
    if let Err(error) = crate::digest::validate_relative_path(path) {
        return Some(match error {
            Error::InvalidPath { reason, .. } => reason,
            other => other.to_string(),
        });
    }
    if path.chars().any(char::is_control) {
        return Some(
            "a control character in a path would reach terminals and review comments unescaped"
                .into(),
        );
    }
    None
}

fn detect_case_files(
    source: &dyn ContentSource,
    (files, all_files): (&[String], &[String]),
    skipped: &mut Vec<SkippedPath>,
    without_ids: &mut Vec<String>,
    (identified, grader_pins): (&mut BTreeMap<String, DetectedIdentity>, &mut GraderPins),
) -> Result<BTreeMap<String, Vec<String>>> {
    let mut by_stem: BTreeMap<String, Vec<SuiteFiles>> = BTreeMap::new();
    let referenced = promptfoo_suites(source, files, &mut by_stem, identified)?;
    // A file inside a skill is pinned with the skill, byte for byte: a suite of it would
    // put its baseline inside the skill, and each `accept` would tamper it.
    let skill_folders: BTreeSet<&str> = all_files
        .iter()
        .filter_map(|path| path.strip_suffix("/SKILL.md"))
        .collect();
    let in_a_skill = |path: &str| {
        path.match_indices('/')
            .any(|(slash, _)| skill_folders.contains(&path[..slash]))
    };
    let candidates: Vec<&String> = files
        .iter()
        .filter(|path| !referenced.contains(*path) && !in_a_skill(path))
        .filter(|path| is_case_file_candidate(path))
        .collect();
    // Files are read and parsed side by side; what each holds is kept in brief, so the
    // cases of a large repository are never all in memory at once.
    let examined: Vec<Examined> = candidates
        .par_iter()
        .map(|path| examine(source, path))
        .collect::<Result<_>>()?;
    for (path, examined) in candidates.into_iter().zip(examined) {
        let (ids, pins, identity) = match examined {
            Examined::Nothing => continue,
            Examined::WithoutIds => {
                without_ids.push(path.clone());
                continue;
            }
            Examined::LfsPointer => {
                skipped.push(SkippedPath {
                    path: path.clone(),
                    kind: "case file",
                    reason: "a Git LFS pointer, not cases: git stores only the pointer, and the file it stands for is kept outside git; evalock pins case files as git stores them, so keep them in git itself (take the `filter=lfs` pattern out of .gitattributes, `git add --renormalize` them, commit), then run `evalock init --force`".to_owned(),
                });
                continue;
            }
            Examined::NotCases { not_cases, records } => {
                skipped.push(SkippedPath {
                    path: path.clone(),
                    kind: "case file",
                    reason: format!(
                        "{not_cases} of its {records} records hold no case field ({}): a mock response, a resource or a configuration, not evaluation cases; add it to a `[[suite]]` by hand if it is one",
                        CASE_MEMBERS[..4].iter().map(|member| format!("`{member}`")).collect::<Vec<_>>().join(", ")
                    ),
                });
                continue;
            }
            Examined::Cases {
                ids,
                pins,
                identity,
            } => (ids, pins, identity),
        };
        if !writable(path, "case file", skipped) {
            continue;
        }
        if !pins.is_empty() {
            grader_pins.insert(path.clone(), pins);
        }
        let groups = by_stem.entry(file_stem(path).to_owned()).or_default();
        // Files identified by different rules never share a suite.
        let rule = identity
            .as_ref()
            .map(|detected: &DetectedIdentity| detected.rule.clone());
        if let Some(detected) = identity {
            identified.insert(path.clone(), detected);
        }
        match groups
            .iter_mut()
            .find(|group| group.ids.is_disjoint(&ids) && group.rule == rule)
        {
            Some(group) => {
                group.files.push(path.clone());
                group.ids.extend(ids);
            }
            None => groups.push(SuiteFiles {
                files: vec![path.clone()],
                ids,
                rule,
            }),
        }
    }
    Ok(name_suites(by_stem))
}

/// Case file -> the `grader_version`s its cases pin.
type GraderPins = BTreeMap<String, BTreeSet<Arc<str>>>;

/// The graders init declares: a suite whose cases pin one `grader_version` gets a
/// `[grader.<id>]` of that version, so that the day-one check judges them against the
/// version they were written for instead of refusing each one (EL302).
#[derive(Default)]
struct PinnedGraders {
    /// Suite name -> (grader id, version).
    by_suite: BTreeMap<String, (String, String)>,
}

fn pinned_graders(
    suites: &BTreeMap<String, Vec<String>>,
    grader_pins: &GraderPins,
    identified: &BTreeMap<String, DetectedIdentity>,
) -> PinnedGraders {
    let mut ids: BTreeMap<String, String> = BTreeMap::new();
    let mut graders = PinnedGraders::default();
    for (suite, files) in suites {
        if identified
            .get(&files[0])
            .is_some_and(DetectedIdentity::is_graded_in_process)
        {
            continue;
        }
        let pins: BTreeSet<&Arc<str>> = files
            .iter()
            .filter_map(|file| grader_pins.get(file))
            .flatten()
            .collect();
        // Cases that pin several versions disagree with each other: that is real drift,
        // and EL302 says which.
        let [version] = pins.into_iter().collect::<Vec<_>>()[..] else {
            continue;
        };
        let id = match ids.iter().find(|(_, known)| known.as_str() == &**version) {
            Some((id, _)) => id.clone(),
            None => {
                let base = grader_id_of(version);
                let mut number = 1;
                let id = loop {
                    let candidate = shortened_name(&base, number);
                    if !ids.contains_key(&candidate)
                        && !crate::project::config::IN_PROCESS_GRADER_IDS
                            .contains(&candidate.as_str())
                    {
                        break candidate;
                    }
                    number += 1;
                };
                ids.insert(id.clone(), version.to_string());
                id
            }
        };
        graders
            .by_suite
            .insert(suite.clone(), (id, version.to_string()));
    }
    graders
}

/// A grader id from the version label cases pin: `struct-3` -> `struct`, `rubric_v2.1` ->
/// `rubric`; a bare number names the grader `pinned`.
fn grader_id_of(version: &str) -> String {
    let trimmed = version.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let trimmed = trimmed
        .strip_suffix(['v', 'V'])
        .filter(|rest| rest.is_empty() || rest.ends_with(['-', '_', '.', '@', ' ']))
        .unwrap_or(trimmed);
    let trimmed = trimmed.trim_end_matches(['-', '_', '.', '@', ' ']);
    let name = sanitized_name(trimmed);
    match name.as_str() {
        "cases" if trimmed.is_empty() => "pinned".to_owned(),
        _ => name,
    }
}

/// A file whose name a case file may have.
fn is_case_file_candidate(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    [".jsonl", ".ndjson", ".json", ".yaml", ".yml", ".csv"]
        .iter()
        .any(|ext| lower.ends_with(ext))
        && !lower.contains(".baseline.")
        && !lower.ends_with("package.json")
        && !lower.ends_with("skill.json")
        && !lower.contains("/.github/")
}

/// What a candidate file holds, in brief.
enum Examined {
    /// Absent, malformed, empty, or a keyed configuration (`services:` of
    /// docker-compose.yml): no dataset at all.
    Nothing,
    /// Records that would be cases but have no `id`, in no shape init knows.
    WithoutIds,
    /// Records with ids but no case field: fixtures of another kind.
    NotCases { not_cases: usize, records: usize },
    /// A Git LFS pointer: the file is kept outside git, and this checkout lacks it.
    LfsPointer,
    Cases {
        ids: BTreeSet<String>,
        /// The `grader_version`s its cases pin.
        pins: BTreeSet<Arc<str>>,
        identity: Option<DetectedIdentity>,
    },
}

fn examine(source: &dyn ContentSource, path: &str) -> Result<Examined> {
    let Some(bytes) = source.read(path)? else {
        return Ok(Examined::Nothing);
    };
    let mut parsed = parse_case_file(path, &bytes);
    if parsed
        .problems
        .iter()
        .any(|problem| problem.kind == ProblemKind::LfsPointer)
    {
        return Ok(Examined::LfsPointer);
    }
    let mut identity = None;
    if parsed.cases.is_empty()
        && !parsed.problems.is_empty()
        && parsed
            .problems
            .iter()
            .all(|problem| problem.message == CASE_WITHOUT_ID)
    {
        let Some((detected, with_identity)) = detect_identity(path, &bytes) else {
            return Ok(Examined::WithoutIds);
        };
        parsed = with_identity;
        identity = Some(detected);
    }
    if parsed.cases.is_empty() || parsed.problems.iter().any(CaseProblem::is_malformed) {
        return Ok(Examined::Nothing);
    }
    let not_cases = parsed
        .cases
        .iter()
        .filter(|case| !looks_like_a_case(case))
        .count();
    if not_cases > 0 {
        return Ok(match is_keyed_by_name(path, &bytes) {
            true => Examined::Nothing,
            false => Examined::NotCases {
                not_cases,
                records: parsed.cases.len(),
            },
        });
    }
    let pins = parsed
        .cases
        .iter()
        .filter_map(|case| case.grader_version.clone())
        .collect();
    let ids = parsed
        .cases
        .into_iter()
        .map(|case| case.id.into())
        .collect();
    Ok(Examined::Cases {
        ids,
        pins,
        identity,
    })
}

/// A suite for each promptfoo configuration with tests (inline, or in the files its
/// `tests:` names), identified by the content of `vars` and graded as promptfoo grades.
/// Returns the configurations and the files they name, which make no suite of their own.
fn promptfoo_suites(
    source: &dyn ContentSource,
    files: &[String],
    by_stem: &mut BTreeMap<String, Vec<SuiteFiles>>,
    identified: &mut BTreeMap<String, DetectedIdentity>,
) -> Result<BTreeSet<String>> {
    use crate::cases::promptfoo_config::{
        is_promptfoo_config_text, may_be_config, test_file_references,
    };
    let mut taken = BTreeSet::new();
    for config in files.iter().filter(|path| may_be_config(path)) {
        let Some(bytes) = source.read(config)? else {
            continue;
        };
        if !is_promptfoo_config_text(config, &bytes) {
            continue;
        }
        let text = String::from_utf8_lossy(&bytes);
        let mut named = BTreeSet::new();
        for pattern in test_file_references(config, &text) {
            let Ok(glob) = globset::Glob::new(&pattern) else {
                continue;
            };
            let matcher = glob.compile_matcher();
            named.extend(files.iter().filter(|path| matcher.is_match(path)).cloned());
        }
        let identity = crate::cases::identity::Identity::Content(vec!["vars".to_owned()]);
        let inline = crate::cases::parse_identified_case_file(
            config,
            &bytes,
            crate::cases::CaseDetail::Summary,
            &identity,
        );
        if inline.cases.is_empty() && named.is_empty() {
            continue;
        }
        identified.insert(
            config.clone(),
            DetectedIdentity {
                rule: "{ content = [\"vars\"] }".to_owned(),
                shape: "promptfoo tests (`vars`, `assert`)",
            },
        );
        by_stem
            .entry(file_stem(config).to_owned())
            .or_default()
            .push(SuiteFiles {
                files: vec![config.clone()],
                ids: BTreeSet::new(),
                rule: Some("promptfoo configuration".to_owned()),
            });
        taken.insert(config.clone());
        taken.extend(named);
    }
    Ok(taken)
}

/// Members only an evaluation case has: evalock's own, and those of the datasets of
/// other runners `init` knows (promptfoo `vars`, OpenAI evals `ideal`, deepeval
/// `expected_output`, inspect_ai `target`). An `id` and a `version` alone are what mock
/// API responses, tool resources and configurations hold too.
const CASE_MEMBERS: &[&str] = &[
    "input",
    "expect",
    "expect_pass",
    "mutate",
    "grader_version",
    "stratum",
    "vars",
    "ideal",
    "expected_output",
    "target",
];

/// Whether a JSON or YAML file's top level maps names to objects ("an object of cases
/// keyed by id"), the shape of many configs too: `services:` in docker-compose.yml,
/// `{"hosting": …}` in firebase.json, `coverage:` in codecov.yml.
fn is_keyed_by_name(path: &str, bytes: &[u8]) -> bool {
    type TopLevel = BTreeMap<String, serde::de::IgnoredAny>;
    let lower = path.to_ascii_lowercase();
    let top_level: Option<TopLevel> = if lower.ends_with(".json") {
        serde_json::from_slice(bytes).ok()
    } else if lower.ends_with(".yaml") || lower.ends_with(".yml") {
        std::str::from_utf8(bytes)
            .ok()
            .and_then(|text| serde_saphyr::from_str(text).ok())
    } else {
        None
    };
    top_level.is_some_and(|members| !members.contains_key("id"))
}

/// Whether a case keyed by name holds anything only an eval case holds: a config's
/// tables (`web: {image: nginx}`) do not, so init does not make suites of them.
fn looks_like_a_case(case: &Case) -> bool {
    match &case.body {
        CaseBody::Full(value) => value
            .as_object()
            .is_some_and(|members| CASE_MEMBERS.iter().any(|key| members.contains_key(*key))),
        CaseBody::Graded(_) | CaseBody::Probed(_) => true,
    }
}

/// Case files that can share one suite: no case id in two of them. Files of one stem in
/// several projects of a monorepo (`apps/a/evals/support.jsonl`, `apps/b/evals/…`) often
/// reuse ids; one suite would be EL104 on the first `evalock lock`.
struct SuiteFiles {
    files: Vec<String>,
    ids: BTreeSet<String>,
    /// The `id` rule of files whose records have no `id` (written as in evalock.toml).
    rule: Option<String>,
}

/// The identity rule init chose for a file of records without `id`, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DetectedIdentity {
    /// As evalock.toml writes it: `{ content = ["input"] }`.
    pub rule: String,
    /// The shape it recognised: "OpenAI evals samples (`input`, `ideal`)".
    pub shape: &'static str,
}

/// The shapes of other runners' datasets, the fields whose content identifies a record,
/// and the fields a record of that shape has.
const KNOWN_SHAPES: &[(&str, &[&str], &[&str])] = &[
    ("promptfoo tests (`vars`, `assert`)", &["vars"], &["vars"]),
    (
        "OpenAI evals samples (`input`, `ideal`)",
        &["input"],
        &["input", "ideal"],
    ),
    (
        "deepeval goldens (`input`, `expected_output`)",
        &["input"],
        &["input", "expected_output"],
    ),
    (
        "inspect_ai samples (`input`, `target`)",
        &["input"],
        &["input", "target"],
    ),
    ("records with an `input`", &["input"], &["input"]),
];

impl DetectedIdentity {
    /// A shape graded by one of the in-process graders (promptfoo's, inspect's).
    fn is_graded_in_process(&self) -> bool {
        self.shape.starts_with("promptfoo") || self.shape.starts_with("inspect_ai")
    }
}

/// For a file whose records have no `id`: the first known shape all its records have,
/// with the file parsed under the identity it gives.
fn detect_identity(
    path: &str,
    bytes: &[u8],
) -> Option<(DetectedIdentity, crate::cases::ParsedCaseFile)> {
    use crate::cases::identity::Identity;
    for (shape, identity_fields, fields) in KNOWN_SHAPES {
        let identity = Identity::Content(
            identity_fields
                .iter()
                .map(|field| (*field).to_owned())
                .collect(),
        );
        let parsed = crate::cases::parse_identified_case_file(
            path,
            bytes,
            crate::cases::CaseDetail::Full,
            &identity,
        );
        let has_fields = |case: &Case| match &case.body {
            CaseBody::Full(value) => fields.iter().all(|field| value.get(*field).is_some()),
            CaseBody::Graded(_) | CaseBody::Probed(_) => false,
        };
        if !parsed.cases.is_empty()
            && parsed.problems.is_empty()
            && parsed.cases.iter().all(has_fields)
        {
            let rule = format!(
                "{{ content = [{}] }}",
                identity_fields
                    .iter()
                    .map(|field| format!("\"{field}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            return Some((DetectedIdentity { rule, shape }, parsed));
        }
    }
    None
}

/// What the files of one suite, and its prompt, share: the file name up to its first `.`
/// (`support` for `evals/support.v2.jsonl`).
fn file_stem(path: &str) -> &str {
    let file_name = path.rsplit('/').next().unwrap_or(path);
    file_name.split('.').next().unwrap_or(file_name)
}

/// `stem` in the characters a suite name may hold: only ASCII remains.
fn sanitized_name(stem: &str) -> String {
    let name: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    if name.is_empty() {
        "cases".to_owned()
    } else {
        name
    }
}

/// Suite names from stems. A name is a lock key of at most 64 letters, digits, `-` and `_`:
/// a stem that is one already keeps it; another is sanitized (`a b` -> `a-b`) and cut, and
/// numbered (`…-2`) when that meets another suite's name. Files of different stems never
/// merge into one suite, whose case ids they could collide with; files of one stem whose
/// ids collide are several suites, the second and later numbered.
fn name_suites(by_stem: BTreeMap<String, Vec<SuiteFiles>>) -> BTreeMap<String, Vec<String>> {
    let mut named = BTreeMap::new();
    let mut to_derive = Vec::new();
    for (stem, groups) in by_stem {
        for (index, group) in groups.into_iter().enumerate() {
            if index == 0 && is_valid_name(&stem) {
                named.insert(stem.clone(), group.files);
            } else {
                to_derive.push((stem.clone(), group.files));
            }
        }
    }
    for (stem, files) in to_derive {
        let base = sanitized_name(&stem);
        let mut number = 1;
        let name = loop {
            let candidate = shortened_name(&base, number);
            if !named.contains_key(&candidate) {
                break candidate;
            }
            number += 1;
        };
        named.insert(name, files);
    }
    named
}

/// `stem` cut to a suite name's length, ending in `-{number}` from the second on.
fn shortened_name(stem: &str, number: usize) -> String {
    let suffix = if number == 1 {
        String::new()
    } else {
        format!("-{number}")
    };
    let kept: String = stem.chars().take(MAX_NAME_CHARS - suffix.len()).collect();
    format!("{kept}{suffix}")
}

/// Files that document a prompts folder rather than hold a prompt.
const NOT_PROMPTS: &[&str] = &["readme", "license", "changelog", "contributing"];

fn is_prompt(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    if NOT_PROMPTS.contains(&file_stem(&lower)) {
        return false;
    }
    let in_prompt_dir = lower
        .split('/')
        .any(|part| part == "prompts" || part == "prompt");
    (in_prompt_dir
        && [".txt", ".md", ".j2", ".jinja", ".tmpl", ".prompt"]
            .iter()
            .any(|ext| lower.ends_with(ext)))
        || lower.ends_with(".prompt")
}

/// Folders of a dependency's or a build's copy: agents never load skills there.
const NOT_SKILL_FOLDERS: &[&str] = &[
    "node_modules",
    "target",
    "dist",
    "build",
    ".venv",
    "venv",
    "__pycache__",
];

/// A root for every folder holding a SKILL.md, wherever it is (`.claude/skills`,
/// `.claude-plugin/skills`, `vendor/skills` and plugin folders included): each is a skill
/// an agent can load. Copies inside dependencies and builds are left to `exclude`.
fn detect_skill_roots(files: &[String], skipped: &mut Vec<SkippedPath>) -> Vec<String> {
    let searched = |path: &&String| {
        !path
            .split('/')
            .any(|part| NOT_SKILL_FOLDERS.contains(&part))
    };
    let mut roots: Vec<String> = files
        .iter()
        .filter(searched)
        .filter_map(|path| path.strip_suffix("/SKILL.md"))
        .filter(|skill_dir| writable(skill_dir, "skill", skipped))
        .map(|skill_dir| match skill_dir.rsplit_once('/') {
            Some((parent, _)) => format!("{}/*", literal_glob(parent)),
            None => literal_glob(skill_dir),
        })
        .collect();
    roots.sort();
    roots.dedup();
    roots
}

/// Plugin marketplaces (`.claude-plugin/marketplace.json`): the skills they list are
/// loaded from there by agents, and a plugin fetched from elsewhere (EL210) is only seen
/// through its marketplace.
fn detect_marketplaces(files: &[String], skipped: &mut Vec<SkippedPath>) -> Vec<String> {
    const MANIFEST: &str = ".claude-plugin/marketplace.json";
    files
        .iter()
        .filter(|path| {
            path.strip_suffix(MANIFEST)
                .is_some_and(|folder| folder.is_empty() || folder.ends_with('/'))
        })
        .filter(|path| {
            !path
                .split('/')
                .any(|part| IGNORED_DIRECTORIES.contains(&part))
        })
        .filter(|path| writable(path, "marketplace", skipped))
        .cloned()
        .collect()
}

/// Tool-server configurations: the well-known files, `.mcp.json` anywhere (plugins keep
/// theirs at their root) and plugin manifests, each only when it starts a server.
fn detect_mcp_configs(
    source: &WorktreeSource,
    files: &[String],
    skipped: &mut Vec<SkippedPath>,
) -> Result<Vec<String>> {
    use crate::project::config::WELL_KNOWN_CONFIGS;
    let mut found = Vec::new();
    for path in files {
        let candidate =
            WELL_KNOWN_CONFIGS.contains(&path.as_str()) || crate::mcp::is_config_candidate(path);
        if !candidate
            || path
                .split('/')
                .any(|part| NOT_SKILL_FOLDERS.contains(&part))
            || !writable(path, "tool-server configuration", skipped)
        {
            continue;
        }
        let bytes = source.read(path)?.unwrap_or_default();
        let parsed = crate::mcp::servers::parse(path, &String::from_utf8_lossy(&bytes));
        if !(parsed.servers.is_empty()
            && parsed.references.is_empty()
            && parsed.problems.is_empty())
        {
            found.push(path.clone());
        }
    }
    Ok(found)
}

fn render_mcp(found: &McpFound) -> String {
    if found.configs.is_empty() && found.exclude.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "\n[mcp]\n# Tool-server configurations: each server's launch is pinned (environment names,\n# never values) and refused when it drifts.\nconfigs = {}\n",
        toml_list(&found.configs.iter().map(|path| literal_glob(path)).collect::<Vec<_>>())
    );
    if !found.exclude.is_empty() {
        let _ = write!(
            out,
            "# Configurations no client loads; any other outside `configs` that starts a server is EL610.\nexclude = {}\n",
            toml_list(&found.exclude)
        );
    }
    out.push_str("# A committed `tools/list` answer per server pins its tools, tool by tool:\n# [mcp.snapshots]\n# github = \"mcp/github.tools.json\"\n");
    out
}

/// Everything the detected skills declare today (`allowed-tools`, skill.json
/// `permissions`): the starting allowlist a reviewer trims.
fn declared_skill_permissions(
    source: &dyn ContentSource,
    config: &crate::project::config::SkillsConfig,
) -> Result<Vec<String>> {
    if config.roots.is_empty() && config.marketplaces.is_empty() {
        return Ok(Vec::new());
    }
    let skills = crate::skills::load_skills(source, config)?;
    let declared: std::collections::BTreeSet<String> = skills
        .skills
        .iter()
        .flat_map(|skill| skill.declared_permissions())
        .collect();
    Ok(declared.into_iter().collect())
}

/// A glob that matches `path` and nothing else. globset reads `*`, `?`, `[`, `]`, `{` and
/// `}` as wildcards, so a folder named `team[1]` written as is would match `team1`
/// instead: the skill or case file init found would go unguarded.
fn literal_glob(path: &str) -> String {
    globset::escape(path)
}

fn toml_list(items: &[String]) -> String {
    let quoted: Vec<String> = items
        .iter()
        .map(|item| crate::project::lock::toml_string(item))
        .collect();
    format!("[{}]", quoted.join(", "))
}

/// The baseline beside a suite's first case file (`evals/support.baseline.json` for
/// `evals/support.jsonl`); named after the suite when another suite has that one already
/// (`evals/support.json` and `evals/support.yaml` whose ids collide are two suites).
fn baseline_path(first_case_file: &str, suite: &str, taken: &mut BTreeSet<String>) -> String {
    let beside = first_case_file
        .rsplit_once('.')
        .map_or(first_case_file, |(stem, _)| stem);
    let mut path = format!("{beside}.baseline.json");
    if taken.contains(&path) {
        path = match first_case_file.rsplit_once('/') {
            Some((folder, _)) => format!("{folder}/{suite}.baseline.json"),
            None => format!("{suite}.baseline.json"),
        };
    }
    taken.insert(path.clone());
    path
}

fn render(
    suites: &BTreeMap<String, Vec<String>>,
    prompts: &[String],
    skills: &crate::project::config::SkillsConfig,
    skill_permissions: &[String],
    (identified, graders): (&BTreeMap<String, DetectedIdentity>, &PinnedGraders),
) -> String {
    let mut out = String::new();
    let mut baselines = BTreeSet::new();
    out.push_str(
        "# evalock.toml: what evalock freezes and checks. `evalock rules` explains every\n\
         # finding, `evalock <command> --help` every command; editors validate this file\n\
         # against config.schema.json from evalock's repository.\n\
         # After editing, run `evalock lock` and commit evalock.toml with evalock.lock.\n\
         version = 1\n\n\
         [policy]\n\
         # Share of samples whose normalized completions must agree (EL505).\n\
         agreement_min = 1.0\n\
         # Exit 3 when completions moved but still pass.\n\
         fail_on_diff = false\n\
         # Environment variables never passed to completers (GITHUB_TOKEN and ACTIONS_* never are).\n\
         secrets = []\n\
         timeout_secs = 60\n",
    );
    if suites.is_empty() {
        out.push_str(
            "\n# No case files were found. A suite looks like this:\n\
             # [[suite]]\n\
             # name = \"support\"\n\
             # cases = [\"evals/support.jsonl\"]\n\
             # prompt = \"prompts/support.txt\"\n",
        );
    }
    for (name, files) in suites {
        let case_globs: Vec<String> = files.iter().map(|file| literal_glob(file)).collect();
        let _ = write!(out, "\n[[suite]]\nname = {}\n# Golden case files (JSONL, JSON, YAML or CSV); globs work (`[*]` is a literal `*`).\ncases = {}\n", crate::project::lock::toml_string(name), toml_list(&case_globs));
        if let Some(detected) = identified.get(&files[0]) {
            let _ = write!(
                out,
                "# These records have no `id`: they look like {}. Each case is identified by\n# a digest of the named fields, so editing another field is an edit in place (EL102) and\n# editing these makes a new case (the old one removed, EL103). Give the records ids, or\n# name a field that holds one (`id = \"metadata.case_id\"`), to identify them yourself.\nid = {}\n",
                detected.shape, detected.rule
            );
            if detected.shape.starts_with("promptfoo") {
                out.push_str("# Their `assert` lists, graded as promptfoo's deterministic assertions.\ngrader = \"promptfoo\"\n");
            }
            if detected.shape.starts_with("inspect_ai") {
                out.push_str("# Their `target`, graded as inspect's `includes()` scorer (`inspect-exact` for `exact()`).\ngrader = \"inspect-includes\"\n");
            }
        }
        if let Some((id, version)) = graders.by_suite.get(name) {
            let _ = writeln!(
                out,
                "# Its cases pin `grader_version = {}`: graded by [grader.{id}] below.\ngrader = {}",
                crate::project::lock::toml_string(version),
                crate::project::lock::toml_string(id)
            );
        }
        // Matched by stem, not by name: a derived name is sanitized, cut or numbered.
        let stem = file_stem(&files[0]);
        let matching: Vec<String> = prompts
            .iter()
            .filter(|prompt| file_stem(prompt) == stem)
            .cloned()
            .collect();
        match matching.as_slice() {
            [] if prompts.is_empty() => out.push_str("# prompt = \"prompts/….txt\"\n"),
            [] => {
                let _ = writeln!(
                    out,
                    "# Pick this suite's prompt file(s); found: {}\n# prompt = {}",
                    prompts.join(", "),
                    toml_list(prompts)
                );
            }
            [only] => {
                let _ = writeln!(out, "prompt = {}", crate::project::lock::toml_string(only));
            }
            several => {
                let _ = writeln!(out, "prompt = {}", toml_list(several));
            }
        }
        let baseline = baseline_path(&files[0], name, &mut baselines);
        let _ = writeln!(
            out,
            "# Last-good completions, written only by `evalock accept`.\nbaseline = {}\n# The command that produces a completion: one JSON object on stdin per case.\n# completer = [\"python3\", \"tools/complete.py\"]\n# exact | ws-v1 | json-v1\nnormalizer = \"ws-v1\"",
            crate::project::lock::toml_string(&baseline)
        );
    }
    let declared: BTreeMap<&String, &String> = graders
        .by_suite
        .values()
        .map(|(id, version)| (id, version))
        .collect();
    for (id, version) in declared {
        let _ = write!(
            out,
            "\n[grader.{id}]\n# The version the cases pin in `grader_version`. The built-in grader runs their\n# `expect`; set `kind = \"command\"` and `command = [...]` if another program grades them.\n# Bump it when the grader changes: cases pinned to the old one are refused (EL302).\nversion = {}\n",
            crate::project::lock::toml_string(version)
        );
    }
    if !skills.roots.is_empty() || !skills.marketplaces.is_empty() || !skills.exclude.is_empty() {
        let _ = write!(
            out,
            "\n[skills]\n# Folders holding a SKILL.md; globs work (`[*]` is a literal `*`).\nroots = {}\n",
            toml_list(&skills.roots)
        );
        if !skills.exclude.is_empty() {
            let _ = write!(
                out,
                "# Folders no agent loads skills from; any other SKILL.md outside the roots is EL213.\nexclude = {}\n",
                toml_list(&skills.exclude)
            );
        }
        if !skills.marketplaces.is_empty() {
            let _ = write!(
                out,
                "# Plugin marketplaces: the skills their plugins list are guarded too.\nmarketplaces = {}\n",
                toml_list(&skills.marketplaces)
            );
        }
        let _ = write!(
            out,
            "# Permissions and tools a skill may declare (`*` is a wildcard). These are what your\n# skills declare today: remove what no skill should have, then run `evalock lock`.\nallowed_permissions = {}\n",
            toml_list(skill_permissions)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::grader_id_of;

    #[test]
    fn a_grader_is_named_by_its_version_label_without_the_number() {
        assert_eq!(grader_id_of("struct-3"), "struct");
        assert_eq!(grader_id_of("rubric_v2.1"), "rubric");
        assert_eq!(grader_id_of("judge@v4"), "judge");
        assert_eq!(grader_id_of("vibe"), "vibe");
        assert_eq!(grader_id_of("v2"), "pinned");
        assert_eq!(grader_id_of("7"), "pinned");
        assert_eq!(grader_id_of("team grader 2"), "team-grader");
    }
}
