//! Foreign-key constraints in the catalog: PostgreSQL's `pg_constraint`
//! rows of `contype = 'f'`. A constraint names its referencing table and
//! columns, the referenced table and columns, the unique index of the
//! referenced table that the referenced columns match (through which every
//! check probes), its actions, match type and deferral.
//!
//! Constraints are versioned with the same `xmin`/`xmax` rules as tables
//! (see the parent module): added and dropped transactionally, written to
//! the same checksummed file before the commit is recorded, cleaned of
//! uncommitted versions on open.
//!
//! Invariants: `columns` and `ref_columns` have the same, non-zero length;
//! every position is a column of its table; `ref_index` is a unique index
//! of `ref_table` whose key columns are exactly `ref_columns` (in any
//! order); a visible constraint's two tables are visible (dropping either
//! table drops or refuses the constraint first).

use std::sync::Arc;

use super::persist::{corrupt, esc, unesc};
use super::{Catalog, CatalogView};
use crate::error::Result;
use crate::txn::Xid;

/// What a change of a referenced key does to the rows referencing it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FkAction {
    /// NO ACTION: an error at the statement's end while still referenced.
    NoAction,
    /// RESTRICT: an error while referenced, even if the key comes back.
    Restrict,
    /// CASCADE: the referencing rows are deleted (or their keys updated).
    Cascade,
    /// SET NULL: these referencing columns (positions; all when empty)
    /// become NULL.
    SetNull(Vec<usize>),
    /// SET DEFAULT: these referencing columns (all when empty) take their
    /// defaults.
    SetDefault(Vec<usize>),
}

/// One foreign-key constraint.
#[derive(Debug, Clone, PartialEq)]
pub struct ForeignKeyDef {
    /// The constraint's object id.
    pub oid: u32,
    /// Its name (unique among the referencing table's constraints).
    pub name: String,
    /// The referencing table's oid.
    pub table: u32,
    /// The referencing columns, by position.
    pub columns: Vec<usize>,
    /// The referenced table's oid.
    pub ref_table: u32,
    /// The referenced columns, by position, paired with `columns`.
    pub ref_columns: Vec<usize>,
    /// The oid of the referenced table's unique index on `ref_columns`.
    pub ref_index: u32,
    /// `ON DELETE`.
    pub on_delete: FkAction,
    /// `ON UPDATE`.
    pub on_update: FkAction,
    /// `MATCH FULL` (else `MATCH SIMPLE`).
    pub match_full: bool,
    /// `DEFERRABLE`.
    pub deferrable: bool,
    /// `INITIALLY DEFERRED`.
    pub deferred: bool,
    /// Existing rows were checked (false after `NOT VALID` until
    /// `VALIDATE CONSTRAINT`).
    pub validated: bool,
    /// Its description (`COMMENT ON`), never empty.
    pub comment: Option<String>,
}

/// One version of a fkey definition ([`super::versions`]).
pub(super) type FkVersion = super::versions::Version<ForeignKeyDef>;

impl Catalog {
    /// Whether any foreign key exists in any version (a cheap test before
    /// a look-up under a snapshot: the row-writing paths ask it).
    pub fn has_foreign_keys(&self) -> bool {
        !self.read().fkeys.is_empty()
    }

    /// The constraints `view` sees that involve table `oid`: those of
    /// which it is the referencing table, and those it is referenced by,
    /// each by oid.
    pub fn foreign_keys_of(
        &self,
        view: &CatalogView,
        oid: u32,
    ) -> (Vec<Arc<ForeignKeyDef>>, Vec<Arc<ForeignKeyDef>>) {
        let st = self.read();
        if st.fkeys.is_empty() {
            return (Vec::new(), Vec::new());
        }
        let mut out = (Vec::new(), Vec::new());
        for v in st.fkeys.iter().filter(|v| view.sees_object(v)) {
            if v.def.table == oid {
                out.0.push(v.def.clone());
            }
            if v.def.ref_table == oid {
                out.1.push(v.def.clone());
            }
        }
        out.0.sort_by(|a, b| a.name.cmp(&b.name));
        out.1.sort_by_key(|d| d.oid);
        out
    }

    /// Adds a constraint made by transaction `xid` (its name checked by
    /// the caller, which knows the table's other constraints).
    pub fn add_foreign_key(&self, xid: Xid, def: ForeignKeyDef) {
        super::versions::insert(&mut self.write().fkeys, xid, Arc::new(def));
    }

    /// Marks the constraint `oid` that `view` sees as dropped by `xid`
    /// (removes it when `xid` made it).
    pub fn drop_foreign_key(&self, view: &CatalogView, xid: Xid, oid: u32) {
        let mut st = self.write();
        if let Some(pos) = super::versions::position(&st.fkeys, view, |d| d.oid == oid) {
            if st.fkeys[pos].xmin == xid {
                st.fkeys.remove(pos);
            } else {
                st.fkeys[pos].xmax = xid;
            }
        }
    }
}

pub(super) use super::versions::{abort, prune, settle};

fn action_tag(a: &FkAction) -> String {
    let cols = |c: &[usize]| {
        c.iter()
            .map(|p| p.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    match a {
        FkAction::NoAction => "a".into(),
        FkAction::Restrict => "r".into(),
        FkAction::Cascade => "c".into(),
        FkAction::SetNull(c) => format!("n:{}", cols(c)),
        FkAction::SetDefault(c) => format!("d:{}", cols(c)),
    }
}

fn parse_action(tag: &str) -> Result<FkAction> {
    let bad = || corrupt("bad fkey action");
    let cols = |s: &str| -> Result<Vec<usize>> {
        if s.is_empty() {
            return Ok(Vec::new());
        }
        s.split(',').map(|p| p.parse().map_err(|_| bad())).collect()
    };
    Ok(match tag {
        "a" => FkAction::NoAction,
        "r" => FkAction::Restrict,
        "c" => FkAction::Cascade,
        _ => match tag.split_once(':') {
            Some(("n", c)) => FkAction::SetNull(cols(c)?),
            Some(("d", c)) => FkAction::SetDefault(cols(c)?),
            _ => return Err(bad()),
        },
    })
}

/// Appends one line per constraint version: `fkey <oid> <xmin> <xmax>
/// <name> <table> <ref table> <ref index> <flags> <on delete> <on update>
/// <n> <column> ... <ref column> ...`. Flags: 1 MATCH FULL, 2 DEFERRABLE,
/// 4 INITIALLY DEFERRED, 8 validated. Actions: `a` NO ACTION, `r`
/// RESTRICT, `c` CASCADE, `n:<cols>` SET NULL, `d:<cols>` SET DEFAULT.
pub(super) fn write(text: &mut String, fkeys: &[FkVersion]) {
    for v in fkeys {
        let d = &v.def;
        let flags = d.match_full as u8
            | (d.deferrable as u8) << 1
            | (d.deferred as u8) << 2
            | (d.validated as u8) << 3;
        text.push_str(&format!(
            "fkey {} {} {} {} {} {} {} {} {} {} {}",
            d.oid,
            v.xmin,
            v.xmax,
            esc(&d.name),
            d.table,
            d.ref_table,
            d.ref_index,
            flags,
            action_tag(&d.on_delete),
            action_tag(&d.on_update),
            d.columns.len()
        ));
        for c in d.columns.iter().chain(&d.ref_columns) {
            text.push_str(&format!(" {c}"));
        }
        text.push('\n');
        super::comment::write(text, &d.comment);
    }
}

/// Reads an `fkey` line (split on spaces).
pub(super) fn parse(f: &[&str]) -> Result<FkVersion> {
    let bad = || corrupt("bad fkey line");
    let num = |i: usize| -> Result<u64> { f.get(i).and_then(|s| s.parse().ok()).ok_or_else(bad) };
    let n = num(11)? as usize;
    if n == 0 || f.len() != 12 + 2 * n {
        return Err(bad());
    }
    let cols = |from: usize| -> Result<Vec<usize>> {
        (0..n).map(|i| num(from + i).map(|c| c as usize)).collect()
    };
    let flags = num(8)?;
    let def = ForeignKeyDef {
        comment: None,
        oid: num(1)? as u32,
        name: unesc(f[4])?,
        table: num(5)? as u32,
        columns: cols(12)?,
        ref_table: num(6)? as u32,
        ref_columns: cols(12 + n)?,
        ref_index: num(7)? as u32,
        on_delete: parse_action(f[9])?,
        on_update: parse_action(f[10])?,
        match_full: flags & 1 != 0,
        deferrable: flags & 2 != 0,
        deferred: flags & 4 != 0,
        validated: flags & 8 != 0,
    };
    Ok(FkVersion {
        xmin: num(2)? as Xid,
        xmax: num(3)? as Xid,
        def: Arc::new(def),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fkey_lines_round_trip_and_damage_is_refused() {
        let v = FkVersion {
            xmin: 7,
            xmax: 0,
            def: Arc::new(ForeignKeyDef {
                comment: None,
                oid: 16400,
                name: "c b fkey".into(),
                table: 16390,
                columns: vec![1, 0],
                ref_table: 16384,
                ref_columns: vec![0, 2],
                ref_index: 16385,
                on_delete: FkAction::SetNull(vec![1]),
                on_update: FkAction::Cascade,
                match_full: true,
                deferrable: true,
                deferred: false,
                validated: true,
            }),
        };
        let mut text = String::new();
        write(&mut text, std::slice::from_ref(&v));
        let f: Vec<&str> = text.trim_end().split(' ').collect();
        let back = parse(&f).unwrap();
        assert_eq!(back.def, v.def);
        assert_eq!((back.xmin, back.xmax), (7, 0));
        assert!(parse(&f[..f.len() - 1]).is_err());
        let mut wrong = f.clone();
        wrong[9] = "x";
        assert!(parse(&wrong).is_err());
    }
}
