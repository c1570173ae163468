//! User-defined operators in the catalog: PostgreSQL's `pg_operator` rows
//! made by `CREATE OPERATOR`.
//!
//! An operator is kept as its symbol, its operand types (none on the left
//! for a prefix operator), the domains its operands were declared with,
//! and the function that computes it, named with its argument types. The
//! planner considers a user operator when no built-in operator takes the
//! operands' types (`plan::operator`). Operators are versioned with the
//! same `xmin`/`xmax` rules as functions and domains ([`super::versions`]):
//! created and dropped transactionally, written to the catalog file
//! before the commit is recorded, cleaned of uncommitted versions on open.
//!
//! Invariant: no two visible operators have the same symbol and operand
//! types (`commands::operatorcmds` checks before creating).

use std::sync::Arc;

use super::persist::{corrupt, esc, parse_type_tag, type_tag, unesc};
use super::{Catalog, CatalogView};
use crate::err;
use crate::error::Result;
use crate::txn::Xid;
use crate::types::DataType;

/// An operator's definition.
#[derive(Debug, Clone, PartialEq)]
pub struct OperatorDef {
    /// Object id.
    pub oid: u32,
    /// The symbol (`=`, `<`, ...).
    pub name: String,
    /// The left operand's type (base type of a domain); `None`: prefix.
    pub left: Option<DataType>,
    /// The right operand's type (base type of a domain).
    pub right: DataType,
    /// The domains the operands were declared with, as written.
    pub left_domain: Option<String>,
    /// See `left_domain`.
    pub right_domain: Option<String>,
    /// The function computing the operator.
    pub function: String,
    /// The function's result type.
    pub result: DataType,
    /// Its description (`COMMENT ON OPERATOR`), never empty.
    pub comment: Option<String>,
}

impl OperatorDef {
    /// The operand types as PostgreSQL's messages name them:
    /// `===(integer,integer)`, `!#(NONE,integer)`.
    pub fn signature(&self) -> String {
        let name = |t: &Option<DataType>, d: &Option<String>| match (t, d) {
            (_, Some(d)) => d.clone(),
            (Some(t), None) => t.to_string(),
            (None, None) => "NONE".into(),
        };
        format!(
            "{}({},{})",
            self.name,
            name(&self.left, &self.left_domain),
            name(&Some(self.right), &self.right_domain)
        )
    }
}

/// One version of an operator definition ([`super::versions`]).
pub(super) type OperVersion = super::versions::Version<OperatorDef>;

impl Catalog {
    /// The operators with symbol `name` that `view` sees, oldest first.
    pub fn lookup_operators(&self, view: &CatalogView, name: &str) -> Vec<Arc<OperatorDef>> {
        let st = self.read();
        if st.operators.is_empty() {
            return Vec::new();
        }
        let mut out: Vec<_> = super::versions::visible(&st.operators, view, |d| d.name == name);
        out.sort_by_key(|o| o.oid);
        out
    }

    /// Every operator `view` sees, by oid.
    pub fn operators(&self, view: &CatalogView) -> Vec<Arc<OperatorDef>> {
        let mut out: Vec<_> = super::versions::visible(&self.read().operators, view, |_| true);
        out.sort_by_key(|o| o.oid);
        out
    }

    /// Adds an operator created by transaction `xid`.
    pub fn create_operator(&self, xid: Xid, def: OperatorDef) {
        super::versions::insert(&mut self.write().operators, xid, Arc::new(def));
    }

    /// Marks the version of operator `oid` that `view` sees as deleted by
    /// `xid`. Fails with 40001 when another transaction already changed it.
    pub fn drop_operator(&self, view: &CatalogView, xid: Xid, oid: u32) -> Result<()> {
        let mut st = self.write();
        let Some(pos) = super::versions::position(&st.operators, view, |d| d.oid == oid) else {
            return Err(err!(
                UndefinedFunction,
                "operator with OID {oid} does not exist"
            ));
        };
        super::versions::replace(&mut st.operators, pos, view, xid, None)
    }
}

pub(super) use super::versions::{abort, prune, settle};

fn opt_esc(s: &Option<String>) -> String {
    s.as_deref().map(esc).unwrap_or_else(|| "-".into())
}

/// Appends the catalog file's line of every operator version:
/// `operator <oid> <xmin> <xmax> <name> <left type or -> <right type>
/// <left domain or -> <right domain or -> <function> <result type>`.
pub(super) fn write(text: &mut String, os: &[OperVersion]) {
    for v in os {
        let d = &v.def;
        text.push_str(&format!(
            "operator {} {} {} {} {} {} {} {} {} {}\n",
            d.oid,
            v.xmin,
            v.xmax,
            esc(&d.name),
            d.left.as_ref().map(type_tag).unwrap_or_else(|| "-".into()),
            type_tag(&d.right),
            opt_esc(&d.left_domain),
            opt_esc(&d.right_domain),
            esc(&d.function),
            type_tag(&d.result),
        ));
        super::comment::write(text, &d.comment);
    }
}

/// Reads an `operator` line (split on spaces).
pub(super) fn parse(f: &[&str]) -> Result<OperVersion> {
    let bad = || corrupt("bad operator line");
    let num = |i: usize| -> Result<u64> { f.get(i).and_then(|s| s.parse().ok()).ok_or_else(bad) };
    if f.len() != 11 {
        return Err(bad());
    }
    let opt = |s: &str| -> Result<Option<String>> {
        if s == "-" {
            Ok(None)
        } else {
            unesc(s).map(Some)
        }
    };
    let def = OperatorDef {
        comment: None,
        oid: num(1)? as u32,
        name: unesc(f[4])?,
        left: if f[5] == "-" {
            None
        } else {
            Some(parse_type_tag(f[5])?)
        },
        right: parse_type_tag(f[6])?,
        left_domain: opt(f[7])?,
        right_domain: opt(f[8])?,
        function: unesc(f[9])?,
        result: parse_type_tag(f[10])?,
    };
    Ok(OperVersion {
        xmin: num(2)? as Xid,
        xmax: num(3)? as Xid,
        def: Arc::new(def),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An operator line reads back as the definition written, and damaged
    /// lines are refused.
    #[test]
    fn operator_lines_round_trip() {
        let def = OperatorDef {
            comment: None,
            oid: 16402,
            name: "=".into(),
            left: None,
            right: DataType::Text,
            left_domain: None,
            right_domain: Some("food omain".into()),
            function: "inline eq".into(),
            result: DataType::Bool,
        };
        let mut text = String::new();
        write(
            &mut text,
            &[OperVersion {
                xmin: 9,
                xmax: 0,
                def: Arc::new(def.clone()),
            }],
        );
        let f: Vec<&str> = text.trim_end().split(' ').collect();
        let back = parse(&f).unwrap();
        assert_eq!(*back.def, def);
        assert_eq!((back.xmin, back.xmax), (9, 0));
        assert!(parse(&f[..f.len() - 1]).is_err());
    }
}
