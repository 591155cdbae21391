//! Review scoring: a review's rubric scores, confidence and issues in; a verdict out.
//! `revcal score`.

mod read;
mod render;

use crate::args::LibraryArgs;
use crate::library;
use crate::output::emit;
use crate::style::Style;
use anyhow::Context;
use clap::Args;
use read::{Invalid, read_text};
use revcal_rubric_model::suggest;
use revcal_score::{Reviews, Scorer, parse_document};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `revcal score`.
#[derive(Debug, Args)]
#[command(after_help = crate::exit::with_table("\
The review (JSON or YAML):
  rubric_scores   one score per criterion of the rubric, on its scale (required)
  confidence      0..1; missing or below the rubric's confidence_threshold is UNCLEAR
  issues          [{severity, category, file, line, message, suggestion}]; or
                  blocking_issues + suggestions; `location: \"file:line\"` for file + line
  rationale       free text
  rubric_focus    focus areas of the rubric (a name or a list; case-insensitive), e.g. Security
  red_flags       ids of the rubric's red flags the review raises; or `red_flag: ID` on an issue
Critical and major issues block (FAIL); minor ones are suggestions; an unknown or missing
severity blocks. A red flag of a focused area fails; one of another area is only listed
(`revcal rubric get ID --focus AREA` prints an area's checks and red flags). An array of reviews is a council: per-criterion medians, merged issues,
confidence = mean member confidence x agreement. Every weight, cap and threshold comes
from the rubric file.

Invalid input names the file, line and column, and the field.

Examples:
  revcal score review.json
  revcal score review.yaml --json
  my-reviewer --diff HEAD~1 | revcal score -
  revcal score council.json                 (an array of reviews)
  revcal score story-review.json --rubric user_story_quality_v1 --artifact STORY.md", crate::exit::SCORE_TABLE))]
pub(crate) struct ScoreArgs {
    /// The review (JSON or YAML), or `-` for standard input. An array of reviews is a council.
    #[arg(value_name = "FILE", default_value = "-")]
    pub(crate) file: PathBuf,
    /// The rubric to score against, by rubric_id.
    #[arg(long, value_name = "ID", default_value = "code_review_v1")]
    pub(crate) rubric: String,
    #[command(flatten)]
    pub(crate) library: LibraryArgs,
    /// The artifact the review judged (a story, a plan, ...): its text is checked against the
    /// rubric's negative criteria, and any match fails it.
    #[arg(long, value_name = "FILE")]
    pub(crate) artifact: Option<PathBuf>,
    /// Print the JSON report (keys as in docs/scoring.md) instead of the table; invalid input prints
    /// `{"error": "invalid input", "problems": [...]}`, each problem with file, line,
    /// column, field, member and message.
    #[arg(long)]
    pub(crate) json: bool,
}

/// Runs `revcal score`: exit 0 PASS, 1 FAIL, 2 UNCLEAR, 3 invalid input.
pub(crate) fn run(args: ScoreArgs, style: &Style) -> anyhow::Result<ExitCode> {
    match score(&args, style) {
        Ok(code) => Ok(code),
        Err(Failure::Output(error)) => Err(error),
        Err(Failure::Invalid(invalid)) => {
            eprint!("{invalid}");
            if args.json {
                let text = serde_json::to_string_pretty(&invalid.to_json())? + "\n";
                emit(&text).context("cannot write the error report")?;
            }
            Ok(ExitCode::from(crate::exit::SCORE_INVALID_INPUT))
        }
    }
}

/// Why scoring stopped: bad input (exit 3) or a failure to write the result.
enum Failure {
    Invalid(Invalid),
    Output(anyhow::Error),
}

impl From<Invalid> for Failure {
    fn from(invalid: Invalid) -> Failure {
        Failure::Invalid(invalid)
    }
}

fn score(args: &ScoreArgs, style: &Style) -> Result<ExitCode, Failure> {
    let (repository, source) =
        library::load(&args.library).map_err(|error| Invalid::message(format!("{error:#}")))?;
    let Some(rubric) = repository.get(&args.rubric) else {
        let ids: Vec<String> = repository.list().iter().map(|r| r.rubric_id.clone()).collect();
        let hint = match suggest::closest(&args.rubric, ids.iter().map(String::as_str)) {
            Some(near) => format!("did you mean `{near}`?"),
            None => format!("known rubrics: {}", ids.join(", ")),
        };
        return Err(Invalid::message(format!("no rubric `{}` in {source}; {hint}", args.rubric)).into());
    };
    let scorer = Scorer::new(&rubric).map_err(|error| Invalid::message(error.to_string()))?;

    let (shown, text) = read_text(&args.file, "review")?;
    let artifact = match &args.artifact {
        Some(path) => Some(read_text(path, "artifact")?.1),
        None => None,
    };
    let document = parse_document(&text, read::format_of(&args.file))
        .map_err(|error| Invalid::review(&shown, error, None))?;
    for warning in &document.warnings {
        eprintln!("{}", render::warning(&shown, warning));
    }
    let place = |error| Invalid::review(&shown, error, Some(&document));
    let context =
        render::Context { rubric: &rubric, review_file: &shown, artifact_given: artifact.is_some() };
    let (text, code) = match &document.reviews {
        Reviews::Single(review) => {
            let evaluation = scorer.score(review, artifact.as_deref()).map_err(place)?;
            let text =
                if args.json { json(&evaluation)? } else { render::single(&evaluation, &context, style) };
            (text, crate::exit::verdict(evaluation.verdict()))
        }
        Reviews::Council(reviews) => {
            let council = scorer.score_council(reviews, artifact.as_deref()).map_err(place)?;
            let text = if args.json { json(&council)? } else { render::council(&council, &context, style) };
            (text, crate::exit::verdict(council.verdict()))
        }
    };
    emit(&text).context("cannot write the score").map_err(Failure::Output)?;
    Ok(ExitCode::from(code))
}

fn json<T: serde::Serialize>(value: &T) -> Result<String, Failure> {
    serde_json::to_string_pretty(value)
        .map(|text| text + "\n")
        .context("cannot write the report as JSON")
        .map_err(Failure::Output)
}
