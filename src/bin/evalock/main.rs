//! The evalock binary: parses arguments, calls the library, prints, and exits with the
//! documented code only after every destructor ran.

#![forbid(unsafe_code)]

mod args;
mod output;

use args::{Cli, Command};
use clap::Parser;
use evalock::commands;
use evalock::finding::exit_code;
use evalock::project::config::CONFIG_FILE;
use evalock::source::SourceSpec;
use std::path::{Path, PathBuf};

fn main() {
    let code = run();
    std::process::exit(code);
}

fn run() -> i32 {
    let mut cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            let code = match error.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    exit_code::CLEAN
                }
                _ => exit_code::USAGE,
            };
            let _ = error.print();
            return code;
        }
    };
    let printer = output::Printer::new(cli.color);
    match dispatch(&mut cli, &printer) {
        Ok(code) => code,
        Err(error) => {
            printer.error(&error.to_string());
            error.exit_code()
        }
    }
}

/// `-C DIR` works like `git -C`: evalock moves into DIR first, so every relative path on
/// the command line (`--output`, `--from`, `--completions`, `--out`) is read from there too.
fn enter_directory(cli: &Cli) -> evalock::Result<()> {
    let Some(directory) = &cli.directory else {
        return Ok(());
    };
    std::env::set_current_dir(directory)
        .map_err(|error| evalock::Error::Usage(format!("-C {}: {error}", directory.display())))
}

/// A command that works on a project finds it the way git finds its repository: when the
/// current folder has no evalock.toml, evalock moves to the nearest folder above that has
/// one, within the same git work tree. Paths given on the command line keep naming what
/// they named from where evalock started.
fn enter_project(command: &mut Command) -> evalock::Result<()> {
    let here_is_project = Path::new(CONFIG_FILE).symlink_metadata().is_ok();
    if here_is_project || !command.needs_project() {
        return Ok(());
    }
    let Ok(started) = std::env::current_dir() else {
        return Ok(());
    };
    let Some(project) = project_above(&started) else {
        return Ok(());
    };
    for path in command.started_relative_paths() {
        *path = rebase(path, &started, project);
    }
    std::env::set_current_dir(project)
        .map_err(|error| evalock::Error::Usage(format!("{}: {error}", project.display())))
}

/// `init` below an existing project would split it: every command started there would
/// then judge the new, nearly empty project instead of the one above.
fn refuse_a_project_inside_another(force: bool) -> evalock::Result<()> {
    if force || Path::new(CONFIG_FILE).symlink_metadata().is_ok() {
        return Ok(());
    }
    let Ok(here) = std::env::current_dir() else {
        return Ok(());
    };
    match project_above(&here) {
        Some(project) => Err(evalock::Error::Usage(format!(
            "{} already holds the project this folder belongs to: run evalock from anywhere below it, or pass --force to start a separate project here",
            project.join(CONFIG_FILE).display()
        ))),
        None => Ok(()),
    }
}

/// The nearest folder above `start` holding evalock.toml, provided it lies inside the git
/// work tree `start` is in (a stray evalock.toml above the repository is not a project).
fn project_above(start: &Path) -> Option<&Path> {
    let mut found = None;
    for folder in start.ancestors() {
        if found.is_none() && folder.join(CONFIG_FILE).symlink_metadata().is_ok() {
            found = Some(folder);
        }
        if folder.join(".git").symlink_metadata().is_ok() {
            return found;
        }
    }
    None
}

/// The project a command started in the current folder works on: this folder when it
/// holds evalock.toml, else the one [`enter_project`] moves to.
fn project_from_here() -> Option<PathBuf> {
    if Path::new(CONFIG_FILE).symlink_metadata().is_ok() {
        return Some(PathBuf::from("."));
    }
    let here = std::env::current_dir().ok()?;
    project_above(&here).map(Path::to_path_buf)
}

/// `path`, given from `started`, as seen from `project`: relative when it lies inside.
fn rebase(path: &Path, started: &Path, project: &Path) -> PathBuf {
    if path.is_absolute() {
        return path.to_path_buf();
    }
    let absolute = started.join(path);
    match absolute.strip_prefix(project) {
        Ok(inside) => inside.to_path_buf(),
        Err(_) => absolute,
    }
}

/// The results file a command names, else the project's own (`.evalock/results.json`).
fn results_path(given: Option<&PathBuf>) -> PathBuf {
    given
        .cloned()
        .unwrap_or_else(|| PathBuf::from(evalock::run::results::DEFAULT_RESULTS_PATH))
}

/// A report file left from an earlier run must not outlive a run that failed before
/// writing its own: a pipeline reading it would see the old verdict.
fn discard_stale_output(output: Option<&std::path::Path>) {
    if let Some(path) = output {
        if std::fs::symlink_metadata(path).is_ok_and(|metadata| metadata.is_file()) {
            let _ = std::fs::remove_file(path);
        }
    }
}

fn dispatch(cli: &mut Cli, printer: &output::Printer) -> evalock::Result<i32> {
    let started = std::env::current_dir().ok();
    enter_directory(cli)?;
    enter_project(&mut cli.command)?;
    if cli.command.needs_project() {
        if let (Some(started), Ok(project)) = (started, std::env::current_dir()) {
            printer.set_project_folder(&started, &project);
        }
    }
    let root = PathBuf::from(".");
    match &cli.command {
        Command::Init(init_args) => {
            refuse_a_project_inside_another(init_args.force)?;
            let outcome = commands::init(&root, init_args.force)?;
            printer.init_summary(&outcome);
            Ok(exit_code::CLEAN)
        }
        Command::Lock(lock_args) => lock(root, lock_args, printer),
        Command::Check(check_args) => check(root, check_args, printer),
        Command::Debt(debt_args) => {
            let outcome = commands::debt(&root)?;
            printer.debt(&outcome, debt_args.format)?;
            Ok(exit_code::CLEAN)
        }
        Command::Rules(rules_args) => {
            printer.rules(rules_args.rule.as_deref(), rules_args.markdown)?;
            Ok(exit_code::CLEAN)
        }

        // [skills] dispatch goes here.
        Command::Skills(args::SkillsCommand::Audit(audit_args)) => {
            let outcome = commands::skills_audit(&root, &audit_args.dirs)?;
            printer.skills_audit(&outcome);
            Ok(outcome.exit_code())
        }

        Command::Mcp(args::McpCommand::Audit(audit_args)) => {
            let outcome = commands::mcp_audit(&root, &audit_args.paths)?;
            printer.mcp_audit(&outcome);
            Ok(match outcome.failed() {
                true => exit_code::FAILURES,
                false => exit_code::CLEAN,
            })
        }

        // [run] dispatch goes here.
        Command::Run(run_args) => run_suites(root, run_args, printer),
        Command::Accept(accept_args) => accept(root, accept_args, printer),
        Command::Review(review_args) => {
            let from = results_path(review_args.from.as_ref());
            match review_args.format {
                args::ReviewFormat::Html => {
                    let review = commands::review::review_with_context(&root, &from)?;
                    let page = commands::review::html::render(&review);
                    match &review_args.output {
                        Some(path) => evalock::source::atomic::write_atomic(path, page.as_bytes())?,
                        None => printer.text(&page),
                    }
                }
                args::ReviewFormat::Human if review_args.output.is_some() => {
                    return Err(evalock::Error::Usage(
                        "review --output writes the HTML page: add `--format html`".to_owned(),
                    ))
                }
                args::ReviewFormat::Human => {
                    let items = commands::review(&root, &from)?;
                    printer.review(&items, &from);
                }
            }
            Ok(exit_code::CLEAN)
        }

        // [hook] dispatch goes here.
        Command::Hook(args::HookCommand::Install(install_args)) => {
            let options = commands::hook::InstallOptions {
                project_root: root,
                force: install_args.force,
                fallback_binary: std::env::current_exe().ok(),
            };
            printer.hook_outcome(&commands::hook::install(&options)?);
            Ok(exit_code::CLEAN)
        }
        Command::Hook(args::HookCommand::Uninstall) => {
            printer.hook_outcome(&commands::hook::uninstall(&root)?);
            Ok(exit_code::CLEAN)
        }

        // [github] dispatch goes here.
        Command::Report(report_args) => report(&root, report_args, printer),
        Command::Github(github_args) => github(root, github_args, printer),
        // [scale] dispatch goes here.
        Command::Merge(merge_args) => merge(merge_args, printer),
        Command::Compare(compare_args) => compare(compare_args, printer),
        Command::Changelog(changelog_args) => changelog(&root, changelog_args, printer),
        Command::Calibrate(calibrate_args) => {
            let outcomes = commands::calibrate::calibrate(
                &root,
                &commands::calibrate::CalibrateOptions {
                    suite: calibrate_args.suite.as_deref(),
                    grader: calibrate_args.grader.as_deref(),
                    labels: calibrate_args.labels.as_deref(),
                },
            )?;
            printer.calibration(&outcomes, calibrate_args.format)?;
            let calibrated = outcomes
                .iter()
                .all(|outcome| outcome.calibration.below_floor.is_empty());
            Ok(match calibrated {
                true => exit_code::CLEAN,
                false => exit_code::FAILURES,
            })
        }
    }
}

fn lock(
    root: PathBuf,
    lock_args: &args::LockArgs,
    printer: &output::Printer,
) -> evalock::Result<i32> {
    let outcome = commands::lock(&root, lock_args.check, evalock::is_ci())?;
    printer.note_if_nothing_configured(&root);
    if outcome.pinned && lock_args.format == args::Format::Human {
        printer.lock_summary(&outcome);
    } else {
        printer.report(&outcome.report, lock_args.format, None)?;
        printer.lock_remaining(&outcome);
    }
    Ok(outcome.report.exit_code())
}

fn check(
    root: PathBuf,
    check_args: &args::CheckArgs,
    printer: &output::Printer,
) -> evalock::Result<i32> {
    if let Some(output) = &check_args.output {
        commands::refuse_project_file("--output", &root, output)?;
    }
    let source = match (&check_args.staged, &check_args.rev) {
        (true, _) => SourceSpec::Index,
        (false, Some(revision)) => SourceSpec::Revision(revision.clone()),
        (false, None) => SourceSpec::Worktree,
    };
    let options = commands::CheckOptions {
        project_root: root,
        source,
        base: check_args.base.clone(),
        cache: !check_args.no_cache,
        subjects: check_args.format.lists_subjects(),
    };
    let started = std::time::Instant::now();
    let checked = commands::check_explained(&options).inspect_err(|_| {
        discard_stale_output(check_args.output.as_deref());
    })?;
    let elapsed = started.elapsed();
    let report = checked.report;
    let report = match check_args.format {
        args::Format::Github | args::Format::Sarif => {
            report.with_path_prefix(&repository_prefix(&options.project_root))
        }
        _ => report,
    };
    printer.report(&report, check_args.format, check_args.output.as_deref())?;
    if check_args.verbose {
        printer.verbose(checked.shortcut.describe());
        printer.verbose(&format!("checked in {:.2} s", elapsed.as_secs_f64()));
    }
    // The pre-commit hook (`--staged`) stays as quiet as ever; a person running
    // `check` learns that its PASS looked at nothing.
    if options.source == SourceSpec::Worktree {
        printer.note_if_nothing_configured(&options.project_root);
    }
    Ok(report.exit_code())
}

/// The project's folder within its git work tree (`evals/`, or `""` at the top or outside
/// any repository): GitHub reads annotation and SARIF paths from the repository root.
fn repository_prefix(project_root: &Path) -> String {
    evalock::source::GitRepo::discover(project_root)
        .map(|repo| repo.prefix().to_owned())
        .unwrap_or_default()
}

/// `evalock run`, with a progress bar that is finished before anything else prints.
fn run_suites(
    root: PathBuf,
    run_args: &args::RunArgs,
    printer: &output::Printer,
) -> evalock::Result<i32> {
    let options = commands::RunOptions {
        project_root: root,
        suites: run_args.suites.clone(),
        completions: run_args.completions.clone(),
        jobs: run_args.jobs.unwrap_or_else(args::default_jobs),
        samples: run_args.samples,
        out: results_path(run_args.out.as_ref()),
        fail_on_diff: run_args.fail_on_diff,
        shard: run_args.shard,
        repeat: run_args.repeat,
    };
    let progress = printer.progress_bar();
    let outcome = commands::run(&options, &|step| {
        progress.update(step.done, step.total, step.label)
    });
    progress.finish();
    // run works in the project, so `accept` reads its results from there by default.
    print_run_outcome(&outcome?, run_args.format, Some(Path::new(".")), printer)
}

fn accept(
    root: PathBuf,
    accept_args: &args::AcceptArgs,
    printer: &output::Printer,
) -> evalock::Result<i32> {
    let options = commands::AcceptOptions {
        project_root: root,
        reason: accept_args.reason.clone(),
        suites: accept_args.suites.clone(),
        cases: accept_args.cases.clone(),
        from: results_path(accept_args.from.as_ref()),
        include_failing: accept_args.include_failing,
        ci: evalock::is_ci(),
    };
    let outcome = commands::accept(&options)?;
    if outcome.report.findings.is_empty() {
        printer.accept_summary(&outcome);
    } else {
        printer.report(&outcome.report, args::Format::Human, None)?;
    }
    Ok(outcome.report.exit_code())
}

fn report(
    root: &Path,
    report_args: &args::ReportArgs,
    printer: &output::Printer,
) -> evalock::Result<i32> {
    if let Some(output) = &report_args.output {
        commands::refuse_project_file("--output", root, output)?;
    }
    let report = read_saved_reports(&report_args.from).inspect_err(|_| {
        discard_stale_output(report_args.output.as_deref());
    })?;
    let mut report = match &report_args.path_prefix {
        Some(prefix) => report.with_path_prefix(prefix),
        None => report,
    };
    if let Some(commits) = report_args.trend {
        // The run's own rates are the last point: the first results file among `--from`.
        let run = report_args.from.iter().find_map(|path| {
            evalock::run::results::Results::read(path, &path.display().to_string()).ok()
        });
        report.trend = commands::trend::trend(root, run.as_ref(), commits).map(Box::new);
    }
    printer.report(&report, report_args.format, report_args.output.as_deref())?;
    Ok(exit_code::CLEAN)
}

fn github(
    root: PathBuf,
    github_args: &args::GithubArgs,
    printer: &output::Printer,
) -> evalock::Result<i32> {
    let report = read_saved_reports(&github_args.from)?;
    let mode = match github_args.mode {
        args::GithubMode::Review => evalock::github::Mode::Review,
        args::GithubMode::Summary => evalock::github::Mode::Summary,
        args::GithubMode::Annotations => evalock::github::Mode::Annotations,
    };
    let mut environment = evalock::github::Environment::from_env(&github_args.token_env);
    if let Some(event) = &github_args.event {
        environment = environment.for_pull_request_event(event);
    }
    let outcome =
        commands::github::github(&report, &root, mode, environment, &github_args.token_env);
    printer.github_outcome(&outcome);
    Ok(exit_code::CLEAN)
}

fn changelog(
    root: &std::path::Path,
    changelog_args: &args::ChangelogArgs,
    printer: &output::Printer,
) -> evalock::Result<i32> {
    use commands::changelog::{changelog, parse_range, Gate};
    let gates = Gate::parse_list(&changelog_args.fail_on).map_err(evalock::Error::Usage)?;
    let (from, to) = parse_range(&changelog_args.range)?;
    let changelog = changelog(root, &from, &to)?;
    printer.changelog(&changelog, changelog_args.format)?;
    let tripped = changelog.tripped(&gates);
    if !tripped.is_empty() {
        let names: Vec<&str> = tripped.iter().map(|gate| gate.as_str()).collect();
        printer.note(&format!("release gate: {} (--fail-on)", names.join(", ")));
        return Ok(exit_code::FAILURES);
    }
    Ok(exit_code::CLEAN)
}

fn compare(compare_args: &args::CompareArgs, printer: &output::Printer) -> evalock::Result<i32> {
    use evalock::run::compare::{compare, FailOn, Slack};
    let fail_on = FailOn::parse(&compare_args.fail_on).map_err(evalock::Error::Usage)?;
    for (flag, share) in [
        ("--size-slack", compare_args.size_slack),
        ("--latency-slack", compare_args.latency_slack),
    ] {
        if !(0.0..=100.0).contains(&share) {
            return Err(evalock::Error::Usage(format!(
                "{flag} is {share}: give a share of at least 0 (0.10 is +10 %)"
            )));
        }
    }
    let read = |path: &PathBuf| {
        let display = path.display().to_string();
        evalock::run::results::Results::read(path, &display).map(|results| (results, display))
    };
    let ((old, old_label), (new, new_label)) = match (&compare_args.base, compare_args.files.as_slice()) {
        (None, [old, new]) => (read(old)?, read(new)?),
        (None, _) => {
            return Err(evalock::Error::Usage(
                "compare needs OLD and NEW results files (`evalock compare old.json new.json`), or `--base REV` and at most NEW".to_owned(),
            ))
        }
        (Some(revision), files) if files.len() <= 1 => {
            let project = project_from_here().ok_or_else(|| {
                evalock::Error::Usage(format!(
                    "--base {revision} reads the project's baselines, and no evalock.toml is here or above: run it in the project"
                ))
            })?;
            let new = match files.first() {
                Some(path) => path.clone(),
                None => project.join(evalock::run::results::DEFAULT_RESULTS_PATH),
            };
            let old = commands::compare::baselines_as_results(&project, revision)?;
            let label = format!("baselines at {revision}");
            ((old, label), read(&new)?)
        }
        (Some(_), _) => {
            return Err(evalock::Error::Usage(
                "with --base, compare takes at most one results file: NEW".to_owned(),
            ))
        }
    };
    let slack = Slack {
        size: compare_args.size_slack,
        latency: compare_args.latency_slack,
        ..Slack::default()
    };
    let comparison = compare(&old, &new, &old_label, &new_label, slack);
    let code = comparison.exit_code(&fail_on);
    let findings_report = || {
        let root = project_from_here().unwrap_or_else(|| PathBuf::from("."));
        evalock::report::Report::new(
            "compare",
            new_label.clone(),
            Some(old_label.clone()),
            commands::compare::findings(&comparison, &root),
        )
    };
    if let Some(path) = &compare_args.findings {
        evalock::source::atomic::write_atomic(
            path,
            evalock::report::json::render(&findings_report()).as_bytes(),
        )?;
    }
    if compare_args.format == args::CompareFormat::Sarif {
        printer.text(&evalock::report::sarif::render(&findings_report()));
        return Ok(code);
    }
    printer.comparison(&comparison, compare_args.format, code)?;
    Ok(code)
}

fn merge(merge_args: &args::MergeArgs, printer: &output::Printer) -> evalock::Result<i32> {
    let options = commands::MergeOptions {
        inputs: merge_args.files.clone(),
        out: merge_args.out.clone(),
        fail_on_diff: merge_args.fail_on_diff,
    };
    let outcome = commands::merge(&options)?;
    // merge stays where it was started; `accept` started there moves to the project it
    // finds, and reads that project's results by default.
    let project = project_from_here();
    print_run_outcome(&outcome, merge_args.format, project.as_deref(), printer)
}

/// Merged shards are one run, and print as one. `project` is where a following `accept`
/// would read its default results file.
fn print_run_outcome(
    outcome: &commands::RunOutcome,
    format: args::Format,
    project: Option<&Path>,
    printer: &output::Printer,
) -> evalock::Result<i32> {
    printer.report(&outcome.report, format, None)?;
    if format == args::Format::Human {
        printer.run_summary(outcome, project);
        if let Some(comparison) = project
            .and_then(|root| commands::compare::drifted_against_baselines(root, &outcome.results))
        {
            printer.drifted_matrix(&comparison);
        }
    }
    Ok(outcome.report.exit_code())
}

/// Reads and merges saved reports; relative paths are read from the current folder, like
/// `--output`.
fn read_saved_reports(paths: &[PathBuf]) -> evalock::Result<evalock::report::Report> {
    let reports = paths
        .iter()
        .map(|path| {
            let label = path.display().to_string();
            let bytes = std::fs::read(path).map_err(|error| match error.kind() {
                std::io::ErrorKind::NotFound => evalock::Error::Usage(format!(
                    "{label}: no such file; write one with `evalock check --format json --output {label}`"
                )),
                _ => evalock::Error::io(label.clone(), error),
            })?;
            evalock::report::read_report(&label, &bytes)
        })
        .collect::<evalock::Result<Vec<_>>>()?;
    evalock::report::Report::merge(reports)
        .ok_or_else(|| evalock::Error::Usage("`--from FILE` is required".to_owned()))
}
