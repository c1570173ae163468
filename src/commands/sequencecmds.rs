//! CREATE SEQUENCE, ALTER SEQUENCE and DROP SEQUENCE (PostgreSQL's
//! `DefineSequence`, `AlterSequence` and `init_params` of
//! `commands/sequence.c`), and the sequences of `serial` columns.
//!
//! The definition is a catalog version (transactional); the value is in
//! the sequence's one-page file ([`super::seqfuncs`]), written when the
//! sequence is made and when ALTER SEQUENCE RESTARTs it.
//!
//! Invariant: every definition stored satisfies `min < max`,
//! `min <= start <= max`, `increment != 0`, `cache > 0`, with `min` and
//! `max` in the range of its type ([`Params::check`]); every option error
//! is PostgreSQL's message and SQLSTATE, raised before anything changes.

use heapdb_grammar::ast::{self, SeqOption};

use super::context::DdlContext;
use super::seqfuncs::{SeqValue, SequenceStates};
use crate::catalog::SequenceDef;
use crate::err;
use crate::error::Result;
use crate::txn::LockMode;
use crate::types::DataType;

/// The options of a sequence being defined or altered, with its value.
#[derive(Debug, Clone)]
struct Params {
    ty: DataType,
    increment: i64,
    min: i64,
    max: i64,
    start: i64,
    cache: i64,
    cycle: bool,
    /// The value: `Some` when made or restarted.
    value: Option<SeqValue>,
    /// `OWNED BY`: `Some(None)` for NONE.
    owned_by: Option<Option<Vec<String>>>,
}

fn type_bounds(ty: &DataType) -> (i64, i64) {
    match ty {
        DataType::Int2 => (i16::MIN as i64, i16::MAX as i64),
        DataType::Int4 => (i32::MIN as i64, i32::MAX as i64),
        _ => (i64::MIN, i64::MAX),
    }
}

fn type_name(ty: &DataType) -> &'static str {
    match ty {
        DataType::Int2 => "smallint",
        DataType::Int4 => "integer",
        _ => "bigint",
    }
}

fn bad(msg: String) -> crate::error::Error {
    err!(InvalidParameterValue, "{msg}")
}

/// The sequence type `AS t` names: 22023 unless an integer type.
fn seq_type(t: &ast::DataType) -> Result<DataType> {
    match t {
        ast::DataType::SmallInt => Ok(DataType::Int2),
        ast::DataType::Integer => Ok(DataType::Int4),
        ast::DataType::BigInt => Ok(DataType::Int8),
        ast::DataType::Named(n) if DataType::from_name(n).is_none() => {
            Err(err!(UndefinedObject, "type \"{n}\" does not exist"))
        }
        _ => Err(bad(
            "sequence type must be smallint, integer, or bigint".into()
        )),
    }
}

/// Which options were written, each at most once (42601 otherwise).
#[derive(Default)]
struct Written<'a> {
    as_type: Option<&'a ast::DataType>,
    increment: Option<i64>,
    min: Option<Option<i64>>,
    max: Option<Option<i64>>,
    start: Option<i64>,
    restart: Option<Option<i64>>,
    cache: Option<i64>,
    cycle: Option<bool>,
    owned_by: Option<Option<Vec<String>>>,
}

fn collect(options: &[SeqOption]) -> Result<Written<'_>> {
    let mut w = Written::default();
    fn set<T>(slot: &mut Option<T>, v: T) -> Result<()> {
        if slot.is_some() {
            return Err(err!(SyntaxError, "conflicting or redundant options"));
        }
        *slot = Some(v);
        Ok(())
    }
    for o in options {
        match o {
            SeqOption::As(t) => set(&mut w.as_type, t)?,
            SeqOption::Increment(n) => set(&mut w.increment, *n)?,
            SeqOption::MinValue(n) => set(&mut w.min, *n)?,
            SeqOption::MaxValue(n) => set(&mut w.max, *n)?,
            SeqOption::Start(n) => set(&mut w.start, *n)?,
            SeqOption::Restart(n) => set(&mut w.restart, *n)?,
            SeqOption::Cache(n) => set(&mut w.cache, *n)?,
            SeqOption::Cycle(c) => set(&mut w.cycle, *c)?,
            SeqOption::OwnedBy(o) => set(&mut w.owned_by, o.clone())?,
        }
    }
    Ok(w)
}

impl Params {
    /// PostgreSQL's `init_params`: `old` is the definition and value being
    /// altered (`None`: a new sequence).
    fn init(options: &[SeqOption], old: Option<(&SequenceDef, SeqValue)>) -> Result<Params> {
        let w = collect(options)?;
        let is_init = old.is_none();
        let mut p = match old {
            Some((d, v)) => Params {
                ty: d.ty,
                increment: d.increment,
                min: d.min,
                max: d.max,
                start: d.start,
                cache: d.cache,
                cycle: d.cycle,
                value: Some(v),
                owned_by: None,
            },
            None => Params {
                ty: DataType::Int8,
                increment: 1,
                min: 0,
                max: 0,
                start: 0,
                cache: 1,
                cycle: false,
                value: None,
                owned_by: None,
            },
        };
        let (mut reset_max, mut reset_min) = (false, false);
        if let Some(t) = w.as_type {
            let ty = seq_type(t)?;
            if !is_init && ty != p.ty {
                let (lo, hi) = type_bounds(&p.ty);
                reset_max = p.max == hi;
                reset_min = p.min == lo;
            }
            p.ty = ty;
        }
        if let Some(n) = w.increment {
            if n == 0 {
                return Err(bad("INCREMENT must not be zero".into()));
            }
            p.increment = n;
            if let Some(v) = &mut p.value {
                v.log_cnt = 0;
            }
        }
        if let Some(c) = w.cycle {
            p.cycle = c;
        }
        let (lo, hi) = type_bounds(&p.ty);
        match w.max {
            Some(Some(n)) => p.max = n,
            Some(None) => p.max = if p.increment > 0 || reset_max { hi } else { -1 },
            None if is_init || reset_max => {
                p.max = if p.increment > 0 || reset_max { hi } else { -1 }
            }
            None => {}
        }
        if p.max < lo || p.max > hi {
            return Err(bad(format!(
                "MAXVALUE ({}) is out of range for sequence data type {}",
                p.max,
                type_name(&p.ty)
            )));
        }
        match w.min {
            Some(Some(n)) => p.min = n,
            Some(None) => p.min = if p.increment > 0 && !reset_min { 1 } else { lo },
            None if is_init || reset_min => {
                p.min = if p.increment > 0 && !reset_min { 1 } else { lo }
            }
            None => {}
        }
        if p.min < lo || p.min > hi {
            return Err(bad(format!(
                "MINVALUE ({}) is out of range for sequence data type {}",
                p.min,
                type_name(&p.ty)
            )));
        }
        if p.min >= p.max {
            return Err(bad(format!(
                "MINVALUE ({}) must be less than MAXVALUE ({})",
                p.min, p.max
            )));
        }
        if let Some(n) = w.start {
            p.start = n;
        } else if is_init {
            p.start = if p.increment > 0 { p.min } else { p.max };
        }
        if p.start < p.min {
            return Err(bad(format!(
                "START value ({}) cannot be less than MINVALUE ({})",
                p.start, p.min
            )));
        }
        if p.start > p.max {
            return Err(bad(format!(
                "START value ({}) cannot be greater than MAXVALUE ({})",
                p.start, p.max
            )));
        }
        if let Some(r) = w.restart {
            p.value = Some(SeqValue {
                last_value: r.unwrap_or(p.start),
                log_cnt: 0,
                is_called: false,
            });
        } else if is_init {
            p.value = Some(SeqValue {
                last_value: p.start,
                log_cnt: 0,
                is_called: false,
            });
        }
        let last = p.value.map_or(p.start, |v| v.last_value);
        if last < p.min {
            return Err(bad(format!(
                "RESTART value ({last}) cannot be less than MINVALUE ({})",
                p.min
            )));
        }
        if last > p.max {
            return Err(bad(format!(
                "RESTART value ({last}) cannot be greater than MAXVALUE ({})",
                p.max
            )));
        }
        if let Some(c) = w.cache {
            if c <= 0 {
                return Err(bad(format!("CACHE ({c}) must be greater than zero")));
            }
            p.cache = c;
        }
        p.owned_by = w.owned_by;
        Ok(p)
    }

    fn def(&self, oid: u32, name: &str, relfilenode: u32) -> SequenceDef {
        SequenceDef {
            comment: None,
            oid,
            name: name.to_string(),
            relfilenode,
            ty: self.ty,
            increment: self.increment,
            min: self.min,
            max: self.max,
            start: self.start,
            cache: self.cache,
            cycle: self.cycle,
            owned_by: None,
            identity: false,
        }
    }
}

impl DdlContext<'_> {
    /// `OWNED BY t.c`: the table's oid and the column (the table locked).
    fn resolve_owner(&self, names: &[String]) -> Result<(u32, String)> {
        let (table, column) = match names {
            [t, c] => (t.as_str(), c.as_str()),
            [_, t, c] => (t.as_str(), c.as_str()),
            _ => {
                return Err(err!(InvalidParameterValue, "invalid OWNED BY option")
                    .with_hint("Specify OWNED BY table.column or OWNED BY NONE."))
            }
        };
        let t = self.lookup_table(table, LockMode::AccessShare)?;
        if t.column_index(column).is_none() {
            return Err(err!(
                UndefinedColumn,
                "column \"{column}\" of relation \"{table}\" does not exist"
            ));
        }
        Ok((t.oid, column.to_string()))
    }

    /// CREATE SEQUENCE: returns the NOTICEs (IF NOT EXISTS).
    pub fn create_sequence(
        &mut self,
        c: &ast::CreateSequence,
        states: &SequenceStates,
    ) -> Result<Vec<String>> {
        let name = &c.name.name;
        if c.if_not_exists && self.catalog.name_in_use(&self.view(), self.xid, name) {
            return Ok(vec![format!(
                "relation \"{name}\" already exists, skipping"
            )]);
        }
        let p = Params::init(&c.options, None)?;
        let def = self.define_sequence(name, &p, None, false)?;
        let rel = self.relation(def.relfilenode)?;
        states.reset(&def, &rel, p.value.expect("a new sequence has a value"))?;
        Ok(Vec::new())
    }

    /// Makes the catalog entry and the file of a new sequence.
    fn define_sequence(
        &mut self,
        name: &str,
        p: &Params,
        owner: Option<(u32, String)>,
        identity: bool,
    ) -> Result<SequenceDef> {
        let owned_by = match (&p.owned_by, owner) {
            (_, Some(o)) => Some(o),
            (Some(Some(names)), None) => Some(self.resolve_owner(names)?),
            _ => None,
        };
        let oid = self.fresh_relfilenode();
        let mut def = p.def(oid, name, oid);
        def.owned_by = owned_by;
        def.identity = identity;
        self.catalog
            .create_sequence(&self.view(), self.xid, def.clone())?;
        *self.catalog_changed = true;
        self.create_heap(oid)?;
        Ok(def)
    }

    /// The sequence of a `serial` column (or an identity column) `column`
    /// of table `table`, made before the table: `<table>_<column>_seq`
    /// (or the first free variant), of type `ty`, with `options`. Returns
    /// its name; [`DdlContext::set_sequence_owner`] ties it to the column
    /// once the table exists.
    pub fn create_column_sequence(
        &mut self,
        table: &str,
        column: &str,
        ty: &DataType,
        options: &[SeqOption],
        identity: bool,
        states: &SequenceStates,
    ) -> Result<String> {
        let mut opts = vec![SeqOption::As(match ty {
            DataType::Int2 => ast::DataType::SmallInt,
            DataType::Int4 => ast::DataType::Integer,
            _ => ast::DataType::BigInt,
        })];
        opts.extend(options.iter().cloned());
        let p = Params::init(&opts, None)?;
        let base = format!("{table}_{column}_seq");
        let mut name = base.clone();
        let mut n = 0;
        while self.catalog.name_in_use(&self.view(), self.xid, &name) {
            n += 1;
            name = format!("{base}{n}");
        }
        let def = self.define_sequence(&name, &p, None, identity)?;
        let rel = self.relation(def.relfilenode)?;
        states.reset(&def, &rel, p.value.expect("a new sequence has a value"))?;
        Ok(name)
    }

    /// `OWNED BY`: sequence `name` goes with column `column` of table
    /// `table` (oid).
    pub fn set_sequence_owner(&mut self, name: &str, table: u32, column: &str) -> Result<()> {
        let def = self
            .catalog
            .lookup_sequence(&self.view(), name)
            .ok_or_else(|| err!(UndefinedTable, "relation \"{name}\" does not exist"))?;
        let mut d = (*def).clone();
        d.owned_by = Some((table, column.to_string()));
        self.catalog
            .replace_sequence(&self.view(), self.xid, def.oid, Some(d))?;
        *self.catalog_changed = true;
        Ok(())
    }

    /// ALTER SEQUENCE: returns the NOTICEs (IF EXISTS).
    pub fn alter_sequence(
        &mut self,
        a: &ast::AlterSequence,
        states: &SequenceStates,
    ) -> Result<Vec<String>> {
        let name = &a.name.name;
        let Some(def) = self.catalog.lookup_sequence(&self.view(), name) else {
            if self.catalog.lookup(&self.view(), name).is_some()
                || self.catalog.lookup_view(&self.view(), name).is_some()
            {
                return Err(err!(WrongObjectType, "\"{name}\" is not a sequence"));
            }
            if a.if_exists {
                return Ok(vec![format!(
                    "relation \"{name}\" does not exist, skipping"
                )]);
            }
            return Err(err!(UndefinedTable, "relation \"{name}\" does not exist"));
        };
        match &a.action {
            ast::AlterSequenceAction::RenameTo(new) => {
                if self.catalog.name_in_use(&self.view(), self.xid, new) {
                    return Err(err!(DuplicateTable, "relation \"{new}\" already exists"));
                }
                let mut d = (*def).clone();
                d.name = new.clone();
                self.catalog
                    .replace_sequence(&self.view(), self.xid, def.oid, Some(d))?;
            }
            ast::AlterSequenceAction::Options(options) => {
                let rel = self.relation(def.relfilenode)?;
                let current = states.current(&def, &rel)?;
                let p = Params::init(options, Some((&def, current)))?;
                let mut d = p.def(def.oid, &def.name, def.relfilenode);
                d.identity = def.identity;
                d.comment = def.comment.clone();
                d.owned_by = match &p.owned_by {
                    Some(Some(names)) => Some(self.resolve_owner(names)?),
                    Some(None) => None,
                    None => def.owned_by.clone(),
                };
                self.catalog
                    .replace_sequence(&self.view(), self.xid, def.oid, Some(d.clone()))?;
                if let Some(v) = p.value.filter(|v| *v != current) {
                    states.reset(&d, &rel, v)?;
                }
            }
        }
        *self.catalog_changed = true;
        Ok(Vec::new())
    }

    /// DROP SEQUENCE: returns the NOTICEs (IF EXISTS).
    pub fn drop_sequence(&mut self, d: &ast::DropSequence) -> Result<Vec<String>> {
        let mut notices = Vec::new();
        let mut found = Vec::new();
        for name in &d.names {
            let n = &name.name;
            match self.catalog.lookup_sequence(&self.view(), n) {
                Some(s) => found.push(s),
                None if self.catalog.lookup(&self.view(), n).is_some() => {
                    return Err(err!(WrongObjectType, "\"{n}\" is not a sequence")
                        .with_hint("Use DROP TABLE to remove a table."));
                }
                None if self.catalog.lookup_view(&self.view(), n).is_some() => {
                    return Err(err!(WrongObjectType, "\"{n}\" is not a sequence")
                        .with_hint("Use DROP VIEW to remove a view."));
                }
                None if d.if_exists => {
                    notices.push(format!("sequence \"{n}\" does not exist, skipping"))
                }
                None => return Err(err!(UndefinedTable, "sequence \"{n}\" does not exist")),
            }
        }
        for s in found {
            if d.cascade {
                self.drop_defaults_using(&s, &mut notices)?;
            } else {
                self.refuse_drop_of_used_sequence(&s)?;
            }
            self.drop_one_sequence(&s)?;
        }
        Ok(notices)
    }

    /// DROP SEQUENCE ... CASCADE: the column defaults calling `nextval` of
    /// `s` are dropped with it, each named in PostgreSQL's NOTICE.
    fn drop_defaults_using(&mut self, s: &SequenceDef, notices: &mut Vec<String>) -> Result<()> {
        let mut lines = Vec::new();
        for t in self.catalog.tables(&self.view()) {
            if !t.columns.iter().any(|c| default_uses(c, s)) {
                continue;
            }
            let locked = self.lookup_table(&t.name, crate::txn::LockMode::AccessExclusive)?;
            let mut def = (*locked).clone();
            for c in def.columns.iter_mut().filter(|c| default_uses(c, s)) {
                c.default = None;
                lines.push(format!(
                    "drop cascades to default value for column {} of table {}",
                    c.name, def.name
                ));
            }
            self.catalog
                .replace(&self.view(), self.xid, def.oid, Some(def))?;
            *self.catalog_changed = true;
        }
        match &lines[..] {
            [] => {}
            [one] => notices.push(one.clone()),
            _ => notices.push(format!(
                "drop cascades to {} other objects\nDETAIL:  {}",
                lines.len(),
                lines.join("\n")
            )),
        }
        Ok(())
    }

    /// 2BP01 when a column's DEFAULT calls `nextval` of sequence `s`
    /// (PostgreSQL's dependency of the default on the sequence).
    fn refuse_drop_of_used_sequence(&self, s: &SequenceDef) -> Result<()> {
        let mut details = Vec::new();
        for t in self.catalog.tables(&self.view()) {
            for c in t.columns.iter().filter(|c| default_uses(c, s)) {
                details.push(format!(
                    "default value for column {} of table {} depends on sequence {}",
                    c.name, t.name, s.name
                ));
            }
        }
        if details.is_empty() {
            return Ok(());
        }
        Err(err!(
            DependentObjectsStillExist,
            "cannot drop sequence {} because other objects depend on it",
            s.name
        )
        .with_detail(details.join("\n"))
        .with_hint("Use DROP ... CASCADE to drop the dependent objects too."))
    }

    fn drop_one_sequence(&mut self, s: &SequenceDef) -> Result<()> {
        self.catalog
            .replace_sequence(&self.view(), self.xid, s.oid, None)?;
        *self.catalog_changed = true;
        self.drop_on_commit.push(s.relfilenode);
        Ok(())
    }

    /// Drops the sequences owned by columns of table `table` (DROP TABLE).
    pub fn drop_owned_sequences(&mut self, table: u32) -> Result<()> {
        for s in self.catalog.sequences_owned_by(&self.view(), table) {
            self.drop_one_sequence(&s)?;
        }
        Ok(())
    }
}

/// Whether column `c`'s DEFAULT calls `nextval` of sequence `s`.
fn default_uses(c: &crate::catalog::ColumnDef, s: &SequenceDef) -> bool {
    let quoted = format!("'{}'", s.name);
    c.default
        .as_deref()
        .is_some_and(|d| d.contains("nextval(") && d.contains(&quoted))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(sql: &str) -> Vec<SeqOption> {
        match heapdb_grammar::parse_one(&format!("CREATE SEQUENCE s {sql}")).unwrap() {
            ast::Statement::CreateSequence(c) => c.options,
            _ => unreachable!(),
        }
    }

    fn msg(sql: &str) -> String {
        Params::init(&opts(sql), None).unwrap_err().message
    }

    #[test]
    fn defaults_follow_the_increment() {
        let p = Params::init(&opts(""), None).unwrap();
        assert_eq!((p.min, p.max, p.start), (1, i64::MAX, 1));
        let p = Params::init(&opts("increment -1 as integer"), None).unwrap();
        assert_eq!((p.min, p.max, p.start), (i32::MIN as i64, -1, -1));
    }

    #[test]
    fn option_errors_are_postgresqls() {
        assert_eq!(msg("increment 0"), "INCREMENT must not be zero");
        assert_eq!(
            msg("minvalue 10 maxvalue 1"),
            "MINVALUE (10) must be less than MAXVALUE (1)"
        );
        assert_eq!(
            msg("as smallint maxvalue 100000"),
            "MAXVALUE (100000) is out of range for sequence data type smallint"
        );
        assert_eq!(
            msg("start 0"),
            "START value (0) cannot be less than MINVALUE (1)"
        );
        assert_eq!(msg("cache 0"), "CACHE (0) must be greater than zero");
        assert_eq!(msg("cycle no cycle"), "conflicting or redundant options");
    }
}
