//! The integration tests of revcal-judge, through its public API only: one test binary, one
//! module per area.

mod http_server;
mod judge;
mod judge_cases;
mod judge_http;
mod structured_output;
