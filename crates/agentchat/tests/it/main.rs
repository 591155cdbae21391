//! The agents against the real AgentChat server (node), started on a free port per test.

mod live;
mod server;
