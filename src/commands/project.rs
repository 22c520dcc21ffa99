//! The loaded project: config, lock and every suite's cases and prompts, read from one
//! content source. Checks are pure functions over this model.

use crate::baselines::{load_baseline, BaselineDetail, ParsedBaselines, SuiteBaseline};
use crate::cases::suite::{suite_digest, SuiteModel};
use crate::cases::CaseDetail;
use crate::error::{Error, Result};
use crate::finding::{Finding, Subject};
use crate::graders::sources::{load_graders, GraderModel};
use crate::project::config::{Config, CONFIG_FILE};
use crate::project::lock::{GraderLock, Lock, SuiteLock, LOCK_FILE};
use crate::source::{read_regular_file, refuse_non_file, ContentSource};
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;

use crate::cases::load::{detail_for_suite, load_suite, ParsedFiles};
use crate::skills::SkillDetail;

/// What a load reads and keeps.
#[derive(Clone, Copy)]
pub struct LoadOptions<'a> {
    /// Read and parse `evalock.lock` (`evalock lock` regenerates a corrupt one without).
    pub read_lock: bool,
    /// How much of each case to keep: checks need only [`CaseDetail::Summary`].
    pub detail: CaseDetail,
    /// Case files another load of the same check parsed: those that hold the same object
    /// are not parsed again.
    pub parsed_files: Option<&'a ParsedFiles>,
    /// How much of each skill to read.
    pub skill_detail: SkillDetail,
    /// Look through the whole snapshot for skills and tool-server configurations that
    /// the configuration does not name (EL213, EL610): what `check` judges.
    pub find_unlisted: bool,
    /// Whether baselines keep their completions or only their digests (what checks
    /// judge: a completion is hashed once, for EL402, and dropped).
    pub baseline_detail: BaselineDetail,
    /// Load the cases, lock entries and baselines of these suites only (`run --suite`):
    /// the others stay in the configuration but are not read. `None` loads every suite.
    pub only_suites: Option<&'a BTreeSet<String>>,
    /// Baselines another load of the same command parsed (`report --trend`'s commits):
    /// those that hold the same object are shared, not parsed again.
    pub parsed_baselines: Option<&'a ParsedBaselines>,
    /// Read the skills of `[skills]` and the tool servers of `[mcp]` (`run` judges
    /// completions, not skills: it leaves both empty).
    pub read_skills_and_servers: bool,
    /// Read the baselines with the project. `check` leaves them (only their paths are
    /// checked) and reads each suite's as its rules run, keeping no suite's entries
    /// longer than its rules need them (see [`crate::baselines::rules::check_in_turn`]).
    pub read_baselines: bool,
}

impl Default for LoadOptions<'_> {
    fn default() -> Self {
        LoadOptions {
            read_lock: true,
            detail: CaseDetail::Full,
            parsed_files: None,
            skill_detail: SkillDetail::Full,
            find_unlisted: false,
            baseline_detail: BaselineDetail::Full,
            only_suites: None,
            parsed_baselines: None,
            read_skills_and_servers: true,
            read_baselines: true,
        }
    }
}

/// A command grader run by a check: suite, grader, case and completion, and whether it
/// passed.
pub type CommandGrader<'a> =
    dyn Fn(&str, &crate::graders::Grader, &serde_json::Value, &str) -> bool + Sync + 'a;

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
    /// The tool servers of `[mcp]` (empty without that table).
    pub mcp: crate::mcp::McpSet,
    /// Configured graders with the digests of their sources.
    pub graders: Vec<GraderModel>,
    /// Baselines of the suites that configure one, by suite name.
    pub baselines: BTreeMap<String, Arc<SuiteBaseline>>,
    /// Where command graders run (the project root); without it they are not probed.
    pub workdir: Option<PathBuf>,
    /// `Rebaseline-Reason:` trailers of the commits between the base and the judged
    /// content (filled by `check --base`).
    pub rebaseline_reasons: Vec<String>,
    /// Suites whose identity rule changed since the base, re-identified by the base's
    /// rule (filled by `check --base`, see [`Project::identify_as_base`]).
    pub former_identities: Vec<SuiteModel>,
    /// The base's identity rule of each suite in `former_identities`, by name.
    pub former_rules: BTreeMap<String, crate::cases::identity::Identity>,
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

    /// Loads the project as `options` ask; a missing `evalock.toml` is a usage error.
    pub fn load_required(source: &dyn ContentSource, options: &LoadOptions) -> Result<Project> {
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
        let read_lock = || match options.read_lock {
            true => Project::read_lock_of(source, options.only_suites),
            false => Ok(None),
        };
        Project::load_parts(source, options, read_lock)
    }

    /// [`Project::load_with_options`] with the lock as [`Project::read_lock`] read it
    /// before.
    pub fn load_with_lock(
        source: &dyn ContentSource,
        options: &LoadOptions,
        lock: Result<Option<Lock>>,
    ) -> Result<Option<Project>> {
        Project::load_parts(source, options, || lock)
    }

    /// The snapshot's `evalock.lock`; `None` when it has none.
    pub fn read_lock(source: &dyn ContentSource) -> Result<Option<Lock>> {
        Project::read_lock_of(source, None)
    }

    /// [`Project::read_lock`] with the case entries of `only` these suites when given.
    fn read_lock_of(
        source: &dyn ContentSource,
        only: Option<&BTreeSet<String>>,
    ) -> Result<Option<Lock>> {
        refuse_non_file(source, LOCK_FILE)?;
        Lock::read_suites(source, LOCK_FILE, only)
    }

    fn load_parts(
        source: &dyn ContentSource,
        options: &LoadOptions,
        read_lock: impl FnOnce() -> Result<Option<Lock>> + Send,
    ) -> Result<Option<Project>> {
        let Some(config_bytes) = read_regular_file(source, CONFIG_FILE)? else {
            return Ok(None);
        };
        let config = Config::parse(CONFIG_FILE, &config_bytes)?;
        let wanted = |suite: &&crate::project::config::SuiteConfig| {
            options
                .only_suites
                .is_none_or(|only| only.contains(suite.name()))
        };
        // The lock is read long before the case files are all hashed: its suites'
        // summaries are worked out then, instead of one suite per thread at the end.
        // Suites load side by side: what each does alone (listing its files, joining
        // their cases, indexing them by id) overlaps with the others' parsing instead of
        // leaving a core idle at every suite's end. The first error in config order wins.
        let load_suites = || {
            let folders = crate::source::ListedFolders::default();
            let loaded: Vec<Result<SuiteModel>> = config
                .suites
                .par_iter()
                .filter(wanted)
                .map(|suite| {
                    let detail = detail_for_suite(&config, suite, options.detail);
                    load_suite(source, suite, detail, options.parsed_files, &folders)
                })
                .collect();
            loaded.into_iter().collect::<Result<Vec<_>>>()
        };
        let load_skills = || match &config.skills {
            Some(skills_config) if options.read_skills_and_servers => {
                crate::skills::load_skills_as(source, skills_config, options.skill_detail)
            }
            _ => Ok(crate::skills::SkillSet::default()),
        };
        let find_named = || match options.find_unlisted {
            true => {
                let names: Vec<&str> = std::iter::once(crate::skills::SKILL_FILE)
                    .chain(crate::mcp::CONFIG_NAMES.iter().copied())
                    .collect();
                source.files_named(&names)
            }
            false => Ok(Vec::new()),
        };
        // The lock parses while the case files and skills are hashed.
        let ((lock, named), (suites, skills)) = rayon::join(
            || rayon::join(read_lock, find_named),
            || rayon::join(load_suites, load_skills),
        );
        let graders = load_graders(source, &config)?;
        let mut mcp = match &config.mcp {
            Some(mcp_config) if options.read_skills_and_servers => {
                crate::mcp::load(source, mcp_config, false)?
            }
            _ => crate::mcp::McpSet::default(),
        };
        let mut skills = skills?;
        let named = named?;
        if options.find_unlisted {
            let skill_paths: Vec<String> = skills
                .skills
                .iter()
                .map(|skill| skill.path.clone())
                .collect();
            skills.unlisted = crate::skills::discovery::unlisted_skills(
                &named,
                config.skills.as_ref(),
                &skill_paths,
            )?;
            mcp.unlisted = crate::mcp::unlisted(source, &named, config.mcp.as_ref(), &mcp)?;
        }
        // Side by side: once every suite is accepted, its baselines can be larger than
        // its cases (50 suites of 4,000 entries: 250 MB, 2.6 s read one after another).
        let configured: Vec<_> = config
            .suites
            .iter()
            .filter(wanted)
            .filter_map(|suite| Some((suite.name(), suite.baseline.as_deref()?)))
            .collect();
        let baselines = match options.read_baselines {
            // Read by the rules in turn: only their paths are checked now.
            false => {
                for (name, path) in &configured {
                    crate::baselines::check_baseline_path(name, path)?;
                }
                BTreeMap::new()
            }
            true => configured
                .par_iter()
                .map(|(name, path)| {
                    let detail = options.baseline_detail;
                    let baseline = match options.parsed_baselines {
                        Some(parsed) => parsed.load(source, name, path, detail)?,
                        None => Arc::new(load_baseline(source, name, path, detail)?),
                    };
                    Ok(((*name).to_owned(), baseline))
                })
                .collect::<Vec<Result<_>>>()
                .into_iter()
                // The first suite's error in config order, as when they were read in turn.
                .collect::<Result<BTreeMap<_, _>>>()?,
        };
        Ok(Some(Project {
            config,
            lock: lock?,
            suites: suites?,
            skills,
            source: source.describe(),
            mcp,
            graders,
            baselines,
            workdir: None,
            rebaseline_reasons: Vec::new(),
            former_identities: Vec::new(),
            former_rules: BTreeMap::new(),
        }))
    }

    /// Every subject this snapshot holds (each case of each suite, each skill), for
    /// reports that count what passed as well as what failed.
    pub fn subjects(&self) -> Vec<Subject> {
        let cases = self.suites.iter().flat_map(|suite| {
            suite
                .cases()
                .map(|case| Subject::case(&suite.name, &case.id))
        });
        let servers = self.mcp.servers.iter().map(crate::mcp::Server::subject);
        cases.chain(self.skill_subjects()).chain(servers).collect()
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

    /// What the EL1xx rules read of this snapshot.
    pub fn cases_side(&self) -> crate::cases::rules::Side<'_> {
        crate::cases::rules::Side {
            suites: &self.suites,
            lock: self.lock.as_ref(),
            source: &self.source,
            former: &self.former_identities,
        }
    }

    /// What the EL2xx rules read of this snapshot.
    pub fn skills_side(&self) -> crate::skills::rules::Side<'_> {
        crate::skills::rules::Side {
            skills: &self.skills,
            config: self.config.skills.as_ref(),
            lock: self.lock.as_ref(),
            source: &self.source,
        }
    }

    /// What the EL6xx rules read of this snapshot.
    pub fn mcp_side(&self) -> crate::mcp::rules::Side<'_> {
        crate::mcp::rules::Side {
            mcp: &self.mcp,
            config: self.config.mcp.as_ref(),
            lock: self.lock.as_ref(),
            source: &self.source,
        }
    }

    /// What the EL3xx rules read of this snapshot.
    pub fn graders_side(&self) -> crate::graders::rules::Side<'_> {
        crate::graders::rules::Side {
            config: &self.config,
            graders: &self.graders,
            suites: &self.suites,
            lock: self.lock.as_ref(),
            source: &self.source,
        }
    }

    /// How a check grades with a command grader: in the project's folder, under the
    /// suite's policy; `None` when this project has no folder to run in (a revision).
    pub fn command_grader(&self) -> Option<Box<CommandGrader<'_>>> {
        let workdir = self.workdir.as_deref()?;
        Some(Box::new(move |suite, grader, case, completion| {
            let policy = crate::run::process_policy(&self.config, suite, workdir);
            crate::run::grade(grader, case, completion, &policy).is_ok_and(|grade| grade.pass)
        }))
    }

    /// What the EL4xx rules read of this snapshot.
    pub fn baselines_side(&self) -> crate::baselines::rules::Side<'_> {
        crate::baselines::rules::Side {
            config: &self.config,
            graders: &self.graders,
            suites: &self.suites,
            baselines: &self.baselines,
            rebaseline_reasons: &self.rebaseline_reasons,
            source: &self.source,
        }
    }

    /// Says on each case finding of a suite that identifies its cases other than by their
    /// `id` which rule it uses: an identity field edited reads as a removed case.
    pub fn name_identities(&self, findings: &mut [Finding]) {
        use crate::rules::RuleId;
        for finding in findings.iter_mut().filter(|finding| {
            matches!(
                finding.rule,
                RuleId::CaseUnlocked
                    | RuleId::CaseEditedInPlace
                    | RuleId::CaseRemoved
                    | RuleId::DuplicateCaseId
                    | RuleId::MalformedCase
            )
        }) {
            let Some(suite) = finding.subject.suite.as_deref() else {
                continue;
            };
            let Some(config) = self.config.suite(suite) else {
                continue;
            };
            let identity = crate::cases::identity::Identity::of(config);
            let former = self.former_rules.get(suite).filter(|_| {
                matches!(
                    finding.rule,
                    RuleId::CaseEditedInPlace | RuleId::CaseRemoved
                )
            });
            let note = match former {
                Some(former) => format!(
                    " (suite `{suite}` now identifies cases by {}, and is compared with the base by its former rule, {})",
                    identity.describe(),
                    former.describe()
                ),
                None if identity == crate::cases::identity::Identity::Member => continue,
                None => format!(
                    " (suite `{suite}` identifies cases by {})",
                    identity.describe()
                ),
            };
            if !finding.message.ends_with(&note) {
                finding.message.push_str(&note);
            }
            if let (RuleId::CaseRemoved, crate::cases::identity::Identity::Content(_)) =
                (finding.rule, &identity)
            {
                finding.help.push_str(
                    "; an edit to an identity field makes another case: keep the old record, retired, beside the new one",
                );
            }
        }
    }

    /// Names the suite's prompt files on each finding a prompt edit explains (see
    /// [`crate::rules::RuleId::explained_by_prompt`]): a review places it on the prompt's change when
    /// the case's own lines did not move.
    pub fn relate_prompts(&self, findings: &mut [Finding]) {
        for finding in findings
            .iter_mut()
            .filter(|finding| finding.rule.explained_by_prompt())
        {
            let Some(suite) = finding
                .subject
                .suite
                .as_deref()
                .and_then(|suite| self.config.suite(suite))
            else {
                continue;
            };
            for prompt in suite.prompt_paths() {
                finding.related.push(crate::finding::Related {
                    kind: crate::finding::RelatedKind::Prompt,
                    location: crate::finding::Location::file(prompt),
                });
            }
        }
    }

    pub fn suite(&self, name: &str) -> Option<&SuiteModel> {
        self.suites.iter().find(|suite| suite.name == name)
    }

    /// For each suite whose identity rule (`id`) changed since `base`, its cases as the
    /// base's rule identifies them, so that moving a suite to explicit ids (or to another
    /// rule) is compared with the base case by case instead of every case looking removed:
    /// a record is the same case when the base's rule gives it the same identity. A suite
    /// some of whose records the base's rule cannot identify is compared as it is.
    pub fn identify_as_base(&mut self, source: &dyn ContentSource, base: &Project) -> Result<()> {
        use crate::cases::identity::Identity;
        for suite in &self.config.suites {
            let Some(base_suite) = base
                .config
                .suites
                .iter()
                .find(|base_suite| base_suite.name() == suite.name())
            else {
                continue;
            };
            if Identity::of(suite) == Identity::of(base_suite) {
                continue;
            }
            let Some(current) = self.suites.iter().find(|model| model.name == suite.name()) else {
                continue;
            };
            let identity = Identity::Former {
                now: Box::new(Identity::of(suite)),
                then: Box::new(Identity::of(base_suite)),
            };
            let how = crate::cases::load::HowToLoad {
                detail: detail_for_suite(&self.config, suite, CaseDetail::Summary),
                identity: &identity,
                parsed_files: None,
                folders: &crate::source::ListedFolders::default(),
            };
            let former = crate::cases::load::load_suite_as(source, suite, &how)?;
            if former.problems().count() <= current.problems().count() {
                self.former_identities.push(former);
                self.former_rules
                    .insert(suite.name().to_owned(), Identity::of(base_suite));
            }
        }
        Ok(())
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
        crate::graders::sources::grader_for(&self.config, &self.graders, suite)
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
        for server in &self.mcp.servers {
            lock.mcp
                .entry(server.config.clone())
                .or_default()
                .insert(server.name.clone(), self.mcp.lock_entry(server));
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
