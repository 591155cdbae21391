//! `revcal completions SHELL`: the shell completion script, generated from the same clap
//! definitions that parse the command line, so it never falls behind a flag.

use crate::output::emit;
use clap::{Args, CommandFactory};
use std::process::ExitCode;

/// Arguments of `revcal completions`.
#[derive(Debug, Args)]
#[command(after_help = crate::exit::with_table(
    "Install:\n  revcal completions bash > ~/.local/share/bash-completion/completions/revcal\n  revcal completions zsh > ~/.zfunc/_revcal          (with fpath+=~/.zfunc before compinit)\n  revcal completions fish > ~/.config/fish/completions/revcal.fish\n  revcal completions powershell >> $PROFILE",
    crate::exit::COMPLETIONS_TABLE,
))]
pub(crate) struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_enum)]
    pub(crate) shell: clap_complete::Shell,
}

pub(crate) fn run(args: &CompletionsArgs) -> anyhow::Result<ExitCode> {
    let mut command = crate::args::Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "revcal", &mut script);
    emit(&String::from_utf8(script)?)?;
    Ok(ExitCode::SUCCESS)
}
