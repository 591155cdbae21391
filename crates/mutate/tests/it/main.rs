//! The integration tests of revcal-mutate, in one binary (one link instead of one per file):
//! the public API's promises (`api`), the engine on real code (`corpus`) and the skip rules
//! on written fixtures (`skip_rules`). Fixtures live in `tests/fixtures/`, found through
//! [`util::fixtures`].

mod api;
mod corpus;
mod docs;
mod formatting;
mod own_parsers;
mod realism;
mod skip_rules;
mod top_level;
mod util;
