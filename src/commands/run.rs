//! `evalock run`: every selected case (and sample) through the suite's completer, graded,
//! compared with its baseline; a results file and a report of findings.

use crate::baselines::rules as baselines;
use crate::cases::suite::SuiteModel;
use crate::cases::Case;
use crate::commands::project::{LoadOptions, Project};
use crate::error::{Error, Result};
use crate::finding::{sort_findings, Finding};
use crate::graders::rules::{self as graders, active_cases};
use crate::graders::{Grader, Normalizer};
use crate::report::Report;
use crate::run::assess::{assess, baseline_ref, unjudged_result, CaseRun, SampleOutcome};
use crate::run::completer::{self, CompletionsFile, SuiteContext};
use crate::run::completer_files::completer_files;
use crate::run::process::ProcessPolicy;
use crate::run::process_policy;
use crate::run::results::{CaseResult, Results, RESULTS_SCHEMA};
use crate::run::shard::{run_identity, Shard, ShardRecord};
use crate::source::atomic::write_atomic;
use crate::source::{ContentSource, GitRepo, WorktreeSource};
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// The most completers `run` starts at once (`--jobs`): completers wait on a model, so more
/// than the CPUs can pay off, but each worker is a thread that sweeps its own orphaned
/// processes, and past this the sweeping costs more than the waiting saves.
pub const MAX_JOBS: usize = 256;

#[derive(Debug, Clone)]
pub struct RunOptions {
    pub project_root: PathBuf,
    /// Suites to run; empty runs all of them.
    pub suites: Vec<String>,
    /// Grade completions from this JSONL file instead of running completers.
    pub completions: Option<PathBuf>,
    /// Completers at once, 1 to [`MAX_JOBS`] (anything else is brought into that range).
    pub jobs: usize,
    /// Samples per case when the case sets no `n` (else the suite's `samples`, else 1).
    pub samples: Option<u32>,
    /// Where the results file goes.
    pub out: PathBuf,
    pub fail_on_diff: bool,
    /// Run only the cases (and report only the findings) of this shard.
    pub shard: Option<Shard>,
    /// Run the same version this many times (1: once) for flip rates and the noise floor.
    pub repeat: u32,
}

/// What a run did.
#[derive(Debug)]
pub struct RunOutcome {
    pub report: Report,
    pub results: Results,
    pub results_path: PathBuf,
}

/// Progress of a run, for a progress bar.
#[derive(Debug, Clone)]
pub struct Progress<'a> {
    pub done: usize,
    pub total: usize,
    pub label: &'a str,
}

/// One completion to obtain and grade.
struct Job<'a> {
    suite: &'a PlannedSuite<'a>,
    case: &'a Case,
    sample: u32,
    label: String,
}

struct PlannedSuite<'a> {
    model: &'a SuiteModel,
    context: SuiteContext,
    grader: Grader,
    normalizer: Normalizer,
    policy: ProcessPolicy,
    completer: Option<Vec<String>>,
}

pub fn run(options: &RunOptions, progress: &(dyn Fn(Progress<'_>) + Sync)) -> Result<RunOutcome> {
    super::refuse_project_file("--out", &options.project_root, &options.out)?;
    let source = WorktreeSource::new(&options.project_root);
    // Only what is run costs: with --suite the other suites' cases, lock entries and
    // baselines are not read, and no run reads skills or tool servers. A shard's identity
    // covers the whole lock, so a sharded run loads every suite.
    let named: BTreeSet<String> = options.suites.iter().cloned().collect();
    let load = LoadOptions {
        only_suites: (!named.is_empty() && options.shard.is_none()).then_some(&named),
        read_skills_and_servers: false,
        ..LoadOptions::default()
    };
    let project =
        Project::load_required(&source, &load)?.with_workdir(options.project_root.clone());
    let selected = select_suites(&project, &options.suites)?;
    // Before any completer runs: a results path that cannot be written would otherwise
    // throw the whole run away at its end.
    crate::source::atomic::require_file_destination(&options.project_root.join(&options.out))?;
    let full = options.suites.is_empty();
    let completions_bytes = match &options.completions {
        Some(path) => {
            let display = path.display().to_string();
            let bytes = std::fs::read(path).map_err(|error| Error::io(&display, error))?;
            Some((display, bytes))
        }
        None => None,
    };
    let completions = match &completions_bytes {
        Some((display, bytes)) => Some(match completions_for(&project, display, bytes) {
            // A line without a suite may name a case of a suite this run did not load:
            // only the whole project tells it from a typo.
            Err(_) if project.suites.len() < project.config.suites.len() => {
                completions_for(&Project::load(&source)?, display, bytes)?
            }
            other => other?,
        }),
        None => None,
    };
    let shard = match options.shard {
        Some(shard) => Some(ShardRecord {
            index: shard.index,
            count: shard.count,
            identity: run_identity(
                &project.to_lock(),
                &project.baselines,
                &source,
                completions_bytes
                    .as_ref()
                    .map(|(_, bytes)| bytes.as_slice()),
                options.samples,
            )?,
        }),
        None => None,
    };
    let planned = plan_suites(
        &project,
        &source,
        &selected,
        completions.is_some(),
        &options.project_root,
    )?;
    let commit = head_commit(&options.project_root);

    let owned = |suite: &str, case: &Case| {
        options
            .shard
            .is_none_or(|shard| shard.owns_case(suite, &case.id))
    };
    let jobs = plan_jobs(
        &project,
        &planned,
        options.samples,
        completions.as_ref(),
        &owned,
    );
    // Read before any completer starts: the scripts as they were when the run began.
    let sources = completion_sources(
        &project,
        &selected,
        completions.is_some(),
        options.samples,
        &options.project_root,
    );
    let outcomes = run_jobs(&jobs, options.jobs, completions.as_ref(), progress)?;

    let (mut cases, mut findings) = assemble(&project, &planned, &jobs, outcomes, &owned);
    let mut noise = BTreeMap::new();
    if options.repeat > 1 {
        if options.shard.is_some() {
            return Err(Error::Usage(
                "--repeat measures a whole suite's noise: run it without --shard".to_owned(),
            ));
        }
        let mut repeats = vec![cases.clone()];
        for _ in 1..options.repeat {
            let outcomes = run_jobs(&jobs, options.jobs, completions.as_ref(), progress)?;
            repeats.push(assemble(&project, &planned, &jobs, outcomes, &owned).0);
        }
        noise = judge_noise(
            &mut cases,
            &mut findings,
            &repeats,
            project.config.policy.flaky_max,
        );
    }
    findings.extend(static_findings(&project, &selected, full));
    findings.extend(crate::commands::calibration_pins::run(
        &project, &source, &selected,
    ));
    // A shard holds part of each stratum: the merged results are judged whole.
    if options.shard.is_none() {
        findings.extend(crate::run::strata::ceiling_findings(
            &cases,
            project.config.policy.stretch_high,
        ));
    }
    crate::gate::apply_severities(&mut findings, &project.config);
    graders::drop_outranked(&mut findings);
    if let Some(shard) = options.shard {
        findings.retain(|finding| shard.owns_finding(finding));
    }
    project.relate_prompts(&mut findings);
    project.name_identities(&mut findings);
    sort_findings(&mut findings);
    let fail_on_diff = options.fail_on_diff || project.config.policy.fail_on_diff;
    let results = Results {
        schema: RESULTS_SCHEMA.into(),
        evalock_version: env!("CARGO_PKG_VERSION").into(),
        source: project.source.clone(),
        commit,
        full,
        fail_on_diff,
        stretch_high: project.config.policy.stretch_high,
        shard,
        suites: selected.iter().cloned().collect(),
        completions: sources,
        counts: Results::count(&cases),
        strata: crate::run::strata::rates(&cases),
        noise,
        cases,
        findings,
    };
    let results_path = options.project_root.join(&options.out);
    write_atomic(&results_path, results.render().as_bytes())?;
    let report = Report::of_run(&results);
    Ok(RunOutcome {
        report,
        results,
        results_path,
    })
}

/// Flip rates over the repeats: a case past `flaky_max` is flaky (EL511) and its outcome
/// findings become notes; each suite's noise floor from the first two repeats.
fn judge_noise(
    cases: &mut [CaseResult],
    findings: &mut Vec<Finding>,
    repeats: &[Vec<CaseResult>],
    flaky_max: f64,
) -> BTreeMap<String, crate::run::noise::SuiteNoise> {
    use crate::rules::{RuleId, Severity};
    let rates = crate::run::noise::flip_rates(repeats);
    let mut flaky: BTreeMap<String, usize> = BTreeMap::new();
    let mut flaky_cases = BTreeSet::new();
    for case in cases.iter_mut() {
        let Some(rate) = rates
            .get(&(case.suite.clone(), case.case_id.clone()))
            .copied()
        else {
            continue;
        };
        case.flip_rate = Some(rate);
        if rate > flaky_max {
            *flaky.entry(case.suite.clone()).or_default() += 1;
            flaky_cases.insert((case.suite.clone(), case.case_id.clone()));
            findings.push(
                Finding::new(
                    RuleId::CaseFlaky,
                    crate::finding::Subject::case(&case.suite, &case.case_id),
                    format!(
                        "case `{}` ({}:{}) flipped in {:.0} % of {} repeats (flaky_max {}): its verdict does not move the gate until it is fixed",
                        case.case_id,
                        case.file,
                        case.line,
                        rate * 100.0,
                        repeats.len(),
                        flaky_max
                    ),
                )
                .at(crate::finding::Location::span(&case.file, case.line, case.end_line)),
            );
        }
    }
    for finding in findings.iter_mut().filter(|finding| {
        finding.rule.explained_by_prompt()
            && finding.severity > Severity::Note
            && match (&finding.subject.suite, &finding.subject.case) {
                (Some(suite), Some(case)) => {
                    flaky_cases.contains(&(suite.to_string(), case.clone()))
                }
                _ => false,
            }
    }) {
        finding.severity = Severity::Note;
        finding
            .message
            .push_str(" (flaky over --repeat: not gating)");
    }
    match repeats {
        [first, second, ..] => crate::run::noise::noise_floor(first, second, repeats.len(), &flaky),
        _ => BTreeMap::new(),
    }
}

/// A `--completions FILE` read against the project: a suite or case the project does not
/// have is refused, so a typo is not silently an ERROR for every case.
fn completions_for(project: &Project, display: &str, bytes: &[u8]) -> Result<CompletionsFile> {
    if let Some(found) = crate::run::foreign::read(display, bytes) {
        let (runner, results) = found?;
        return foreign_completions(project, display, runner, &results);
    }
    let file = CompletionsFile::parse(display, bytes)?;
    file.refuse_unknown_suites(|name| project.config.suite(name).is_some())?;
    // A case file that could not be read whole (EL105) may hold the id: not refused. Nor
    // may a case of a suite `run --suite` did not load: it is not run here.
    let loaded = |name: &str| project.suites.iter().any(|suite| suite.name == name);
    file.refuse_unknown_cases(|name, case_id| {
        if !name.is_empty() && !loaded(name) {
            return true;
        }
        project
            .suites
            .iter()
            .filter(|suite| name.is_empty() || suite.name == name)
            .any(|suite| suite.case(case_id).is_some() || suite.problems().next().is_some())
    })?;
    Ok(file)
}

/// Another runner's results matched to the cases of the loaded suites by each suite's
/// identity rule. A result that matches no case is refused, naming what each suite would
/// call it, as a completions line naming an unknown case is.
fn foreign_completions(
    project: &Project,
    display: &str,
    runner: crate::run::foreign::Runner,
    results: &[crate::run::foreign::ForeignResult],
) -> Result<CompletionsFile> {
    use crate::cases::identity::Identity;
    let identities: Vec<(&SuiteModel, Identity)> = project
        .suites
        .iter()
        .filter_map(|suite| Some((suite, Identity::of(project.config.suite(&suite.name)?))))
        .collect();
    let mut matched = Vec::new();
    for result in results {
        let mut tried = Vec::new();
        for (suite, identity) in &identities {
            match crate::run::foreign::case_id(result, identity) {
                Ok(case_id) if suite.case(&case_id).is_some() => {
                    matched.push((suite.name.to_string(), case_id, result.completion.clone()))
                }
                Ok(case_id) => tried.push(format!(
                    "suite `{}` ({}) would call it `{case_id}` and holds no such case",
                    suite.name,
                    identity.describe()
                )),
                Err(why) => tried.push(format!(
                    "suite `{}` ({}) cannot name it: {why}",
                    suite.name,
                    identity.describe()
                )),
            }
        }
        // Every suite tried and none holds the case.
        if tried.len() == identities.len() {
            let why = match tried.is_empty() {
                true => "no suite is loaded".to_owned(),
                false => tried.join("; "),
            };
            return Err(Error::malformed(
                format!("{display}: {}", result.at),
                format!(
                    "{} result matches no case: {why}; correct the suite's `id` rule, or run the runner on the cases evalock locks",
                    runner.name()
                ),
            ));
        }
    }
    Ok(CompletionsFile::from_matched(display, matched))
}

/// Every job on `jobs` workers (1 to [`MAX_JOBS`]), in the jobs' order whatever order
/// they finish in, reporting progress as each one ends.
fn run_jobs(
    jobs: &[Job],
    jobs_at_once: usize,
    completions: Option<&CompletionsFile>,
    progress: &(dyn Fn(Progress<'_>) + Sync),
) -> Result<Vec<SampleOutcome>> {
    let done = AtomicUsize::new(0);
    let workers = jobs_at_once.clamp(1, MAX_JOBS);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(workers)
        .build()
        .map_err(|error| Error::Internal(format!("cannot start {workers} workers: {error}")))?;
    Ok(pool.install(|| {
        jobs.par_iter()
            .map(|job| {
                let outcome = run_job(job, completions);
                let finished = done.fetch_add(1, Ordering::Relaxed) + 1;
                progress(Progress {
                    done: finished,
                    total: jobs.len(),
                    label: &job.label,
                });
                outcome
            })
            .collect()
    }))
}

/// What produced each selected suite's completions, for the results file: `accept`
/// refuses results of a completer that is no longer configured, or whose script files
/// (named on its argv, resolved in `workdir` where it runs) changed since.
fn completion_sources(
    project: &Project,
    selected: &BTreeSet<String>,
    from_file: bool,
    samples: Option<u32>,
    workdir: &std::path::Path,
) -> std::collections::BTreeMap<String, String> {
    selected
        .iter()
        .filter_map(|name| {
            let config = project.config.suite(name)?;
            let files = match (&config.completer, from_file) {
                (Some(argv), false) => completer_files(argv, workdir),
                _ => Vec::new(),
            };
            let source = completer::completion_source(config, from_file, samples, &files);
            Some((name.clone(), source))
        })
        .collect()
}

fn select_suites(project: &Project, names: &[String]) -> Result<BTreeSet<String>> {
    let known: BTreeSet<String> = project
        .config
        .suites
        .iter()
        .map(|suite| suite.name().to_owned())
        .collect();
    if names.is_empty() {
        if known.is_empty() {
            return Err(super::no_suite_to("run"));
        }
        return Ok(known);
    }
    for name in names {
        if !known.contains(name) {
            let list: Vec<&str> = known.iter().map(String::as_str).collect();
            return Err(Error::Usage(format!(
                "no suite `{name}` in evalock.toml (suites: {})",
                list.join(", ")
            )));
        }
    }
    Ok(names.iter().cloned().collect())
}

fn plan_suites<'p>(
    project: &'p Project,
    source: &dyn ContentSource,
    selected: &BTreeSet<String>,
    have_completions: bool,
    workdir: &std::path::Path,
) -> Result<Vec<PlannedSuite<'p>>> {
    let mut planned = Vec::new();
    for model in project
        .suites
        .iter()
        .filter(|suite| selected.contains(&suite.name))
    {
        let Some(config) = project.config.suite(&model.name) else {
            continue;
        };
        if config.completer.is_none() && !have_completions {
            return Err(Error::Usage(format!(
                "suite `{}` has no `completer`: set `completer = [\"python3\", \"…\"]` in its [[suite]] table, or pass --completions FILE",
                model.name
            )));
        }
        let mut prompt_texts = Vec::new();
        for prompt in &model.prompts {
            if let Some(bytes) = source.read(&prompt.path)? {
                prompt_texts.push(String::from_utf8_lossy(&bytes).into_owned());
            }
        }
        let context = SuiteContext {
            suite: model.name.clone(),
            prompt: (!prompt_texts.is_empty()).then(|| prompt_texts.join("\n")),
            prompt_digest: model.prompt_digest().map(|digest| digest.to_string()),
            model: config.model.clone(),
        };
        planned.push(PlannedSuite {
            model,
            context,
            grader: project.grader_for(&model.name),
            normalizer: Normalizer::parse(&config.normalizer).unwrap_or(Normalizer::Exact),
            policy: process_policy(&project.config, &model.name, workdir),
            completer: config.completer.clone(),
        });
    }
    Ok(planned)
}

/// Cases whose grader pin is stale (EL302) are not run: they would be scored against a
/// retired contract.
fn runnable(grader: &Grader, case: &Case) -> bool {
    case.grader_version
        .as_deref()
        .is_none_or(|pinned| pinned == grader.version)
}

fn sample_count(
    project: &Project,
    suite: &PlannedSuite<'_>,
    case: &Case,
    samples: Option<u32>,
) -> u32 {
    let configured = project
        .config
        .suite(&suite.model.name)
        .and_then(|config| config.samples());
    case.value()
        .get("n")
        .and_then(|n| n.as_u64())
        .map(|n| n as u32)
        .or(samples)
        .or(configured)
        .unwrap_or(1)
        .max(1)
}

fn plan_jobs<'a>(
    project: &Project,
    planned: &'a [PlannedSuite<'a>],
    samples: Option<u32>,
    completions: Option<&CompletionsFile>,
    owned: &dyn Fn(&str, &Case) -> bool,
) -> Vec<Job<'a>> {
    let mut jobs = Vec::new();
    for suite in planned {
        for case in active_cases(suite.model)
            .filter(|case| owned(&suite.model.name, case) && runnable(&suite.grader, case))
        {
            let count = match completions {
                Some(file) => (file.completions(&suite.model.name, &case.id).len() as u32).max(1),
                None => sample_count(project, suite, case, samples),
            };
            for sample in 0..count {
                let label = if count > 1 {
                    format!("{}/{} #{sample}", suite.model.name, case.id)
                } else {
                    format!("{}/{}", suite.model.name, case.id)
                };
                jobs.push(Job {
                    suite,
                    case,
                    sample,
                    label,
                });
            }
        }
    }
    jobs
}

fn run_job(job: &Job<'_>, completions: Option<&CompletionsFile>) -> SampleOutcome {
    let started = Instant::now();
    let suite = job.suite;
    let completion = match completions {
        Some(file) => file
            .completions(&suite.model.name, &job.case.id)
            .get(job.sample as usize)
            .cloned()
            .ok_or_else(|| {
                format!(
                    "no completion for case `{}` in {}",
                    job.case.id, file.display
                )
            }),
        None => match &suite.completer {
            Some(argv) => completer::complete(
                argv,
                &completer::request(&suite.context, job.case, job.sample),
                &suite.policy,
            ),
            None => Err("the suite has no completer".into()),
        },
    };
    let outcome = completion.and_then(|completion| {
        let grade = crate::run::grade(&suite.grader, job.case.value(), &completion, &suite.policy)?;
        Ok((grade, suite.normalizer.normalize(&completion)))
    });
    SampleOutcome {
        sample: job.sample,
        outcome,
        duration: started.elapsed(),
    }
}

/// Groups sample outcomes by case (jobs are in case order) and judges each case.
fn assemble(
    project: &Project,
    planned: &[PlannedSuite<'_>],
    jobs: &[Job<'_>],
    outcomes: Vec<SampleOutcome>,
    owned: &dyn Fn(&str, &Case) -> bool,
) -> (Vec<CaseResult>, Vec<Finding>) {
    let mut cases = Vec::new();
    let mut findings = Vec::new();
    let mut outcomes = outcomes.into_iter().zip(jobs.iter()).peekable();
    for suite in planned {
        for case in active_cases(suite.model).filter(|case| owned(&suite.model.name, case)) {
            let context = baselines::current_context(&project.baselines_side(), suite.model, case);
            if !runnable(&suite.grader, case) {
                cases.push(not_run(suite, case, context));
                continue;
            }
            let mut samples = Vec::new();
            while let Some((outcome, _)) = outcomes.next_if(|(_, job)| std::ptr::eq(job.case, case))
            {
                samples.push(outcome);
            }
            let agreement_min = case
                .value()
                .get("agreement_min")
                .and_then(serde_json::Value::as_f64)
                .filter(|min| (0.0..=1.0).contains(min))
                .unwrap_or(project.config.policy.agreement_min);
            let (result, case_findings) = assess(CaseRun {
                suite: &suite.model.name,
                case,
                context,
                samples,
                baseline: baseline_ref(&project.baselines_side(), suite.model, case),
                agreement_min,
                slack: suite_slack(&project.config, &suite.model.name),
                grader: &suite.grader.program,
            });
            cases.push(result);
            findings.extend(case_findings);
        }
    }
    cases.sort_by(|left, right| (&left.suite, &left.case_id).cmp(&(&right.suite, &right.case_id)));
    (cases, findings)
}

/// The envelope slack of `suite`: its `envelope` over the defaults.
fn suite_slack(
    config: &crate::project::config::Config,
    suite: &str,
) -> crate::run::envelope::Slack {
    let defaults = crate::run::envelope::Slack::default();
    let written = config
        .suite(suite)
        .and_then(|suite| suite.envelope)
        .unwrap_or_default();
    crate::run::envelope::Slack {
        size: written.size_or_default(),
        latency: written.time_or_default(),
        ..defaults
    }
}

fn not_run(
    suite: &PlannedSuite<'_>,
    case: &Case,
    context: crate::baselines::BaselineContext,
) -> CaseResult {
    CaseResult {
        reasons: vec![format!(
            "grader_version_drift:{}!={}",
            case.grader_version.as_deref().unwrap_or_default(),
            suite.grader.version
        )],
        ..unjudged_result(&suite.model.name, case, context)
    }
}

/// What holds without running: the selected suites' cases and prompts against the lock,
/// their graders, and their baselines.
fn static_findings(project: &Project, selected: &BTreeSet<String>, full: bool) -> Vec<Finding> {
    let mut findings: Vec<Finding> = crate::cases::rules::check(&project.cases_side(), None)
        .into_iter()
        .filter(|finding| {
            finding
                .subject
                .suite
                .as_deref()
                .is_none_or(|suite| selected.contains(suite))
        })
        .collect();
    // Probes and negative controls (EL303/EL304) belong to `check`; a run judges completions.
    let side = project.graders_side();
    findings.extend(graders::graders_unversioned(&side, None));
    for suite in project
        .suites
        .iter()
        .filter(|suite| selected.contains(&suite.name))
    {
        findings.extend(graders::grader_version_drift(&side, suite));
    }
    findings.extend(baselines::check(
        &project.baselines_side(),
        None,
        selected,
        baselines::Scope {
            full,
            absent_file_is_missing: true,
        },
    ));
    findings
}

fn head_commit(root: &std::path::Path) -> Option<String> {
    let repo = GitRepo::discover(root).ok()?;
    repo.resolve_commit("HEAD").ok().map(|id| id.to_string())
}
