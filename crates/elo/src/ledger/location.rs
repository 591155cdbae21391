//! Where a ledger lives: an SQLite file, or a PostgreSQL database named by URL.

use std::fmt;
use std::path::{Path, PathBuf};

/// Where a ledger lives.
///
/// ```
/// use revcal_elo::LedgerLocation;
///
/// let file = LedgerLocation::parse("team.sqlite");
/// assert_eq!(file.to_string(), "team.sqlite");
/// let server = LedgerLocation::parse("postgres://revcal:s3cret@db.internal:5432/reviews");
/// assert!(server.is_postgres());
/// // The password never appears in messages.
/// assert_eq!(server.to_string(), "postgres://revcal:***@db.internal:5432/reviews");
/// ```
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LedgerLocation {
    /// An SQLite file (created when absent).
    Sqlite(PathBuf),
    /// A PostgreSQL database, by `postgres://` or `postgresql://` URL (libpq's syntax,
    /// including `?host=/run/postgresql` for a Unix socket). Its tables are created when
    /// absent.
    Postgres(String),
}

impl LedgerLocation {
    /// A `postgres://` or `postgresql://` URL is a PostgreSQL database; anything else is a
    /// path to an SQLite file.
    pub fn parse(text: &str) -> LedgerLocation {
        if is_postgres_url(text) {
            LedgerLocation::Postgres(text.to_owned())
        } else {
            LedgerLocation::Sqlite(PathBuf::from(text))
        }
    }

    /// True for a PostgreSQL ledger.
    pub fn is_postgres(&self) -> bool {
        matches!(self, LedgerLocation::Postgres(_))
    }

    /// The SQLite file, for a file ledger.
    pub fn path(&self) -> Option<&Path> {
        match self {
            LedgerLocation::Sqlite(path) => Some(path),
            LedgerLocation::Postgres(_) => None,
        }
    }
}

impl From<PathBuf> for LedgerLocation {
    fn from(path: PathBuf) -> LedgerLocation {
        LedgerLocation::Sqlite(path)
    }
}

impl From<&Path> for LedgerLocation {
    fn from(path: &Path) -> LedgerLocation {
        LedgerLocation::Sqlite(path.to_owned())
    }
}

/// Shows the path, or the URL with any password replaced by `***`.
impl fmt::Display for LedgerLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LedgerLocation::Sqlite(path) => write!(f, "{}", path.display()),
            LedgerLocation::Postgres(url) => f.write_str(&redact(url)),
        }
    }
}

/// As `Display`: a `Debug` of a location must not leak a password either.
impl fmt::Debug for LedgerLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LedgerLocation({self})")
    }
}

fn is_postgres_url(text: &str) -> bool {
    ["postgres://", "postgresql://"]
        .iter()
        .any(|scheme| text.get(..scheme.len()).is_some_and(|head| head.eq_ignore_ascii_case(scheme)))
}

/// The URL with the password of its user part and of a `password=` parameter replaced by
/// `***`.
fn redact(url: &str) -> String {
    let Some(scheme_end) = url.find("://").map(|at| at + 3) else { return url.to_owned() };
    let (head, rest) = url.split_at(scheme_end);
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let authority = match authority.rsplit_once('@') {
        Some((user_info, host)) => match user_info.split_once(':') {
            Some((user, _password)) => format!("{user}:***@{host}"),
            None => authority.to_owned(),
        },
        None => authority.to_owned(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let params: Vec<String> = query
                .split('&')
                .map(|param| match param.split_once('=') {
                    Some((key, _)) if key.eq_ignore_ascii_case("password") => format!("{key}=***"),
                    _ => param.to_owned(),
                })
                .collect();
            format!("{path}?{}", params.join("&"))
        }
        None => tail.to_owned(),
    };
    format!("{head}{authority}{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_postgres_and_everything_else_is_a_file() {
        for url in ["postgres://h/db", "postgresql:///db?host=/tmp", "POSTGRES://h/db"] {
            assert!(LedgerLocation::parse(url).is_postgres(), "{url}");
        }
        for path in ["ledger.sqlite", "postgres.sqlite", "./postgres://x", "", "/tmp/postgresql"] {
            assert_eq!(LedgerLocation::parse(path).path(), Some(Path::new(path)), "{path}");
        }
    }

    #[test]
    fn passwords_are_redacted_wherever_they_are() {
        let cases = [
            ("postgres://u:pw@h:5/db", "postgres://u:***@h:5/db"),
            ("postgres://u@h/db", "postgres://u@h/db"),
            (
                "postgres://h/db?user=u&password=pw&sslmode=disable",
                "postgres://h/db?user=u&password=***&sslmode=disable",
            ),
            ("postgresql://u:p%40ss@h?password=x", "postgresql://u:***@h?password=***"),
            ("postgres:///db?host=/tmp/s", "postgres:///db?host=/tmp/s"),
        ];
        for (url, shown) in cases {
            let location = LedgerLocation::parse(url);
            assert_eq!(location.to_string(), shown);
            assert!(!format!("{location:?}").contains("pw"), "{location:?}");
        }
    }
}
