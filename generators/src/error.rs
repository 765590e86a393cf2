//! The one error kind the CLI treats specially: a mistake in what the user
//! asked for (a config key, a value, a flag), as opposed to a failure of the
//! work itself (a tool crashed, lint found warnings, RTL mismatched).
//!
//! `exanet` exits with code 2 when any error in the chain is a [`UsageError`]
//! and with code 1 otherwise.

use std::fmt;

/// A user-input error: bad config key or value, bad flag, missing prerequisite
/// the user must create (e.g. no manifest yet).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Is any error in `e`'s chain a [`UsageError`]?
pub fn is_usage(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.is::<UsageError>())
}

/// `bail!` with a [`UsageError`].
#[macro_export]
macro_rules! usage_bail {
    ($($arg:tt)*) => {
        return Err(anyhow::Error::new($crate::error::UsageError(format!($($arg)*))))
    };
}

/// A [`UsageError`] as an `anyhow::Error`.
pub fn usage(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(UsageError(msg.into()))
}
