//! The pass rate of each suite and stratum along the first-parent history, from the
//! baselines each commit holds, and the run being reported as its last point
//! (`evalock report --trend N`); [`crate::report::trend`] draws it.

use crate::cases::load::ParsedFiles;
use crate::commands::project::{LoadOptions, Project};
pub use crate::report::trend::{SuiteTrend, Trend};
use crate::run::results::Results;
use std::collections::BTreeMap;
use std::path::Path;

/// The trend of the project at `project_root` over up to `commits` first-parent commits
/// from HEAD, then `run`. `None` outside a git repository or when no point has a rate.
pub fn trend(project_root: &Path, run: Option<&Results>, commits: usize) -> Option<Trend> {
    let repo = crate::source::GitRepo::discover(project_root).ok()?;
    let head = repo.resolve_commit("HEAD").ok()?;
    let mut history = repo.first_parents(head, commits).ok()?;
    history.reverse();
    let parsed_files = ParsedFiles::default();
    let parsed_baselines = crate::baselines::ParsedBaselines::default();
    // Baselines and the cases' strata are all a point needs: no lock, skills or servers.
    let options = LoadOptions {
        read_lock: false,
        parsed_files: Some(&parsed_files),
        parsed_baselines: Some(&parsed_baselines),
        baseline_detail: crate::baselines::BaselineDetail::Digests,
        read_skills_and_servers: false,
        ..LoadOptions::default()
    };
    let mut points = Vec::new();
    let mut sides: Vec<Counts> = Vec::new();
    for id in history {
        let short = id.to_string()[..7].to_owned();
        let rates = repo
            .commit_source(id, short.clone())
            .ok()
            .and_then(|source| Project::load_with_options(&source, &options).ok().flatten())
            .map(|project| baseline_counts(&project))
            .unwrap_or_default();
        points.push(short);
        sides.push(rates);
    }
    if let Some(run) = run {
        points.push("this run".to_owned());
        sides.push(run_counts(run));
    }
    let mut suites: BTreeMap<String, SuiteTrend> = BTreeMap::new();
    for (index, counts) in sides.iter().enumerate() {
        for ((suite, stratum), (passed, judged)) in counts {
            let rate = (*judged > 0).then(|| 100.0 * *passed as f64 / *judged as f64);
            let trend = suites.entry(suite.clone()).or_default();
            let line = match stratum {
                None => &mut trend.rates,
                Some(stratum) => trend.strata.entry(stratum.clone()).or_default(),
            };
            line.resize(index, None);
            line.push(rate);
        }
    }
    for trend in suites.values_mut() {
        trend.rates.resize(points.len(), None);
        for line in trend.strata.values_mut() {
            line.resize(points.len(), None);
        }
    }
    (!suites.is_empty()).then_some(Trend { points, suites })
}

type Counts = BTreeMap<(String, Option<String>), (usize, usize)>;

/// Counts one judged case for its suite, and for its stratum when it has one.
fn count(counts: &mut Counts, suite: &str, stratum: Option<&str>, passed: bool) {
    let mut add = |key: Option<String>| {
        let entry = counts.entry((suite.to_owned(), key)).or_default();
        entry.0 += usize::from(passed);
        entry.1 += 1;
    };
    add(None);
    if let Some(stratum) = stratum {
        add(Some(stratum.to_owned()));
    }
}

/// Passing and judged entries of each suite's baseline, by stratum too.
fn baseline_counts(project: &Project) -> Counts {
    let mut counts = Counts::new();
    for (suite, baseline) in &project.baselines {
        let Some(entries) = baseline.entries() else {
            continue;
        };
        let model = project.suite(suite);
        for (case_id, entry) in entries {
            let stratum = model
                .and_then(|model| model.case(case_id))
                .and_then(|case| {
                    case.value()
                        .get("stratum")
                        .and_then(serde_json::Value::as_str)
                        .map(str::to_owned)
                });
            count(&mut counts, suite, stratum.as_deref(), entry.passed);
        }
    }
    counts
}

/// Passing and judged cases of a run (errors are not judged).
fn run_counts(run: &Results) -> Counts {
    let mut counts = Counts::new();
    for case in &run.cases {
        if case.status == crate::run::results::Status::Error {
            continue;
        }
        count(
            &mut counts,
            &case.suite,
            case.stratum.as_deref(),
            case.status.is_passing(),
        );
    }
    counts
}
