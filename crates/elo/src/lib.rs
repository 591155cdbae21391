//! Review reputation: signed review messages, an ELO engine, a ledger and receipts.
