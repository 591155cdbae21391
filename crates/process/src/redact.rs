//! Secrets kept out of everything revcal shows or stores. A library redacts what it knows:
//! the user information of URLs (`https://user:TOKEN@host/repo.git`) always, and the secrets
//! it holds itself (a judge its API key) by naming them to [`redact`]. Which values are secret
//! in a whole program (every key in the environment, say) is the program's to know: the
//! `revcal` binary keeps that list and redacts at its output boundary.

use std::borrow::Cow;

/// What a secret is replaced with.
pub const REDACTED: &str = "[redacted]";

/// Secrets shorter than this are not replaced: a value of a few characters would blank out
/// ordinary words, and no provider issues a key that short.
pub const MIN_SECRET_CHARS: usize = 8;

/// `text` with the user information of every URL (everything between `://` and the host)
/// and every one of `secrets` (those of at least [`MIN_SECRET_CHARS`] characters, trimmed)
/// replaced by `[redacted]`; the longest secret first, so that a key that contains another is
/// replaced whole.
///
/// ```
/// use revcal_process::redact;
/// let shown = redact("clone https://u:tok@host/r.git with key sk-0123456789", &["sk-0123456789"]);
/// assert_eq!(shown, "clone https://[redacted]@host/r.git with key [redacted]");
/// ```
pub fn redact<'a>(text: &'a str, secrets: &[&str]) -> Cow<'a, str> {
    let mut text = redact_url_credentials(text);
    let mut secrets: Vec<&str> =
        secrets.iter().map(|s| s.trim()).filter(|s| s.chars().count() >= MIN_SECRET_CHARS).collect();
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    for secret in secrets {
        if text.contains(secret) {
            text = Cow::Owned(text.replace(secret, REDACTED));
        }
    }
    text
}

/// Characters that end a URL in running text (a message, a JSON string, an HTML attribute).
fn ends_url(c: char) -> bool {
    c.is_whitespace() || matches!(c, '"' | '\'' | '`' | '<' | '>')
}

/// `text` with the user information of each `scheme://user:password@host` replaced.
///
/// Parsers disagree on where user information ends (an RFC 3986 parser stops at the first
/// `/`, `?` or `#`; PostgreSQL's reads to the last `@`), so this takes the widest reading:
/// everything up to the last `@` before the URL ends, when that part holds a `:` (a password)
/// or no `/` (a token alone, as in `https://TOKEN@github.com/...`). A path with an `@` and no
/// password (`https://registry.npmjs.org/@types/node`) is left alone.
pub fn redact_url_credentials(text: &str) -> Cow<'_, str> {
    if !text.contains("://") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut changed = false;
    while let Some(at) = rest.find("://") {
        let start = at + 3;
        out.push_str(&rest[..start]);
        let after = &rest[start..];
        let end = after.find(ends_url).unwrap_or(after.len());
        let url = &after[..end];
        match url.rfind('@') {
            Some(sign) if sign > 0 && holds_secret(scheme_before(&out), &url[..sign]) => {
                out.push_str(REDACTED);
                out.push_str(&url[sign..]);
                changed = true;
            }
            _ => out.push_str(url),
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    if changed { Cow::Owned(out) } else { Cow::Borrowed(text) }
}

/// The scheme of the URL whose `://` ends `text` (`https` in `clone https://`).
fn scheme_before(text: &str) -> &str {
    let text = text.strip_suffix("://").unwrap_or(text);
    let start = text
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
        .map_or(0, |i| i + 1);
    &text[start..]
}

/// Whether the user information `info` of a URL with `scheme` may hold a secret.
///
/// A password does, unless it is already masked as `***` (how the ledger names a PostgreSQL
/// URL). A user name alone may be a token (`https://TOKEN@github.com/...`), except in a
/// PostgreSQL URL, where it names a role and a password can only follow a `:`. Text with a `/`
/// and no `:` before the last `@` is a path (`https://registry.npmjs.org/@types/node`).
fn holds_secret(scheme: &str, info: &str) -> bool {
    match info.split_once(':') {
        Some((_, password)) => password != "***",
        None => !info.contains('/') && !matches!(scheme, "postgres" | "postgresql"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_credentials_are_redacted_however_the_url_is_spelled() {
        let cases = [
            (
                "clone https://user:TOKEN@host/repo.git failed",
                "clone https://[redacted]@host/repo.git failed",
            ),
            ("'https://ghp_TOKEN@github.com/o/r'", "'https://[redacted]@github.com/o/r'"),
            ("postgres://revcal:se/cret?x@127.0.0.1:5432/db", "postgres://[redacted]@127.0.0.1:5432/db"),
            ("\"ssh://git:p@ss@host:22/r\"", "\"ssh://[redacted]@host:22/r\""),
            ("a https://h/x b https://u:p@h/y", "a https://h/x b https://[redacted]@h/y"),
            ("postgresql://revcal:***x@h/db", "postgresql://[redacted]@h/db"),
            ("(postgres://u:p@h/db)", "(postgres://[redacted]@h/db)"),
            ("git+https://TOKEN@h/r", "git+https://[redacted]@h/r"),
        ];
        for (text, expected) in cases {
            assert_eq!(redact_url_credentials(text), expected, "{text}");
        }
        let untouched = [
            "https://registry.npmjs.org/@types/node",
            "git@github.com:o/r.git",
            "no url",
            // Already masked by the ledger, and a PostgreSQL role without a password.
            "ledger postgresql://revcal:***@db:5432/reviews",
            "postgresql://revcal@/db?host=/tmp/s&port=5",
        ];
        for untouched in untouched {
            assert!(matches!(redact_url_credentials(untouched), Cow::Borrowed(_)), "{untouched}");
        }
    }

    #[test]
    fn named_secrets_are_replaced_longest_first_and_short_values_ignored() {
        let secrets = ["sk-unit-test-0123", "sk-unit-test-0123-long", "short"];
        assert_eq!(redact("key sk-unit-test-0123-long!", &secrets), "key [redacted]!");
        assert_eq!(redact("key sk-unit-test-0123.", &secrets), "key [redacted].");
        assert_eq!(redact("a short word", &secrets), "a short word");
        assert!(matches!(redact("nothing here", &secrets), Cow::Borrowed(_)));
    }

    proptest::proptest! {
        /// Whatever the password, it never survives in a URL written into any text.
        #[test]
        fn a_password_never_survives(
            user in "[a-z]{1,8}",
            // Printable ASCII but the characters that end a URL in text.
            password in "[!#-&(-;=?-_a-~]{8,24}",
            before in "[ -~]{0,20}",
        ) {
            proptest::prop_assume!(!before.contains(&password) && !"example.org/r.git tail".contains(&password));
            let text = format!("{before} https://{user}:{password}@example.org/r.git tail");
            let redacted = redact_url_credentials(&text);
            proptest::prop_assert!(!redacted.contains(&format!(":{password}@")), "{}", redacted);
            proptest::prop_assert!(!redacted.contains(&password), "{}", redacted);
        }
    }
}
