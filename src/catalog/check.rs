//! CHECK constraints of a table (PostgreSQL's `pg_constraint` rows of
//! `contype = 'c'`). A table's checks are part of its definition, as its
//! indexes are ([`super::index`]): versioned with it (ADD, DROP, RENAME
//! and VALIDATE CONSTRAINT write a new table version, visible by the same
//! snapshot rules), written with it to the catalog file before the commit
//! is recorded, and gone with it on DROP TABLE.
//!
//! A check keeps its condition as source text (the parser's print of it),
//! which the file stores, and bound over the table's columns (`Column(i)`
//! is table column `i`), which the row-writing paths evaluate. The file is
//! read with the binder the opener supplies ([`super::PredicateBinder`]):
//! the catalog layer does not bind expressions itself.
//!
//! Invariants: names are unique among the table's checks, which are kept
//! sorted by name; `expr` is
//! boolean and reads only the table's columns (no subqueries, aggregates,
//! window or set-returning functions); a check that is not `validated`
//! (`NOT VALID`) holds for every row written since it was added, not
//! necessarily for older ones.

use super::index::PredicateBinder;
use super::persist::{corrupt, esc, unesc};
use super::TableDef;
use crate::error::Result;
use crate::expr::Expr;

/// One CHECK constraint of a table.
#[derive(Debug, Clone)]
pub struct CheckConstraint {
    /// Its name (unique among the table's constraints).
    pub name: String,
    /// The condition's source text, bound again on open.
    pub text: String,
    /// The condition bound over the table's columns.
    pub expr: Expr,
    /// Existing rows were checked (false after `NOT VALID` until
    /// `VALIDATE CONSTRAINT`).
    pub validated: bool,
    /// `NO INHERIT`.
    pub no_inherit: bool,
    /// Its description (`COMMENT ON`), never empty.
    pub comment: Option<String>,
}

impl PartialEq for CheckConstraint {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.text == other.text
            && self.validated == other.validated
            && self.no_inherit == other.no_inherit
            && self.comment == other.comment
    }
}

/// Appends the `check <flags> <name> <text>` line of `c`. Flags: 1
/// validated, 2 NO INHERIT.
pub(super) fn write(text: &mut String, c: &CheckConstraint) {
    let flags = c.validated as u8 | (c.no_inherit as u8) << 1;
    text.push_str(&format!(
        "check {flags} {} {}\n",
        esc(&c.name),
        esc(&c.text)
    ));
}

/// Reads a `check` line (split on spaces) of table `t` (whose columns are
/// read already), binding its text with `bind`.
pub(super) fn parse(f: &[&str], t: &TableDef, bind: &PredicateBinder) -> Result<CheckConstraint> {
    if f.len() != 4 {
        return Err(corrupt("bad check line"));
    }
    let flags: u8 = f[1].parse().map_err(|_| corrupt("bad check flags"))?;
    let text = unesc(f[3])?;
    let expr = bind(t, &text)?;
    Ok(CheckConstraint {
        comment: None,
        name: unesc(f[2])?,
        text,
        expr,
        validated: flags & 1 != 0,
        no_inherit: flags & 2 != 0,
    })
}
