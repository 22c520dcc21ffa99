//! The loaded project: config, lock and every suite's cases and prompts, read from one
//! content source. Checks are pure functions over this model.

use crate::baselines::{load_baseline, SuiteBaseline};
use crate::cases::suite::{suite_digest, SuiteModel};
use crate::cases::CaseDetail;
use crate::digest::EntryKind;
use crate::error::{Error, Result};
use crate::finding::Subject;
use crate::graders::sources::{load_graders, GraderModel};
use crate::project::config::{Config, CONFIG_FILE};
use crate::project::lock::{GraderLock, Lock, SuiteLock, LOCK_FILE};
use crate::source::ContentSource;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::cases::load::{load_suite, options_for_suite};

/// What a load reads and keeps.
#[derive(Clone, Copy)]
pub struct LoadOptions {
    /// Read and parse `evalock.lock` (`evalock lock` regenerates a corrupt one without).
    pub read_lock: bool,
    /// How much of each case to keep: checks need only [`CaseDetail::Summary`].
    pub detail: CaseDetail,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            read_lock: true,
            detail: CaseDetail::Full,
        }
    }
}

/// Everything evalock knows about one snapshot of the project.
#[derive(Debug)]
pub struct Project {
    pub config: Config,
    /// `None` when there is no `evalock.lock` yet. Shared with the other snapshot of a
    /// check with a base when both hold the same lock.
    pub lock: Option<Lock>,
    pub suites: Vec<SuiteModel>,
    /// The skills of `[skills]` (empty without that table).
    pub skills: crate::skills::SkillSet,
    /// `working tree`, `index`, `main (1a2b3c4)`.
    pub source: String,
    /// Configured graders with the digests of their sources.
    pub graders: Vec<GraderModel>,
    /// Baselines of the suites that configure one, by suite name.
    pub baselines: BTreeMap<String, SuiteBaseline>,
    /// Where command graders run (the project root); without it they are not probed.
    pub workdir: Option<PathBuf>,
    /// `Rebaseline-Reason:` trailers of the commits between the base and the judged
    /// content (filled by `check --base`).
    pub rebaseline_reasons: Vec<String>,
}

impl Project {
    /// Loads the project; a missing `evalock.toml` is a usage error.
    pub fn load(source: &dyn ContentSource) -> Result<Project> {
        Project::load_required(source, &LoadOptions::default())
    }

    /// Loads what checks need, case summaries without their values; a missing
    /// `evalock.toml` is a usage error.
    pub fn load_summary(source: &dyn ContentSource) -> Result<Project> {
        Project::load_required(
            source,
            &LoadOptions {
                detail: CaseDetail::Summary,
                ..LoadOptions::default()
            },
        )
    }

    fn load_required(source: &dyn ContentSource, options: &LoadOptions) -> Result<Project> {
        Project::load_with_options(source, options)?.ok_or_else(|| {
            Error::Usage(format!(
                "no {CONFIG_FILE} in the {}: run `evalock init` to create one (or pass -C DIR)",
                source.describe()
            ))
        })
    }

    /// Loads the project, or `None` when the snapshot has no `evalock.toml` (a base
    /// revision from before evalock was adopted).
    pub fn load_if_configured(source: &dyn ContentSource) -> Result<Option<Project>> {
        Project::load_with(source, true)
    }

    /// Loads the project without reading `evalock.lock`: `evalock lock` regenerates a
    /// lock that is conflicted or corrupt from the sources.
    pub fn load_without_lock(source: &dyn ContentSource) -> Result<Project> {
        Project::load_with(source, false)?.ok_or_else(|| {
            Error::Usage(format!(
                "no {CONFIG_FILE} in the {}: run `evalock init` to create one",
                source.describe()
            ))
        })
    }

    fn load_with(source: &dyn ContentSource, read_lock: bool) -> Result<Option<Project>> {
        Project::load_with_options(
            source,
            &LoadOptions {
                read_lock,
                ..LoadOptions::default()
            },
        )
    }

    /// Loads the project as `options` ask; `None` without `evalock.toml`. The lock is
    /// parsed while the case files are hashed.
    pub fn load_with_options(
        source: &dyn ContentSource,
        options: &LoadOptions,
    ) -> Result<Option<Project>> {
        let Some(config_bytes) = read_regular_file(source, CONFIG_FILE)? else {
            return Ok(None);
        };
        let config = Config::parse(CONFIG_FILE, &config_bytes)?;
        // The lock is read long before the case files are all hashed: its suites'
        // summaries are worked out then, instead of one suite per thread at the end.
        let read_lock = || -> Result<Option<Lock>> {
            match options.read_lock {
                true => {
                    refuse_non_file(source, LOCK_FILE)?;
                    Lock::read(source, LOCK_FILE)
                }
                false => Ok(None),
            }
        };
        // Suites load side by side: what each does alone (listing its files, joining
        // their cases, indexing them by id) overlaps with the others' parsing instead of
        // leaving a core idle at every suite's end. The first error in config order wins.
        let load_suites = || {
            let loaded: Vec<Result<SuiteModel>> = config
                .suites
                .par_iter()
                .map(|suite| {
                    let options = options_for_suite(&config, suite, options);
                    load_suite(source, suite, &options)
                })
                .collect();
            loaded.into_iter().collect::<Result<Vec<_>>>()
        };
        let load_skills = || match &config.skills {
            Some(skills_config) => crate::skills::load_skills(source, skills_config),
            None => Ok(crate::skills::SkillSet::default()),
        };
        // The lock parses while the case files and skills are hashed.
        let (lock, (suites, skills)) =
            rayon::join(read_lock, || rayon::join(load_suites, load_skills));
        let graders = load_graders(source, &config)?;
        let mut baselines = BTreeMap::new();
        for suite in &config.suites {
            if let Some(path) = &suite.baseline {
                baselines.insert(
                    suite.name().to_owned(),
                    load_baseline(source, suite.name(), path)?,
                );
            }
        }
        Ok(Some(Project {
            config,
            lock: lock?,
            suites: suites?,
            skills: skills?,
            source: source.describe(),
            graders,
            baselines,
            workdir: None,
            rebaseline_reasons: Vec::new(),
        }))
    }

    /// Every subject this snapshot holds (each case of each suite, each skill), for
    /// reports that count what passed as well as what failed.
    pub fn subjects(&self) -> Vec<Subject> {
        let cases = self.suites.iter().flat_map(|suite| {
            suite
                .cases()
                .iter()
                .map(|case| Subject::case(&suite.name, &case.id))
        });
        cases.chain(self.skill_subjects()).collect()
    }

    /// Judges `lock` from now on (the summaries worked out for the lock loaded are dropped).
    pub fn replace_lock(&mut self, lock: Option<Lock>) {
        self.lock = lock;
    }

    fn skill_subjects(&self) -> impl Iterator<Item = Subject> + '_ {
        self.skills
            .skills
            .iter()
            .map(|skill| Subject::skill(&skill.path))
    }

    pub fn suite(&self, name: &str) -> Option<&SuiteModel> {
        self.suites.iter().find(|suite| suite.name == name)
    }

    /// Sets the directory command graders and completers run in.
    pub fn with_workdir(mut self, workdir: PathBuf) -> Project {
        self.workdir = Some(workdir);
        self
    }

    pub fn grader_model(&self, id: &str) -> Option<&GraderModel> {
        self.graders.iter().find(|grader| grader.id == id)
    }

    /// The grader a suite uses: its `grader`, or the built-in one.
    pub fn grader_for(&self, suite: &str) -> crate::graders::Grader {
        self.config
            .suite(suite)
            .and_then(|config| config.grader.as_deref())
            .and_then(|id| self.grader_model(id))
            .map(GraderModel::grader)
            .unwrap_or_else(crate::graders::Grader::builtin)
    }

    /// The lock this project would write. Case entries of suites are rebuilt from the
    /// cases; nothing else of an existing lock is carried over.
    pub fn to_lock(&self) -> Lock {
        let mut lock = Lock::new();
        for suite in &self.suites {
            let entries = suite.case_locks();
            lock.suites.insert(
                suite.name.clone(),
                SuiteLock {
                    digest: suite_digest(&entries),
                    prompt: suite.prompt_digest(),
                    prompts: suite
                        .prompts
                        .iter()
                        .filter_map(|prompt| Some((prompt.path.clone(), prompt.digest?)))
                        .collect(),
                },
            );
            if !entries.is_empty() {
                lock.cases.insert(suite.name.clone(), entries);
            }
        }
        let skills_config = self.config.skills.clone().unwrap_or_default();
        for skill in &self.skills.skills {
            lock.skills
                .insert(skill.path.clone(), skill.lock_entry(&skills_config));
        }
        for grader in &self.graders {
            lock.graders.insert(
                grader.id.clone(),
                GraderLock {
                    files: grader
                        .files
                        .iter()
                        .map(|file| (file.path.clone(), file.digest))
                        .collect(),
                    ..{
                        let (kind, command) = grader.program().kind_and_command();
                        GraderLock::new(&grader.version, kind, command, grader.digest)
                    }
                },
            );
        }
        lock
    }
}

/// The bytes of evalock's own files; a symlink is refused, since its target string is
/// not the file and following it could leave the project.
pub(crate) fn read_regular_file(source: &dyn ContentSource, path: &str) -> Result<Option<Vec<u8>>> {
    refuse_non_file(source, path)?;
    source.read(path)
}

/// A symlink or a directory where evalock's own file goes is refused by name, not taken
/// for "there is no such file yet".
fn refuse_non_file(source: &dyn ContentSource, path: &str) -> Result<()> {
    if source.kind_of(path)? == Some(EntryKind::Symlink) {
        return Err(Error::malformed(
            format!("{path}:1"),
            format!("{path} is a symlink, and evalock never follows symlinks: replace it with the file itself"),
        ));
    }
    if source.is_directory(path)? {
        return Err(Error::malformed(
            path,
            format!(
                "{path} is a directory (a folder or a git submodule) in the {}, where evalock expects its file: move it away",
                source.describe()
            ),
        ));
    }
    Ok(())
}
