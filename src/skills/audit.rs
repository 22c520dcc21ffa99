//! `evalock skills audit [DIR]…`: the seed article's per-skill audit, one line per
//! criterion (`FAIL  provenance   need source.repo …`), built from the same findings
//! `evalock check` reports. Exit 0 when no line says FAIL, 1 otherwise.

mod lines;

pub use lines::audit_lines;

use crate::error::{Error, Result};
use crate::finding::{exit_code, sort_findings, Finding};
use crate::project::config::SkillsConfig;
use crate::project::config::{Config, CONFIG_FILE};
use crate::project::lock::{Lock, LOCK_FILE};
use crate::rules::Severity;
use crate::skills::discovery::skills_below;
use crate::skills::rules::{check_scope, Criterion, SkillScope};
use crate::skills::{load_paths, load_skills, LoadSettings, Skill, SkillSet};
use crate::source::read_regular_file;
use crate::source::WorktreeSource;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum AuditStatus {
    Pass,
    /// Every finding of the line is adopted debt (`[debt]` in evalock.toml): it fails
    /// nothing, as it fails no `check`, and is shown so that it is paid down.
    Debt,
    Warn,
    Fail,
}

impl AuditStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            AuditStatus::Pass => "PASS",
            AuditStatus::Debt => "DEBT",
            AuditStatus::Warn => "WARN",
            AuditStatus::Fail => "FAIL",
        }
    }
}

/// One line of the audit: `{status:5} {criterion:12} {message}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditLine {
    pub status: AuditStatus,
    pub criterion: Criterion,
    pub message: String,
    /// The findings behind a WARN or FAIL, with their locations and fixes.
    pub findings: Vec<Finding>,
}

impl AuditLine {
    /// The seed article's format.
    pub fn headline(&self) -> String {
        format!(
            "{:5} {:12} {}",
            self.status.as_str(),
            self.criterion.as_str(),
            self.message
        )
    }
}

#[derive(Debug, Clone)]
pub struct SkillAudit {
    pub path: String,
    pub name: String,
    pub lines: Vec<AuditLine>,
}

#[derive(Debug, Clone, Default)]
pub struct AuditOutcome {
    pub skills: Vec<SkillAudit>,
    /// Findings about no single audited skill: marketplace problems, locked skills that are gone.
    pub other: Vec<Finding>,
}

impl AuditOutcome {
    pub fn failed(&self) -> bool {
        self.skills
            .iter()
            .flat_map(|skill| &skill.lines)
            .any(|line| line.status == AuditStatus::Fail)
            || self
                .other
                .iter()
                .any(|finding| finding.severity >= Severity::Error)
    }

    /// 0 when nothing failed, 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        if self.failed() {
            exit_code::FAILURES
        } else {
            exit_code::CLEAN
        }
    }
}

/// Audits the skill folders below each of `dirs` (relative to `project_root`), or every
/// configured skill when `dirs` is empty. Reads the working tree.
pub fn audit(project_root: &Path, dirs: &[PathBuf]) -> Result<AuditOutcome> {
    let source = WorktreeSource::new(project_root);
    let project = ProjectSkills::read(&source)?;
    if dirs.is_empty() {
        return project.audit_configured(&source);
    }
    project.audit_folders(project_root, &source, dirs)
}

/// What the project says about its skills: its `[skills]` settings, its lock and the
/// skills its config finds.
struct ProjectSkills {
    config: SkillsConfig,
    /// evalock.toml, whose `[debt]` the audit honours as `check` does.
    project_config: Option<Config>,
    lock: Option<Lock>,
    settings: LoadSettings,
    configured: SkillSet,
}

impl ProjectSkills {
    fn read(source: &WorktreeSource) -> Result<ProjectSkills> {
        // As `check` reads them: a symlink or a directory in their place is named as one.
        let config = match read_regular_file(source, CONFIG_FILE)? {
            Some(bytes) => Some(Config::parse(CONFIG_FILE, &bytes)?),
            None => None,
        };
        let lock = match read_regular_file(source, LOCK_FILE)? {
            Some(bytes) => Some(Lock::parse(LOCK_FILE, &bytes)?),
            None => None,
        };
        let skills_config = config
            .as_ref()
            .and_then(|config| config.skills.clone())
            .unwrap_or_default();
        let settings = LoadSettings::new(&skills_config)?;
        let configured = match config.as_ref().and_then(|config| config.skills.as_ref()) {
            Some(skills) => load_skills(source, skills)?,
            None => SkillSet::default(),
        };
        Ok(ProjectSkills {
            config: skills_config,
            project_config: config,
            lock,
            settings,
            configured,
        })
    }

    /// Every configured skill, with the findings about no single one of them (the
    /// marketplaces', the lock's) as `check` reports them.
    fn audit_configured(&self, source: &WorktreeSource) -> Result<AuditOutcome> {
        let skills = &self.configured.skills;
        if skills.is_empty() {
            return Err(nothing_to_audit(&self.config, &self.configured));
        }
        let targets: Vec<String> = skills.iter().map(|skill| skill.path.clone()).collect();
        let scope = SkillScope {
            skills,
            discovery_problems: &self.configured.problems,
            manifests: &self.configured.manifests,
            config: &self.config,
            lock: self.lock.as_ref(),
            whole_project: true,
        };
        let mut findings = check_scope(&scope);
        let adopted = self.take_debt(&mut findings, source);
        Ok(outcome(
            skills,
            &targets,
            (findings, adopted),
            self.lock.as_ref(),
            &self.config,
        ))
    }

    /// The findings `[debt]` covers, taken out of `findings`, as `check` takes them.
    fn take_debt(&self, findings: &mut Vec<Finding>, source: &WorktreeSource) -> Vec<Finding> {
        match &self.project_config {
            Some(config) => crate::gate::take_adopted(findings, config, &|path| {
                read_regular_file(source, path)
                    .ok()
                    .flatten()
                    .map(|bytes| crate::digest::Digest::of_bytes(&bytes))
            }),
            None => Vec::new(),
        }
    }

    /// The skills below each folder named, in the order named: those inside the project
    /// first, checked with the configured skills and the lock, then those outside it,
    /// each folder checked on its own.
    fn audit_folders(
        &self,
        project_root: &Path,
        source: &WorktreeSource,
        dirs: &[PathBuf],
    ) -> Result<AuditOutcome> {
        let mut in_project = InProject {
            skills: self.configured.skills.clone(),
            targets: Vec::new(),
        };
        let mut result = AuditOutcome::default();
        for dir in dirs {
            match locate(project_root, dir)? {
                DirPlace::Inside(relative) => {
                    in_project.add_folder(source, dir, &relative, &self.settings)?;
                }
                DirPlace::Outside { parent, name } => {
                    let audited = self.audit_outside(dir, &parent, &name)?;
                    result.skills.extend(audited.skills);
                }
            }
        }
        let audited = self.audit_in_project(in_project, source);
        result.skills.splice(0..0, audited.skills);
        Ok(result)
    }

    /// A folder outside the project: no config or lock of ours speaks for it.
    fn audit_outside(&self, dir: &Path, parent: &Path, name: &str) -> Result<AuditOutcome> {
        let outside = WorktreeSource::new(parent);
        let found = skills_below(&outside, name)?;
        if found.is_empty() {
            return Err(no_skill(dir));
        }
        let skills = load_paths(&outside, &found, false, &self.settings)?;
        let scope = SkillScope {
            skills: &skills,
            discovery_problems: &[],
            manifests: &[],
            config: &self.config,
            lock: None,
            whole_project: false,
        };
        Ok(outcome(
            &skills,
            &found,
            (check_scope(&scope), Vec::new()),
            None,
            &self.config,
        ))
    }

    fn audit_in_project(&self, mut in_project: InProject, source: &WorktreeSource) -> AuditOutcome {
        let scope = SkillScope {
            skills: &in_project.skills,
            discovery_problems: &[],
            manifests: &[],
            config: &self.config,
            lock: self.lock.as_ref(),
            whole_project: false,
        };
        let mut dedup = BTreeSet::new();
        in_project.targets.retain(|path| dedup.insert(path.clone()));
        let mut findings = check_scope(&scope);
        let adopted = self.take_debt(&mut findings, source);
        outcome(
            &in_project.skills,
            &in_project.targets,
            (findings, adopted),
            self.lock.as_ref(),
            &self.config,
        )
    }
}

/// The project's skills (the configured ones and those below the folders named) and the
/// folders named, which alone get audit lines.
struct InProject {
    skills: Vec<Skill>,
    targets: Vec<String>,
}

impl InProject {
    fn add_folder(
        &mut self,
        source: &WorktreeSource,
        dir: &Path,
        relative: &str,
        settings: &LoadSettings,
    ) -> Result<()> {
        let found = skills_below(source, relative)?;
        if found.is_empty() {
            return Err(no_skill(dir));
        }
        let known: BTreeSet<&str> = self
            .skills
            .iter()
            .map(|skill| skill.path.as_str())
            .collect();
        let new: Vec<String> = found
            .iter()
            .filter(|path| !known.contains(path.as_str()))
            .cloned()
            .collect();
        self.skills
            .extend(load_paths(source, &new, false, settings)?);
        self.targets.extend(found);
        Ok(())
    }
}

/// `skills audit` with no folder named and no skill configured. When `[skills]` does name
/// roots or marketplaces, saying "add `[skills] roots`" would send the reader to a
/// setting that is already there: name what each finds instead.
fn nothing_to_audit(config: &SkillsConfig, configured: &SkillSet) -> Error {
    let pass_a_folder = "pass a skill folder (`evalock skills audit path/to/skill`)";
    if config.roots.is_empty() && config.marketplaces.is_empty() {
        return Error::Usage(format!(
            "no skills to audit: {pass_a_folder} or add `[skills] roots` to {CONFIG_FILE}"
        ));
    }
    let why = if configured.problems.is_empty() {
        format!("`[skills]` in {CONFIG_FILE} finds no folder holding a SKILL.md")
    } else {
        let messages: Vec<&str> = configured
            .problems
            .iter()
            .map(|problem| problem.message.as_str())
            .collect();
        messages.join("; ")
    };
    Error::Usage(format!(
        "no skills to audit: {why}; fix `[skills]` in {CONFIG_FILE}, or {pass_a_folder}"
    ))
}

fn no_skill(dir: &Path) -> Error {
    Error::Usage(format!(
        "{} holds no SKILL.md: a skill is a folder with a SKILL.md file",
        dir.display()
    ))
}

enum DirPlace {
    /// Project-relative folder.
    Inside(String),
    /// Outside the project (or the project root itself): audited on its own.
    Outside { parent: PathBuf, name: String },
}

fn locate(project_root: &Path, dir: &Path) -> Result<DirPlace> {
    let joined = if dir.is_absolute() {
        dir.to_path_buf()
    } else {
        project_root.join(dir)
    };
    if joined.is_file() {
        // Tab completion ends at SKILL.md as easily as at its folder.
        let folder = dir
            .parent()
            .filter(|parent| !parent.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        return Err(Error::Usage(format!(
            "{} is a file, not a folder: pass the skill's folder (`evalock skills audit {}`)",
            dir.display(),
            folder.display()
        )));
    }
    if !joined.is_dir() {
        return Err(Error::Usage(format!(
            "{}: no such directory",
            dir.display()
        )));
    }
    let canonical = joined
        .canonicalize()
        .map_err(|error| Error::io(dir.display().to_string(), error))?;
    let root = project_root
        .canonicalize()
        .map_err(|error| Error::io(project_root.display().to_string(), error))?;
    if let Ok(relative) = canonical.strip_prefix(&root) {
        let parts: Vec<String> = relative
            .components()
            .map(|part| part.as_os_str().to_string_lossy().into_owned())
            .collect();
        if !parts.is_empty() {
            return Ok(DirPlace::Inside(parts.join("/")));
        }
    }
    let parent = canonical.parent().ok_or_else(|| {
        Error::Usage(format!(
            "{}: cannot audit the file system root",
            dir.display()
        ))
    })?;
    let name = canonical
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(DirPlace::Outside {
        parent: parent.to_path_buf(),
        name,
    })
}

/// Groups findings by audited skill and builds its lines; other findings stay apart.
fn outcome(
    skills: &[Skill],
    targets: &[String],
    (mut findings, adopted): (Vec<Finding>, Vec<Finding>),
    lock: Option<&Lock>,
    config: &SkillsConfig,
) -> AuditOutcome {
    sort_findings(&mut findings);
    let mut adopted_of: BTreeMap<&str, Vec<Finding>> = BTreeMap::new();
    for finding in &adopted {
        if let Some(path) = finding.subject.skill.as_deref() {
            adopted_of.entry(path).or_default().push(finding.clone());
        }
    }
    let mut result = AuditOutcome::default();
    // Indexed once: an audit of every skill of a large repository stays linear.
    let by_path: BTreeMap<&str, &Skill> = skills
        .iter()
        .map(|skill| (skill.path.as_str(), skill))
        .rev()
        .collect();
    let mut findings_of: BTreeMap<&str, Vec<Finding>> = BTreeMap::new();
    for finding in &findings {
        if let Some(path) = finding.subject.skill.as_deref() {
            findings_of.entry(path).or_default().push(finding.clone());
        }
    }
    for path in targets {
        let Some(skill) = by_path.get(path.as_str()) else {
            continue;
        };
        let own = findings_of
            .get(path.as_str())
            .map_or(&[][..], Vec::as_slice);
        let debt = adopted_of.get(path.as_str()).map_or(&[][..], Vec::as_slice);
        result.skills.push(SkillAudit {
            path: path.clone(),
            name: skill.name().to_owned(),
            lines: audit_lines(skill, (own, debt), lock, config),
        });
    }
    let all: BTreeSet<&str> = skills.iter().map(|skill| skill.path.as_str()).collect();
    result.other = findings
        .into_iter()
        .filter(|finding| {
            finding
                .subject
                .skill
                .as_deref()
                .is_none_or(|path| !all.contains(path))
        })
        .collect();
    result
}
