//! Descriptions (`COMMENT ON`) in the catalog file. A description is a
//! field of the object it describes (a table, column, index, constraint,
//! view, sequence, function, operator, domain or type), so it is versioned,
//! rolled back, dropped and renamed with that object. In the file it is
//! a line of its own right after the line of its object:
//!
//! ```text
//! comment <text>              the object of the line before
//! concomment <n> <text>       the constraint of the index line before
//!                             (n = 0), or check n of the domain line before
//! ```
//!
//! Only objects with a description have such a line, so a file written
//! before descriptions existed reads as it did.

use super::persist::{corrupt, esc, unesc};
use super::{State, TableDef};
use crate::error::Result;
use crate::txn::Xid;

/// Appends the `comment` line of a description, if there is one.
pub(super) fn write(text: &mut String, comment: &Option<String>) {
    if let Some(c) = comment {
        text.push_str(&format!("comment {}\n", esc(c)));
    }
}

/// Appends the `concomment <n>` line of a constraint's description.
pub(super) fn write_constraint(text: &mut String, n: usize, comment: &Option<String>) {
    if let Some(c) = comment {
        text.push_str(&format!("concomment {n} {}\n", esc(c)));
    }
}

/// The objects being read from the file that a description line can
/// attach to.
pub(super) struct Reading<'a> {
    pub tables: &'a mut Vec<(u32, u32, TableDef)>,
    pub views: &'a mut Vec<(Xid, Xid, super::ViewDef)>,
    pub st: &'a mut State,
}

/// Reads a `comment` or `concomment` line (split on spaces) into the
/// object of the line before it, whose first word is `last`.
pub(super) fn parse(f: &[&str], last: &str, r: Reading<'_>) -> Result<()> {
    let bad = || corrupt("bad comment line");
    let (n, word) = match f {
        ["comment", w] => (None, *w),
        ["concomment", n, w] => (Some(n.parse::<usize>().map_err(|_| bad())?), *w),
        _ => return Err(bad()),
    };
    let text = Some(unesc(word)?);
    let table = r.tables.last_mut().map(|t| &mut t.2);
    let slot: Option<&mut Option<String>> = match (last, n) {
        ("table", None) => table.map(|t| &mut t.comment),
        ("column", None) => table
            .and_then(|t| t.columns.last_mut())
            .map(|c| &mut c.comment),
        ("index", None) => table
            .and_then(|t| t.indexes.last_mut())
            .map(|i| &mut i.comment),
        ("index", Some(0)) => table
            .and_then(|t| t.indexes.last_mut())
            .map(|i| &mut i.constraint_comment),
        ("check", None) => table
            .and_then(|t| t.checks.last_mut())
            .map(|c| &mut c.comment),
        ("view", None) => r.views.last_mut().map(|v| &mut v.2.comment),
        ("viewcol", None) => r
            .views
            .last_mut()
            .and_then(|v| v.2.columns.last_mut())
            .map(|c| &mut c.comment),
        ("function", None) => last_def(&mut r.st.functions).map(|d| &mut d.comment),
        ("domain", None) => last_def(&mut r.st.types).map(|d| &mut d.comment),
        ("domain", Some(i)) => last_def(&mut r.st.types)
            .and_then(|d| d.checks.get_mut(i))
            .map(|c| &mut c.comment),
        ("fkey", None) => last_def(&mut r.st.fkeys).map(|d| &mut d.comment),
        ("operator", None) => last_def(&mut r.st.operators).map(|d| &mut d.comment),
        ("sequence", None) => last_def(&mut r.st.sequences).map(|d| &mut d.comment),
        ("basetype", None) => last_def(&mut r.st.base_types).map(|d| &mut d.comment),
        _ => None,
    };
    *slot.ok_or_else(|| corrupt("comment without its object"))? = text;
    Ok(())
}

/// The definition of the last version of `vs`, just read and not yet
/// shared.
fn last_def<T>(vs: &mut [super::versions::Version<T>]) -> Option<&mut T> {
    vs.last_mut()
        .and_then(|v| std::sync::Arc::get_mut(&mut v.def))
}

/// Whether tables `a` and `b` have the same columns, indexes and checks
/// apart from their descriptions: a new description changes nothing a
/// statement planned with the older version relies on.
pub(super) fn same_apart_from_comments(a: &TableDef, b: &TableDef) -> bool {
    let columns = a.columns.len() == b.columns.len()
        && a.columns.iter().zip(&b.columns).all(|(x, y)| {
            (&x.name, &x.ty, x.not_null, &x.default, &x.domain)
                == (&y.name, &y.ty, y.not_null, &y.default, &y.domain)
        });
    let indexes = a.indexes.len() == b.indexes.len()
        && a.indexes.iter().zip(&b.indexes).all(|(x, y)| {
            (x.oid, &x.name, x.relfilenode, &x.columns, &x.include)
                == (y.oid, &y.name, y.relfilenode, &y.columns, &y.include)
                && (x.unique, x.primary, x.constraint, &x.predicate)
                    == (y.unique, y.primary, y.constraint, &y.predicate)
        });
    let checks = a.checks.len() == b.checks.len()
        && a.checks.iter().zip(&b.checks).all(|(x, y)| {
            (&x.name, &x.text, x.validated, x.no_inherit)
                == (&y.name, &y.text, y.validated, y.no_inherit)
        });
    columns && indexes && checks
}

impl super::Catalog {
    /// Replaces the foreign-key constraint `oid` that `view` sees by
    /// `def` in transaction `xid` (a new description). Fails with 40001
    /// when another transaction changed it first.
    pub fn replace_foreign_key(
        &self,
        view: &super::CatalogView,
        xid: Xid,
        oid: u32,
        def: super::ForeignKeyDef,
    ) -> Result<()> {
        let mut st = self.write();
        let Some(pos) = super::versions::position(&st.fkeys, view, |d| d.oid == oid) else {
            return Err(crate::err!(
                UndefinedObject,
                "constraint with OID {oid} does not exist"
            ));
        };
        super::versions::replace(&mut st.fkeys, pos, view, xid, Some(def))
    }

    /// Replaces the operator `oid` that `view` sees by `def` in
    /// transaction `xid` (a new description).
    pub fn replace_operator(
        &self,
        view: &super::CatalogView,
        xid: Xid,
        oid: u32,
        def: super::OperatorDef,
    ) -> Result<()> {
        let mut st = self.write();
        let Some(pos) = super::versions::position(&st.operators, view, |d| d.oid == oid) else {
            return Err(crate::err!(
                UndefinedFunction,
                "operator with OID {oid} does not exist"
            ));
        };
        super::versions::replace(&mut st.operators, pos, view, xid, Some(def))
    }
}
