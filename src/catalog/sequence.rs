//! Sequences in the catalog: PostgreSQL's `pg_class` row of kind `S` with
//! its `pg_sequence` row (the options of `CREATE SEQUENCE`).
//!
//! A sequence's definition is versioned like the other catalog objects
//! ([`super::versions`]): CREATE, ALTER (options, name, owner) and DROP are
//! transactional. Its *value* is not part of the definition: it lives in
//! the sequence's own one-page relation file (`relfilenode`) and changes
//! outside transactions (`commands::seqfuncs`).
//!
//! Invariants:
//! - a sequence's name is unique among the relations (tables, indexes,
//!   views, sequences) a snapshot sees or another transaction is creating
//!   ([`Catalog::name_in_use`]);
//! - `min <= start <= max`, `increment != 0`, `cache >= 1`, and `min`/`max`
//!   lie within the range of `ty` (`commands::sequencecmds` checks).

use std::sync::Arc;

use super::persist::{corrupt, esc, unesc};
use super::versions::{replace, Version};
use super::{Catalog, CatalogView, State};
use crate::err;
use crate::error::Result;
use crate::txn::Xid;
use crate::types::DataType;

/// A sequence's definition.
#[derive(Debug, Clone, PartialEq)]
pub struct SequenceDef {
    /// Object id.
    pub oid: u32,
    /// Name (case-folded unless quoted).
    pub name: String,
    /// The one-page file that holds its value.
    pub relfilenode: u32,
    /// `smallint`, `integer` or `bigint`.
    pub ty: DataType,
    /// `INCREMENT BY`.
    pub increment: i64,
    /// `MINVALUE`.
    pub min: i64,
    /// `MAXVALUE`.
    pub max: i64,
    /// `START WITH`.
    pub start: i64,
    /// `CACHE`.
    pub cache: i64,
    /// `CYCLE`.
    pub cycle: bool,
    /// `OWNED BY`: the table (oid) and its column; the sequence goes when
    /// the table does.
    pub owned_by: Option<(u32, String)>,
    /// Made for an identity column (`GENERATED ... AS IDENTITY`): psql and
    /// DROP SEQUENCE treat it as part of its table.
    pub identity: bool,
    /// Its description (`COMMENT ON`), never empty.
    pub comment: Option<String>,
}

/// One version of a sequence.
pub(super) type SeqVersion = Version<SequenceDef>;

impl Catalog {
    /// Every sequence `view` sees, by name.
    pub fn sequences(&self, view: &CatalogView) -> Vec<Arc<SequenceDef>> {
        let st = self.read();
        let mut out = super::versions::visible(&st.sequences, view, |_| true);
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    /// The sequence `name` that `view` sees, if any.
    pub fn lookup_sequence(&self, view: &CatalogView, name: &str) -> Option<Arc<SequenceDef>> {
        let st = self.read();
        if st.sequences.is_empty() {
            return None;
        }
        let name = name.strip_prefix("public.").unwrap_or(name);
        super::versions::find(&st.sequences, view, |d| d.name == name)
    }

    /// The sequence `oid` that `view` sees, if any.
    pub fn sequence_by_oid(&self, view: &CatalogView, oid: u32) -> Option<Arc<SequenceDef>> {
        let st = self.read();
        super::versions::find(&st.sequences, view, |d| d.oid == oid)
    }

    /// The sequences owned by a column of table `table` that `view` sees.
    pub fn sequences_owned_by(&self, view: &CatalogView, table: u32) -> Vec<Arc<SequenceDef>> {
        let st = self.read();
        if st.sequences.is_empty() {
            return Vec::new();
        }
        super::versions::visible(&st.sequences, view, |d| {
            d.owned_by.as_ref().is_some_and(|(t, _)| *t == table)
        })
    }

    /// Whether a sequence named `name` is visible to `view` or being
    /// created by a transaction other than `xid`.
    pub(super) fn sequence_name_taken(
        st: &State,
        view: &CatalogView,
        xid: Xid,
        name: &str,
    ) -> bool {
        st.sequences.iter().any(|v| {
            v.def.name == name && (view.sees_object(v) || view.made_by_other(v.xmin, v.xmax, xid))
        })
    }

    /// Whether any relation (table, index, view or sequence) named `name`
    /// is visible to `view` or being created by another transaction.
    pub fn name_in_use(&self, view: &CatalogView, xid: Xid, name: &str) -> bool {
        let st = self.read();
        let table = st.versions.iter().any(|v| {
            v.temp_ns == 0
                && (v.def.name == name || v.def.indexes.iter().any(|i| i.name == name))
                && (view.sees(v) || view.made_by_other(v.xmin, v.xmax, xid))
        });
        table
            || Self::view_name_taken(&st, view, xid, name)
            || Self::sequence_name_taken(&st, view, xid, name)
    }

    /// Adds a sequence made by transaction `xid`. Fails with 42P07 when a
    /// relation of that name exists.
    pub fn create_sequence(
        &self,
        view: &CatalogView,
        xid: Xid,
        def: SequenceDef,
    ) -> Result<Arc<SequenceDef>> {
        if self.name_in_use(view, xid, &def.name) {
            return Err(err!(
                DuplicateTable,
                "relation \"{}\" already exists",
                def.name
            ));
        }
        let def = Arc::new(def);
        super::versions::insert(&mut self.write().sequences, xid, def.clone());
        Ok(def)
    }

    /// Replaces (`Some`) or deletes (`None`) the sequence `oid` that `view`
    /// sees, for transaction `xid`; 40001 when another claimed it first.
    pub fn replace_sequence(
        &self,
        view: &CatalogView,
        xid: Xid,
        oid: u32,
        replacement: Option<SequenceDef>,
    ) -> Result<()> {
        let mut st = self.write();
        let Some(pos) = super::versions::position(&st.sequences, view, |d| d.oid == oid) else {
            return Err(err!(
                UndefinedTable,
                "relation with OID {oid} does not exist"
            ));
        };
        replace(&mut st.sequences, pos, view, xid, replacement)
    }
}

fn type_word(ty: &DataType) -> &'static str {
    match ty {
        DataType::Int2 => "int2",
        DataType::Int4 => "int4",
        _ => "int8",
    }
}

/// Appends the catalog file's line of every sequence version: `sequence
/// <oid> <xmin> <xmax> <name> <relfilenode> <int2|int4|int8> <increment>
/// <min> <max> <start> <cache> <cycle 0|1> <identity 0|1> [<owner table>
/// <owner column>]`.
pub(super) fn write(text: &mut String, vs: &[SeqVersion]) {
    for v in vs {
        let d = &v.def;
        text.push_str(&format!(
            "sequence {} {} {} {} {} {} {} {} {} {} {} {} {}",
            d.oid,
            v.xmin,
            v.xmax,
            esc(&d.name),
            d.relfilenode,
            type_word(&d.ty),
            d.increment,
            d.min,
            d.max,
            d.start,
            d.cache,
            d.cycle as u8,
            d.identity as u8,
        ));
        if let Some((t, c)) = &d.owned_by {
            text.push_str(&format!(" {t} {}", esc(c)));
        }
        text.push('\n');
        super::comment::write(text, &d.comment);
    }
}

/// Reads a `sequence` line (split on spaces).
pub(super) fn parse(f: &[&str]) -> Result<SeqVersion> {
    let bad = || corrupt("bad sequence line");
    let int = |i: usize| -> Result<i64> { f.get(i).and_then(|s| s.parse().ok()).ok_or_else(bad) };
    if f.len() != 14 && f.len() != 16 {
        return Err(bad());
    }
    let ty = match f[6] {
        "int2" => DataType::Int2,
        "int4" => DataType::Int4,
        "int8" => DataType::Int8,
        _ => return Err(bad()),
    };
    let owned_by = if f.len() == 16 {
        Some((int(14)? as u32, unesc(f[15])?))
    } else {
        None
    };
    let def = SequenceDef {
        comment: None,
        oid: int(1)? as u32,
        name: unesc(f[4])?,
        relfilenode: int(5)? as u32,
        ty,
        increment: int(7)?,
        min: int(8)?,
        max: int(9)?,
        start: int(10)?,
        cache: int(11)?,
        cycle: int(12)? != 0,
        identity: int(13)? != 0,
        owned_by,
    };
    Ok(Version {
        xmin: int(2)? as Xid,
        xmax: int(3)? as Xid,
        def: Arc::new(def),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sequence line reads back as written; damaged ones are refused.
    #[test]
    fn sequence_lines_round_trip() {
        for owned_by in [None, Some((16390, "a b".to_string()))] {
            let d = SequenceDef {
                comment: None,
                oid: 16400,
                name: "t_a_seq".into(),
                relfilenode: 16401,
                ty: DataType::Int4,
                increment: -3,
                min: -2147483648,
                max: -1,
                start: -1,
                cache: 1,
                cycle: true,
                owned_by,
                identity: false,
            };
            let mut text = String::new();
            write(
                &mut text,
                &[Version {
                    xmin: 3,
                    xmax: 0,
                    def: Arc::new(d.clone()),
                }],
            );
            let f: Vec<&str> = text.trim_end().split(' ').collect();
            assert_eq!(*parse(&f).unwrap().def, d);
            assert!(parse(&f[..13]).is_err());
        }
    }
}
