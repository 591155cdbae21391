//! Command-line arguments.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// How good is this code reviewer, and can we prove it?
///
/// revcal plants bugs in a commit and measures what a reviewer (an LLM, a linter, a test
/// suite, a person) catches; scores reviews against versioned rubrics into a PASS, UNCLEAR or
/// FAIL verdict; and keeps a signed ELO reputation of reviewers.
#[derive(Debug, Parser)]
#[command(
    name = "revcal",
    version,
    propagate_version = true,
    max_term_width = 100,
    after_help = "Start with:\n  revcal demo                          two bundled reviewers measured: no setup, no API key\n  revcal calibrate --review-cmd CMD    measure your reviewer on bugs planted in HEAD\n  revcal score review.json             a review's weighted score and verdict\n  revcal review --reviewer P:M         an LLM reviews HEAD's change (docs/review.md)\n  revcal rubric lint rubrics           check a rubric library\n\nEach command's --help has examples and its exit codes."
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,

    /// More log output on stderr (-v info, -vv debug, -vvv trace); RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub(crate) verbose: u8,

    /// When to colour output: auto colours a terminal unless NO_COLOR is set.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, global = true, value_name = "WHEN")]
    pub(crate) color: ColorChoice,
}

/// When to use colour (the flag's own help explains the choices).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// The `review-calibration` binary: `revcal calibrate` under the name of the tool it replaces.
///
/// Measure a code reviewer: plant bugs in a commit, run the reviewer in scratch checkouts of
/// it and score what it caught (the same command as `revcal calibrate`).
#[derive(Debug, Parser)]
#[command(name = "review-calibration", version, max_term_width = 100)]
pub(crate) struct ReviewCalibrationCli {
    #[command(flatten)]
    pub(crate) calibrate: crate::calibrate::CalibrateArgs,

    /// More log output on stderr (-v info, -vv debug, -vvv trace); RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count)]
    pub(crate) verbose: u8,

    /// When to colour output: auto colours a terminal unless NO_COLOR is set.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub(crate) color: ColorChoice,
}

/// The commands of `revcal`.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Calibrate two bundled reviewers on a bundled project: no setup, no network, no API key.
    Demo(crate::demo::DemoArgs),
    /// Measure a reviewer: plant bugs in a commit, run the reviewer, score what it caught.
    Calibrate(Box<crate::calibrate::CalibrateArgs>),
    /// Score a review against a rubric: weighted score, ceilings, verdict and exit code.
    Score(crate::score::ScoreArgs),
    /// Review a change with an LLM (or a council of them): findings, and a review `score` takes.
    Review(Box<crate::review::ReviewArgs>),
    /// Lint, list, look up and search the rubric library.
    #[command(subcommand)]
    Rubric(RubricCommand),
    /// Plant bugs: list the mutants tree-sitter operators make in Rust, JavaScript, TypeScript, Python, Java and Go.
    Mutate(crate::mutate::MutateArgs),
    /// Real bugs: mine a repository's fixes that came with a test into a bugs file, list one.
    Bugs(crate::bugs::BugsArgs),
    /// The standard benchmark: a reviewer on real bugs of public repositories, compared bug by bug.
    Bench(Box<crate::bench::BenchArgs>),
    /// The built-in LLM judge: check the configured provider, measure it on labelled cases.
    Judge(crate::judge::JudgeArgs),
    /// Reviewer reputation: signed review messages, an ELO ledger, leaderboard and receipts.
    Elo(crate::elo::EloArgs),
    /// RFC-001 live on an AgentChat server: the ledger agent, posting, a reviewer agent.
    #[command(subcommand_required = true)]
    Agentchat(crate::agentchat::AgentchatArgs),
    /// The checkout cache: the job slots `calibrate` keeps between runs, per repository.
    Cache(crate::cache::CacheArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(crate::completions::CompletionsArgs),
}

impl Command {
    /// The command's name on the command line.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Command::Rubric(_) => "rubric",
            Command::Score(_) => "score",
            Command::Review(_) => "review",
            Command::Mutate(_) => "mutate",
            Command::Bugs(_) => "bugs",
            Command::Bench(_) => "bench",
            Command::Calibrate(_) => "calibrate",
            Command::Demo(_) => "demo",
            Command::Elo(_) => "elo",
            Command::Agentchat(_) => "agentchat",
            Command::Judge(_) => "judge",
            Command::Cache(_) => "cache",
            Command::Completions(_) => "completions",
        }
    }
}

/// Where to read the rubric library from.
#[derive(Debug, Clone, Args)]
pub(crate) struct LibraryArgs {
    /// Rubric directory [default: $REVCAL_RUBRICS, else ./rubrics when it exists, else the
    /// library built into revcal].
    #[arg(long, value_name = "DIR")]
    pub(crate) rubrics: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum RubricCommand {
    /// Check rubric files and report every problem, compiler-style.
    ///
    /// Every file is checked against the rubric JSON Schema and the format's rules
    /// (anchors cover the scale, thresholds inside it, shares sum to 1, patterns compile,
    /// ids unique, ...). Each problem names file:line:col, the rule, the field and a fix.
    #[command(after_help = crate::exit::with_table(
        "Examples:\n  revcal rubric lint\n  revcal rubric lint rubrics/code_review_v1.yaml --format json\n  revcal rubric lint rubrics --deny-warnings --format github",
        crate::exit::LINT_TABLE,
    ))]
    Lint {
        /// Files or directories (walked for *.yaml, *.yml, *.json, skipping schema.json).
        #[arg(value_name = "PATHS", default_value = "rubrics")]
        paths: Vec<PathBuf>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = LintFormat::Human)]
        format: LintFormat,
        /// Treat warnings as failures (exit 1).
        #[arg(long)]
        deny_warnings: bool,
    },
    /// List the rubrics in the library.
    #[command(after_help = crate::exit::RUBRIC_QUERY_TABLE)]
    List {
        #[command(flatten)]
        library: LibraryArgs,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Print one rubric, or with --focus the checks and red flags of its focus areas for a
    /// reviewer's prompt. Exit status 1 when there is no rubric with that id or no such area.
    #[command(after_help = crate::exit::with_table(
        "Examples:\n  revcal rubric get code_review_v1\n  revcal rubric get code_review_v1 --focus security\n  revcal rubric get code_review_v1 --focus security,testing --format json",
        crate::exit::RUBRIC_QUERY_TABLE,
    ))]
    Get {
        /// The rubric_id, e.g. code_review_v1.
        id: String,
        #[command(flatten)]
        library: LibraryArgs,
        /// Output format [default: yaml; with --focus, prompt text].
        #[arg(long, value_enum)]
        format: Option<DocumentFormat>,
        /// Print only these focus areas (case-insensitive; repeat or separate with commas).
        #[arg(long, value_name = "AREA", value_delimiter = ',')]
        focus: Vec<String>,
    },
    /// Find rubrics by artifact type and by words in their id, name or description.
    ///
    /// Exit status 1 when nothing matches.
    #[command(after_help = crate::exit::with_table(
        "Examples:\n  revcal rubric search --artifact-type jira_tickets\n  revcal rubric search review accuracy",
        crate::exit::RUBRIC_QUERY_TABLE,
    ))]
    Search {
        /// Words that must all appear (case-insensitively) in the id, name or description.
        text: Vec<String>,
        /// Only rubrics for this artifact type (e.g. code_review, jira_tickets).
        #[arg(long, value_name = "TYPE")]
        artifact_type: Option<String>,
        #[command(flatten)]
        library: LibraryArgs,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Print the rubric JSON Schema (what rubrics/schema.json holds; point your editor at it).
    #[command(after_help = crate::exit::RUBRIC_QUERY_TABLE)]
    Schema,
    /// Score the rubric's calibration dataset with the configured LLM provider and print the
    /// Spearman correlation with the human labels, per criterion and overall (target 0.7).
    Calibrate(crate::judge::RubricCalibrateArgs),
    /// List every lint rule with its id.
    #[command(after_help = crate::exit::RUBRIC_QUERY_TABLE)]
    Rules {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
}

/// How `rubric lint` prints diagnostics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum LintFormat {
    /// Compiler-style: file:line:col, the source line with a caret, the hint.
    Human,
    /// One JSON document with a summary and every diagnostic.
    Json,
    /// GitHub Actions workflow commands (::error file=...,line=...::message).
    Github,
}

/// A document format for printing a rubric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum DocumentFormat {
    /// YAML, as rubric files are written.
    Yaml,
    /// Pretty-printed JSON.
    Json,
}
