//! `revcal rubric ...`: lint, list, get (with `--focus`), search, schema, rules.

mod focus;
mod lint;
mod render;

use crate::args::{DocumentFormat, LibraryArgs, RubricCommand};
use crate::library;
use crate::output::{emit, outln};
use crate::style::Style;
use anyhow::{Context, Result};
use revcal_rubric_model::{Rubric, Rule, suggest};
use revcal_rubric_repo::{Query, Repository};
use std::process::ExitCode;
use std::sync::Arc;

pub(crate) fn run(command: RubricCommand, style: &Style) -> Result<ExitCode> {
    match command {
        RubricCommand::Lint { paths, format, deny_warnings } => {
            lint::run(&paths, format, deny_warnings, style)
        }
        RubricCommand::List { library, json } => {
            let (repo, source) = library::load(&library)?;
            print_rubrics(&repo, &repo.list(), json, style, &source.to_string())?;
            Ok(ExitCode::SUCCESS)
        }
        RubricCommand::Get { id, library, format, focus } => get(&id, &library, format, &focus),
        RubricCommand::Search { text, artifact_type, library, json } => {
            let (repo, source) = library::load(&library)?;
            let query = Query { artifact_type, text: (!text.is_empty()).then(|| text.join(" ")) };
            let found = repo.search(&query);
            print_rubrics(&repo, &found, json, style, &source.to_string())?;
            Ok(if found.is_empty() { ExitCode::FAILURE } else { ExitCode::SUCCESS })
        }
        RubricCommand::Calibrate(args) => crate::judge::rubric_calibrate(args, style),
        RubricCommand::Schema => {
            emit(&revcal_rubric_model::json_schema_text()).context("cannot write the schema")?;
            Ok(ExitCode::SUCCESS)
        }
        RubricCommand::Rules { json } => {
            let mut out = String::new();
            if json {
                let rules: Vec<_> = Rule::ALL
                    .iter()
                    .map(|rule| serde_json::json!({"rule": rule.id(), "checks": rule.summary()}))
                    .collect();
                outln!(out, "{}", serde_json::to_string_pretty(&rules)?);
            } else {
                for rule in Rule::ALL {
                    outln!(out, "{:<8} {}", style.bold(rule.id()), rule.summary());
                }
            }
            emit(&out).context("cannot write the rules")?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn get(
    id: &str,
    library: &LibraryArgs,
    format: Option<DocumentFormat>,
    focus: &[String],
) -> Result<ExitCode> {
    let (repo, source) = library::load(library)?;
    let Some(rubric) = repo.get(id) else {
        let ids: Vec<String> = repo.list().iter().map(|r| r.rubric_id.clone()).collect();
        let hint = match suggest::closest(id, ids.iter().map(String::as_str)) {
            Some(near) => format!("did you mean `{near}`?"),
            None => format!("known rubrics: {}", ids.join(", ")),
        };
        eprintln!("error: no rubric `{id}` in {source}; {hint}");
        return Ok(ExitCode::FAILURE);
    };
    if !focus.is_empty() {
        let areas = match focus::select(&rubric, focus) {
            Ok(areas) => areas,
            Err(message) => {
                eprintln!("error: {message}");
                return Ok(ExitCode::FAILURE);
            }
        };
        emit(&focus::render(&rubric, &areas, format)?).context("cannot write the focus areas")?;
        return Ok(ExitCode::SUCCESS);
    }
    let text = match format.unwrap_or(DocumentFormat::Yaml) {
        DocumentFormat::Json => serde_json::to_string_pretty(&*rubric)? + "\n",
        DocumentFormat::Yaml => revcal_rubric_repo::to_yaml_string(&*rubric)
            .map_err(anyhow::Error::msg)
            .context("cannot write the rubric as YAML")?,
    };
    emit(&text).context("cannot write the rubric")?;
    Ok(ExitCode::SUCCESS)
}

fn print_rubrics(
    repo: &Repository,
    rubrics: &[Arc<Rubric>],
    json: bool,
    style: &Style,
    source: &str,
) -> Result<()> {
    let mut out = String::new();
    if json {
        let rows: Vec<_> = rubrics
            .iter()
            .map(|r| {
                serde_json::json!({
                    "rubric_id": r.rubric_id,
                    "version": r.version,
                    "name": r.name,
                    "artifact_type": r.artifact_type,
                    "scale": r.scale,
                    "criteria": r.criteria.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
                    "file": repo.file_of(&r.rubric_id).map(|p| p.to_string_lossy().into_owned()),
                })
            })
            .collect();
        outln!(out, "{}", serde_json::to_string_pretty(&rows)?);
        return emit(&out).context("cannot write the list");
    }
    if rubrics.is_empty() {
        eprintln!("no rubrics match (searched {source})");
        return Ok(());
    }
    let width = rubrics.iter().map(|r| r.key().len()).max().unwrap_or(0).max(7);
    let type_width = rubrics.iter().map(|r| r.artifact_type.len()).max().unwrap_or(0).max(13);
    outln!(
        out,
        "{}",
        style.bold(&format!(
            "{:<width$}  {:<type_width$}  {:>5}  {:>8}  NAME",
            "RUBRIC", "ARTIFACT TYPE", "SCALE", "CRITERIA"
        ))
    );
    for r in rubrics {
        let scale = format!("{}-{}", r.scale.min, r.scale.max);
        outln!(
            out,
            "{:<width$}  {:<type_width$}  {:>5}  {:>8}  {}",
            r.key(),
            r.artifact_type,
            scale,
            r.criteria.len(),
            r.name
        );
    }
    emit(&out).context("cannot write the list")?;
    eprintln!(
        "{}",
        style.dim(&format!("{} rubric{} from {source}", rubrics.len(), crate::output::plural(rubrics.len())))
    );
    Ok(())
}
