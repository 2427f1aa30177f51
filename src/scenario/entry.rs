//! One `[[traffic]]` or `[[limiter]]` table of a scenario, handed to the
//! code that owns its kind (a source validator, or an algorithm's
//! [`crate::limiter::Algorithm::parse`]). The kind's own key struct is read
//! from it with every error located, and its values are checked with the
//! helpers here, so every kind words its errors the same way.

use std::ops::Range;
use std::path::Path;

use serde::Deserialize;
use toml::Spanned;
use toml::de::{DeValue, ValueDeserializer};

use super::diagnostics::{Counts, Ctx, ScenarioError, Whole, nearest_key, unknown_field};
use crate::limiter::Limit;
use crate::time::Nanos;

/// An entry of an array of tables, with what its validation may need to know
/// about the rest of the scenario.
pub struct Entry<'a> {
    pub(super) ctx: &'a Ctx<'a>,
    pub(super) value: Spanned<DeValue<'a>>,
    /// `traffic[0]`, `limiter[2]`.
    pub(super) table: String,
    pub(super) kind: String,
    pub(super) limit: Limit,
    pub(super) duration: Option<Nanos>,
    /// Keys every kind of this table takes, handled before the kind sees
    /// the entry (named in "it takes" lists too).
    pub(super) common: &'static [&'static str],
    /// The limiters may be built with a node's own limit (local nodes, or
    /// a sweep over the node count): see [`Entry::node_defaults`].
    pub(super) node_defaults: bool,
}

impl<'a> Entry<'a> {
    /// The dotted name of one of this entry's keys: `limiter[2].slots`.
    pub fn key(&self, key: &str) -> String {
        format!("{}.{key}", self.table)
    }

    /// The entry's own name: `limiter[0]`.
    pub fn table(&self) -> &str {
        &self.table
    }

    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// The scenario's `[limit]`.
    pub fn limit(&self) -> Limit {
        self.limit
    }

    /// Whether a limiter's defaults may follow a node's own limit rather
    /// than `[limit]` (`per_node` in local mode, or a sweep over the node
    /// count). A limiter then keeps a value written equal to `[limit]`'s
    /// default as written, instead of folding it into the default: on a
    /// node it differs from the node's default.
    pub fn node_defaults(&self) -> bool {
        self.node_defaults
    }

    /// The scenario's `duration`, if it has one.
    pub fn duration(&self) -> Option<Nanos> {
        self.duration
    }

    /// The folder of the scenario file (paths in it are relative to it).
    pub fn base(&self) -> &Path {
        self.ctx.path.parent().unwrap_or(Path::new("."))
    }

    /// Where the entry starts (its table header), for errors about the
    /// entry as a whole.
    pub fn span(&self) -> Range<usize> {
        self.value.span()
    }

    /// Reads the entry into the kind's key struct (which must refuse
    /// unknown fields). A key the kind does not take is named with the
    /// keys it does take.
    pub fn keys<T: Deserialize<'a>>(&self) -> Result<T, ScenarioError> {
        T::deserialize(ValueDeserializer::from(self.value.clone())).map_err(|e| {
            match (unknown_field(e.message()), e.span()) {
                (Some((unknown, expected)), Some(span)) => {
                    let mut takes: Vec<&str> = expected.into_iter().filter(|k| *k != "kind").collect();
                    takes.extend(self.common);
                    let near = nearest_key(unknown, &takes)
                        .map(|k| format!("; did you mean `{k}`?"))
                        .unwrap_or_default();
                    let takes = if takes.is_empty() { "no other keys".to_string() } else { takes.join(", ") };
                    self.ctx.at(
                        span,
                        format!(
                            "{} is not a key of kind \"{}\" (it takes: {takes}){near}",
                            crate::shown::code(&self.key(unknown)),
                            self.kind
                        ),
                    )
                }
                _ => self.ctx.toml(&e),
            }
        })
    }

    /// Removes a key every kind of this table takes (such as a limiter's
    /// `retry_after` or a source's `retry`) and reads it, before the kind
    /// reads the rest.
    pub(super) fn take<T: Deserialize<'a>>(
        &mut self,
        key: &str,
    ) -> Result<Option<Spanned<T>>, ScenarioError> {
        let DeValue::Table(table) = self.value.get_mut() else { return Ok(None) };
        let Some(value) = table.remove(key) else { return Ok(None) };
        Spanned::<T>::deserialize(ValueDeserializer::from(value)).map(Some).map_err(|e| self.ctx.toml(&e))
    }

    /// An error at `span`.
    pub fn at(&self, span: Range<usize>, message: impl Into<String>) -> ScenarioError {
        self.ctx.at(span, message)
    }

    /// `key` is required for this kind but missing; `what` says what it
    /// holds, with an example.
    pub fn missing(&self, key: &str, what: &str) -> ScenarioError {
        self.at(self.span(), format!("`{}` is required for kind \"{}\": {what}", self.key(key), self.kind))
    }

    pub fn duration_of(&self, key: &str, v: &Spanned<String>) -> Result<Nanos, ScenarioError> {
        self.ctx.duration(&self.key(key), v)
    }

    pub fn positive_duration(&self, key: &str, v: &Spanned<String>) -> Result<Nanos, ScenarioError> {
        self.ctx.positive_duration(&self.key(key), v)
    }

    pub fn at_least_one(&self, key: &str, v: &Spanned<i64>) -> Result<u64, ScenarioError> {
        self.ctx.at_least_one(&self.key(key), v)
    }

    pub fn at_least_one_whole(&self, key: &str, v: &Spanned<Whole>) -> Result<i128, ScenarioError> {
        self.ctx.at_least_one_whole(&self.key(key), v)
    }

    /// `at_least_one` for a value of a number-or-list key with no bound of
    /// its own: at most what an `i64` holds, as for every other key.
    pub fn count_at_least_one(&self, key: &str, v: &Spanned<Whole>) -> Result<u64, ScenarioError> {
        let n = self.at_least_one_whole(key, v)?;
        if n > i128::from(i64::MAX) {
            return Err(self.at(
                v.span(),
                format!("`{}`: {n} is too large: expected a whole number up to {}", self.key(key), i64::MAX),
            ));
        }
        Ok(n as u64)
    }

    /// The values of a number-or-list key, each with the key that names it
    /// in messages (`slots`, or `slots[1]` for an item of a list) and its
    /// place in the file (a lone number at the key's own place); an empty
    /// list is an error, `what` says what to give instead.
    pub fn counts(
        &self,
        key: &str,
        value: Spanned<Counts>,
        what: &str,
    ) -> Result<Vec<(String, Spanned<Whole>)>, ScenarioError> {
        let span = value.span();
        match value.into_inner() {
            Counts::One(v) => Ok(vec![(key.to_string(), Spanned::new(span, v))]),
            Counts::List(list) if list.is_empty() => {
                Err(self.at(span, format!("`{}` is empty: {what}", self.key(key))))
            }
            Counts::List(list) => {
                Ok(list.into_iter().enumerate().map(|(i, v)| (format!("{key}[{i}]"), v)).collect())
            }
        }
    }

    pub fn rate(&self, key: &str, v: &Spanned<f64>) -> Result<f64, ScenarioError> {
        self.ctx.rate(&self.key(key), v)
    }

    pub fn one_of(&self, key: &str, v: &Spanned<String>, allowed: &[&str]) -> ScenarioError {
        self.ctx.one_of(&self.key(key), v, allowed)
    }
}
