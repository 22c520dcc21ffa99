//! Command-line arguments. Every flag explains itself in `--help`.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

const AFTER_HELP: &str = "\
Exit codes:
  0   clean (warnings allowed)
  1   failures: regressions, failing cases, audit FAIL
  2   refused: drift, unlocked change, tampering, a write attempted in CI
  3   completions moved (only with --fail-on-diff)
  64  usage error    65  malformed input    70  internal error
When several apply: 2 over 1 over 3.

Rules: `evalock rules` lists every rule id with what it means and how to fix it.";

/// Keep LLM evaluation assets honest in git.
///
/// evalock freezes golden cases, prompts, skills, graders and last-good completions in
/// evalock.lock, refuses drift on every commit (pre-commit hook) and pull request (GitHub
/// Action), runs the suites, and reports regressions on the line that caused them.
#[derive(Debug, Parser)]
#[command(name = "evalock", version, about, long_about, after_help = AFTER_HELP, propagate_version = true)]
pub struct Cli {
    /// Run as if evalock was started in DIR (like `git -C`): relative paths given to other
    /// options (`--output`, `--from`, `--completions`, `--out`) are read from DIR too.
    ///
    /// Without it, a command started in a folder below the project's finds evalock.toml in
    /// the folders above, within the same git repository, as git finds `.git`.
    #[arg(short = 'C', value_name = "DIR", global = true)]
    pub directory: Option<PathBuf>,

    /// When to colour terminal output; NO_COLOR is respected in `auto`.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, global = true)]
    pub color: ColorChoice,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Write a commented starter evalock.toml by detecting case files, prompts and skills.
    Init(InitArgs),
    /// (Re)write evalock.lock from the working tree. Refused when CI is set.
    Lock(LockArgs),
    /// Verify cases, prompts, skills, graders and baselines against the lock (and a base revision).
    Check(CheckArgs),
    /// List every rule: id, name, severity, what it means and how to fix it.
    Rules(RulesArgs),
    /// List the findings adopted as debt in evalock.toml's `[debt]`, by rule and subject.
    ///
    /// `evalock init` adopts the policy findings a repository already has, so that the first
    /// check passes with a warning instead of a wall of refusals. An entry covers its rule on
    /// its file while the file's bytes are as they were; once the file changes, the finding
    /// is judged in full again. Entries that cover nothing any more are listed to delete.
    /// Exits 0.
    Debt(DebtArgs),
    // [skills] subcommands (skill audit) go here.
    /// Agent skills: audit provenance, versioning, permissions and executable content.
    #[command(subcommand)]
    Skills(SkillsCommand),
    /// Tool servers (MCP): audit how each configured server starts and what its tools say.
    #[command(subcommand)]
    Mcp(McpCommand),

    // [run] subcommands (run, accept, review) go here.
    /// Run suites: each case (and sample) through the suite's completer, graded, compared
    /// with its last-good baseline. Writes a results file; exits 1 on failures, 2 on drift.
    Run(RunArgs),
    /// Record the last run's passing cases as last-good baselines, atomically. Refused when CI is set.
    Accept(AcceptArgs),
    /// Show the last run's moved, regressed and improved completions against their
    /// baselines: unified diffs, or a self-contained HTML page (`--format html`).
    Review(ReviewArgs),
    // [hook] subcommands go here.
    /// Install or remove the git hook that runs `evalock check --staged` on every commit.
    #[command(subcommand)]
    Hook(HookCommand),

    // [github] subcommands (report, github) go here.
    /// Re-render saved reports (`check --format json --output FILE`) in any format; several
    /// files are merged into one report (each finding once).
    Report(ReportArgs),
    /// Post findings to the pull request: one review with comments on the changed lines,
    /// one sticky summary comment; falls back to annotations and the step summary.
    /// Always exits 0 once its input is read: posting never changes the gate's result.
    Github(GithubArgs),
    // [scale] subcommands (merge) go here.
    /// Combine the results files of `run --shard 1/N` … `N/N` into the results file an
    /// unsharded run writes, print its findings and exit as that run would.
    ///
    /// Refused (exit 65, naming the file) when the files are not one complete set of shards
    /// of one run: a shard missing or given twice, shards of different N, of another commit,
    /// evalock version, suite selection, evalock.toml, evalock.lock or content, a case in two
    /// shards, or a file that is not a shard's results.
    Merge(MergeArgs),
    /// Compare two runs case by case and behaviour by behaviour: REGRESS, GAIN, SAME, NEW,
    /// GONE or ERROR, per suite and per stratum, and size and latency against their slack.
    ///
    /// OLD and NEW are results files (`evalock run --out FILE`). Verdicts are compared even
    /// when the runs' contexts differ (another model, prompt or grader): the report names
    /// what differs. Cases marked `"critical": true` come first, and their regressions
    /// always fail. Exits 1 when a case's verdict is one `--fail-on` names, else 0.
    Compare(CompareArgs),
    /// Measure a grader against people: run it on completions a person labelled pass or
    /// fail, and report agreement, Cohen's κ, the false-success rate (the grader passes
    /// what the person failed) and the false-failure rate, each with a 95 % interval.
    ///
    /// The labels file is JSONL: `{"case_id", "completion", "verdict": "pass"|"fail",
    /// "labeller"?, "suite"?}`. Below the floors (20 labels, agreement 0.8, κ 0.6) the
    /// grader is uncalibrated: exit 1. Exits 0 when it meets them.
    Calibrate(CalibrateArgs),
    /// What changed in behaviour between two revisions, for release notes and release gates.
    ///
    /// Reads what each revision committed (evalock.toml, evalock.lock, case files and
    /// baselines; nothing is run) and lists, per suite and stratum: cases added, retired and
    /// version-bumped; baselines accepted since, with the reason given to `accept`; model,
    /// prompt and grader changes (version, sources, calibration); known failures added and
    /// cleared; and the REGRESS / GAIN matrix between the two last-good sets.
    ///
    /// Exits 1 when the changelog holds a change that `--fail-on` names, else 0.
    Changelog(ChangelogArgs),
}

#[derive(Debug, Args)]
pub struct ChangelogArgs {
    /// `A..B`: tags, branches or commits (`v1.2..v1.3`, `v1.2..HEAD`). `A..` and `A`
    /// alone mean `A..HEAD`.
    #[arg(value_name = "A..B")]
    pub range: String,

    /// `markdown` (default: release notes) or `json` (`evalock.changelog/v1`).
    #[arg(long, value_enum, default_value_t = ChangelogFormat::Markdown)]
    pub format: ChangelogFormat,

    /// What fails a release, separated by commas: regress (a case that passed at A's
    /// last-good fails at B's), known-failure (a case accepted failing since A), retired,
    /// bumped, reaccepted (a baseline entry recorded again since A), context (a model,
    /// prompt or grader change), or none (the default: a report only).
    #[arg(long, value_name = "LIST", default_value = "none")]
    pub fail_on: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ChangelogFormat {
    Markdown,
    Json,
}

#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// The suite whose grader to calibrate (needed when the project has several).
    #[arg(long, value_name = "SUITE", conflicts_with = "grader")]
    pub suite: Option<String>,
    /// Calibrate every suite this grader grades.
    #[arg(long, value_name = "GRADER")]
    pub grader: Option<String>,
    /// The labelled completions (JSONL), from the project folder; by default the
    /// grader's own `labels` in evalock.toml.
    #[arg(long, value_name = "FILE")]
    pub labels: Option<PathBuf>,
    /// `human` (default) or `json`.
    #[arg(long, value_enum, default_value_t = CalibrateFormat::Human)]
    pub format: CalibrateFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CalibrateFormat {
    Human,
    Json,
}

#[derive(Debug, Subcommand)]
pub enum SkillsCommand {
    /// Audit skill folders: a PASS/WARN/FAIL line per criterion, in the seed article's format.
    ///
    /// One line each for provenance, versioning, permissions and executables (plus
    /// manifest and name when those fail), each WARN or FAIL followed by the findings behind
    /// it with their location and fix. Exits 0 when no line says FAIL, 1 otherwise.
    Audit(SkillsAuditArgs),
}

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Audit tool-server configurations: a PASS/WARN/FAIL line per criterion for each server.
    ///
    /// Criteria: launch (a package fetched on every start must name an exact version),
    /// transport (no clear-text remote), secrets (no credential written inline; only its
    /// name is ever printed), lock (the launch and tools match evalock.lock) and tools (a
    /// committed `tools/list` snapshot pins them, and no description hides instructions or
    /// speaks of another server's tools). Each WARN or FAIL is followed by the findings
    /// behind it. Exits 0 when no line says FAIL, 1 otherwise.
    Audit(McpAuditArgs),
}

#[derive(Debug, Args)]
pub struct McpAuditArgs {
    /// Configuration files (`.mcp.json`, `.vscode/mcp.json`, a plugin's
    /// `.claude-plugin/plugin.json`…). Without any, those `[mcp] configs` names are
    /// audited, or the well-known ones at the project root.
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct SkillsAuditArgs {
    /// Skill folders (holding a SKILL.md), or folders to search for them. Without any,
    /// every skill evalock.toml guards is audited: those under `[skills] roots` and those
    /// its `marketplaces` list.
    #[arg(value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Replace an existing evalock.toml, or start a project in a folder below another one.
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args)]
pub struct LockArgs {
    /// Only verify that evalock.lock is up to date; never write (allowed in CI). Exits 2 when stale.
    #[arg(long)]
    pub check: bool,

    /// Output format of the findings.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Judge the staged content (the git index, honouring GIT_INDEX_FILE) instead of the working tree.
    /// This is what the pre-commit hook runs: unstaged bytes are never judged.
    #[arg(long, conflicts_with = "rev")]
    pub staged: bool,

    /// Judge the content of a commit (`main`, `HEAD~1`, a SHA) instead of the working tree.
    #[arg(long, value_name = "REV")]
    pub rev: Option<String>,

    /// Also apply the base-revision rules (edited in place, removed, permission growth, …)
    /// against the merge base of REV and the judged content.
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,

    /// Write the report to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Neither use nor update the incremental cache in .evalock/cache. The verdict is the
    /// same either way: the cache only skips re-reading content that has not changed.
    #[arg(long)]
    pub no_cache: bool,

    /// Also say, on standard error, how the verdict was reached: which shortcuts were taken
    /// (a remembered report, a commit that touches nothing evalock reads, content shared
    /// with the base), how many files were read or reused from the cache, how the base's
    /// lock was read, and the time taken. The report itself is unchanged.
    #[arg(long, short = 'v')]
    pub verbose: bool,
}

#[derive(Debug, Subcommand)]
pub enum HookCommand {
    /// Install evalock's hook as pre-commit and pre-merge-commit in the repository's hooks
    /// folder (core.hooksPath when set). A hook already there is kept and runs first.
    Install(HookInstallArgs),
    /// Remove evalock's hooks and put back the hooks that were there before.
    Uninstall,
}

#[derive(Debug, Args)]
pub struct HookInstallArgs {
    /// Move an existing, foreign hook aside without running it (instead of chaining it).
    /// `evalock hook uninstall` puts it back.
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Run only this suite (repeatable). Without it every suite runs and orphaned
    /// baseline entries are reported (EL405).
    #[arg(long = "suite", value_name = "SUITE")]
    pub suites: Vec<String>,

    /// Grade completions produced elsewhere instead of running completers: JSONL lines
    /// `{"case_id", "completion", "suite"?}`; several lines for one case are its samples.
    ///
    /// Also promptfoo's output (`promptfoo eval -o out.json`) and inspect_ai's JSON eval
    /// logs (`inspect eval --log-format json`), as the tools write them: each result is
    /// matched to its case by the suite's identity rule (the `vars` or `input` digest, a
    /// key path or the `id`), and a result that matches no case is refused (exit 65).
    #[arg(long, value_name = "FILE")]
    pub completions: Option<PathBuf>,

    /// How many completers run at once, 1 to 256 (default: the CPUs this process may use);
    /// results keep the same order whatever N is.
    #[arg(long, short = 'j', value_name = "N", value_parser = jobs_parser())]
    pub jobs: Option<usize>,

    /// Samples per case when the case sets no `n` (else the suite's `samples`, else 1).
    /// Agreement across samples below `agreement_min` is EL505.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub samples: Option<u32>,

    /// Run the same version N times (2 to 100) to measure its noise: each case's flip rate
    /// (a case that flips more than `[policy] flaky_max` is flaky, EL511, and stops moving
    /// the gate) and each suite's noise floor, the smallest pass-rate change it can tell
    /// from noise (A/A of the first two repeats, bootstrapped over cases). The results
    /// are the first repeat's.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repeat: u32,

    /// Where to write the results file [default: .evalock/results.json in the project].
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,

    /// Exit 3 when completions moved but every case still passes (also `policy.fail_on_diff`).
    #[arg(long)]
    pub fail_on_diff: bool,

    /// Run only shard K of N (1 <= K <= N), e.g. `--shard 2/4` in an Actions matrix job. A
    /// case's shard is a hash of its suite and id, so it never moves when cases are added.
    /// Combine the N results files with `evalock merge`.
    #[arg(long, value_name = "K/N", value_parser = parse_shard)]
    pub shard: Option<evalock::run::shard::Shard>,

    /// Output format of the findings.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

fn parse_shard(text: &str) -> Result<evalock::run::shard::Shard, String> {
    text.parse()
        .map_err(|error: evalock::Error| error.to_string())
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// OLD and NEW: the results file of the earlier run (the last-good version), then
    /// that of the run to judge. With `--base`, only NEW (default:
    /// `.evalock/results.json` of the project).
    #[arg(value_name = "FILE", num_args = 0..=2)]
    pub files: Vec<PathBuf>,

    /// Take OLD from the baselines committed at this revision (`main`, a commit): the
    /// last-good completions its base accepted, each a passing case (or one accepted
    /// failing, with its reasons).
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,

    /// What fails the comparison, separated by commas: regress, error, gone, new, envelope
    /// (a size or latency breach), or none.
    #[arg(long, value_name = "LIST", default_value = "regress,error")]
    pub fail_on: String,

    /// Share a completion may grow before it is a size breach.
    #[arg(long, value_name = "SHARE", default_value_t = 0.10)]
    pub size_slack: f64,

    /// Share a case may slow down before it is a latency breach (time is compared where
    /// the earlier run took 1 s or more).
    #[arg(long, value_name = "SHARE", default_value_t = 0.15)]
    pub latency_slack: f64,

    /// `human` (default), `json`, `markdown` or `sarif` (its findings, for code scanning).
    #[arg(long, value_enum, default_value_t = CompareFormat::Human)]
    pub format: CompareFormat,

    /// Also write the comparison as a findings report (JSON, `evalock.findings/v1`) for
    /// `evalock report` and `evalock github`: each regressed case (EL501) at its line, and
    /// each suite's behaviour matrix (EL512) on its `model` line.
    #[arg(long, value_name = "FILE")]
    pub findings: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CompareFormat {
    Human,
    Json,
    Markdown,
    /// SARIF 2.1.0 of the comparison's findings (as `--findings` writes them).
    Sarif,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The shards' results files (`evalock run --shard K/N --out FILE`), in any order.
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,

    /// Where to write the merged results file (atomically).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,

    /// Exit 3 when completions moved but every case still passes, even if the shards ran
    /// without --fail-on-diff (it is recorded in the merged file).
    #[arg(long)]
    pub fail_on_diff: bool,

    /// Output format of the findings.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

/// Asked only when `run` starts without `--jobs`: it reads the cgroup's CPU quota, which
/// every other command (and every commit's hook) would otherwise pay for.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism()
        .map(usize::from)
        .unwrap_or(2)
        .min(evalock::commands::run::MAX_JOBS)
}

/// `--jobs`: 1 to [`evalock::commands::run::MAX_JOBS`], else a usage error (exit 64).
fn jobs_parser() -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::new().range(1..=evalock::commands::run::MAX_JOBS as u64)
}

#[derive(Debug, Args)]
pub struct AcceptArgs {
    /// Why these completions are the new last-good ones; recorded in every entry written.
    #[arg(long, value_name = "TEXT")]
    pub reason: String,

    /// Accept only this suite (repeatable).
    #[arg(long = "suite", value_name = "SUITE")]
    pub suites: Vec<String>,

    /// Accept only this case (repeatable); it must pass in the results.
    #[arg(long = "case", value_name = "ID")]
    pub cases: Vec<String>,

    /// The results file to accept from [default: .evalock/results.json in the project].
    #[arg(long, value_name = "FILE")]
    pub from: Option<PathBuf>,

    /// Also record failing cases, as known failures (`"passed": false`), so a later pass
    /// shows as IMPROVED and a later failure as FAIL rather than new.
    #[arg(long)]
    pub include_failing: bool,
}

#[derive(Debug, Args)]
pub struct ReviewArgs {
    /// The results file to review [default: .evalock/results.json in the project].
    #[arg(long, value_name = "FILE")]
    pub from: Option<PathBuf>,

    /// `human` (default: unified diffs) or `html`: one self-contained page with the pass
    /// rates per suite and stratum, the behaviour matrix against last-good, where each
    /// case's tool calls part from last-good, and its completion beside last-good's.
    #[arg(long, value_enum, default_value_t = ReviewFormat::Human)]
    pub format: ReviewFormat,

    /// Write the review to FILE (atomically) instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReviewFormat {
    Human,
    Html,
}

#[derive(Debug, Args)]
pub struct DebtArgs {
    /// `human` (default) or `json`.
    #[arg(long, value_enum, default_value_t = DebtFormat::Human)]
    pub format: DebtFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DebtFormat {
    Human,
    Json,
}

#[derive(Debug, Args)]
pub struct RulesArgs {
    /// Show one rule (by id like EL102 or name like case-edited-in-place).
    pub rule: Option<String>,

    /// Print the table as Markdown (used for the README).
    #[arg(long)]
    pub markdown: bool,
}

#[derive(Debug, Args)]
pub struct GithubArgs {
    /// A findings report (`evalock check --format json --output FILE`) or the results file
    /// of `evalock run` (`.evalock/results.json`, or `--out FILE`). Repeat to combine
    /// several (check, then run).
    #[arg(long = "from", value_name = "FILE", required = true)]
    pub from: Vec<PathBuf>,

    /// What to post: `review` (inline comments and the summary), `summary` (only the
    /// sticky summary comment) or `annotations` (no API calls: workflow commands and the
    /// step summary).
    #[arg(long, value_enum, env = "EVALOCK_COMMENT_MODE", default_value_t = GithubMode::Review)]
    pub mode: GithubMode,

    /// The environment variable that holds the token (never pass the token itself).
    #[arg(long, value_name = "NAME", default_value = "GITHUB_TOKEN")]
    pub token_env: String,

    /// The `pull_request` event payload of the run that wrote the reports, for a trusted
    /// job that posts them (a workflow on `workflow_run`, without the pull request's
    /// code). Under `workflow_run` its head must be the run's `head_sha`, or nothing is
    /// posted: the payload came from an untrusted job.
    #[arg(long, value_name = "FILE")]
    pub event: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GithubMode {
    Review,
    Summary,
    Annotations,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// `path:line: EL102 …` then what to do; colour on a terminal.
    Human,
    /// Stable JSON (schema `evalock.findings/v1`); `evalock report` reads it back.
    Json,
    /// SARIF 2.1.0 for GitHub code scanning (`github/codeql-action/upload-sarif`); `check`
    /// gives its paths from the repository root.
    Sarif,
    /// JUnit XML: one test suite per suite, one test case per case, skill or grader.
    Junit,
    /// Markdown job summary (for GITHUB_STEP_SUMMARY), kept under 1 MiB.
    Markdown,
    /// GitHub Actions workflow commands (`::error file=…,line=…::…`): annotations; `check`
    /// gives their paths from the repository root.
    Github,
}

impl Format {
    /// Whether the format prints every subject judged, not only those with findings.
    pub fn lists_subjects(self) -> bool {
        matches!(self, Format::Json | Format::Junit | Format::Markdown)
    }
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A saved report: `evalock check --format json --output FILE`, or the results file of
    /// `evalock run` (`.evalock/results.json`). Repeat to merge several.
    #[arg(long, value_name = "FILE", required = true)]
    pub from: Vec<PathBuf>,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,

    /// Write the report to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Prefix every finding's path with DIR (`git rev-parse --show-prefix`) when the project
    /// lives in a subdirectory: GitHub resolves annotation and SARIF paths from the repository root.
    #[arg(long, value_name = "DIR")]
    pub path_prefix: Option<String>,

    /// Add the pass rate of each suite and stratum along the last N commits of the
    /// first-parent history (from the baselines each holds), then the run among `--from`:
    /// drawn as Mermaid charts in the `markdown` step summary and the pull request's
    /// sticky comment, and kept in the `json` report for `evalock github`. Read from the
    /// git repository of the current folder's project.
    #[arg(long, value_name = "N")]
    pub trend: Option<usize>,
}

impl Command {
    /// Whether the command works on a project (reads evalock.toml): those look for it in
    /// the folders above when the current one has none, as git looks for `.git`.
    pub fn needs_project(&self) -> bool {
        !matches!(
            self,
            Command::Init(_)
                | Command::Rules(_)
                | Command::Report(_)
                | Command::Merge(_)
                | Command::Compare(_)
        )
    }

    /// The paths given on the command line, which name files from where evalock was
    /// started, to be re-expressed when evalock moves to a project found above. Defaults
    /// are not among them: they name files of the project (`.evalock/results.json`).
    pub fn started_relative_paths(&mut self) -> Vec<&mut PathBuf> {
        match self {
            Command::Check(args) => args.output.iter_mut().collect(),
            Command::Skills(SkillsCommand::Audit(args)) => args.dirs.iter_mut().collect(),
            Command::Mcp(McpCommand::Audit(args)) => args.paths.iter_mut().collect(),
            Command::Run(args) => args.completions.iter_mut().chain(&mut args.out).collect(),
            Command::Accept(args) => args.from.iter_mut().collect(),
            Command::Compare(args) => args.files.iter_mut().chain(&mut args.findings).collect(),
            Command::Calibrate(args) => args.labels.iter_mut().collect(),
            Command::Review(args) => args.from.iter_mut().chain(&mut args.output).collect(),
            Command::Github(args) => args.from.iter_mut().collect(),
            _ => Vec::new(),
        }
    }
}
