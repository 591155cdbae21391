//! Where a ledger lives: an SQLite file, or a PostgreSQL database named by URL or by a
//! key=value connection string.
//!
//! A PostgreSQL location is parsed once, here, by the driver's own parser
//! (`tokio_postgres::Config`), and shown from what the driver parsed, never from the text:
//! however the text spells its password (in the user part, percent-encoded or not, as
//! `?password=`, as `password='...'`), the driver knows which part is the password, and
//! the description leaves it out. The driver's parse errors are reworded so that they quote
//! no part of the text either.

use std::fmt;
use std::path::{Path, PathBuf};
#[cfg(feature = "postgres")]
use tokio_postgres::config::Host;

/// Where a ledger lives.
///
/// ```
/// use revcal_elo::LedgerLocation;
///
/// let file = LedgerLocation::parse("team.sqlite")?;
/// assert_eq!(file.to_string(), "team.sqlite");
/// let server = LedgerLocation::parse("postgres://revcal:s3/cr?t@db.internal:5432/reviews")?;
/// assert!(server.is_postgres());
/// // The password never appears in messages.
/// assert_eq!(server.to_string(), "postgresql://revcal:***@db.internal:5432/reviews");
/// assert!(LedgerLocation::parse("mysql://db.internal/reviews").is_err());
/// # Ok::<(), revcal_elo::LocationError>(())
/// ```
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LedgerLocation {
    /// An SQLite file (created when absent).
    Sqlite(PathBuf),
    /// A PostgreSQL database. Its tables are created when absent. (Cargo feature
    /// `postgres`, on by default.)
    #[cfg(feature = "postgres")]
    Postgres(PostgresLocation),
}

/// A PostgreSQL database as the driver reads its URL or connection string. `Display` and
/// `Debug` show it without its password. (Cargo feature `postgres`, on by default.)
#[cfg(feature = "postgres")]
#[derive(Clone, PartialEq, Eq)]
pub struct PostgresLocation {
    /// Boxed: the driver's configuration is ten times the size of a path.
    config: Box<tokio_postgres::Config>,
    /// The description messages show.
    shown: String,
}

#[cfg(feature = "postgres")]
impl PostgresLocation {
    /// The driver's configuration (with the password: for connecting only).
    pub(crate) fn config(&self) -> &tokio_postgres::Config {
        &self.config
    }
}

/// Why a `--ledger` text names no ledger. The message never quotes the text beyond a URL's
/// scheme: it may hold a password.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LocationError {
    /// A URL with a scheme that is not PostgreSQL's.
    #[error(
        "`{scheme}://` names no ledger: a ledger is an SQLite file (a path, such as ./ledger.sqlite) \
         or a PostgreSQL database (a postgres:// or postgresql:// URL, or a key=value connection \
         string such as `host=db.internal dbname=reviews`)"
    )]
    UnknownScheme {
        /// The scheme as written (at most 32 characters of it).
        scheme: String,
    },
    /// A PostgreSQL URL or connection string that cannot be read.
    #[error("the PostgreSQL {form} cannot be read: {reason}")]
    Postgres {
        /// `URL` or `connection string`.
        form: &'static str,
        /// What is wrong, in words that quote none of it.
        reason: String,
    },
}

/// The key=value keywords the driver knows (`tokio_postgres::Config`'s).
const DRIVER_KEYWORDS: &[&str] = &[
    "user",
    "password",
    "dbname",
    "options",
    "application_name",
    "sslmode",
    "sslnegotiation",
    "host",
    "hostaddr",
    "port",
    "connect_timeout",
    "tcp_user_timeout",
    "keepalives",
    "keepalives_idle",
    "keepalives_interval",
    "keepalives_retries",
    "target_session_attrs",
    "channel_binding",
    "load_balance_hosts",
];

/// libpq's keywords that the driver does not support: named in errors, as they are no
/// secret (any other unknown keyword may be a piece of a password).
#[cfg(feature = "postgres")]
const LIBPQ_ONLY_KEYWORDS: &[&str] = &[
    "passfile",
    "service",
    "fallback_application_name",
    "client_encoding",
    "sslcert",
    "sslkey",
    "sslpassword",
    "sslrootcert",
    "sslcrl",
    "sslcrldir",
    "sslsni",
    "sslcompression",
    "requirepeer",
    "require_auth",
    "ssl_min_protocol_version",
    "ssl_max_protocol_version",
    "gssencmode",
    "krbsrvname",
    "gsslib",
    "gssdelegation",
    "replication",
];

impl LedgerLocation {
    /// Reads a `--ledger` text: a `postgres://` or `postgresql://` URL (the scheme in any
    /// case) or a libpq key=value connection string (`host=... dbname=...`, starting with
    /// one of the driver's keywords) is a PostgreSQL database; another `scheme://` is
    /// refused; anything else is the path of an SQLite file (`./a:b.db` included).
    pub fn parse(text: &str) -> Result<LedgerLocation, LocationError> {
        if let Some((scheme, rest)) = url_scheme(text) {
            if !["postgres", "postgresql"].iter().any(|known| scheme.eq_ignore_ascii_case(known)) {
                let scheme = scheme.chars().take(32).collect();
                return Err(LocationError::UnknownScheme { scheme });
            }
            check_user_part(rest)?;
            // The driver knows the scheme in lower case only.
            return postgres_location(&format!("postgresql://{rest}"), "URL");
        }
        if starts_with_keyword(text) {
            return postgres_location(text, "connection string");
        }
        Ok(LedgerLocation::Sqlite(PathBuf::from(text)))
    }

    /// True for a PostgreSQL ledger.
    pub fn is_postgres(&self) -> bool {
        // Every variant named, no wildcard: a new backend must decide here, at compile time,
        // rather than be reported as PostgreSQL.
        match self {
            LedgerLocation::Sqlite(_) => false,
            #[cfg(feature = "postgres")]
            LedgerLocation::Postgres(_) => true,
        }
    }

    /// The SQLite file, for a file ledger.
    pub fn path(&self) -> Option<&Path> {
        match self {
            LedgerLocation::Sqlite(path) => Some(path),
            #[cfg(feature = "postgres")]
            LedgerLocation::Postgres(_) => None,
        }
    }
}

impl std::str::FromStr for LedgerLocation {
    type Err = LocationError;

    fn from_str(text: &str) -> Result<LedgerLocation, LocationError> {
        LedgerLocation::parse(text)
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

/// Shows the path, or the database as a URL with its password as `***`.
impl fmt::Display for LedgerLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LedgerLocation::Sqlite(path) => write!(f, "{}", path.display()),
            #[cfg(feature = "postgres")]
            LedgerLocation::Postgres(location) => fmt::Display::fmt(location, f),
        }
    }
}

/// As `Display`: a `Debug` of a location must not leak a password either.
impl fmt::Debug for LedgerLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LedgerLocation({self})")
    }
}

#[cfg(feature = "postgres")]
impl fmt::Display for PostgresLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown)
    }
}

#[cfg(feature = "postgres")]
impl fmt::Debug for PostgresLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PostgresLocation({})", self.shown)
    }
}

#[cfg(feature = "postgres")]
impl PostgresLocation {
    fn new(config: tokio_postgres::Config) -> PostgresLocation {
        let shown = describe(&config);
        PostgresLocation { config: Box::new(config), shown }
    }
}

/// `(scheme, rest)` of a text that starts like a URL: a letter, then letters, digits, `+`,
/// `-` or `.`, then `://`.
fn url_scheme(text: &str) -> Option<(&str, &str)> {
    let (scheme, rest) = text.split_once("://")?;
    let mut chars = scheme.chars();
    let starts = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    (starts && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
        .then_some((scheme, rest))
}

/// True when `text` starts with `keyword=` (spaces allowed around `=`) for one of the
/// driver's keywords: a key=value connection string.
fn starts_with_keyword(text: &str) -> bool {
    let text = text.trim_start();
    let end = text.find(|c: char| c.is_whitespace() || c == '=').unwrap_or(text.len());
    DRIVER_KEYWORDS.contains(&&text[..end]) && text[end..].trim_start().starts_with('=')
}

/// The driver's URL grammar ends the user part at the first `@`, wherever it is. An `@`
/// left unencoded elsewhere would make it read a piece of the password as the host or the
/// database name (and messages would show that piece): a second `@` before the query
/// string (`user:p@ss@host`), or an `@` inside a parameter's value (`?password=p@ss`, which
/// turns everything before it into the user part). Both are refused.
fn check_user_part(rest: &str) -> Result<(), LocationError> {
    let Some((user_part, after_user)) = rest.split_once('@') else { return Ok(()) };
    let second_at = after_user.split('?').next().unwrap_or_default().contains('@');
    let in_a_parameter = user_part.split_once('?').is_some_and(|(_, query)| query.contains('='));
    if second_at || in_a_parameter {
        return Err(LocationError::Postgres {
            form: "URL",
            reason: "an `@` that does not end the user name and password (a second one, or one in a \
                     parameter's value): write it as %40"
                .into(),
        });
    }
    Ok(())
}

/// The PostgreSQL database `text` names (a URL or a connection string, as `form` says).
#[cfg(feature = "postgres")]
fn postgres_location(text: &str, form: &'static str) -> Result<LedgerLocation, LocationError> {
    Ok(LedgerLocation::Postgres(PostgresLocation::new(parse_with_driver(text, form)?)))
}

/// Without the `postgres` feature a PostgreSQL location is recognised, and refused in words
/// that say why, rather than taken for the name of an SQLite file.
#[cfg(not(feature = "postgres"))]
fn postgres_location(_text: &str, form: &'static str) -> Result<LedgerLocation, LocationError> {
    Err(LocationError::Postgres {
        form,
        reason: "this build has no PostgreSQL ledger (revcal-elo's `postgres` cargo feature is off)".into(),
    })
}

#[cfg(feature = "postgres")]
fn parse_with_driver(text: &str, form: &'static str) -> Result<tokio_postgres::Config, LocationError> {
    text.parse::<tokio_postgres::Config>()
        .map_err(|error| LocationError::Postgres { form, reason: reword(&error) })
}

/// The driver's parse error in words that quote nothing of the text: its messages name an
/// unknown keyword, or the character found where `=` was expected, which may be a piece of
/// a password whose `&`, `=` or space was not escaped.
#[cfg(feature = "postgres")]
fn reword(error: &tokio_postgres::Error) -> String {
    let detail = std::error::Error::source(error).map(ToString::to_string).unwrap_or_default();
    let quoted = |prefix: &str| detail.strip_prefix(prefix).and_then(|rest| rest.strip_suffix('`'));
    if let Some(option) = quoted("invalid value for option `")
        && DRIVER_KEYWORDS.contains(&option)
    {
        return format!("invalid value for option `{option}`");
    }
    if let Some(option) = quoted("unknown option `") {
        return if LIBPQ_ONLY_KEYWORDS.contains(&option) {
            format!("option `{option}` is libpq's and not supported here")
        } else {
            "an unknown option (a misspelt name, or a value with an unescaped `&` or `=`: write them \
             as %26 and %3D in a URL)"
                .into()
        };
    }
    if let Some(rest) = detail.strip_prefix("unexpected character at byte ") {
        let byte: String = rest.chars().take_while(char::is_ascii_digit).collect();
        return format!(
            "`=` expected at byte {byte} (a value with spaces must be quoted: password='two words')"
        );
    }
    match detail.as_str() {
        "unexpected EOF" => "it ends where a key's `=` or a value was expected".into(),
        "unterminated parameter" => "a URL parameter without `=`".into(),
        "unterminated quoted connection parameter value" => "a quoted value is not closed".into(),
        _ if detail.starts_with("invalid utf-8") || detail.starts_with("incomplete utf-8") => {
            "a percent-encoded part is not UTF-8".into()
        }
        _ => "the driver does not accept it".into(),
    }
}

/// The database as a URL made from what the driver parsed, without the password: user,
/// hosts and ports, database, and `options` (which tell two ledgers in two schemas apart).
#[cfg(feature = "postgres")]
fn describe(config: &tokio_postgres::Config) -> String {
    let mut shown = String::from("postgresql://");
    if let Some(user) = config.get_user() {
        shown.push_str(&encode(user, ""));
    }
    if config.get_password().is_some() {
        shown.push_str(":***");
    }
    if config.get_user().is_some() || config.get_password().is_some() {
        shown.push('@');
    }
    let hosts = config.get_hosts();
    let ports = config.get_ports();
    let mut parameters = Vec::new();
    let names: Vec<Option<&str>> = hosts
        .iter()
        .map(|host| match host {
            Host::Tcp(name) => Some(name.as_str()),
            #[cfg(unix)]
            Host::Unix(_) => None,
        })
        .collect();
    if names.iter().all(Option::is_some) && !names.is_empty() {
        for (index, name) in names.iter().flatten().enumerate() {
            if index > 0 {
                shown.push(',');
            }
            let name = encode(name, ":[]");
            shown.push_str(&if name.contains(':') { format!("[{name}]") } else { name });
            // The driver's rule: the host's own port, else the first.
            if let Some(port) = ports.get(index).or(ports.first()) {
                shown.push_str(&format!(":{port}"));
            }
        }
    } else {
        let hosts: Vec<String> = hosts
            .iter()
            .map(|host| match host {
                Host::Tcp(name) => encode(name, ":"),
                #[cfg(unix)]
                Host::Unix(path) => encode(&path.to_string_lossy(), "/"),
            })
            .collect();
        if !hosts.is_empty() {
            parameters.push(format!("host={}", hosts.join(",")));
        }
        if !ports.is_empty() {
            let ports: Vec<String> = ports.iter().map(u16::to_string).collect();
            parameters.push(format!("port={}", ports.join(",")));
        }
    }
    let addresses: Vec<String> = config.get_hostaddrs().iter().map(ToString::to_string).collect();
    if !addresses.is_empty() {
        parameters.push(format!("hostaddr={}", encode(&addresses.join(","), ":,")));
    }
    shown.push('/');
    if let Some(database) = config.get_dbname() {
        shown.push_str(&encode(database, ""));
    }
    if let Some(options) = config.get_options() {
        parameters.push(format!("options={}", encode(options, "")));
    }
    if !parameters.is_empty() {
        shown.push('?');
        shown.push_str(&parameters.join("&"));
    }
    shown
}

/// Percent-encodes every byte but URL's unreserved characters and those in `keep`.
#[cfg(feature = "postgres")]
fn encode(text: &str, keep: &str) -> String {
    let mut encoded = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || "-._~".contains(c) || keep.contains(c) {
            encoded.push(c);
        } else {
            let mut bytes = [0; 4];
            for byte in c.encode_utf8(&mut bytes).bytes() {
                encoded.push_str(&format!("%{byte:02X}"));
            }
        }
    }
    encoded
}

#[cfg(all(test, feature = "postgres"))]
mod tests {
    use super::*;

    fn shown(text: &str) -> String {
        LedgerLocation::parse(text)
            .map_or_else(|error| format!("error: {error}"), |location| location.to_string())
    }

    #[test]
    fn urls_and_connection_strings_are_postgres_and_paths_are_files() {
        for url in [
            "postgres://h/db",
            "postgresql:///db?host=/tmp",
            "POSTGRES://h/db",
            "PostgreSQL://u@h",
            "host=/tmp dbname=x",
            "  dbname = x",
            "password='a b' host=h",
        ] {
            assert!(LedgerLocation::parse(url).is_ok_and(|location| location.is_postgres()), "{url}");
        }
        for path in [
            "ledger.sqlite",
            "postgres.sqlite",
            "./postgres://x",
            "",
            "/tmp/postgresql",
            "./a:b.db",
            "a:b.db",
            "C:\\ledgers\\team.sqlite",
            "hostname=x.db",
            "host.sqlite",
            "1http://x",
            "a b=c",
        ] {
            let location = LedgerLocation::parse(path).unwrap_or_else(|error| panic!("{path}: {error}"));
            assert_eq!(location.path(), Some(Path::new(path)), "{path}");
        }
    }

    #[test]
    fn other_url_schemes_are_refused_naming_what_is_accepted() {
        for (text, scheme) in [
            ("mysql://x", "mysql"),
            ("sqlite:///x.db", "sqlite"),
            ("HTTPS://h", "HTTPS"),
            ("a+b.c-d://", "a+b.c-d"),
        ] {
            let error = LedgerLocation::parse(text).unwrap_err();
            assert_eq!(error, LocationError::UnknownScheme { scheme: scheme.into() });
            let message = error.to_string();
            assert!(message.starts_with(&format!("`{scheme}://` names no ledger")), "{message}");
            assert!(message.contains("postgres://") && message.contains("SQLite file"), "{message}");
        }
    }

    #[test]
    fn the_database_is_shown_as_the_driver_read_it_without_the_password() {
        let cases = [
            ("postgres://u:pw@h:5/db", "postgresql://u:***@h:5/db"),
            ("postgres://u@h/db", "postgresql://u@h:5432/db"),
            ("postgres://h/db?user=u&password=pw&sslmode=disable", "postgresql://u:***@h:5432/db"),
            ("postgresql://u:p%40ss@h?password=x", "postgresql://u:***@h:5432/"),
            ("postgres:///db?host=/tmp/s", "postgresql:///db?host=/tmp/s"),
            ("postgres://revcal@/db?host=/tmp/s&port=7", "postgresql://revcal@/db?host=/tmp/s&port=7"),
            (
                "postgres://revcal:se/cret?x@127.0.0.1:55432/postgres",
                "postgresql://revcal:***@127.0.0.1:55432/postgres",
            ),
            ("postgres://u:pw@a:1,b:2/db", "postgresql://u:***@a:1,b:2/db"),
            ("postgres://u:pw@[::1]:5/db", "postgresql://u:***@[::1]:5/db"),
            ("host=h port=6 user=u password='se cr\\'et' dbname=d", "postgresql://u:***@h:6/d"),
            ("dbname=d hostaddr=10.0.0.1 password=x", "postgresql://:***@/d?hostaddr=10.0.0.1"),
            (
                "postgres://u@h/db?options=-c%20search_path%3Dteam",
                "postgresql://u@h:5432/db?options=-c%20search_path%3Dteam",
            ),
            ("postgres://us%20er:x@h/d%C3%A9", "postgresql://us%20er:***@h:5432/d%C3%A9"),
        ];
        for (text, expected) in cases {
            assert_eq!(shown(text), expected, "{text}");
            let location = LedgerLocation::parse(text).unwrap();
            assert_eq!(format!("{location:?}"), format!("LedgerLocation({expected})"));
        }
    }

    #[test]
    fn unreadable_urls_are_refused_without_quoting_them() {
        let cases = [
            ("postgres://u:Pv9s@Ty2h@h/db", "write it as %40"),
            ("postgres://u:Pv9s/x@Ty2h/db@h", "write it as %40"),
            ("postgres://h/db?password=Pv9s@Ty2h", "write it as %40"),
            ("postgres://h/db?user=u&password=Pv9s@Ty2h&port=5", "write it as %40"),
            ("postgres://u:Pv9sTy2h@h:port/db", "invalid value for option `port`"),
            ("postgres://h/db?password=Pv9s&Ty2h=1", "an unknown option"),
            ("postgres://h/db?password=Pv9s&Ty2h", "a URL parameter without `=`"),
            ("postgres://h/db?sslrootcert=/x", "option `sslrootcert` is libpq's"),
            ("host=h password=Pv9s Ty2h dbname=d", "`=` expected at byte"),
            ("host=h password=Pv9s Ty2h", "it ends where"),
            ("host=h password='Pv9s Ty2h", "a quoted value is not closed"),
            ("postgres://h/%FF%FEPv9s", "not UTF-8"),
        ];
        for (text, reason) in cases {
            let message = shown(text);
            assert!(message.contains(reason), "{text}: {message}");
            assert!(!message.contains("Pv9s") && !message.contains("Ty2h"), "{text}: {message}");
        }
    }
}
