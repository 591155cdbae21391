//! The integration tests of revcal-elo, one binary: a module per area, shared builders in
//! `util`. Everything here goes through the public API only.

mod calibrations;
mod conformance;
mod domains;
mod foreign;
mod location;
mod migration;
mod migration_verified;
mod postgres_faults;
mod properties;
mod receipts_and_handle;
mod records;
mod refusals;
mod rules;
mod scenario;
mod skip_note;
mod sqlite_build;
mod util;
mod verified;
mod verified_properties;
