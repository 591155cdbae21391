//! The secrets this program knows of, kept out of everything it prints or writes: the values
//! of the variables the judge reads API keys from (every provider's, registered at start, so
//! that a reviewer or a server that echoes one gets `[redacted]` printed in its place), and
//! the user information of URLs. The libraries redact what they know themselves (a URL's
//! credentials, the judge its own key); which values are secret in this process is the
//! binary's to know, so the list lives here, and [`redact`] is what every output boundary
//! calls: the `eprintln!` of this crate, `output::emit` and `output::write`, the shard files.

use std::borrow::Cow;
use std::sync::RwLock;

use revcal_judge::Provider;

/// The registered secrets.
static KNOWN: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// Registers `value` as a secret: from now on [`redact`] replaces it wherever it appears.
/// Values shorter than 8 characters (after trimming) are ignored when redacting.
pub(crate) fn register_secret(value: &str) {
    let value = value.trim();
    if value.chars().count() < revcal_process::MIN_SECRET_CHARS {
        return;
    }
    let mut known = KNOWN.write().unwrap_or_else(std::sync::PoisonError::into_inner);
    if !known.iter().any(|k| k == value) {
        known.push(value.to_owned());
    }
}

/// Registers the value of every variable the judge reads an API key from
/// (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, `GEMINI_API_KEY`, `GOOGLE_API_KEY`) that is set.
pub(crate) fn register_secrets_from_env() {
    for provider in Provider::ALL {
        for variable in provider.key_variables() {
            if let Ok(value) = std::env::var(variable) {
                register_secret(&value);
            }
        }
    }
}

/// Every registered secret (for a library that stores what it is sent: the judge's cache).
pub(crate) fn known() -> Vec<String> {
    KNOWN.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
}

/// `text` with every registered secret and the user information of every URL replaced by
/// `[redacted]`.
pub(crate) fn redact(text: &str) -> Cow<'_, str> {
    let known = KNOWN.read().unwrap_or_else(std::sync::PoisonError::into_inner);
    let secrets: Vec<&str> = known.iter().map(String::as_str).collect();
    match revcal_process::redact(text, &secrets) {
        Cow::Borrowed(_) => Cow::Borrowed(text),
        Cow::Owned(redacted) => Cow::Owned(redacted),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_secrets_are_replaced_and_short_values_ignored() {
        register_secret("sk-unit-test-registered-0123");
        register_secret("short");
        assert_eq!(redact("key sk-unit-test-registered-0123!"), "key [redacted]!");
        assert_eq!(redact("a short word"), "a short word");
        assert_eq!(redact("https://u:p@h/x"), "https://[redacted]@h/x");
        assert!(known().iter().any(|k| k == "sk-unit-test-registered-0123"));
    }
}
