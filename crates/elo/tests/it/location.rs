//! `LedgerLocation`: what names a PostgreSQL database, and a password that never shows,
//! however it is written and whatever it holds.

use proptest::prelude::*;
use revcal_elo::{Ledger, LedgerLocation, LocationError};

/// Percent-encodes the characters in `special` (and any `%`, which starts an escape).
fn encode_some(text: &str, special: &[char]) -> String {
    text.chars()
        .map(|c| {
            if c == '%' || special.contains(&c) {
                let mut bytes = [0; 4];
                c.encode_utf8(&mut bytes).bytes().map(|b| format!("%{b:02X}")).collect()
            } else {
                c.to_string()
            }
        })
        .collect()
}

fn encode_all(text: &str) -> String {
    text.bytes()
        .map(|b| if b.is_ascii_alphanumeric() { (b as char).to_string() } else { format!("%{b:02X}") })
        .collect()
}

/// Every way of writing `password` into a ledger location for 127.0.0.1:1 (nothing
/// listens there), as the driver's grammar allows it.
fn spellings(password: &str) -> Vec<String> {
    let quoted = password.replace('\\', "\\\\").replace('\'', "\\'");
    let timeout = "connect_timeout=5";
    vec![
        // The user part ends at the first `@`; `/`, `?`, `#`, spaces and `:` may stay (but
        // not `?` then `=`, which looks like a parameter with an `@` in its value).
        format!("postgres://revcal:{}@127.0.0.1:1/ledger?{timeout}", encode_some(password, &['@', '='])),
        format!("postgresql://revcal:{}@127.0.0.1:1/ledger?{timeout}", encode_all(password)),
        format!("POSTGRESQL://revcal:{}@127.0.0.1:1?{timeout}", encode_some(password, &['@', '?'])),
        // A parameter's value ends at `&`.
        format!("postgres://revcal@127.0.0.1:1/ledger?{timeout}&password={}", encode_some(password, &['&'])),
        format!("postgres://127.0.0.1:1/ledger?password={}&user=revcal&{timeout}", encode_all(password)),
        format!("host=127.0.0.1 port=1 user=revcal password='{quoted}' dbname=ledger {timeout}"),
        format!("password = '{quoted}' host=127.0.0.1 port=1 user=revcal {timeout}"),
    ]
}

/// The pieces of `password` that must not appear: itself, its encodings, and every run of
/// 4 or more letters and digits (the generated ones are random, so they appear nowhere
/// else).
fn pieces(password: &str) -> Vec<String> {
    let mut pieces = vec![password.to_owned(), encode_all(password)];
    pieces.extend([['@', '='], ['@', '?'], ['&', '&']].map(|special| encode_some(password, &special)));
    let mut run = String::new();
    for c in password.chars().chain([' ']) {
        if c.is_alphanumeric() {
            run.push(c);
        } else {
            if run.chars().count() >= 4 {
                pieces.push(run.clone());
            }
            run.clear();
        }
    }
    pieces
}

fn assert_hidden(text: &str, password: &str, context: &str) -> Result<(), TestCaseError> {
    for piece in pieces(password) {
        prop_assert!(!text.contains(&piece), "{context}: `{piece}` of the password shown in: {text}");
    }
    Ok(())
}

/// A password: random runs of letters and digits (5 to 8, so that any leaked part is
/// found) between characters that URLs, query strings and connection strings treat
/// specially, percent-escapes, spaces and non-ASCII.
fn password() -> impl Strategy<Value = String> {
    let special = prop::sample::select(vec![
        "/", "?", "@", "#", "%", "%41", "%zz", " ", ":", "&", "=", "'", "\"", "\\", "+", ",", "[", "]", "é",
        "€", "𝄞", "\t", "@@", "//", "?x=",
    ]);
    prop::collection::vec(("[A-Za-z0-9ñ]{5,8}", special), 1..5).prop_map(|parts| {
        parts.into_iter().map(|(run, special)| format!("{special}{run}")).collect::<String>()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Parsed, shown, debugged and connected to (a refused connection): the password is in
    /// none of it, and the driver got exactly that password.
    #[test]
    fn a_password_never_shows_however_it_is_written(password in password()) {
        for (n, text) in spellings(&password).iter().enumerate() {
            let context = format!("spelling {n}");
            let location = LedgerLocation::parse(text)
                .map_err(|error| TestCaseError::fail(format!("{context}: {error}")))?;
            prop_assert!(location.is_postgres());
            let shown = location.to_string();
            prop_assert!(shown.starts_with("postgresql://revcal:***@127.0.0.1:1/"), "{context}: {shown}");
            assert_hidden(&shown, &password, &context)?;
            assert_hidden(&format!("{location:?}"), &password, &context)?;
            let error = Ledger::open_at(&location, None).expect_err("nothing listens on port 1");
            assert_hidden(&error.to_string(), &password, &context)?;
            assert_hidden(&format!("{error:?}"), &password, &context)?;
            prop_assert!(error.to_string().starts_with(&format!("ledger {shown}: error connecting to server")), "{error}");
        }
    }

    /// Written with an `@` left unencoded (the driver would read the rest of the password
    /// as the host), with the rest of it as a parameter of its own, or unquoted with a
    /// space: refused or read, the password is never shown.
    #[test]
    fn a_badly_written_password_never_shows_either(password in password()) {
        let raw = [
            format!("postgres://revcal:{password}@127.0.0.1:1/ledger"),
            format!("postgres://127.0.0.1:1/ledger?password={password}"),
            format!("host=127.0.0.1 port=1 password={password}"),
        ];
        for (n, text) in raw.iter().enumerate() {
            let context = format!("raw spelling {n}");
            match LedgerLocation::parse(text) {
                Ok(location) => {
                    assert_hidden(&location.to_string(), &password, &context)?;
                    assert_hidden(&format!("{location:?}"), &password, &context)?;
                }
                Err(error) => {
                    assert_hidden(&error.to_string(), &password, &context)?;
                    assert_hidden(&format!("{error:?}"), &password, &context)?;
                }
            }
        }
    }

    /// Anything that is neither a URL nor a connection string is an SQLite path, as given.
    #[test]
    fn paths_stay_paths(path in "[./a-z0-9_:-]{1,30}") {
        prop_assume!(!path.contains("://"));
        let location = LedgerLocation::parse(&path).unwrap();
        prop_assert_eq!(location.path(), Some(std::path::Path::new(&path)));
        prop_assert_eq!(location.to_string(), path);
    }
}

#[test]
fn the_issues_url_is_shown_without_its_password() {
    let location = LedgerLocation::parse("postgres://revcal:se/cret?x@127.0.0.1:55432/postgres").unwrap();
    assert_eq!(location.to_string(), "postgresql://revcal:***@127.0.0.1:55432/postgres");
    assert!(matches!(LedgerLocation::parse("mysql://x"), Err(LocationError::UnknownScheme { .. })));
    assert_eq!("./a:b.db".parse::<LedgerLocation>().unwrap().path(), Some(std::path::Path::new("./a:b.db")));
}
