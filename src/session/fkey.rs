//! Foreign keys around a statement that writes rows (PostgreSQL's RI
//! triggers as the session fires them): before the rows are written,
//! [`Session::fk_capture`] finds the constraints involving the table and
//! locks their other tables (so no lock wait comes after a row is
//! written); the row writer records the keys in the capture; at the
//! statement's end [`Session::fk_finish`] checks them
//! ([`crate::exec::fkey`]) and runs the actions: CASCADE, SET NULL and SET
//! DEFAULT are statements run here, with their own command id, through
//! the same path (so their own constraints are checked and cascade in
//! turn, as PostgreSQL's RI queries fire triggers).
//!
//! NO ACTION is checked at the statement's end (a key deleted and put back
//! by the same statement passes); a constraint `INITIALLY DEFERRED` is
//! checked at COMMIT ([`Session::fk_check_deferred`]), in a transaction
//! block and out of it.

use std::cell::RefCell;
use std::sync::Arc;

use super::Session;
use crate::catalog::{FkAction, ForeignKeyDef, TableDef};
use crate::err;
use crate::error::Result;
use crate::exec::fkey::{
    find_reference, live_rows, not_present, parent_has_key, still_referenced, FkCapture,
};
use crate::txn::{LockMode, LockTag, Snapshot};
use crate::types::{format_value, Value};

/// A check put off to COMMIT by an `INITIALLY DEFERRED` constraint.
#[derive(Debug, Clone)]
pub(crate) enum Deferred {
    /// A referencing row's key must be present in the referenced table.
    Present(Arc<ForeignKeyDef>, Vec<Value>),
    /// A removed referenced key must not be referenced any more.
    Unreferenced(Arc<ForeignKeyDef>, Vec<Value>),
}

/// Keys per generated action statement.
const ACTION_CHUNK: usize = 256;

impl Session {
    /// The capture for a statement writing `table` (an UPDATE when
    /// `updating`), or None when no constraint involves it. Locks the
    /// other tables of its constraints now: the referenced tables
    /// AccessShare, the referencing ones RowExclusive (their rows may be
    /// changed by an action).
    pub(crate) fn fk_capture(
        &self,
        table: &TableDef,
        snap: &Snapshot,
        updating: bool,
    ) -> Result<Option<RefCell<FkCapture>>> {
        if !self.db.catalog.has_foreign_keys() {
            return Ok(None);
        }
        let (child, parent) = self
            .db
            .catalog
            .foreign_keys_of(&self.catalog_view(snap), table.oid);
        if child.is_empty() && parent.is_empty() {
            return Ok(None);
        }
        let owner = self.txn_ref().owner;
        let lock = |oid: u32, mode: LockMode| {
            self.db
                .locks
                .acquire(owner, LockTag::Relation(oid), mode, &self.cancel)
                .map(|_| ())
        };
        for fk in &child {
            lock(fk.ref_table, LockMode::AccessShare)?;
        }
        for fk in &parent {
            lock(fk.table, LockMode::RowExclusive)?;
        }
        let mut cap = FkCapture::new(&table.name, child, parent);
        cap.updating = updating;
        Ok(Some(RefCell::new(cap)))
    }

    /// The table of oid `oid` and its heap, as the current statement sees
    /// it.
    fn fk_table(
        &self,
        snap: &Snapshot,
        oid: u32,
    ) -> Result<(Arc<TableDef>, Arc<crate::access::heap::HeapRelation>)> {
        let def = self
            .db
            .catalog
            .by_oid(&self.catalog_view(snap), oid)
            .ok_or_else(|| err!(UndefinedTable, "relation with OID {oid} does not exist"))?;
        let rel = self.db.relation(def.relfilenode)?;
        Ok((def, rel))
    }

    /// The checks and actions a statement's writes to `table` left in
    /// `cap`, at the statement's end.
    pub(crate) fn fk_finish(&mut self, table: &TableDef, cap: FkCapture) -> Result<()> {
        if cap.is_empty() {
            return Ok(());
        }
        // The statement's own snapshot: the checks read the latest
        // committed state whatever it is (see `exec::fkey`).
        let snap = match self.txn_ref().snapshot.clone() {
            Some(s) => s,
            None => self.statement_snapshot(),
        };
        for (fk, set) in &cap.child {
            if set.keys.is_empty() {
                continue;
            }
            if fk.deferred {
                self.fk_deferred.extend(
                    set.keys
                        .iter()
                        .map(|k| Deferred::Present(fk.clone(), k.clone())),
                );
                continue;
            }
            let (parent, prel) = self.fk_table(&snap, fk.ref_table)?;
            let ctx = self.modify_ctx(&snap);
            for key in &set.keys {
                if !parent_has_key(&ctx, &parent, &prel, fk, key)? {
                    return Err(not_present(table, &parent, fk, key));
                }
            }
        }
        for (fk, removed) in &cap.parent {
            if removed.is_empty() {
                continue;
            }
            let action = if cap.updating {
                &fk.on_update
            } else {
                &fk.on_delete
            };
            match action {
                FkAction::NoAction | FkAction::Restrict => {
                    let keys: Vec<Vec<Value>> = removed.iter().map(|(k, _)| k.clone()).collect();
                    if fk.deferred && *action == FkAction::NoAction {
                        self.fk_deferred.extend(
                            keys.into_iter()
                                .map(|k| Deferred::Unreferenced(fk.clone(), k)),
                        );
                        continue;
                    }
                    let recheck = *action == FkAction::NoAction;
                    self.fk_still_referenced(&snap, table, fk, keys, recheck)?;
                }
                FkAction::Cascade if cap.updating => {
                    let (child, _) = self.fk_table(&snap, fk.table)?;
                    for (old, new) in removed {
                        let Some(new) = new else { continue };
                        let sets: Vec<String> = fk
                            .columns
                            .iter()
                            .zip(new)
                            .map(|(&c, v)| {
                                format!(
                                    "{} = {}",
                                    ident(&child.columns[c].name),
                                    literal(v, &child, c)
                                )
                            })
                            .collect();
                        let sql = format!(
                            "UPDATE {} SET {} WHERE {}",
                            self.fk_table_name(&child),
                            sets.join(", "),
                            key_condition(&child, fk, std::slice::from_ref(old))
                        );
                        self.fk_run(&sql)?;
                    }
                }
                FkAction::Cascade | FkAction::SetNull(_) | FkAction::SetDefault(_) => {
                    let (child, _) = self.fk_table(&snap, fk.table)?;
                    let keys: Vec<Vec<Value>> = removed.iter().map(|(k, _)| k.clone()).collect();
                    for chunk in keys.chunks(ACTION_CHUNK) {
                        let cond = key_condition(&child, fk, chunk);
                        let name = self.fk_table_name(&child);
                        let sql = match action {
                            FkAction::Cascade => format!("DELETE FROM {name} WHERE {cond}"),
                            FkAction::SetNull(cols) | FkAction::SetDefault(cols) => {
                                let value = if matches!(action, FkAction::SetNull(_)) {
                                    "NULL"
                                } else {
                                    "DEFAULT"
                                };
                                let cols = if cols.is_empty() { &fk.columns } else { cols };
                                let sets: Vec<String> = cols
                                    .iter()
                                    .map(|&c| {
                                        format!("{} = {value}", ident(&child.columns[c].name))
                                    })
                                    .collect();
                                format!("UPDATE {name} SET {} WHERE {cond}", sets.join(", "))
                            }
                            _ => unreachable!("matched above"),
                        };
                        self.fk_run(&sql)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// NO ACTION and RESTRICT: fails when a live row of the referencing
    /// table still references one of `keys`, removed from `parent`; with
    /// `recheck` (NO ACTION), a key the referenced table has again passes.
    fn fk_still_referenced(
        &self,
        snap: &Snapshot,
        parent: &TableDef,
        fk: &ForeignKeyDef,
        mut keys: Vec<Vec<Value>>,
        recheck: bool,
    ) -> Result<()> {
        let ctx = self.modify_ctx(snap);
        if recheck {
            let (p, prel) = self.fk_table(snap, fk.ref_table)?;
            let mut gone = Vec::with_capacity(keys.len());
            for k in keys {
                if !parent_has_key(&ctx, &p, &prel, fk, &k)? {
                    gone.push(k);
                }
            }
            keys = gone;
        }
        let (child, crel) = self.fk_table(snap, fk.table)?;
        match find_reference(&ctx, &child, &crel, fk, &keys)? {
            Some(k) => Err(still_referenced(parent, &child, fk, &k)),
            None => Ok(()),
        }
    }

    /// The deferred checks, at COMMIT: each key still to be present, each
    /// removed key still unreferenced.
    pub(crate) fn fk_check_deferred(&mut self) -> Result<()> {
        if self.fk_deferred.is_empty() {
            return Ok(());
        }
        let pending = std::mem::take(&mut self.fk_deferred);
        let snap = self.statement_snapshot();
        let ctx = self.modify_ctx(&snap);
        for d in pending {
            match d {
                Deferred::Present(fk, key) => {
                    let (parent, prel) = self.fk_table(&snap, fk.ref_table)?;
                    if parent_has_key(&ctx, &parent, &prel, &fk, &key)? {
                        continue;
                    }
                    // Only while a row still references it.
                    let (child, crel) = self.fk_table(&snap, fk.table)?;
                    if find_reference(&ctx, &child, &crel, &fk, std::slice::from_ref(&key))?
                        .is_some()
                    {
                        return Err(not_present(&child, &parent, &fk, &key));
                    }
                }
                Deferred::Unreferenced(fk, key) => {
                    let (parent, _) = self.fk_table(&snap, fk.ref_table)?;
                    self.fk_still_referenced(&snap, &parent, &fk, vec![key], true)?;
                }
            }
        }
        Ok(())
    }

    /// The existing rows of table `name` against each of its validated
    /// foreign keys (after ALTER TABLE ADD FOREIGN KEY or VALIDATE
    /// CONSTRAINT made or marked them).
    pub(crate) fn fk_validate_table(
        &mut self,
        name: &heapdb_grammar::ast::ObjectName,
    ) -> Result<()> {
        let snap = self.statement_snapshot();
        let qualified = crate::catalog::qualified_name(name.schema.as_deref(), &name.name);
        let Some(table) = self
            .db
            .catalog
            .lookup(&self.catalog_view(&snap), &qualified)
        else {
            return Ok(());
        };
        let (own, _) = self
            .db
            .catalog
            .foreign_keys_of(&self.catalog_view(&snap), table.oid);
        let rel = self.db.relation(table.relfilenode)?;
        let ctx = self.modify_ctx(&snap);
        for fk in own.into_iter().filter(|f| f.validated) {
            let mut cap = FkCapture::new(&table.name, vec![fk.clone()], Vec::new());
            live_rows(&ctx, &table, &rel, &mut |row| cap.new_row(row, None))?;
            let (parent, prel) = self.fk_table(&snap, fk.ref_table)?;
            for key in &cap.child[0].1.keys {
                if !parent_has_key(&ctx, &parent, &prel, &fk, key)? {
                    return Err(not_present(&table, &parent, &fk, key));
                }
            }
        }
        Ok(())
    }

    /// `public."c"` or `pg_temp."c"`: a name that finds `def`.
    fn fk_table_name(&self, def: &TableDef) -> String {
        let q = self.db.catalog.qualified(def);
        let (schema, _) = q.split_once('.').unwrap_or(("public", ""));
        format!("{schema}.{}", ident(&def.name))
    }

    /// Runs an action's statement `sql` with its own command id (it sees
    /// the changes made so far), its rows going nowhere.
    fn fk_run(&mut self, sql: &str) -> Result<()> {
        let stmt = heapdb_grammar::parse_one(sql).map_err(crate::error::parse_error)?;
        self.txn_mut().cid += 1;
        let r = self.dispatch(&stmt, &mut |_, _| Ok(()));
        // The statement that fired the action has written rows already: it
        // cannot run again from the start.
        if self.restart.replace(false) {
            return Err(err!(
                SerializationFailure,
                "could not serialize access due to concurrent update"
            ));
        }
        r.map(|_| ())
    }
}

/// `"name"`, quoted.
fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// Value `v` as a literal of column `c` of `table`.
fn literal(v: &Value, table: &TableDef, c: usize) -> String {
    if v.is_null() {
        return "NULL".into();
    }
    let mut s = String::new();
    format_value(v, &mut s);
    format!("'{}'::{}", s.replace('\'', "''"), table.columns[c].ty)
}

/// `(a = 1 AND b = 2) OR ...`: the referencing rows of `keys`.
fn key_condition(child: &TableDef, fk: &ForeignKeyDef, keys: &[Vec<Value>]) -> String {
    let one = |k: &Vec<Value>| {
        let parts: Vec<String> = fk
            .columns
            .iter()
            .zip(k)
            .map(|(&c, v)| {
                format!(
                    "{} = {}",
                    ident(&child.columns[c].name),
                    literal(v, child, c)
                )
            })
            .collect();
        format!("({})", parts.join(" AND "))
    };
    keys.iter().map(one).collect::<Vec<_>>().join(" OR ")
}
