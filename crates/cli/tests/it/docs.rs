//! The commands the README and docs/*.md show, checked against this build so the docs cannot
//! drift from the tool:
//!
//! - every session (a fenced block whose lines start with `$ `) runs as written, each session
//!   in one shell (so `BOB=$(...)` carries over), in a fresh directory where `examples/` is the
//!   repository's and `revcal` is this build; every line the docs show after a command must
//!   come out of it, in order (`...` skips lines, `…` inside a line stands for any text). Agent
//!   ids and message ids are random per run (fresh keys), so they are compared by shape. A
//!   session that cannot run here says why in a `<!-- not run: REASON -->` line just above
//!   its block;
//! - every `revcal` command line anywhere in a fenced block (sessions or not) is accepted by
//!   the command-line parser: its commands, flags and values exist.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository root.
fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// README.md and every page under docs/.
fn documents() -> Vec<PathBuf> {
    let mut files = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// A fenced code block: the 1-based line of its first line, its lines, and the reason given
/// in a `<!-- not run: ... -->` line just above it.
struct Block {
    /// The info string after the opening fence (`sh`, `text`, ...).
    language: String,
    first_line: usize,
    lines: Vec<String>,
    not_run: Option<String>,
}

fn blocks(text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut current: Option<Block> = None;
    let mut previous = "";
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        match current.take() {
            None if trimmed.starts_with("```") => {
                let not_run = previous
                    .trim()
                    .strip_prefix("<!-- not run:")
                    .and_then(|rest| rest.strip_suffix("-->"))
                    .map(|reason| reason.trim().to_owned());
                let language = trimmed.trim_start_matches('`').trim().to_owned();
                current = Some(Block { language, first_line: index + 2, lines: Vec::new(), not_run });
            }
            None => {}
            Some(block) if trimmed.starts_with("```") => blocks.push(block),
            Some(mut block) => {
                block.lines.push(line.to_owned());
                current = Some(block);
            }
        }
        if !line.trim().is_empty() {
            previous = line;
        }
    }
    blocks
}

/// A session: its commands, each with the lines the docs show after it.
fn session(block: &Block) -> Vec<(String, Vec<String>)> {
    let mut commands: Vec<(String, Vec<String>)> = Vec::new();
    for line in &block.lines {
        match line.strip_prefix("$ ") {
            Some(command) => commands.push((command.to_owned(), Vec::new())),
            None => {
                if let Some((_, expected)) = commands.last_mut() {
                    expected.push(line.to_owned());
                }
            }
        }
    }
    commands
}

/// `line` with agent ids (`@` and 16 hex digits) and message ids (64 hex digits) replaced by
/// placeholders, and runs of spaces collapsed (a longer id would shift the columns).
fn shape(line: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let hex_run =
            chars[i..].iter().take_while(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()).count();
        if chars[i] == '@' && chars[i + 1..].iter().take_while(|c| c.is_ascii_hexdigit()).count() == 16 {
            out.push_str("@AGENT");
            i += 17;
        } else if hex_run >= 64 {
            out.push_str("MESSAGE-ID");
            i += hex_run;
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether `actual` is what the docs show as `wanted`, where `…` stands for any text.
fn matches(wanted: &str, actual: &str) -> bool {
    let mut pieces = wanted.split('…');
    let first = pieces.next().unwrap_or_default();
    let Some(mut rest) = actual.strip_prefix(first) else { return false };
    let pieces: Vec<&str> = pieces.collect();
    for (index, piece) in pieces.iter().enumerate() {
        if index + 1 == pieces.len() {
            return rest.ends_with(piece);
        }
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    rest.is_empty()
}

/// Runs one session and returns what went wrong, if anything.
fn run_session(commands: &[(String, Vec<String>)]) -> Result<(), String> {
    let binary = Path::new(env!("CARGO_BIN_EXE_revcal"));
    let path =
        format!("{}:{}", binary.parent().unwrap().display(), std::env::var("PATH").unwrap_or_default());
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(root().join("examples"), dir.path().join("examples")).unwrap();
    let mut script = String::new();
    for (index, (command, _)) in commands.iter().enumerate() {
        // The marker keeps `$?` for the next command, so `echo $?` shows the one before.
        script.push_str(&format!("status=$?; echo '@@@ {index}'; (exit $status)\n{{ {command}\n}} 2>&1\n"));
    }
    let output = Command::new("sh")
        .arg("-c")
        .arg(&script)
        .current_dir(dir.path())
        .env("PATH", &path)
        .env_remove("REVCAL_LEDGER")
        .env_remove("REVCAL_LEDGER_URL")
        .env_remove("NO_COLOR")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    let outputs: Vec<&str> = text.split("@@@ ").skip(1).collect();
    if outputs.len() != commands.len() {
        return Err(format!("the session stopped early:\n{text}"));
    }
    for ((command, expected), actual) in commands.iter().zip(outputs) {
        let actual: Vec<String> = actual.lines().skip(1).map(shape).collect();
        let mut from = 0;
        for line in expected.iter().filter(|line| line.trim() != "...") {
            let wanted = shape(line);
            match actual[from..].iter().position(|real| matches(&wanted, real)) {
                Some(at) => from += at + 1,
                None => {
                    return Err(format!(
                        "`$ {command}`: the line {line:?} is not in the output:\n{}",
                        actual.join("\n")
                    ));
                }
            }
        }
    }
    Ok(())
}

#[test]
fn every_session_in_the_readme_and_the_docs_runs_as_written() {
    let mut ran = Vec::new();
    let mut failures = Vec::new();
    for file in documents() {
        let text = std::fs::read_to_string(&file).unwrap();
        let name = file.strip_prefix(root()).unwrap_or(&file).display().to_string();
        for block in blocks(&text) {
            let commands = session(&block);
            if commands.is_empty() {
                continue;
            }
            let place = format!("{name}:{}", block.first_line);
            if let Some(reason) = &block.not_run {
                assert!(!reason.is_empty(), "{place}: `not run` needs a reason");
                continue;
            }
            match run_session(&commands) {
                Ok(()) => ran.push(place),
                Err(problem) => failures.push(format!("{place}: {problem}")),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // The README's tour alone has sessions for score, mutate, elo and rubrics.
    assert!(ran.iter().filter(|place| place.starts_with("README.md")).count() >= 4, "{ran:?}");
}

/// The words of a shell command line, up to its first pipe, redirection, `;` or `&&`, and
/// without a trailing comment; quotes removed, `$(...)` and variables kept as written.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {
                in_word = true;
                for inner in chars.by_ref() {
                    if inner == c {
                        break;
                    }
                    word.push(inner);
                }
            }
            '$' if chars.peek() == Some(&'(') => {
                in_word = true;
                word.push(c);
                let mut depth = 0;
                for inner in chars.by_ref() {
                    word.push(inner);
                    match inner {
                        '(' => depth += 1,
                        ')' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                }
            }
            '\\' => {
                if let Some(next) = chars.next() {
                    in_word = true;
                    word.push(next);
                }
            }
            '#' if !in_word => break,
            '|' | '>' | '<' | ';' | '&' => {
                // `2>` and friends: the descriptor number is not a word.
                if word.chars().all(|d| d.is_ascii_digit()) && !word.is_empty() {
                    word.clear();
                    in_word = false;
                }
                break;
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// Every `revcal` command line in the fenced blocks of `text`: (line number, words), with
/// `$ `, leading variable assignments and `\` line continuations handled. In a session only
/// the `$ ` lines are commands; otherwise every line of a shell block (`sh`, `bash`, `shell`,
/// `console` or unlabelled) is, and a `text` block is output.
fn command_lines(text: &str) -> Vec<(usize, Vec<String>)> {
    let mut found = Vec::new();
    for block in blocks(text) {
        let is_session = block.lines.iter().any(|line| line.starts_with("$ "));
        let is_shell = matches!(block.language.as_str(), "" | "sh" | "bash" | "shell" | "console");
        if !is_session && !is_shell {
            continue;
        }
        let mut index = 0;
        while index < block.lines.len() {
            let number = block.first_line + index;
            let mut line = block.lines[index].trim().to_owned();
            while line.ends_with('\\') && index + 1 < block.lines.len() {
                line.pop();
                index += 1;
                line.push(' ');
                line.push_str(block.lines[index].trim());
            }
            index += 1;
            let line = match line.strip_prefix("$ ") {
                Some(command) => command,
                None if is_session => continue,
                None => &line,
            };
            let words = shell_words(line);
            let start = words.iter().position(|word| !is_assignment(word)).unwrap_or(words.len());
            let words = &words[start..];
            if words.first().is_some_and(|word| word == "revcal" || word == "review-calibration") {
                found.push((number, words.to_vec()));
            }
        }
    }
    found
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
    })
}

#[test]
fn every_revcal_command_line_in_the_readme_and_the_docs_parses() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for file in documents() {
        let text = std::fs::read_to_string(&file).unwrap();
        let name = file.strip_prefix(root()).unwrap_or(&file).display().to_string();
        for (line, words) in command_lines(&text) {
            checked += 1;
            let parsed = if words[0] == "review-calibration" {
                // The compatibility binary takes calibrate's flags.
                let mut as_revcal = vec!["revcal".to_owned(), "calibrate".to_owned()];
                as_revcal.extend(words[1..].iter().cloned());
                revcal_cli::command().try_get_matches_from(as_revcal)
            } else {
                revcal_cli::command().try_get_matches_from(&words)
            };
            if let Err(error) = parsed {
                use clap::error::ErrorKind;
                if !matches!(error.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                    failures.push(format!("{name}:{line}: `{}`: {}", words.join(" "), error.render()));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {checked} command lines fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(checked >= 50, "only {checked} command lines found");
}

#[test]
fn shell_words_stop_at_pipes_redirections_and_comments() {
    assert_eq!(shell_words("revcal score a.json --json > out.json"), ["revcal", "score", "a.json", "--json"]);
    assert_eq!(
        shell_words("revcal calibrate --review-cmd 'my-reviewer --base {base}' # note"),
        ["revcal", "calibrate", "--review-cmd", "my-reviewer --base {base}"]
    );
    assert_eq!(
        shell_words("revcal elo sign r.json --request-id \"$REQUEST\" 2>/dev/null"),
        ["revcal", "elo", "sign", "r.json", "--request-id", "$REQUEST"]
    );
    assert_eq!(shell_words("revcal x --key \"$(cat k)\" | jq ."), ["revcal", "x", "--key", "$(cat k)"]);
    assert!(matches("{\"a\":1,…,\"z\":2}", "{\"a\":1,\"b\":5,\"z\":2}"));
    assert!(!matches("{\"a\":1,…,\"z\":2}", "{\"a\":1,\"b\":5,\"z\":3}"));
}

/// The headings of a Markdown page outside fenced blocks, with their 1-based lines.
fn headings(text: &str) -> Vec<(usize, String)> {
    let mut fenced = false;
    let mut found = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            let title = line.trim_start_matches('#');
            if title.starts_with(' ') {
                found.push((index + 1, title.trim().to_owned()));
            }
        }
    }
    found
}

/// The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as `-`.
fn anchor(title: &str) -> String {
    title
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// A link to a heading (`docs/judge.md#the-prompt`) names one place only when no two
/// headings of a page share an anchor: GitHub numbers the second (`#the-prompt-1`).
#[test]
fn no_two_headings_of_a_page_share_an_anchor() {
    let mut repeated = Vec::new();
    for path in documents() {
        let text = std::fs::read_to_string(&path).unwrap();
        let mut seen: Vec<String> = Vec::new();
        for (line, title) in headings(&text) {
            let anchor = anchor(&title);
            if seen.contains(&anchor) {
                repeated.push(format!("{}:{line}: #{anchor}", path.display()));
            }
            seen.push(anchor);
        }
    }
    assert!(repeated.is_empty(), "headings whose anchor an earlier one has:\n{}", repeated.join("\n"));
}

#[test]
fn anchors_are_githubs() {
    assert_eq!(
        anchor("Calibrating it: `revcal calibrate --reviewer`"),
        "calibrating-it-revcal-calibrate---reviewer"
    );
    assert_eq!(anchor("The prompt as sent"), "the-prompt-as-sent");
    let page = "# Title\n```sh\n# a comment, not a heading\n```\n## Two words\n#no-space\n";
    assert_eq!(headings(page), [(1, "Title".to_owned()), (5, "Two words".to_owned())]);
}

/// The files that may link to a heading of a page: the pages themselves and the sources
/// (`//!` docs, `--help` texts), found below the repository root (build output and the fuzz
/// corpus left out).
fn linking_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if !name.starts_with('.') && !matches!(name.as_str(), "target" | "corpus" | "artifacts") {
                linking_files(&path, found);
            }
        } else if name.ends_with(".md") || name.ends_with(".rs") {
            found.push(path);
        }
    }
}

/// The links to a heading in `text`: `(page.md, anchor)`, the page as written (`docs/x.md`,
/// `../x.md`, `x.md`), or an empty page for `(#anchor)` on a Markdown page.
fn heading_links(text: &str) -> Vec<(String, String)> {
    let is_path = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-');
    let is_anchor = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-');
    let mut links = Vec::new();
    for (at, _) in text.match_indices(".md#") {
        let start = text[..at].rfind(|c: char| !is_path(c)).map_or(0, |i| i + 1);
        let rest = &text[at + ".md#".len()..];
        let anchor: String = rest.chars().take_while(|c| is_anchor(*c)).collect();
        if start < at && !anchor.is_empty() {
            links.push((text[start..at + ".md".len()].to_owned(), anchor));
        }
    }
    for (at, _) in text.match_indices("](#") {
        let anchor: String = text[at + "](#".len()..].chars().take_while(|c| is_anchor(*c)).collect();
        links.push((String::new(), anchor));
    }
    links
}

/// Every link to a heading of a page (`docs/judge.md#the-prompt`, `(#scorers)`), in the
/// pages and in the sources, names a heading the page has.
#[test]
fn every_link_to_a_heading_names_one_that_exists() {
    let mut files = Vec::new();
    linking_files(root(), &mut files);
    let mut broken = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (page, wanted) in heading_links(&text) {
            let is_markdown = file.extension().is_some_and(|ext| ext == "md");
            let target = if page.is_empty() {
                if !is_markdown {
                    continue;
                }
                file.clone()
            } else {
                // As written from the linking page, then from the root, then under docs/.
                let candidates =
                    [file.parent().unwrap().join(&page), root().join(&page), root().join("docs").join(&page)];
                match candidates.into_iter().find(|candidate| candidate.is_file()) {
                    Some(target) => target,
                    None => continue,
                }
            };
            let titles = headings(&std::fs::read_to_string(&target).unwrap());
            if !titles.iter().any(|(_, title)| anchor(title) == wanted) {
                broken.push(format!(
                    "{}: {page}#{wanted}",
                    file.strip_prefix(root()).unwrap_or(file).display()
                ));
            }
        }
    }
    assert!(files.len() > 100, "the walk found the sources");
    assert!(broken.is_empty(), "links to a heading that does not exist:\n{}", broken.join("\n"));
}

#[test]
fn heading_links_are_read_from_text() {
    let text = "see docs/judge.md#the-prompt), [x](#scorers) and [y](../suites.md#merge) but not a.md#";
    assert_eq!(
        heading_links(text),
        [
            ("docs/judge.md".to_owned(), "the-prompt".to_owned()),
            ("../suites.md".to_owned(), "merge".to_owned()),
            (String::new(), "scorers".to_owned()),
        ]
    );
}
