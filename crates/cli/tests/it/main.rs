//! The `revcal` and `review-calibration` binaries run as a user runs them: one test binary,
//! one module per command.

mod agentchat_cli;
/// The real AgentChat server for the agentchat tests, shared with revcal-agentchat's tests.
#[path = "../../../agentchat/tests/it/server.rs"]
mod agentchat_server;
mod assets;
mod bench_cli;
mod bugs_cli;
mod calibrate_cli;
mod ci_examples;
mod crafted_cli;
mod demo_cli;
mod docs;
mod elo_cli;
mod exit_codes;
/// The judge tests' HTTP server on 127.0.0.1, shared with revcal-calibrate's tests.
#[path = "../../../judge/tests/it/http_server.rs"]
mod http_server;
mod judge_cli;
mod mutate_cli;
mod preexisting_cli;

mod review_cli;
mod reviewer_user;
mod rubric_cli;
mod score_cli;
mod secrets_cli;
mod suite_cli;
